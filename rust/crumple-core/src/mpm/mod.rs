//! Anisotropic elastoplastic MPM for cloth, knit, hair, sand, elastic solids
//! and goo (Jiang, Gast, Teran 2017), following `specs/mpm_anisotropic.md`.

pub mod constitutive;
pub mod kernel;
