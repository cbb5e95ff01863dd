//! Merging for surface tracking level 2 (spec shape_matching §8.6 steps 2
//! and 5, §7 "Merging"): where two sheets of one body's surface press
//! against each other, their facing triangles are removed and the two holes
//! are joined by a strip of triangles, so the surface becomes one piece
//! there and the particles on both sides share a component again.
//!
//! Step (2) asks for intersecting triangle pairs. Skinned vertices sit about
//! half a spacing outside their particles and particle contacts keep two
//! pressed sheets' particles a spacing apart, so pressed surfaces touch
//! rather than cross: the test here is "facing and within `gap`" (normals
//! opposed, n_a·n_b < −0.5, the closest of a few sample points of one to
//! the other triangle within `gap`), which includes crossing pairs whose
//! samples come close. Triangles next to a cut (flagged `nopair`, §7 "User
//! cut") never pair, so a cut does not heal.

use super::grid::Grid;
use super::state::Surface;
use super::topology::directed_edges;
use crate::geometry::closest::closest_on_triangle;
use crate::math::Vec3;

/// A stitch starts at the closest vertex pair of its two loops; the search
/// looks at no more than this many vertices of each (its cost is their
/// product; a longer loop starts from the closest pair among its first).
const MAX_START_SEARCH: usize = 4096;

/// Distance from `p` to triangle (a, b, c), m (the shared closest-point
/// kernel, in f64).
fn point_triangle_distance(p: Vec3<f32>, a: Vec3<f32>, b: Vec3<f32>, c: Vec3<f32>) -> f32 {
    let [p, a, b, c] = [p, a, b, c].map(|v| v.cast::<f64>());
    let w = closest_on_triangle(p, a, b, c);
    (p - (a * w[0] + b * w[1] + c * w[2])).norm() as f32
}

/// Step (2) as contact: a flag per face of `surface`, set where the face
/// faces a face of another component (`vcomp` of the last pass) within
/// `gap` (m), neither touching a `nopair` vertex. Only pieces merge, not a
/// piece with itself: once joined, the faces around a seam keep touching
/// while pressed, and deleting them again would cut the seam off (spec §7:
/// a fold merging with itself is allowed, not required). `cell` (m) is the search
/// grid's cell; faces larger than it (stretched across a tear) are tested
/// only against faces whose centroids lie within one cell.
pub fn touching_faces(surface: &Surface, gap: f32, cell: f32, grid: &mut Grid) -> Vec<bool> {
    use rayon::prelude::*;
    let (y, faces) = (&surface.y, &surface.faces);
    let nopair = |v: u32| surface.nopair.get(v as usize).copied().unwrap_or(false);
    let centroids: Vec<Vec3<f32>> = faces
        .iter()
        .map(|f| (y[f[0] as usize] + y[f[1] as usize] + y[f[2] as usize]) * (1.0 / 3.0))
        .collect();
    let normals: Vec<Vec3<f32>> = faces
        .iter()
        .map(|f| {
            let [a, b, c] = f.map(|v| y[v as usize]);
            let n = (b - a).cross(c - a);
            let l = n.norm();
            if l > 0.0 { n * (1.0 / l) } else { Vec3::zero() }
        })
        .collect();
    if surface.vcomp.len() != y.len() {
        return vec![false; faces.len()];
    }
    let comp = |f: usize| surface.vcomp[faces[f][0] as usize];
    let eligible = |f: usize| !faces[f].iter().any(|&v| nopair(v)) && normals[f] != Vec3::zero();
    grid.build(&centroids, cell, eligible);
    let flags: Vec<bool> = (0..faces.len())
        .into_par_iter()
        .map_init(Vec::new, |near, f| {
            if !eligible(f) {
                return false;
            }
            let t = faces[f];
            let [a, b, c] = t.map(|v| y[v as usize]);
            let samples = [a, b, c, centroids[f], (a + b) * 0.5, (b + c) * 0.5, (c + a) * 0.5];
            grid.within(&centroids, centroids[f], cell, near);
            near.iter().any(|&g| {
                let g = g as usize;
                if comp(g) == comp(f) || normals[f].dot(normals[g]) > -0.5 {
                    return false;
                }
                let [p, q, s] = faces[g].map(|v| y[v as usize]);
                let other = [p, q, s, centroids[g], (p + q) * 0.5, (q + s) * 0.5, (s + p) * 0.5];
                samples
                    .iter()
                    .any(|&x| point_triangle_distance(x, p, q, s) <= gap)
                    || other.iter().any(|&x| point_triangle_distance(x, a, b, c) <= gap)
            })
        })
        .collect();
    flags
}

