//! The GPU backend of the MPM solver (wgpu compute shaders), stage for stage
//! the twin of [`super::solver`].

pub mod backend;
pub mod colliders;
pub mod materials;

pub use backend::{GpuMpm, StepStats};
