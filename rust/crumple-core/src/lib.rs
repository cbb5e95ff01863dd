//! crumple-core: the physics of crumple in pure Rust (no Python).
//!
//! Layout follows the pipeline: [`math`] (small fixed-size linear algebra),
//! [`geometry`] (meshes, strands, generators, sampling), [`collide`]
//! (colliders, kinematic motion, the shared boundary response), [`gpu`]
//! (wgpu context and primitives), [`checkpoint`] (state as named arrays).
//! The solvers (`mpm`, `cloth`, `pbd`, `eol`)
//! build on these.

pub mod checkpoint;
pub mod cloth;
pub mod collide;
pub mod eol;
pub mod error;
pub mod geometry;
pub mod gpu;
pub mod math;
pub mod mpm;
pub mod parallel;
pub mod params;
pub mod pbd;
pub(crate) mod stepping;
pub(crate) mod validate;

#[doc(hidden)]
pub mod test_util;

pub use error::{Error, Result};