/// One boundary loop: its vertices in boundary order (each boundary
/// half-edge lp[k] → lp[k+1] belongs to a kept face) and the sum of the
/// normals of those faces (area-weighted).
#[derive(Debug)]
pub struct Loop {
    /// Vertices, in boundary order.
    pub vertices: Vec<u32>,
    /// Σ of the adjacent kept faces' (unnormalised) normals.
    pub normal: Vec3<f32>,
}

/// Step (5): pairs loops of different components (`vcomp`) that face each
/// other (centroids closer than `within` m, mean normals opposed,
/// n_a·n_b < −0.5, no `nopair` vertex),
/// closest pairs first, and joins each pair with a strip of triangles
/// appended to `faces`, unless the strip would repeat a directed edge in
/// use (the edge would become non-manifold; both loops are then capped).
/// Returns the loops left to cap, the number of seams made and the
/// vertices of their rims.
pub fn pair_and_stitch(
    y: &[Vec3<f32>],
    nopair: &[bool],
    vcomp: &[u32],
    loops: Vec<Loop>,
    within: f32,
    faces: &mut Vec<[u32; 3]>,
) -> (Vec<Loop>, u32, Vec<u32>) {
    let centre = |l: &Loop| {
        l.vertices.iter().fold(Vec3::zero(), |a, &v| a + y[v as usize]) * (1.0 / l.vertices.len() as f32)
    };
    let unit = |n: Vec3<f32>| {
        let l = n.norm();
        if l > 0.0 { n * (1.0 / l) } else { Vec3::zero() }
    };
    let pairable: Vec<bool> = loops
        .iter()
        .map(|l| {
            !l.vertices
                .iter()
                .any(|&v| nopair.get(v as usize).copied().unwrap_or(false))
        })
        .collect();
    let centres: Vec<Vec3<f32>> = loops.iter().map(centre).collect();
    let dirs: Vec<Vec3<f32>> = loops.iter().map(|l| unit(l.normal)).collect();
    let mut candidates: Vec<(f32, usize, usize)> = Vec::new();
    for i in 0..loops.len() {
        for j in i + 1..loops.len() {
            let d = (centres[i] - centres[j]).norm();
            let other = |l: &Loop| vcomp.get(l.vertices[0] as usize);
            if pairable[i]
                && pairable[j]
                && other(&loops[i]) != other(&loops[j])
                && d < within
                && dirs[i].dot(dirs[j]) < -0.5
            {
                candidates.push((d, i, j));
            }
        }
    }
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut used = vec![false; loops.len()];
    let (mut seams, mut rims) = (0, Vec::new());
    // Directed edges in use (built when a pair is first tried): a strip
    // whose diagonal would repeat one (two holes of one piece whose rims
    // are already joined by an edge elsewhere) would make that edge
    // non-manifold, so such a pair is not stitched and both holes are
    // capped instead.
    let mut taken: Option<std::collections::HashSet<(u32, u32)>> = None;
    let mut strip = Vec::new();
    for &(_, i, j) in &candidates {
        if used[i] || used[j] {
            continue;
        }
        strip.clear();
        stitch(y, &loops[i].vertices, &loops[j].vertices, &mut strip);
        let taken = taken.get_or_insert_with(|| directed_edges(faces));
        let mut new = std::collections::HashSet::new();
        let clean = strip
            .iter()
            .flat_map(|t| (0..3).map(move |k| (t[k], t[(k + 1) % 3])))
            .all(|e| !taken.contains(&e) && new.insert(e));
        if !clean {
            continue;
        }
        taken.extend(new);
        faces.extend_from_slice(&strip);
        used[i] = true;
        used[j] = true;
        rims.extend_from_slice(&loops[i].vertices);
        rims.extend_from_slice(&loops[j].vertices);
        seams += 1;
    }
    let rest = loops
        .into_iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|(l, _)| l)
        .collect();
    (rest, seams, rims)
}

