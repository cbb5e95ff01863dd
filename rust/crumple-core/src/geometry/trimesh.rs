//! The validated triangle mesh every solver takes as input.

use super::{MeshError, MeshTopology, validate};
use crate::Result;
use crate::math::Vec3;

/// A validated triangle mesh (positions in meters).
///
/// Construction checks everything a solver relies on and caches the
/// connectivity ([`MeshTopology`]), so a `TriMesh` in hand is always usable:
/// finite vertices, indices in range, no degenerate or duplicate faces, at
/// most two faces per edge. Orientation and closedness are *reported*
/// ([`Self::check_orientation`], [`Self::is_closed`]) rather than required,
/// because a cloth panel is open and only some consumers (hinge signs,
/// inside tests) need a consistent winding. Vertices that no face uses are
/// allowed (they simply have no adjacent faces).
///
/// Fields are private so the cached topology cannot go stale.
#[derive(Clone, Debug, PartialEq)]
pub struct TriMesh {
    vertices: Vec<Vec3<f64>>,
    faces: Vec<[u32; 3]>,
    topology: MeshTopology,
}

impl TriMesh {
    /// Validates and builds a mesh from vertex positions (m) and faces.
    ///
    /// Faces are `i64` because that is what numpy hands over, and a negative
    /// or too large index must be reported as such rather than wrap around.
    /// Errors ([`crate::Error::Mesh`]), first one found in this order:
    /// [`MeshError::EmptyMesh`], [`MeshError::NonFiniteVertex`],
    /// [`MeshError::IndexOutOfRange`], [`MeshError::DegenerateFace`] (repeated
    /// index, or area ≤ [`DEGENERATE_AREA_RATIO`](super::DEGENERATE_AREA_RATIO) · longest edge²),
    /// [`MeshError::DuplicateFace`] (same vertex set in any order),
    /// [`MeshError::NonManifoldEdge`] (more than two faces on an edge).
    pub fn new(vertices: Vec<Vec3<f64>>, faces: &[[i64; 3]]) -> Result<Self> {
        validate::check_sizes(vertices.len(), faces.len())?;
        validate::check_finite(&vertices)?;
        let faces = validate::check_indices(vertices.len(), faces)?;
        Self::from_u32(vertices, faces)
    }

    /// The same checks as [`Self::new`] for indices that are already `u32`
    /// (the generators, or a solver rebuilding a mesh).
    pub fn from_u32_faces(vertices: Vec<Vec3<f64>>, faces: Vec<[u32; 3]>) -> Result<Self> {
        validate::check_sizes(vertices.len(), faces.len())?;
        validate::check_finite(&vertices)?;
        let n = vertices.len() as u64;
        for (face, tri) in faces.iter().enumerate() {
            if let Some(&index) = tri.iter().find(|&&i| i as u64 >= n) {
                return Err(MeshError::IndexOutOfRange {
                    face,
                    index: index as i64,
                    num_vertices: n as usize,
                }
                .into());
            }
        }
        Self::from_u32(vertices, faces)
    }

    fn from_u32(vertices: Vec<Vec3<f64>>, faces: Vec<[u32; 3]>) -> Result<Self> {
        validate::check_degenerate(&vertices, &faces)?;
        validate::check_duplicates(&faces)?;
        let topology = MeshTopology::build(vertices.len(), &faces)?;
        Ok(Self {
            vertices,
            faces,
            topology,
        })
    }

    /// Vertex positions (m).
    pub fn vertices(&self) -> &[Vec3<f64>] {
        &self.vertices
    }

    /// Faces as vertex index triples; winding defines the face normal
    /// (counter-clockwise seen from the side the normal points to).
    pub fn faces(&self) -> &[[u32; 3]] {
        &self.faces
    }

