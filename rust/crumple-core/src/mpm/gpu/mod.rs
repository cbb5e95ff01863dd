//! The GPU backend of the MPM solver (wgpu compute shaders), stage for stage
//! the twin of [`super::solver`]: the stage shaders and their generated
//! prelude ([`stages`]), the device memory ([`buffers`]), the per-step
//! parameter block, the packed materials and the recorded step
//! ([`backend`]). Colliders are packed by [`crate::gpu::colliders`].

pub mod backend;
mod buffers;
pub mod materials;
pub mod stages;
mod step_params;

pub use backend::{GpuMpm, StepStats};
