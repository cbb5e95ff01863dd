//! Meshes, strands, generators and sampling.
mod error;
pub use error::MeshError;
