//! GPU plumbing: context, buffers, primitives.
