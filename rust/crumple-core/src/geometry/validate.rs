//! Checks that turn a user's vertex and face arrays into a valid mesh, or a
//! [`MeshError`] naming what is wrong and where.
//!
//! The checks run in a fixed order (empty, non-finite vertex, index range,
//! degenerate face, duplicate face, then non-manifold edge in
//! [`MeshTopology::build`](super::MeshTopology)) and each reports the first
//! offending item, so the same bad input always gives the same message.

use super::MeshError;
use crate::math::Vec3;

/// A face whose area is at most this times its longest edge squared is
/// degenerate. Relative, so the test means the same in millimetres and
/// kilometres; 1e-12 is far above f64 rounding of a cross product
/// (~1e-16 relative) yet far below any triangle a simulation can use (an
/// aspect ratio of 10¹²), so only truly collinear faces are caught.
pub const DEGENERATE_AREA_RATIO: f64 = 1e-12;

/// Rejects an empty mesh or one with more vertices than `u32` indices reach.
pub(crate) fn check_sizes(num_vertices: usize, num_faces: usize) -> Result<(), MeshError> {
    if num_vertices == 0 || num_faces == 0 {
        return Err(MeshError::EmptyMesh {
            num_vertices,
            num_faces,
        });
    }
    if num_vertices > u32::MAX as usize || num_faces > u32::MAX as usize {
        return Err(MeshError::Other(format!(
            "mesh has {num_vertices} vertices and {num_faces} faces; crumple stores indices as \
             32-bit integers, so both must be at most {}; split the mesh",
            u32::MAX
        )));
    }
    Ok(())
}

/// First vertex with a NaN or infinite coordinate.
pub(crate) fn check_finite(vertices: &[Vec3<f64>]) -> Result<(), MeshError> {
    match vertices.iter().position(|v| !v.is_finite()) {
        Some(vertex) => Err(MeshError::NonFiniteVertex { vertex }),
        None => Ok(()),
    }
}

/// Converts `i64` indices (as they come from numpy) to `u32`, reporting the
/// first negative or too large one.
pub(crate) fn check_indices(num_vertices: usize, faces: &[[i64; 3]]) -> Result<Vec<[u32; 3]>, MeshError> {
    let mut out = Vec::with_capacity(faces.len());
    for (face, tri) in faces.iter().enumerate() {
        let mut t = [0u32; 3];
        for (slot, &index) in t.iter_mut().zip(tri) {
            if index < 0 || index as u64 >= num_vertices as u64 {
                return Err(MeshError::IndexOutOfRange {
                    face,
                    index,
                    num_vertices,
                });
            }
            *slot = index as u32;
        }
        out.push(t);
    }
    Ok(out)
}

/// First face that repeats a vertex or has (relatively) zero area.
pub(crate) fn check_degenerate(vertices: &[Vec3<f64>], faces: &[[u32; 3]]) -> Result<(), MeshError> {
    for (face, &tri) in faces.iter().enumerate() {
        let [a, b, c] = tri;
        if a == b || b == c || a == c {
            return Err(MeshError::DegenerateFace {
                face,
                vertices: tri,
                reason: "it uses the same vertex index twice",
            });
        }
        let (pa, pb, pc) = (vertices[a as usize], vertices[b as usize], vertices[c as usize]);
        let longest2 = (pb - pa)
            .norm_squared()
            .max((pc - pb).norm_squared())
            .max((pa - pc).norm_squared());
        let area = 0.5 * (pb - pa).cross(pc - pa).norm();
        if area <= DEGENERATE_AREA_RATIO * longest2 {
            let reason = if longest2 == 0.0 {
                "its three vertices are at the same position"
            } else {
                "its vertices are collinear or coincident, so its area is zero"
            };
            return Err(MeshError::DegenerateFace {
                face,
                vertices: tri,
                reason,
            });
        }
    }
    Ok(())
}

/// First pair of faces over the same vertex set, in any order or winding.
/// Sorting instead of hashing keeps the reported pair deterministic: `first`
/// is the earlier face, `second` the earliest later copy.
pub(crate) fn check_duplicates(faces: &[[u32; 3]]) -> Result<(), MeshError> {
    let mut keyed: Vec<([u32; 3], u32)> = faces
        .iter()
        .enumerate()
        .map(|(f, tri)| {
            let mut k = *tri;
            k.sort_unstable();
            (k, f as u32)
        })
        .collect();
    keyed.sort_unstable();
    // Within a run of equal keys faces ascend, so the run's first two are the
    // original and its earliest copy; report the run whose copy comes first.
    let mut best: Option<(u32, u32)> = None;
    for run in keyed.chunk_by(|x, y| x.0 == y.0) {
        if let [(_, first), (_, second), ..] = *run {
            if best.is_none_or(|(_, s)| second < s) {
                best = Some((first, second));
            }
        }
    }
    match best {
        Some((first, second)) => Err(MeshError::DuplicateFace {
            first: first as usize,
            second: second as usize,
            vertices: faces[first as usize],
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_reports_earliest_repeat_and_its_original() {
        // Face 3 repeats face 1 (other winding); face 4 repeats face 0.
        let faces = vec![[0, 1, 2], [2, 3, 4], [5, 6, 7], [4, 3, 2], [1, 2, 0]];
        assert_eq!(
            check_duplicates(&faces),
            Err(MeshError::DuplicateFace {
                first: 1,
                second: 3,
                vertices: [2, 3, 4]
            })
        );
    }

    #[test]
    fn triple_copy_reports_first_two() {
        let faces = vec![[9, 8, 7], [7, 8, 9], [8, 9, 7]];
        assert_eq!(
            check_duplicates(&faces),
            Err(MeshError::DuplicateFace {
                first: 0,
                second: 1,
                vertices: [9, 8, 7]
            })
        );
    }

    #[test]
    fn thin_but_valid_triangle_passes() {
        let v = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.5, 1e-9, 0.0),
        ];
        assert!(check_degenerate(&v, &[[0, 1, 2]]).is_ok());
        let v = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.5, 1e-13, 0.0),
        ];
        assert!(check_degenerate(&v, &[[0, 1, 2]]).is_err());
    }
}
