//! Mesh validation errors.

/// Why a mesh or curve set was rejected. Every variant names the offending
/// indices so a user can find them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeshError {
    #[error("vertex {vertex} has a non-finite coordinate; remove NaN/inf values from the vertex array")]
    NonFiniteVertex { vertex: usize },
    #[error("face {face} references vertex {index}, but the mesh has only {num_vertices} vertices (valid indices are 0..{num_vertices})")]
    IndexOutOfRange { face: usize, index: i64, num_vertices: usize },
    #[error("face {face} is degenerate ({reason}); remove it or fix its vertices")]
    DegenerateFace { face: usize, reason: &'static str },
    #[error("faces {first} and {second} are duplicates (same three vertices); remove one")]
    DuplicateFace { first: usize, second: usize },
    #[error("edge ({a}, {b}) is shared by {count} faces (first three: {faces:?}); a manifold mesh has at most 2 faces per edge")]
    NonManifoldEdge { a: usize, b: usize, count: usize, faces: Vec<usize> },
    #[error("{0}")]
    Other(String),
}
