//! Connectivity of a triangle mesh: edges, edge→faces, hinges, vertex→faces.
//!
//! Everything here is computed once, when a [`TriMesh`](super::TriMesh) is
//! built, and kept with it: the solvers ask for it every step and the order of
//! every list is fixed and documented, so arrays indexed by edge or hinge
//! (rest angles, plastic state) stay meaningful across runs, checkpoints and
//! the Python boundary. Construction sorts instead of hashing so the result
//! does not depend on a hasher's seed.

use super::MeshError;

/// A bending hinge: an interior edge with exactly two incident faces.
///
/// Vertex order follows `specs/persistent_wrinkles.md` §2.1, which fixes the
/// sign of the dihedral angle: the edge is `(x0, x1)`; face 0 traverses the
/// edge as `x0 → x1` and its third vertex is `x2`; face 1 traverses it as
/// `x1 → x0` and its third vertex is `x3`. So face 0 ≅ `(x0, x1, x2)` and
/// face 1 ≅ `(x1, x0, x3)` as cyclic orders.
///
/// In a consistently oriented mesh the face traversing the edge from its
/// smaller to its larger vertex index is face 0, so `x0 < x1` always. In a
/// mesh that is not consistently oriented (both faces traverse the edge the
/// same way, see [`TriMesh::check_orientation`](super::TriMesh::check_orientation))
/// face 0 is the face with the smaller index, `(x0, x1)` is its direction,
/// and face 1 then also traverses `x0 → x1`: the dihedral sign convention
/// cannot hold there, which is why the cloth solver requires orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hinge {
    /// `[x0, x1, x2, x3]` as described above.
    pub vertices: [u32; 4],
    /// `[face 0, face 1]`.
    pub faces: [u32; 2],
    /// Index of the hinge's edge in [`MeshTopology::edges`].
    pub edge: u32,
}

/// Cached connectivity of a validated triangle mesh.
///
/// Orders (all fixed, so arrays indexed by them are reproducible):
/// - edges: unique undirected edges `[a, b]` with `a < b`, sorted
///   lexicographically by `(a, b)`;
/// - faces of an edge: ascending face index (1 or 2 of them: more is rejected
///   as non-manifold);
/// - hinges: in edge order, one per edge with exactly two faces;
/// - faces of a vertex: ascending face index;
/// - edges of a face: `face_edges[f][k]` is the edge between corners `k` and
///   `(k + 1) % 3` of face `f`.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshTopology {
    edges: Vec<[u32; 2]>,
    edge_face_offsets: Vec<u32>,
    edge_faces: Vec<u32>,
    face_edges: Vec<[u32; 3]>,
    hinges: Vec<Hinge>,
    vertex_face_offsets: Vec<u32>,
    vertex_faces: Vec<u32>,
}

/// One directed side of a face, sorted to group the sides of each edge.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Side {
    lo: u32,
    hi: u32,
    face: u32,
    corner: u8,
}