    /// Cached connectivity (edges, hinges, adjacency).
    pub fn topology(&self) -> &MeshTopology {
        &self.topology
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.vertices.len()
    }

    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        self.faces.len()
    }

    /// Number of unique edges.
    pub fn num_edges(&self) -> usize {
        self.topology.num_edges()
    }

    /// V − E + F: 2 for a sphere-like closed mesh, 0 for a torus or an open
    /// tube, 1 for a disk-like sheet. Unused vertices count, as in the arrays.
    pub fn euler_characteristic(&self) -> i64 {
        self.num_vertices() as i64 - self.num_edges() as i64 + self.num_faces() as i64
    }

    /// Takes the mesh apart into its vertex and face arrays.
    pub fn into_parts(self) -> (Vec<Vec3<f64>>, Vec<[u32; 3]>) {
        (self.vertices, self.faces)
    }

    fn corners(&self, f: usize) -> [Vec3<f64>; 3] {
        let t = self.faces[f];
        [
            self.vertices[t[0] as usize],
            self.vertices[t[1] as usize],
            self.vertices[t[2] as usize],
        ]
    }

    /// Area of each face (m²).
    pub fn face_areas(&self) -> Vec<f64> {
        (0..self.faces.len())
            .map(|f| {
                let [a, b, c] = self.corners(f);
                0.5 * (b - a).cross(c - a).norm()
            })
            .collect()
    }

    /// Unit normal of each face, from its winding (right-hand rule).
    pub fn face_normals(&self) -> Vec<Vec3<f64>> {
        (0..self.faces.len())
            .map(|f| {
                let [a, b, c] = self.corners(f);
                (b - a).cross(c - a).normalize_or_zero()
            })
            .collect()
    }

    /// Area-weighted unit vertex normals.
    ///
    /// Area weighting (summing unnormalized face cross products) is cheap and
    /// lets large faces dominate, which is what a surface normal used for
    /// shading, offsets or collision should do on a mesh with uneven
    /// triangles. A vertex no face uses gets the zero vector.
    pub fn vertex_normals(&self) -> Vec<Vec3<f64>> {
        let mut n = vec![Vec3::zero(); self.vertices.len()];
        for (f, t) in self.faces.iter().enumerate() {
            let [a, b, c] = self.corners(f);
            let w = (b - a).cross(c - a);
            for &v in t {
                n[v as usize] += w;
            }
        }
        n.into_iter().map(Vec3::normalize_or_zero).collect()
    }

    /// Axis-aligned bounding box `(lower, upper)` of all vertices (m).
    pub fn bounds(&self) -> (Vec3<f64>, Vec3<f64>) {
        let first = self.vertices[0];
        self.vertices.iter().fold((first, first), |(lo, hi), &v| {
            (lo.component_min(v), hi.component_max(v))
        })
    }

    /// Whether every edge has exactly two faces (a watertight surface).
    pub fn is_closed(&self) -> bool {
        self.topology.num_boundary_edges() == 0
    }

    /// The first boundary edge `(a, b, face count)` in edge order, if any.
    pub(crate) fn first_open_edge(&self) -> Option<(usize, usize, usize)> {
        let t = &self.topology;
        (0..t.num_edges()).find_map(|e| {
            let n = t.edge_faces(e).map_or(0, <[u32]>::len);
            (n != 2).then(|| (t.edges()[e][0] as usize, t.edges()[e][1] as usize, n))
        })
    }

    /// Ok if every interior edge is traversed in opposite directions by its
    /// two faces; otherwise [`MeshError::InconsistentOrientation`] naming the
    /// first such edge (in edge order) and its faces. Consumers that need a
    /// consistent winding (hinge angle signs, inside tests) call this.
    pub fn check_orientation(&self) -> Result<()> {
        match self.topology.first_orientation_conflict(&self.faces) {
            Some((e, first, second)) => {
                let [a, b] = self.topology.edges()[e];
                Err(MeshError::InconsistentOrientation {
                    a: a as usize,
                    b: b as usize,
                    first: first as usize,
                    second: second as usize,
                }
                .into())
            }
            None => Ok(()),
        }
    }

    /// Whether [`Self::check_orientation`] passes.
    pub fn consistently_oriented(&self) -> bool {
        self.check_orientation().is_ok()
    }

    /// Signed enclosed volume (m³) by the divergence theorem, Σ a·(b×c)/6.
    /// Positive for a closed mesh whose normals point outward; meaningless
    /// for an open mesh. Vertices are taken relative to the first one so the
    /// sum does not lose precision far from the origin.
    pub fn signed_volume(&self) -> f64 {
        let o = self.vertices[0];
        (0..self.faces.len())
            .map(|f| {
                let [a, b, c] = self.corners(f);
                (a - o).dot((b - o).cross(c - o)) / 6.0
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    fn v(x: f64, y: f64, z: f64) -> Vec3<f64> {
        Vec3::new(x, y, z)
    }

    /// Unit square in z = 0 as two triangles, plus a spare vertex 4.
    fn square_vertices() -> Vec<Vec3<f64>> {
        vec![
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(1.0, 1.0, 0.0),
            v(0.0, 1.0, 0.0),
            v(0.5, 0.5, 1.0),
        ]
    }

    fn mesh_err(r: Result<TriMesh>) -> MeshError {
        match r {
            Err(Error::Mesh(e)) => e,
            other => panic!("expected a MeshError, got {other:?}"),
        }
    }

    #[test]
    fn valid_square() {
        let m = TriMesh::new(square_vertices(), &[[0, 1, 2], [0, 2, 3]]).unwrap();
        assert_eq!((m.num_vertices(), m.num_faces(), m.num_edges()), (5, 2, 5));
        let a = m.face_areas();
        assert!((a[0] - 0.5).abs() < 1e-15 && (a[1] - 0.5).abs() < 1e-15);
        for n in &m.vertex_normals()[..4] {
            assert!((*n - v(0.0, 0.0, 1.0)).norm() < 1e-15);
        }
        assert_eq!(m.vertex_normals()[4], Vec3::zero());
        assert_eq!(m.bounds(), (v(0.0, 0.0, 0.0), v(1.0, 1.0, 1.0)));
        assert!(!m.is_closed());
        assert!(m.consistently_oriented());
        assert_eq!(m.first_open_edge(), Some((0, 1, 1)));
    }

    #[test]
    fn empty_mesh_is_rejected() {
        assert_eq!(
            mesh_err(TriMesh::new(vec![], &[])),
            MeshError::EmptyMesh {
                num_vertices: 0,
                num_faces: 0
            }
        );
        assert_eq!(
            mesh_err(TriMesh::new(square_vertices(), &[])),
            MeshError::EmptyMesh {
                num_vertices: 5,
                num_faces: 0
            }
        );
    }

    #[test]
    fn nan_vertex_is_rejected() {
        let mut vs = square_vertices();
        vs[3].y = f64::NAN;
        assert_eq!(
            mesh_err(TriMesh::new(vs, &[[0, 1, 2]])),
            MeshError::NonFiniteVertex { vertex: 3 }
        );
        let mut vs = square_vertices();
        vs[1].z = f64::INFINITY;
        assert_eq!(
            mesh_err(TriMesh::new(vs, &[[0, 1, 2]])),
            MeshError::NonFiniteVertex { vertex: 1 }
        );
    }

    #[test]
    fn out_of_range_index_is_rejected() {
        let e = mesh_err(TriMesh::new(square_vertices(), &[[0, 1, 2], [0, 2, 5]]));
        assert_eq!(
            e,
            MeshError::IndexOutOfRange {
                face: 1,
                index: 5,
                num_vertices: 5
            }
        );
        let e = mesh_err(TriMesh::from_u32_faces(square_vertices(), vec![[0, 9, 2]]));
        assert_eq!(
            e,
            MeshError::IndexOutOfRange {
                face: 0,
                index: 9,
                num_vertices: 5
            }
        );
    }

    #[test]
    fn negative_index_is_rejected() {
        let e = mesh_err(TriMesh::new(
            square_vertices(),
            &[[0, 1, 2], [0, 2, 3], [-1, 0, 1]],
        ));
        assert_eq!(
            e,
            MeshError::IndexOutOfRange {
                face: 2,
                index: -1,
                num_vertices: 5
            }
        );
        assert!(e.to_string().contains("-1"), "{e}");
    }

    #[test]
    fn repeated_index_face_is_degenerate() {
        let e = mesh_err(TriMesh::new(square_vertices(), &[[0, 1, 2], [3, 2, 3]]));
        match e {
            MeshError::DegenerateFace {
                face,
                vertices,
                reason,
            } => {
                assert_eq!((face, vertices), (1, [3, 2, 3]));
                assert!(reason.contains("same vertex"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn collinear_face_is_degenerate() {
        let mut vs = square_vertices();
        vs.push(v(2.0, 2.0, 0.0)); // on the line through 0 and 2
        let e = mesh_err(TriMesh::new(vs, &[[0, 1, 2], [0, 2, 5]]));
        match e {
            MeshError::DegenerateFace {
                face,
                vertices,
                reason,
            } => {
                assert_eq!((face, vertices), (1, [0, 2, 5]));
                assert!(reason.contains("collinear"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn coincident_vertices_face_is_degenerate() {
        let vs = vec![v(1.0, 2.0, 3.0); 3];
        match mesh_err(TriMesh::new(vs, &[[0, 1, 2]])) {
            MeshError::DegenerateFace {
                face: 0,
                vertices: [0, 1, 2],
                ..
            } => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn duplicate_face_in_any_order_is_rejected() {
        let e = mesh_err(TriMesh::new(
            square_vertices(),
            &[[0, 1, 2], [0, 2, 3], [2, 1, 0]],
        ));
        assert_eq!(
            e,
            MeshError::DuplicateFace {
                first: 0,
                second: 2,
                vertices: [0, 1, 2]
            }
        );
        let e = mesh_err(TriMesh::new(
            square_vertices(),
            &[[0, 1, 2], [0, 2, 3], [3, 0, 2]],
        ));
        assert_eq!(
            e,
            MeshError::DuplicateFace {
                first: 1,
                second: 2,
                vertices: [0, 2, 3]
            }
        );
    }

    #[test]
    fn non_manifold_edge_is_rejected() {
        // Three faces on edge (0, 2): the square's two and a fin up to vertex 4.
        let e = mesh_err(TriMesh::new(
            square_vertices(),
            &[[0, 1, 2], [0, 2, 3], [2, 0, 4]],
        ));
        assert_eq!(
            e,
            MeshError::NonManifoldEdge {
                a: 0,
                b: 2,
                count: 3,
                faces: vec![0, 1, 2]
            }
        );
    }

    #[test]
    fn inconsistent_orientation_is_reported() {
        let m = TriMesh::new(square_vertices(), &[[0, 1, 2], [0, 3, 2]]).unwrap();
        assert!(!m.consistently_oriented());
        match m.check_orientation() {
            Err(Error::Mesh(MeshError::InconsistentOrientation {
                a: 0,
                b: 2,
                first: 0,
                second: 1,
            })) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tetrahedron_is_closed_with_volume() {
        let vs = vec![
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(0.0, 1.0, 0.0),
            v(0.0, 0.0, 1.0),
        ];
        let m = TriMesh::new(vs, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap();
        assert!(m.is_closed() && m.consistently_oriented());
        assert_eq!(m.first_open_edge(), None);
        assert_eq!(m.euler_characteristic(), 2);
        assert!((m.signed_volume() - 1.0 / 6.0).abs() < 1e-15);
        assert_eq!(m.topology().hinges().len(), 6);
    }
}
