//! B-spline interpolation kernels (spec §3.1).
