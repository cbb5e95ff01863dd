//! Validation of the closed triangle mesh behind a [`MeshSdf`](super::MeshSdf)
//! and the pseudonormals that sign its distance.

use crate::geometry::MeshError;
use crate::math::Vec3;
use crate::{Error, Result};

/// Mesh problems map to the `MeshError` Python exception.
fn mesh_err(e: MeshError) -> Error {
    Error::Mesh(e)
}

/// Unit face normals, checked for closedness and consistent orientation,
/// turned outward (flipped if the signed volume is negative); per face the
/// three edge pseudonormals (edges `ab`, `bc`, `ca`); per vertex the
/// angle-weighted pseudonormal (Bærentzen & Aanæs 2005).
pub(crate) struct Pseudonormals {
    pub(crate) face: Vec<Vec3<f64>>,
    pub(crate) edge: Vec<[Vec3<f64>; 3]>,
    pub(crate) vertex: Vec<Vec3<f64>>,
}

/// Checks vertices (finite), faces (indices in range, no repeated vertex,
/// non-zero area) and returns each face's three vertex positions.
pub(crate) fn check_mesh(vertices: &[Vec3<f64>], faces: &[[u32; 3]]) -> Result<Vec<[Vec3<f64>; 3]>> {
    if vertices.is_empty() || faces.is_empty() {
        return Err(mesh_err(MeshError::EmptyMesh {
            num_vertices: vertices.len(),
            num_faces: faces.len(),
        }));
    }
    if let Some(v) = vertices.iter().position(|v| !v.is_finite()) {
        return Err(mesh_err(MeshError::NonFiniteVertex { vertex: v }));
    }
    let mut tris = Vec::with_capacity(faces.len());
    for (fi, f) in faces.iter().enumerate() {
        for &idx in f {
            if idx as usize >= vertices.len() {
                return Err(mesh_err(MeshError::IndexOutOfRange {
                    face: fi,
                    index: idx as i64,
                    num_vertices: vertices.len(),
                }));
            }
        }
        if f[0] == f[1] || f[1] == f[2] || f[2] == f[0] {
            return Err(mesh_err(MeshError::DegenerateFace {
                face: fi,
                vertices: *f,
                reason: "a vertex is repeated",
            }));
        }
        let t = [
            vertices[f[0] as usize],
            vertices[f[1] as usize],
            vertices[f[2] as usize],
        ];
        let longest = (t[1] - t[0])
            .norm_squared()
            .max((t[2] - t[1]).norm_squared())
            .max((t[0] - t[2]).norm_squared());
        let twice_area = (t[1] - t[0]).cross(t[2] - t[0]).norm();
        if twice_area.is_nan() || twice_area <= 1e-12 * longest {
            return Err(mesh_err(MeshError::DegenerateFace {
                face: fi,
                vertices: *f,
                reason: "zero area",
            }));
        }
        tris.push(t);
    }
    Ok(tris)
}

/// Checks that every edge has exactly two faces traversing it in opposite
/// directions (closed, manifold, consistently wound) and computes the
/// outward [`Pseudonormals`].
pub(crate) fn pseudonormals(
    num_vertices: usize,
    faces: &[[u32; 3]],
    tris: &[[Vec3<f64>; 3]],
) -> Result<Pseudonormals> {
    // Every undirected edge must be used by exactly two faces, once in each
    // direction. Sorting (not hashing) keeps the first reported error stable.
    let mut edges: Vec<(u32, u32, u32, u8, bool)> = Vec::with_capacity(3 * faces.len());
    for (fi, f) in faces.iter().enumerate() {
        for k in 0..3u8 {
            let (a, b) = (f[k as usize], f[(k as usize + 1) % 3]);
            edges.push((a.min(b), a.max(b), fi as u32, k, a < b));
        }
    }
    edges.sort_unstable();
    let mut face_normal: Vec<Vec3<f64>> = tris
        .iter()
        .map(|t| (t[1] - t[0]).cross(t[2] - t[0]).normalize_or_zero())
        .collect();
    let volume: f64 = tris.iter().map(|t| t[0].dot(t[1].cross(t[2]))).sum();
    if volume < 0.0 {
        for n in &mut face_normal {
            *n = -*n;
        }
    }
    let mut edge = vec![[Vec3::zero(); 3]; faces.len()];
    let mut i = 0;
    while i < edges.len() {
        let (a, b) = (edges[i].0, edges[i].1);
        let mut j = i;
        while j < edges.len() && edges[j].0 == a && edges[j].1 == b {
            j += 1;
        }
        let group = &edges[i..j];
        if group.len() == 1 {
            return Err(mesh_err(MeshError::NotClosed {
                a: a as usize,
                b: b as usize,
                count: 1,
            }));
        }
        if group.len() > 2 {
            return Err(mesh_err(MeshError::NonManifoldEdge {
                a: a as usize,
                b: b as usize,
                count: group.len(),
                faces: group.iter().take(3).map(|e| e.2 as usize).collect(),
            }));
        }
        let (e0, e1) = (group[0], group[1]);
        if e0.4 == e1.4 {
            return Err(mesh_err(MeshError::InconsistentOrientation {
                a: a as usize,
                b: b as usize,
                first: e0.2 as usize,
                second: e1.2 as usize,
            }));
        }
        let n = (face_normal[e0.2 as usize] + face_normal[e1.2 as usize]).normalize_or_zero();
        edge[e0.2 as usize][e0.3 as usize] = n;
        edge[e1.2 as usize][e1.3 as usize] = n;
        i = j;
    }
    let mut vertex = vec![Vec3::zero(); num_vertices];
    for (fi, f) in faces.iter().enumerate() {
        let t = &tris[fi];
        for k in 0..3 {
            let e1 = (t[(k + 1) % 3] - t[k]).normalize_or_zero();
            let e2 = (t[(k + 2) % 3] - t[k]).normalize_or_zero();
            let angle = e1.dot(e2).clamp(-1.0, 1.0).acos();
            vertex[f[k] as usize] += face_normal[fi] * angle;
        }
    }
    for v in &mut vertex {
        *v = v.normalize_or_zero();
    }
    Ok(Pseudonormals {
        face: face_normal,
        edge,
        vertex,
    })
}