impl MeshTopology {
    /// Builds the connectivity of `faces` over `num_vertices` vertices.
    ///
    /// The caller has already checked index range and repeated indices (so a
    /// face never holds the same edge twice); this rejects edges with more
    /// than two faces, the one topological property the solvers cannot live
    /// with (a hinge needs a unique pair of faces).
    pub(crate) fn build(num_vertices: usize, faces: &[[u32; 3]]) -> Result<Self, MeshError> {
        let mut sides: Vec<Side> = Vec::with_capacity(faces.len() * 3);
        for (f, tri) in faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                sides.push(Side {
                    lo: a.min(b),
                    hi: a.max(b),
                    face: f as u32,
                    corner: k as u8,
                });
            }
        }
        sides.sort_unstable();

        let mut edges = Vec::new();
        let mut edge_face_offsets = vec![0u32];
        let mut edge_faces = Vec::with_capacity(sides.len());
        let mut face_edges = vec![[0u32; 3]; faces.len()];
        let mut hinges = Vec::new();
        let mut start = 0;
        while start < sides.len() {
            let (lo, hi) = (sides[start].lo, sides[start].hi);
            let mut end = start;
            while end < sides.len() && sides[end].lo == lo && sides[end].hi == hi {
                end += 1;
            }
            let run = &sides[start..end];
            if run.len() > 2 {
                return Err(MeshError::NonManifoldEdge {
                    a: lo as usize,
                    b: hi as usize,
                    count: run.len(),
                    faces: run.iter().take(3).map(|s| s.face as usize).collect(),
                });
            }
            let e = edges.len() as u32;
            edges.push([lo, hi]);
            for s in run {
                edge_faces.push(s.face);
                face_edges[s.face as usize][s.corner as usize] = e;
            }
            edge_face_offsets.push(edge_faces.len() as u32);
            if run.len() == 2 {
                hinges.push(make_hinge(faces, run[0], run[1], e));
            }
            start = end;
        }

        let (vertex_face_offsets, vertex_faces) = vertex_face_csr(num_vertices, faces);
        Ok(Self {
            edges,
            edge_face_offsets,
            edge_faces,
            face_edges,
            hinges,
            vertex_face_offsets,
            vertex_faces,
        })
    }

    /// Unique undirected edges `[a, b]`, `a < b`, sorted lexicographically.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// Number of unique edges.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Faces incident to edge `e` (ascending), or `None` if `e` is out of range.
    pub fn edge_faces(&self, e: usize) -> Option<&[u32]> {
        let lo = *self.edge_face_offsets.get(e)? as usize;
        let hi = *self.edge_face_offsets.get(e + 1)? as usize;
        Some(&self.edge_faces[lo..hi])
    }

    /// CSR offsets of edge→faces: the faces of edge `e` are
    /// `edge_face_indices()[offsets[e]..offsets[e + 1]]`. Length `num_edges + 1`.
    pub fn edge_face_offsets(&self) -> &[u32] {
        &self.edge_face_offsets
    }

    /// CSR indices of edge→faces (see [`Self::edge_face_offsets`]).
    pub fn edge_face_indices(&self) -> &[u32] {
        &self.edge_faces
    }

    /// `face_edges()[f][k]` is the edge between corners `k` and `(k + 1) % 3` of face `f`.
    pub fn face_edges(&self) -> &[[u32; 3]] {
        &self.face_edges
    }

    /// Interior edges with exactly two faces, in edge order (see [`Hinge`]).
    pub fn hinges(&self) -> &[Hinge] {
        &self.hinges
    }

    /// Faces incident to vertex `v` (ascending), or `None` if `v` is out of range.
    pub fn vertex_faces(&self, v: usize) -> Option<&[u32]> {
        let lo = *self.vertex_face_offsets.get(v)? as usize;
        let hi = *self.vertex_face_offsets.get(v + 1)? as usize;
        Some(&self.vertex_faces[lo..hi])
    }

    /// CSR offsets of vertex→faces. Length `num_vertices + 1`.
    pub fn vertex_face_offsets(&self) -> &[u32] {
        &self.vertex_face_offsets
    }

    /// CSR indices of vertex→faces (see [`Self::vertex_face_offsets`]).
    pub fn vertex_face_indices(&self) -> &[u32] {
        &self.vertex_faces
    }

    /// Number of edges with exactly one face (the mesh's open boundary).
    pub fn num_boundary_edges(&self) -> usize {
        self.edge_face_offsets
            .windows(2)
            .filter(|w| w[1] - w[0] == 1)
            .count()
    }

    /// The first edge (in edge order) whose two faces traverse it in the same
    /// direction, as `(edge, face_a, face_b)` with `face_a < face_b`.
    pub(crate) fn first_orientation_conflict(&self, faces: &[[u32; 3]]) -> Option<(usize, u32, u32)> {
        self.hinges.iter().find_map(|h| {
            let [f0, f1] = h.faces;
            let d0 = traverses(faces[f0 as usize], h.vertices[0], h.vertices[1]);
            let d1 = traverses(faces[f1 as usize], h.vertices[0], h.vertices[1]);
            (d0 == d1).then(|| (h.edge as usize, f0.min(f1), f0.max(f1)))
        })
    }
}

/// Whether `tri` traverses the edge as `a → b` (it contains the edge).
fn traverses(tri: [u32; 3], a: u32, b: u32) -> bool {
    (0..3).any(|k| tri[k] == a && tri[(k + 1) % 3] == b)
}

/// Orders the two sides of an interior edge as §2.1 asks (see [`Hinge`]).
fn make_hinge(faces: &[[u32; 3]], s0: Side, s1: Side, edge: u32) -> Hinge {
    let dir = |s: Side| {
        let tri = faces[s.face as usize];
        let k = s.corner as usize;
        (tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3])
    };
    // s0.face < s1.face by the sort. Prefer as face 0 the side going lo → hi;
    // if neither does (inconsistent orientation), keep the smaller face index.
    let (first, second) = if dir(s0).0 == s0.lo || dir(s1).0 != s1.lo {
        (s0, s1)
    } else {
        (s1, s0)
    };
    let (x0, x1, x2) = dir(first);
    let (_, _, x3) = dir(second);
    Hinge {
        vertices: [x0, x1, x2, x3],
        faces: [first.face, second.face],
        edge,
    }
}