/// Joins loops `l1` and `l2` (boundary order) facing each other with a
/// strip: `l1` is walked forwards and `l2` backwards from their closest
/// vertex pair, each step advancing the loop whose next diagonal is
/// shorter, so every boundary half-edge is used once in reverse and the
/// strip's winding agrees with the faces it joins.
fn stitch(y: &[Vec3<f32>], l1: &[u32], l2: &[u32], faces: &mut Vec<[u32; 3]>) {
    let (n1, n2) = (l1.len(), l2.len());
    let d = |a: u32, b: u32| (y[a as usize] - y[b as usize]).norm_squared();
    let (mut i0, mut j0, mut best) = (0, 0, f32::INFINITY);
    for (i, &a) in l1.iter().enumerate().take(MAX_START_SEARCH) {
        for (j, &b) in l2.iter().enumerate().take(MAX_START_SEARCH) {
            let e = d(a, b);
            if e < best {
                (i0, j0, best) = (i, j, e);
            }
        }
    }
    let at1 = |k: usize| l1[(i0 + k) % n1];
    let at2 = |k: usize| l2[(j0 + n2 - k % n2) % n2];
    let (mut i, mut j) = (0, 0);
    while i < n1 || j < n2 {
        let advance_1 = if i == n1 {
            false
        } else if j == n2 {
            true
        } else {
            d(at1(i + 1), at2(j)) <= d(at1(i), at2(j + 1))
        };
        if advance_1 {
            faces.push([at1(i + 1), at1(i), at2(j)]);
            i += 1;
        } else {
            faces.push([at2(j), at2(j + 1), at1(i)]);
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two facing triangular holes, 0-1-2 below and 3-4-5 above (3 over 0),
    /// plus `extra` faces.
    fn pair(extra: &[[u32; 3]]) -> (Vec<Loop>, u32, Vec<[u32; 3]>) {
        let mut y: Vec<Vec3<f32>> = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
            .iter()
            .map(|p| Vec3::new(p[0], p[1], 0.0))
            .collect();
        y.extend(y.clone().iter().map(|p| *p + Vec3::new(0.0, 0.0, 0.1)));
        y.extend([Vec3::new(-1.0, -1.0, 0.05), Vec3::new(-1.0, 0.5, 0.05)]);
        let loops = vec![
            Loop {
                vertices: vec![0, 1, 2],
                normal: Vec3::new(0.0, 0.0, 1.0),
            },
            Loop {
                vertices: vec![3, 5, 4],
                normal: Vec3::new(0.0, 0.0, -1.0),
            },
        ];
        let vcomp = [0, 0, 0, 3, 3, 3, 0, 0];
        let mut faces = extra.to_vec();
        let (rest, seams, _) = pair_and_stitch(&y, &[], &vcomp, loops, 10.0, &mut faces);
        (rest, seams, faces)
    }

    #[test]
    fn facing_holes_are_stitched_unless_an_edge_would_repeat() {
        let (rest, seams, faces) = pair(&[]);
        assert_eq!((rest.len(), seams), (0, 1));
        assert_eq!(faces.len(), 6, "a strip of 3 + 3 triangles");
        let e = directed_edges(&faces);
        assert!(
            e.contains(&(0, 3)) || e.contains(&(3, 0)),
            "the strip joins 0 and 3"
        );
        // The edge 0-3 already exists (both directions): stitching would
        // give it a third and fourth face, so the holes are left to be capped.
        let existing = [[0, 3, 6], [3, 0, 7]];
        let (rest, seams, faces) = pair(&existing);
        assert_eq!((rest.len(), seams), (2, 0));
        assert_eq!(faces, existing.to_vec());
    }
}
