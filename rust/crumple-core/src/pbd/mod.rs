//! Shape matching with large plastic deformation (Chentanez, Müller, Macklin
//! 2016; spec `shape_matching.md`), paper 002: a solid is a set of
//! particles held together by overlapping shape-matching clusters, solved by
//! a Jacobi PBD loop; each cluster's plastic matrix absorbs strain beyond its
//! yield, and a surface mesh is skinned to the particles.
//!
//! One file per stage of the spec's step (§9): [`contacts`] (grid and
//! contact projections), [`shape_match`] (cluster fit, goals; the inner
//! loops in `sm_kernels`), [`plasticity`]
//! (the end-of-step plastic update), [`resample`] (particle and cluster
//! re-sampling), [`skin`] (orientations, skinning,
//! normals, volume correction), ordered by [`solver`]; [`clusters`] builds
//! and maintains clusters; [`sim`] is the convenience `Simulation`.

pub mod checkpoint;
pub mod clusters;
pub mod contacts;
pub mod gpu;
pub mod grid;
pub mod material;
pub mod merge;
pub mod model;
pub mod params;
pub mod plasticity;
pub mod remesh;
pub mod resample;
pub mod shape_match;
pub mod sim;
pub mod skin;
mod sm_kernels;
pub mod solver;
pub mod state;
pub mod topology;

pub use material::Material;
pub use model::{Body, Model};
pub use params::{RotationFit, StepParams, Weights};
pub use sim::Simulation;
pub use solver::{StageTimes, StepStats};
pub use state::State;
