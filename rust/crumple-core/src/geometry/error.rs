//! Mesh validation errors.

/// Why a mesh or curve set was rejected. Every variant names the offending
/// indices so a user can find them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeshError {
    /// No vertices or no faces.
    #[error(
        "mesh is empty ({num_vertices} vertices, {num_faces} faces); a mesh needs at least one \
         triangle and the vertices it references"
    )]
    EmptyMesh {
        /// Vertices given.
        num_vertices: usize,
        /// Faces given.
        num_faces: usize,
    },
    /// A vertex coordinate is NaN or infinite.
    #[error("vertex {vertex} has a non-finite coordinate; remove NaN/inf values from the vertex array")]
    NonFiniteVertex {
        /// Index of the first such vertex.
        vertex: usize,
    },
    /// A face index is negative or not below the vertex count.
    #[error(
        "face {face} references vertex {index}, but the mesh has only {num_vertices} vertices \
         (valid indices are 0..{num_vertices})"
    )]
    IndexOutOfRange {
        /// The face holding the bad index.
        face: usize,
        /// The bad index as given.
        index: i64,
        /// Vertex count (valid indices are below it).
        num_vertices: usize,
    },
    /// A face repeats a vertex index or has (relatively) zero area.
    #[error("face {face} with vertices {vertices:?} is degenerate ({reason}); remove it or fix its vertices")]
    DegenerateFace {
        /// The face index.
        face: usize,
        /// Its vertex indices.
        vertices: [u32; 3],
        /// Which kind of degeneracy.
        reason: &'static str,
    },
    /// Two faces use the same three vertices (in any order).
    #[error("faces {first} and {second} are duplicates (same three vertices {vertices:?}); remove one")]
    DuplicateFace {
        /// The earlier face.
        first: usize,
        /// The earliest later face over the same vertices.
        second: usize,
        /// The vertices of `first`.
        vertices: [u32; 3],
    },
    /// More than two faces share an edge.
    #[error(
        "edge ({a}, {b}) is shared by {count} faces (first three: {faces:?}); a manifold mesh has \
         at most 2 faces per edge"
    )]
    NonManifoldEdge {
        /// Smaller vertex index of the edge.
        a: usize,
        /// Larger vertex index of the edge.
        b: usize,
        /// Number of faces on the edge.
        count: usize,
        /// The first three of them (ascending).
        faces: Vec<usize>,
    },
    /// Two faces traverse their shared edge in the same direction.
    #[error(
        "faces {first} and {second} both traverse edge ({a}, {b}) in the same direction, so the \
         mesh is not consistently oriented; flip one of them (reverse its vertex order)"
    )]
    InconsistentOrientation {
        /// Smaller vertex index of the edge.
        a: usize,
        /// Larger vertex index of the edge.
        b: usize,
        /// The face with the smaller index.
        first: usize,
        /// The other face.
        second: usize,
    },
    /// An operation that needs a watertight mesh found an open edge.
    #[error(
        "mesh is not closed: edge ({a}, {b}) has {count} face(s) instead of 2; inside/outside is \
         only defined for a closed (watertight) mesh, so close the holes or use a box or sphere region"
    )]
    NotClosed {
        /// Smaller vertex index of the edge.
        a: usize,
        /// Larger vertex index of the edge.
        b: usize,
        /// Faces on it (1: a boundary edge).
        count: usize,
    },
    /// Anything else, with its own message.
    #[error("{0}")]
    Other(String),
}
