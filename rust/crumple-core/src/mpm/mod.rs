//! Anisotropic elastoplastic MPM for cloth, knit, hair, sand, elastic solids
//! and goo (Jiang, Gast, Teran 2017), following `specs/mpm_anisotropic.md`.
//!
//! Stages in step order (spec §3): [`grid`] binning, stress pre-pass, P2G,
//! grid update and boundary conditions, G2P, advection, plasticity — all in
//! [`solver`]; constitutive models in [`constitutive`]; the user-facing
//! wrapper in [`sim`].

pub mod constitutive;
pub mod gpu;
pub mod grid;
pub mod kernel;
pub mod material;
pub mod material_spec;
pub mod model;
pub mod params;
pub mod sim;
pub mod solver;

pub use material::{CodimMaterial, ReturnEvent, VolumeMaterial};
pub use material_spec::{CurveSpec, ElasticSpec, GooSpec, SandSpec, SurfaceSpec};
pub use model::{Element, Model, State};
pub use params::{Kernel, OutOfDomain, SolverParams, Transfer};
pub use sim::{EnergyWeight, Object, ObjectKind, Simulation};
pub use solver::{Counters, Pin, Solver, StageTimes};
