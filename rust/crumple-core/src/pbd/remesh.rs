//! Surface tracking level 1 (spec shape_matching §8.6): mesh improvement
//! without topology change, every step. A body that stretches to many
//! times its length (taffy, Fig. 6) stretches its skinned triangles with
//! it; without remeshing a strand's surface becomes a few needle-thin
//! triangles that no longer follow the particles under them. Level 1
//! keeps every edge in [MaxE/10, MaxE]:
//!
//! - **split** every edge longer than MaxE at its midpoint; the new vertex
//!   gets a full rebind (its skin slots are left empty, and the skin
//!   maintenance of the same re-sampling pass binds it, spec §8.3);
//! - **collapse** every edge shorter than MaxE/10 onto its lower-numbered
//!   vertex (which keeps its position and skin) when the link condition
//!   holds, no triangle normal flips, the two opposite vertices have a
//!   valence above three before it (so at least three after: no closed
//!   piece degenerates into a doubled triangle) and no edge longer than
//!   MaxE is made (no split/collapse ping-pong);
//! - **flip** an edge when this raises the smaller minimum angle of its
//!   two triangles and the dihedral angle between them is below 10°, and
//!   the new edge is at most MaxE (so the split bound holds after a pass).
//!
//! The CMMK15 implementation the paper times in its Topo column is not
//! available; these are the spec's [R] rules, written by hand because no
//! maintained Rust crate edits a skinned triangle mesh in place with these
//! conditions (and the skin slots must follow every vertex).
//!
//! Determinism: candidates are sorted (split: longest first; collapse:
//! shortest first; flip: face order), and each round changes an edge only
//! when the vertices whose face lists it reads are unchanged in the same
//! round (a split marks its two ends, a collapse both one-rings, a flip its
//! four corners; the face lists are built once per round), so the
//! result does not depend on the thread count (the scans are parallel, the
//! edits sequential). A closed, consistently oriented manifold stays one.

use super::state::Surface;
use super::topology::label_vertices;
use crate::geometry::retain_used;
use crate::math::Vec3;
use rayon::prelude::*;

/// What one level-1 pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemeshStats {
    /// Edges split at their midpoints.
    pub splits: u32,
    /// Edges collapsed.
    pub collapses: u32,
    /// Edges flipped.
    pub flips: u32,
}

/// Rounds per operation and pass. A round skips the edges next to one it
/// changed, so a run of long edges along a stretched strand needs a few;
/// an edge stretched to 2^k MaxE within one step needs k more. What is left
/// is done in the next step.
const ROUNDS: usize = 6;
/// The cosine below which an angle makes the edge across it a flip
/// candidate (90.57°; see `obtuse_edge`).
const OBTUSE_COS: f32 = -0.01;
/// cos 10°: the largest dihedral angle across a flipped edge (spec §8.6).
const COS_FLIP_DIHEDRAL: f32 = 0.984_807_8;

/// Faces around each vertex (alive ones), as a compressed row list built by
/// a counting sort: O(faces + vertices), no hashing or comparison sort.
struct VertexFaces {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl VertexFaces {
    fn build(nv: usize, faces: &[[u32; 3]], alive: &[bool]) -> Self {
        let mut start = vec![0u32; nv + 1];
        for (t, _) in faces.iter().zip(alive).filter(|(_, a)| **a) {
            for &v in t {
                start[v as usize + 1] += 1;
            }
        }
        for k in 0..nv {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; start[nv] as usize];
        for (f, (t, _)) in faces.iter().zip(alive).enumerate().filter(|(_, (_, a))| **a) {
            for &v in t {
                list[fill[v as usize] as usize] = f as u32;
                fill[v as usize] += 1;
            }
        }
        Self { start, list }
    }