/// Vertex→face adjacency by counting sort (faces ascending per vertex).
fn vertex_face_csr(num_vertices: usize, faces: &[[u32; 3]]) -> (Vec<u32>, Vec<u32>) {
    super::csr(
        num_vertices,
        faces
            .iter()
            .enumerate()
            .flat_map(|(f, tri)| tri.iter().map(move |&v| (v, f as u32))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles sharing edge (1, 2), consistently oriented.
    fn quad() -> Vec<[u32; 3]> {
        vec![[0, 1, 2], [2, 1, 3]]
    }

    #[test]
    fn edges_are_unique_and_sorted() {
        let t = MeshTopology::build(4, &quad()).unwrap();
        assert_eq!(t.edges(), &[[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]]);
        assert_eq!(t.edge_faces(2), Some(&[0u32, 1][..]));
        assert_eq!(t.edge_faces(0), Some(&[0u32][..]));
        assert_eq!(t.edge_faces(5), None);
        assert_eq!(t.num_boundary_edges(), 4);
        // face 1 = (2, 1, 3): corner 0 → (2,1) = edge 2, corner 1 → (1,3) = edge 3, corner 2 → (3,2) = edge 4.
        assert_eq!(t.face_edges()[1], [2, 3, 4]);
    }

    #[test]
    fn hinge_follows_spec_order() {
        let faces = quad();
        let t = MeshTopology::build(4, &faces).unwrap();
        assert_eq!(t.hinges().len(), 1);
        let h = t.hinges()[0];
        let [x0, x1, x2, x3] = h.vertices;
        assert_eq!(h.edge, 2);
        assert!(traverses(faces[h.faces[0] as usize], x0, x1));
        assert!(traverses(faces[h.faces[1] as usize], x1, x0));
        assert!(faces[h.faces[0] as usize].contains(&x2));
        assert!(faces[h.faces[1] as usize].contains(&x3));
        assert_eq!(h.vertices, [1, 2, 0, 3]);
        assert_eq!(h.faces, [0, 1]);
    }

    #[test]
    fn hinge_face_zero_is_the_one_going_low_to_high_even_if_listed_second() {
        // Face 0 traverses (1,2) as 2 → 1; face 1 as 1 → 2.
        let faces = vec![[2, 1, 0], [1, 2, 3]];
        let t = MeshTopology::build(4, &faces).unwrap();
        let h = t.hinges()[0];
        assert_eq!(h.vertices, [1, 2, 3, 0]);
        assert_eq!(h.faces, [1, 0]);
        assert!(t.first_orientation_conflict(&faces).is_none());
    }

    #[test]
    fn orientation_conflict_is_found() {
        let faces = vec![[0, 1, 2], [1, 2, 3]];
        let t = MeshTopology::build(4, &faces).unwrap();
        assert_eq!(t.first_orientation_conflict(&faces), Some((2, 0, 1)));
    }

    #[test]
    fn non_manifold_edge_is_rejected() {
        let faces = vec![[0, 1, 2], [1, 0, 3], [0, 1, 4]];
        match MeshTopology::build(5, &faces) {
            Err(MeshError::NonManifoldEdge { a, b, count, faces }) => {
                assert_eq!((a, b, count), (0, 1, 3));
                assert_eq!(faces, vec![0, 1, 2]);
            }
            other => panic!("expected NonManifoldEdge, got {other:?}"),
        }
    }

    #[test]
    fn vertex_faces_csr() {
        let t = MeshTopology::build(5, &quad()).unwrap();
        assert_eq!(t.vertex_faces(0), Some(&[0u32][..]));
        assert_eq!(t.vertex_faces(1), Some(&[0u32, 1][..]));
        assert_eq!(t.vertex_faces(2), Some(&[0u32, 1][..]));
        assert_eq!(t.vertex_faces(3), Some(&[1u32][..]));
        assert_eq!(t.vertex_faces(4), Some(&[][..]));
        assert_eq!(t.vertex_faces(5), None);
        assert_eq!(t.vertex_face_offsets(), &[0, 1, 3, 5, 6, 6]);
    }
}
