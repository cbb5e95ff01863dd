//! Edge splitting: refine a mesh until no edge is longer than a bound.
//!
//! Shape matching skins its surface on the particles (spec shape_matching
//! §8.3), so the surface can only follow the body where it has vertices: a
//! box given as 12 triangles keeps its 8 corners while the bar between them
//! sags or stretches, and the particles that leave that rigid shell are
//! deleted as "outside the surface" (§5.1 b). Spec §2.4 step 1 therefore
//! refines the input to edges of at most MaxE. This is the splitting half of
//! level-1 mesh improvement (§8.6; collapses and flips are not needed for an
//! input mesh), written here because it is a few lines over the face list
//! and no mesh crate in the tree does it on our validated `TriMesh`.

use std::collections::HashMap;

use super::TriMesh;
use crate::Result;
use crate::math::Vec3;

/// Faces the refinement may produce before it gives up (a bound far below
/// the sizes it is used at, so a tiny `max_edge` fails fast with a message).
pub const MAX_REFINED_FACES: usize = 4_000_000;

/// `mesh` with every edge longer than `max_edge` (m) split at its midpoint,
/// repeated until none is; orientation, closedness and the surface's shape
/// are kept (new vertices lie on the old edges). Each face is split by how
/// many of its edges are: one → 2 faces, two → 3 (the quad along its
/// shorter diagonal), three → 4. A mesh already fine enough comes back
/// unchanged. Errors: `max_edge` not positive, or more than
/// [`MAX_REFINED_FACES`] faces needed.
pub fn split_long_edges(mesh: &TriMesh, max_edge: f64) -> Result<TriMesh> {
    if max_edge.is_nan() || max_edge <= 0.0 {
        return crate::invalid!("max_edge must be > 0 m, got {max_edge}");
    }
    let mut vertices = mesh.vertices().to_vec();
    let mut faces = mesh.faces().to_vec();
    let long = |v: &[Vec3<f64>], a: u32, b: u32| (v[a as usize] - v[b as usize]).norm() > max_edge;
    loop {
        let mut mids: HashMap<(u32, u32), u32> = HashMap::new();
        for f in &faces {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                let key = (a.min(b), a.max(b));
                if !mids.contains_key(&key) && long(&vertices, a, b) {
                    let m = (vertices[a as usize] + vertices[b as usize]) * 0.5;
                    vertices.push(m);
                    mids.insert(key, (vertices.len() - 1) as u32);
                }
            }
        }
        if mids.is_empty() {
            break;
        }
        let mut next = Vec::with_capacity(faces.len() * 2);
        for f in &faces {
            let mid = |k: usize| {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                mids.get(&(a.min(b), a.max(b))).copied()
            };
            let m = [mid(0), mid(1), mid(2)];
            match m.iter().filter(|x| x.is_some()).count() {
                0 => next.push(*f),
                1 => {
                    // Side k = (a, b) split at s; c opposite.
                    let k = m.iter().position(Option::is_some).unwrap_or(0);
                    let (a, b, c) = (f[k], f[(k + 1) % 3], f[(k + 2) % 3]);
                    let s = m[k].unwrap_or(a);
                    next.push([a, s, c]);
                    next.push([s, b, c]);
                }
                2 => {
                    // Side k = (a, b) whole; (b, c) split at s, (c, a) at t.
                    let k = m.iter().position(Option::is_none).unwrap_or(0);
                    let (a, b, c) = (f[k], f[(k + 1) % 3], f[(k + 2) % 3]);
                    let (s, t) = (m[(k + 1) % 3].unwrap_or(b), m[(k + 2) % 3].unwrap_or(c));
                    next.push([s, c, t]);
                    let d = |i: u32, j: u32| (vertices[i as usize] - vertices[j as usize]).norm();
                    if d(a, s) <= d(b, t) {
                        next.push([a, b, s]);
                        next.push([a, s, t]);
                    } else {
                        next.push([a, b, t]);
                        next.push([b, s, t]);
                    }
                }
                _ => {
                    let (s0, s1, s2) = (m[0].unwrap_or(f[0]), m[1].unwrap_or(f[1]), m[2].unwrap_or(f[2]));
                    next.push([f[0], s0, s2]);
                    next.push([s0, f[1], s1]);
                    next.push([s2, s1, f[2]]);
                    next.push([s0, s1, s2]);
                }
            }
        }
        if next.len() > MAX_REFINED_FACES {
            return crate::invalid!(
                "refining the mesh to edges of at most {max_edge:.3e} m needs more than {MAX_REFINED_FACES} \
                 faces; give a larger max_edge (or a larger spacing)"
            );
        }
        faces = next;
    }
    if faces.len() == mesh.num_faces() {
        return Ok(mesh.clone());
    }
    TriMesh::from_u32_faces(vertices, faces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{box_mesh, uv_sphere};

    fn longest(m: &TriMesh) -> f64 {
        let v = m.vertices();
        m.faces()
            .iter()
            .flat_map(|f| (0..3).map(move |k| (v[f[k] as usize] - v[f[(k + 1) % 3] as usize]).norm()))
            .fold(0.0, f64::max)
    }

    #[test]
    fn a_coarse_box_is_refined_closed_oriented_and_same_volume() {
        let coarse = box_mesh(Vec3::zero(), Vec3::new(0.5, 0.1, 0.1), [1, 1, 1]).unwrap();
        let fine = split_long_edges(&coarse, 0.05).unwrap();
        assert!(longest(&coarse) > 1.0);
        assert!(longest(&fine) <= 0.05, "{}", longest(&fine));
        assert!(fine.num_faces() > 100 * coarse.num_faces());
        assert!(fine.is_closed() && fine.consistently_oriented());
        assert_eq!(fine.euler_characteristic(), 2);
        let (v0, v1) = (coarse.signed_volume(), fine.signed_volume());
        assert!((v1 - v0).abs() < 1e-12 * v0.abs(), "{v0} vs {v1}");
        // Every new vertex lies on the old surface: the bounds are unchanged.
        assert_eq!(coarse.bounds(), fine.bounds());
    }

    #[test]
    fn a_fine_enough_mesh_comes_back_unchanged() {
        let s = uv_sphere(Vec3::zero(), 1.0, 8, 12).unwrap();
        let same = split_long_edges(&s, 10.0).unwrap();
        assert_eq!(same, s);
        let finer = split_long_edges(&s, 0.2).unwrap();
        assert!(longest(&finer) <= 0.2 && finer.is_closed() && finer.consistently_oriented());
    }

    #[test]
    fn bad_or_too_small_bounds_are_refused() {
        let b = box_mesh(Vec3::zero(), Vec3::new(1.0, 1.0, 1.0), [1, 1, 1]).unwrap();
        for bad in [0.0, -1.0, f64::NAN] {
            assert!(split_long_edges(&b, bad).is_err());
        }
        let e = split_long_edges(&b, 1e-4).unwrap_err().to_string();
        assert!(e.contains("larger max_edge"), "{e}");
    }
}