    fn of(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.list[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

/// Twice the area vector of triangle `t` (outward for a counter-clockwise face).
fn normal(y: &[Vec3<f32>], t: [u32; 3]) -> Vec3<f32> {
    let [a, b, c] = t.map(|v| y[v as usize]);
    (b - a).cross(c - a)
}

/// The cosine of the triangle's smallest angle (the largest cosine).
fn min_angle_cos(y: &[Vec3<f32>], t: [u32; 3]) -> f32 {
    let p = t.map(|v| y[v as usize]);
    (0..3)
        .map(|k| {
            let (o, u, w) = (p[k], p[(k + 1) % 3], p[(k + 2) % 3]);
            let (e1, e2) = (u - o, w - o);
            let d = (e1.norm_squared() * e2.norm_squared()).sqrt();
            if d > 0.0 { e1.dot(e2) / d } else { 1.0 }
        })
        .fold(-1.0, f32::max)
}

/// Where the directed edge a → b sits in `t` (k with t[k] = a, t[k+1] = b).
fn directed(t: [u32; 3], a: u32, b: u32) -> Option<usize> {
    (0..3).find(|&k| t[k] == a && t[(k + 1) % 3] == b)
}

/// The face's vertex other than a and b.
fn opposite(t: [u32; 3], a: u32, b: u32) -> u32 {
    t.into_iter().find(|&v| v != a && v != b).unwrap_or(u32::MAX)
}

/// Spec §8.6 level 1 on `surface` with MaxE = `max_edge` (m). Vertex
/// arrays (positions, normals, skin, `nopair`, and `vcomp` where it covers
/// every vertex, relabelled after collapses since its labels are vertex
/// numbers) follow the vertices; new vertices have empty skin slots (a full
/// rebind) and zero normals. The caller recomputes the normals.
pub fn improve(surface: &mut Surface, max_edge: f32) -> RemeshStats {
    let mut stats = RemeshStats::default();
    if surface.faces.is_empty() || !max_edge.is_finite() || max_edge <= 0.0 {
        return stats;
    }
    let mut alive = vec![true; surface.faces.len()];
    for _ in 0..ROUNDS {
        let n = split_round(surface, &mut alive, max_edge);
        stats.splits += n;
        if n == 0 {
            break;
        }
    }
    for _ in 0..ROUNDS {
        let n = collapse_round(surface, &mut alive, max_edge);
        stats.collapses += n;
        if n == 0 {
            break;
        }
    }
    for _ in 0..ROUNDS {
        let n = flip_round(surface, &alive, max_edge);
        stats.flips += n;
        if n == 0 {
            break;
        }
    }
    if stats.collapses > 0 {
        // Collapsed vertices are referenced by no face: drop them, the
        // per-vertex arrays follow.
        let labelled = surface.vcomp.len() == surface.y.len();
        let mut faces = std::mem::take(&mut surface.faces);
        retain_used(&mut faces, &alive);
        surface.set_faces_dropping_unused(faces);
        if labelled {
            // Labels are the smallest vertex number of each piece, and the
            // collapses renumbered the vertices (the pieces are the same).
            label_vertices(surface);
        }
    }
    stats
}

/// Undirected edges (lo, hi) of alive faces whose length passes `pick`,
/// each once, with their squared length.
fn edges_where(surface: &Surface, alive: &[bool], pick: impl Fn(f32) -> bool + Sync) -> Vec<(f32, u32, u32)> {
    let (y, pick) = (&surface.y, &pick);
    let mut out: Vec<(f32, u32, u32)> = surface
        .faces
        .par_iter()
        .zip(alive.par_iter())
        .filter(|(_, a)| **a)
        .flat_map_iter(|(t, _)| {
            let t = *t;
            (0..3).filter_map(move |k| {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                let l2 = (y[a as usize] - y[b as usize]).norm_squared();
                pick(l2).then_some((l2, a.min(b), a.max(b)))
            })
        })
        .collect();
    out.par_sort_unstable_by(|p, q| (p.1, p.2).cmp(&(q.1, q.2)));
    out.dedup_by(|p, q| (p.1, p.2) == (q.1, q.2));
    out
}

/// One round of splits, longest edge first. Returns the edges split.
fn split_round(surface: &mut Surface, alive: &mut Vec<bool>, max_edge: f32) -> u32 {
    let limit = max_edge * max_edge;
    let mut cand = edges_where(surface, alive, |l2| l2 > limit);
    if cand.is_empty() {
        return 0;
    }
    cand.sort_by(|p, q| q.0.total_cmp(&p.0).then((p.1, p.2).cmp(&(q.1, q.2))));
    let nv = surface.y.len();
    let around = VertexFaces::build(nv, &surface.faces, alive);
    // A vertex whose faces changed in this round: its face list is stale.
    let mut dirty = vec![false; nv];
    let mut n = 0;
    let mut hit: Vec<u32> = Vec::new();
    for &(_, a, b) in &cand {
        if dirty[a as usize] || dirty[b as usize] {
            continue;
        }
        hit.clear();
        hit.extend(
            around
                .of(a)
                .iter()
                .copied()
                .filter(|&f| surface.faces[f as usize].contains(&b)),
        );
        if hit.is_empty() {
            continue;
        }
        let p = (surface.y[a as usize] + surface.y[b as usize]) * 0.5;
        // On a cut rim only between two rim vertices; a's piece.
        let np = [a, b]
            .iter()
            .all(|&v| surface.nopair.get(v as usize).copied().unwrap_or(false));
        let m = surface.push_vertex(p, np, a);
        for &f in &hit {
            // Face (p, q, o) with edge p → q becomes (p, m, o) and (m, q, o):
            // same winding, same outline.
            let t = surface.faces[f as usize];
            let Some(k) = directed(t, a, b).or_else(|| directed(t, b, a)) else {
                continue;
            };
            let (p0, q0, o) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
            surface.faces[f as usize] = [p0, m, o];
            surface.faces.push([m, q0, o]);
            alive.push(true);
        }
        dirty[a as usize] = true;
        dirty[b as usize] = true;
        n += 1;
    }
    n
}

/// One round of collapses, shortest edge first. Returns the edges collapsed.
fn collapse_round(surface: &mut Surface, alive: &mut [bool], max_edge: f32) -> u32 {
    let min_edge = 0.1 * max_edge;
    let cand = {
        let mut c = edges_where(surface, alive, |l2| l2 < min_edge * min_edge);
        c.sort_by(|p, q| p.0.total_cmp(&q.0).then((p.1, p.2).cmp(&(q.1, q.2))));
        c
    };
    if cand.is_empty() {
        return 0;
    }
    let nv = surface.y.len();
    let around = VertexFaces::build(nv, &surface.faces, alive);
    let mut dirty = vec![false; nv];
    let mut n = 0;
    let (mut ring_a, mut ring_b) = (Vec::new(), Vec::new());
    let ring = |v: u32, out: &mut Vec<u32>, faces: &[[u32; 3]], alive: &[bool]| {
        out.clear();
        for &f in around.of(v) {
            if alive[f as usize] {
                out.extend(faces[f as usize].iter().copied().filter(|&w| w != v));
            }
        }
        out.sort_unstable();
        out.dedup();
    };
    let valence = |v: u32, alive: &[bool]| around.of(v).iter().filter(|&&f| alive[f as usize]).count();
    'edges: for &(_, a, b) in &cand {
        if dirty[a as usize] || dirty[b as usize] {
            continue;
        }
        // The edge's two faces, a → b in one and b → a in the other.
        let faces = &surface.faces;
        let shared: Vec<u32> = around
            .of(a)
            .iter()
            .copied()
            .filter(|&f| alive[f as usize] && faces[f as usize].contains(&b))
            .collect();
        if shared.len() != 2 {
            continue;
        }
        let (c, d) = (
            opposite(faces[shared[0] as usize], a, b),
            opposite(faces[shared[1] as usize], a, b),
        );
        if c == d || valence(c, alive) <= 3 || valence(d, alive) <= 3 {
            continue;
        }
        // Link condition: the one-rings of a and b share only c and d.
        ring(a, &mut ring_a, faces, alive);
        ring(b, &mut ring_b, faces, alive);
        let common = ring_a.iter().filter(|w| ring_b.binary_search(w).is_ok()).count();
        if common != 2 {
            continue;
        }
        // b moves onto a: no face around b may flip or degenerate, and no
        // edge from a may exceed MaxE.
        let ya = surface.y[a as usize];
        for &w in &ring_b {
            if w != a && (surface.y[w as usize] - ya).norm_squared() > max_edge * max_edge {
                continue 'edges;
            }
        }
        for &f in around.of(b) {
            let t = faces[f as usize];
            if !alive[f as usize] || t.contains(&a) {
                continue;
            }
            let n0 = normal(&surface.y, t);
            let n1 = normal(&surface.y, t.map(|v| if v == b { a } else { v }));
            if n1.dot(n0) <= 0.25 * n0.norm_squared().min(n1.norm_squared()) {
                continue 'edges;
            }
        }
        for &f in around.of(b) {
            let f = f as usize;
            if !alive[f] {
                continue;
            }
            if surface.faces[f].contains(&a) {
                alive[f] = false;
            } else {
                surface.faces[f] = surface.faces[f].map(|v| if v == b { a } else { v });
            }
        }
        for &w in ring_a.iter().chain(&ring_b) {
            dirty[w as usize] = true;
        }
        dirty[a as usize] = true;
        dirty[b as usize] = true;
        n += 1;
    }
    n
}

/// One round of flips over the edges opposite an angle over 90.57° (a flip
/// can raise the minimum angle of two triangles only where their opposite
/// angles sum past 180°, so one of them is obtuse). Returns the flips.
fn flip_round(surface: &mut Surface, alive: &[bool], max_edge: f32) -> u32 {
    let (y, faces) = (&surface.y, &surface.faces);
    // (face, k) with an obtuse angle opposite the edge t[k] → t[k+1]: the
    // only places a flip can help; none (a mesh at rest) ends the round
    // before the face lists are built.
    let cand: Vec<(u32, usize)> = faces
        .par_iter()
        .enumerate()
        .filter(|(f, _)| alive[*f])
        .filter_map(|(f, t)| obtuse_edge(y, *t).map(|k| (f as u32, k)))
        .collect();
    if cand.is_empty() {
        return 0;
    }
    let nv = y.len();
    let around = VertexFaces::build(nv, faces, alive);
    // Every test runs in parallel on the round's starting mesh; the edits
    // below apply the passing flips in face order, skipping those next to
    // an earlier flip of the round (its four corners are marked), so what
    // a test read is unchanged when its flip is applied.
    let around = &around;
    let flips: Vec<Flip> = cand
        .par_iter()
        .filter_map(|&(f1, k)| flip_test(y, faces, alive, around, f1, k, max_edge))
        .collect();
    let mut dirty = vec![false; nv];
    let mut n = 0;
    for fl in &flips {
        if fl.corners.iter().any(|&v| dirty[v as usize]) {
            continue;
        }
        surface.faces[fl.faces[0] as usize] = fl.new[0];
        surface.faces[fl.faces[1] as usize] = fl.new[1];
        for v in fl.corners {
            dirty[v as usize] = true;
        }
        n += 1;
    }
    n
}

/// A flip that passed every test: the two faces, their replacements, and
/// the four corners a, b, c, d.
struct Flip {
    faces: [u32; 2],
    new: [[u32; 3]; 2],
    corners: [u32; 4],
}

/// The k of triangle `t` whose edge t[k] → t[k+1] lies opposite an angle
/// over 90.6° (cos < OBTUSE_COS). Right angles (a quad's two triangles, a
/// UV sphere's cells) are not candidates: their f32 rounding would make
/// every such edge one, and flipping them changes the minimum angle by
/// rounding only (on the Table 1 Armadillo sphere those tests were most of
/// a 13 ms Topo step).
fn obtuse_edge(y: &[Vec3<f32>], t: [u32; 3]) -> Option<usize> {
    let p = t.map(|v| y[v as usize]);
    (0..3).find(|&k| {
        let o = p[(k + 2) % 3];
        let (e1, e2) = (p[k] - o, p[(k + 1) % 3] - o);
        e1.dot(e2) < OBTUSE_COS * (e1.norm_squared() * e2.norm_squared()).sqrt()
    })
}

/// The flip of face `f1`'s edge t[k] → t[k+1] (opposite its obtuse angle),
/// if it passes every test of spec §8.6 level 1 (and ours: manifold edge,
/// no existing c–d edge, new edge within MaxE, no folded triangle).
fn flip_test(
    y: &[Vec3<f32>],
    faces: &[[u32; 3]],
    alive: &[bool],
    around: &VertexFaces,
    f1: u32,
    k: usize,
    max_edge: f32,
) -> Option<Flip> {
    let t1 = faces[f1 as usize];
    let (a, b, c) = (t1[k], t1[(k + 1) % 3], t1[(k + 2) % 3]);
    // Exactly one twin face b → a, and no other face on the edge.
    let on_edge = around
        .of(a)
        .iter()
        .filter(|&&f| alive[f as usize] && faces[f as usize].contains(&b))
        .count();
    let f2 = around
        .of(b)
        .iter()
        .copied()
        .find(|&f| alive[f as usize] && directed(faces[f as usize], b, a).is_some())?;
    if on_edge != 2 {
        return None;
    }
    let t2 = faces[f2 as usize];
    let d = opposite(t2, a, b);
    // The new edge c–d must not exist already and stays within MaxE (the
    // split bound holds after the pass).
    if d == c
        || around
            .of(c)
            .iter()
            .any(|&f| alive[f as usize] && faces[f as usize].contains(&d))
        || (y[c as usize] - y[d as usize]).norm_squared() > max_edge * max_edge
    {
        return None;
    }
    let (n1, n2) = (normal(y, t1), normal(y, t2));
    let (l1, l2) = (n1.norm_squared().sqrt(), n2.norm_squared().sqrt());
    // Written so a NaN refuses the flip.
    let flat = n1.dot(n2) > COS_FLIP_DIHEDRAL * l1 * l2;
    // Same outline a → d → b → c, diagonal c–d.
    let (u1, u2) = ([c, a, d], [d, b, c]);
    let sum = n1 + n2;
    let unfolded = normal(y, u1).dot(sum) > 0.0 && normal(y, u2).dot(sum) > 0.0;
    // A smaller largest cosine is a larger smallest angle.
    let better = flat && unfolded && {
        let before = min_angle_cos(y, t1).max(min_angle_cos(y, t2));
        min_angle_cos(y, u1).max(min_angle_cos(y, u2)) < before
    };
    better.then_some(Flip {
        faces: [f1, f2],
        new: [u1, u2],
        corners: [a, b, c, d],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pbd::state::Skin;
    use crate::test_util::closed_and_oriented;

    fn surface_of(v: Vec<[f32; 3]>, faces: Vec<[u32; 3]>) -> Surface {
        let n = v.len();
        Surface {
            y: v.into_iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect(),
            faces,
            normals: vec![Vec3::zero(); n],
            skin: vec![
                Skin {
                    particle: [0; 4],
                    weight: [1.0, 0.0, 0.0, 0.0],
                    offset: [Vec3::zero(); 4]
                };
                n
            ],
            ..Default::default()
        }
    }

    /// An axis-aligned box [0, l]×[0, 1]×[0, 1] as 12 outward triangles.
    fn long_box(l: f32) -> Surface {
        let v: Vec<[f32; 3]> = (0..8)
            .map(|k| {
                [
                    if k & 1 != 0 { l } else { 0.0 },
                    if k & 2 != 0 { 1.0 } else { 0.0 },
                    if k & 4 != 0 { 1.0 } else { 0.0 },
                ]
            })
            .collect();
        let quads = [
            [0, 2, 3, 1], // z = 0, normal -z
            [4, 5, 7, 6], // z = 1
            [0, 1, 5, 4], // y = 0
            [2, 6, 7, 3], // y = 1
            [0, 4, 6, 2], // x = 0
            [1, 3, 7, 5], // x = l
        ];
        let faces = quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .collect();
        surface_of(v, faces)
    }

    fn edges(s: &Surface) -> Vec<(u32, u32)> {
        let mut e: Vec<(u32, u32)> = s
            .faces
            .iter()
            .flat_map(|t| (0..3).map(move |k| (t[k], t[(k + 1) % 3])))
            .collect();
        e.sort_unstable();
        e
    }

    /// Closed and consistently oriented, no degenerate face, the vertex
    /// arrays in step, and a sphere's Euler characteristic.
    fn assert_closed_manifold(s: &Surface) {
        assert!(
            closed_and_oriented(&s.faces),
            "not closed and consistently oriented"
        );
        let e = edges(s);
        for t in &s.faces {
            assert!(
                t[0] != t[1] && t[1] != t[2] && t[0] != t[2],
                "degenerate face {t:?}"
            );
            assert!(t.iter().all(|&v| (v as usize) < s.y.len()));
        }
        assert_eq!(s.y.len(), s.skin.len());
        assert_eq!(s.y.len(), s.normals.len());
        // Euler characteristic of a sphere: V − E + F = 2.
        let (v, e, f) = (s.y.len() as i64, e.len() as i64 / 2, s.faces.len() as i64);
        assert_eq!(v - e + f, 2, "V {v} E {e} F {f}");
    }

    fn volume(s: &Surface) -> f64 {
        s.faces
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|v| s.y[v as usize].cast::<f64>());
                a.dot(b.cross(c)) / 6.0
            })
            .sum()
    }

    fn longest(s: &Surface) -> f32 {
        edges(s)
            .iter()
            .map(|&(a, b)| (s.y[a as usize] - s.y[b as usize]).norm_squared().sqrt())
            .fold(0.0, f32::max)
    }

    #[test]
    fn long_edges_are_split_until_none_is_longer_than_max_edge() {
        let mut s = long_box(5.0);
        let v0 = volume(&s);
        let mut total = RemeshStats::default();
        // A coarse 5 × 1 box is the worst case: a corner carries many long
        // edges and a round splits one per vertex, so it takes several
        // passes (a simulated surface stretches a little per step).
        for _ in 0..40 {
            let st = improve(&mut s, 0.6);
            total.splits += st.splits;
            total.flips += st.flips;
            assert_closed_manifold(&s);
            if st == RemeshStats::default() {
                break;
            }
        }
        assert!(total.splits > 20, "{total:?}");
        assert!(longest(&s) <= 0.6 + 1e-6, "longest edge {}", longest(&s));
        // Midpoint splits of flat faces and flips of coplanar pairs keep the volume.
        assert!((volume(&s) - v0).abs() < 1e-5 * v0, "{} vs {v0}", volume(&s));
        // New vertices have empty skin slots (a full rebind follows).
        assert!(s.skin[8..].iter().all(|k| k.weight == [0.0; 4]));
        assert!(s.skin[..8].iter().all(|k| k.weight[0] == 1.0));
    }

    #[test]
    fn short_edges_collapse_and_the_mesh_stays_closed() {
        // A fine box, then one vertex moved next to a neighbour.
        let mut s = long_box(1.0);
        for _ in 0..3 {
            improve(&mut s, 0.3);
        }
        assert_closed_manifold(&s);
        let nv = s.y.len();
        let (a, b) = edges(&s)
            .into_iter()
            .find(|&(a, b)| a < b && a >= 8 && b >= 8)
            .unwrap();
        let target = s.y[a as usize] + (s.y[b as usize] - s.y[a as usize]) * 0.99;
        s.y[a as usize] = target;
        let st = improve(&mut s, 0.3);
        assert!(st.collapses >= 1, "{st:?}");
        assert_closed_manifold(&s);
        assert_eq!(s.y.len(), nv - st.collapses as usize + st.splits as usize);
        let shortest = edges(&s)
            .iter()
            .map(|&(a, b)| (s.y[a as usize] - s.y[b as usize]).norm_squared().sqrt())
            .fold(f32::INFINITY, f32::min);
        assert!(shortest >= 0.03 * 0.99, "shortest edge {shortest}");
    }

    #[test]
    fn several_collapses_in_one_pass_keep_flags_and_labels_with_their_vertices() {
        let mut s = long_box(1.0);
        for _ in 0..3 {
            improve(&mut s, 0.3);
        }
        assert_closed_manifold(&s);
        // Flags on the face x = 0, labels from a level-2 pass.
        s.nopair = s.y.iter().map(|p| p.x == 0.0).collect();
        label_vertices(&mut s);
        // Shorten edges away from x = 0 whose one-rings do not touch.
        let mut near = vec![false; s.y.len()];
        let mut moved = 0;
        for (a, b) in edges(&s) {
            let (ai, bi) = (a as usize, b as usize);
            if a > b || near[ai] || near[bi] || s.y[ai].x == 0.0 || s.y[bi].x == 0.0 {
                continue;
            }
            for t in s.faces.iter().filter(|t| t.contains(&a) || t.contains(&b)) {
                for &v in t {
                    near[v as usize] = true;
                }
            }
            s.y[ai] = s.y[ai] + (s.y[bi] - s.y[ai]) * 0.99;
            moved += 1;
        }
        assert!(moved >= 4, "{moved}");
        let nv = s.y.len();
        let st = improve(&mut s, 0.3);
        assert!(st.collapses >= 2, "{st:?}");
        assert_closed_manifold(&s);
        assert_eq!(s.y.len(), nv + st.splits as usize - st.collapses as usize);
        // The flags moved with their vertices; the labels were made afresh.
        assert_eq!(s.nopair.len(), s.y.len());
        for (p, f) in s.y.iter().zip(&s.nopair) {
            assert_eq!(*f, p.x == 0.0, "{p:?}");
        }
        assert_eq!(s.vcomp, vec![0; s.y.len()]);
    }

    #[test]
    fn a_tetrahedron_is_never_collapsed_into_a_doubled_triangle() {
        let mut s = surface_of(
            vec![
                [0.0, 0.0, 0.0],
                [1e-3, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
            ],
            vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
        );
        let st = improve(&mut s, 1.5);
        assert_eq!(st.collapses, 0);
        assert_eq!(s.faces.len(), 4);
        assert_closed_manifold(&s);
    }

    #[test]
    fn a_flip_raises_the_minimum_angle_of_a_flat_pair() {
        // Two triangles (an open sheet) sharing the long diagonal 0–1 of a
        // thin rhombus, its fourth corner lifted by `lift` m.
        let rhombus = |lift: f32| {
            let v = vec![
                [0.0, 0.0, 0.0],
                [2.0, 0.0, 0.0],
                [1.0, 0.3, 0.0],
                [1.0, -0.3, lift],
            ];
            surface_of(v, vec![[0, 1, 2], [1, 0, 3]])
        };
        let mut s = rhombus(0.0);
        let before = min_angle_cos(&s.y, s.faces[0]).max(min_angle_cos(&s.y, s.faces[1]));
        let alive = vec![true; 2];
        let n = flip_round(&mut s, &alive, 10.0);
        assert_eq!(n, 1);
        let after = min_angle_cos(&s.y, s.faces[0]).max(min_angle_cos(&s.y, s.faces[1]));
        assert!(after < before);
        let mut e: Vec<(u32, u32)> = edges(&s).into_iter().map(|(a, b)| (a.min(b), a.max(b))).collect();
        e.sort_unstable();
        assert!(e.contains(&(2, 3)) && !e.contains(&(0, 1)), "{e:?}");
        // Bent past 10° about the diagonal, the pair is left alone.
        assert_eq!(flip_round(&mut rhombus(0.1), &alive, 10.0), 0);
        // Nor when the new diagonal would be longer than MaxE.
        assert_eq!(flip_round(&mut rhombus(0.0), &alive, 0.5), 0);
    }

    #[test]
    fn the_result_does_not_depend_on_the_thread_count() {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut s = long_box(7.0);
                // Skew it so flips and uneven splits happen.
                for p in s.y.iter_mut() {
                    p.y += 0.3 * p.x;
                }
                for _ in 0..3 {
                    improve(&mut s, 0.5);
                }
                s
            })
        };
        let (one, two) = (run(1), run(2));
        assert_eq!(one.faces, two.faces);
        assert_eq!(one.y, two.y);
        assert_closed_manifold(&one);
    }
}
