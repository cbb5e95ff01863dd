//! Surface tracking level 2 and components (spec shape_matching §7, §8.6):
//! the skinned surface is allowed to tear and to be cut, each connected
//! piece of it is a component, and the particles, clusters and skin follow
//! the pieces, so a body that tears or is cut becomes separate bodies of
//! particles that no cluster holds together.
//!
//! The mesh pass is the spec's "minimal substitute" for CMMK15, steps (1),
//! (3), (4) and (6): vertices that no particle of their body supports
//! within 2r are deleted with their triangles, and so are triangles whose
//! centroid or an edge midpoint is unsupported (skinned vertices follow
//! their particles, so a tear shows as triangles stretched across a gap
//! rather than as unsupported vertices); triangles around edges used
//! more than twice and around vertices where two boundary loops touch are
//! deleted until the boundary is a set of simple loops; each loop is capped
//! with a fan around a new vertex at its centroid (which the skin rebinds).
//! The output is a closed mesh. Steps (2) and (5), merging, are in
//! [`super::merge`]: facing triangles within a quarter spacing go, and
//! facing holes are joined into a seam. Step (7), the level-1 mesh
//! improvement, is [`super::remesh`], run by the re-sampler after this pass.
//!
//! Labels: union-find over triangle edges gives each vertex its component
//! (the smallest vertex index in it). A particle the skin references takes
//! the component most of its references come from; the others take the
//! label of the nearest labelled particle reached over pairs closer than 2r
//! that carried the same label before (so a cut, which relabels one side,
//! is not undone across the cut plane); a cluster whose members disagree
//! is removed by re-sampling (spec §7 rule 4) and new clusters form per
//! component.

use std::collections::VecDeque;

use super::grid::Grid;
use super::state::{State, Surface};
use crate::geometry::retain_used;
use crate::math::Vec3;

/// No component.
pub const NONE: u32 = u32::MAX;

/// What one tracking pass did to a surface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrackStats {
    /// Vertices deleted for want of a supporting particle.
    pub unsupported: u32,
    /// Boundary loops capped.
    pub caps: u32,
    /// Components after the pass.
    pub components: u32,
    /// Seams made by merging (pairs of facing holes joined).
    pub seams: u32,
}

/// Merging settings of a tracking pass (spec §8.6 steps 2 and 5), m.
#[derive(Clone, Copy, Debug)]
pub struct MergeParams {
    /// Facing triangles closer than this are removed (a quarter spacing).
    pub gap: f32,
    /// The triangle search grid's cell (two spacings).
    pub cell: f32,
    /// Facing holes whose centres are closer than this are joined
    /// (2·MaxE + r, spec §8.6 step 5).
    pub within: f32,
}

/// Spec §8.6 level 2 steps (1), (3), (4), (6) on `surface`: `supported(y)`
/// says whether a particle of the body lies within 2r of a vertex.
pub fn track(
    surface: &mut Surface,
    supported: impl Fn(Vec3<f32>) -> bool + Sync,
    merge: Option<(MergeParams, &mut Grid, &mut Vec<u32>)>,
) -> TrackStats {
    use rayon::prelude::*;
    let ok: Vec<bool> = surface.y.par_iter().map(|&y| supported(y)).collect();
    let unsupported = ok.iter().filter(|o| !**o).count() as u32;
    // Skinned vertices follow their particles, so where the particles part
    // the vertices stay supported and the triangles between them stretch
    // across the gap: a triangle also goes when its centroid or an edge
    // midpoint has no particle within 2r (every point of a sampled body's
    // surface lies within about r of its lattice).
    let y = &surface.y;
    let keep: Vec<bool> = surface
        .faces
        .par_iter()
        .map(|f| {
            let [a, b, c] = f.map(|v| y[v as usize]);
            f.iter().all(|&v| ok[v as usize])
                && [
                    (a + b) * 0.5,
                    (b + c) * 0.5,
                    (c + a) * 0.5,
                    (a + b + c) * (1.0 / 3.0),
                ]
                .into_iter()
                .all(&supported)
        })
        .collect();
    let mut keep = keep;
    let mut no_seam = Vec::new();
    let (within, seam) = match merge {
        Some((m, grid, seam)) => {
            let touching = super::merge::touching_faces(surface, m.gap, m.cell, grid);
            for (k, t) in keep.iter_mut().zip(touching) {
                *k &= !t;
            }
            (Some(m.within), seam)
        }
        None => (None, &mut no_seam),
    };
    let mut stats = close(surface, keep, within, false, seam);
    stats.unsupported = unsupported;
    stats
}

/// The user cut of spec §7: every triangle of `surface` with vertices on
/// both sides of the plane through `point` with normal `normal` is deleted
/// and the holes are capped, so the two sides become separate components.
pub fn cut(surface: &mut Surface, point: Vec3<f32>, normal: Vec3<f32>) -> TrackStats {
    let side: Vec<bool> = surface
        .y
        .iter()
        .map(|&y| (y - point).dot(normal) >= 0.0)
        .collect();
    let keep: Vec<bool> = surface
        .faces
        .iter()
        .map(|f| side[f[0] as usize] == side[f[1] as usize] && side[f[1] as usize] == side[f[2] as usize])
        .collect();
    close(surface, keep, None, true, &mut Vec::new())
}

/// Every directed edge a → b of `faces`.
pub(super) fn directed_edges(faces: &[[u32; 3]]) -> std::collections::HashSet<(u32, u32)> {
    faces
        .iter()
        .flat_map(|t| (0..3).map(move |k| (t[k], t[(k + 1) % 3])))
        .collect()
}

/// Undirected edge key.
fn edge(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Keeps the faces where `keep` holds, makes the rest manifold, joins
/// facing holes whose centres are closer than `pair_within` (m; none: no
/// merging), caps every other boundary loop, drops unreferenced vertices
/// (skin slots carried over) and labels the components. With `cut` the
/// rims and caps are flagged `nopair`. `seam` receives the vertices of the
/// joined rims (numbered as on return).
fn close(
    surface: &mut Surface,
    mut keep: Vec<bool>,
    pair_within: Option<f32>,
    cut: bool,
    seam: &mut Vec<u32>,
) -> TrackStats {
    seam.clear();
    let mut stats = TrackStats::default();
    let nv = surface.y.len();
    surface.nopair.resize(nv, false);
    // Nothing deleted from a surface an earlier pass closed and labelled
    // (`vcomp` covers it): it comes out unchanged, as do its labels.
    if keep.iter().all(|k| *k) && surface.vcomp.len() == nv {
        stats.components = count_roots(&surface.vcomp);
        return stats;
    }
    // Step (3): until the boundary is simple loops (bounded: each round deletes faces).
    for _ in 0..64 {
        let faces = &surface.faces;
        let mut uses: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
        let mut directed: std::collections::HashSet<(u32, u32)> = std::collections::HashSet::new();
        let mut bad_edge: std::collections::HashSet<(u32, u32)> = std::collections::HashSet::new();
        for (f, t) in faces.iter().enumerate() {
            if !keep[f] {
                continue;
            }
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *uses.entry(edge(a, b)).or_default() += 1;
                if !directed.insert((a, b)) {
                    // Two faces use one edge in the same direction: inconsistent.
                    bad_edge.insert(edge(a, b));
                }
            }
        }
        bad_edge.extend(uses.iter().filter(|(_, n)| **n > 2).map(|(e, _)| *e));
        // Boundary half-edges (no twin) and vertices with more than one leaving.
        let mut out = vec![0u32; nv];
        for (a, b) in &directed {
            if !directed.contains(&(*b, *a)) && !bad_edge.contains(&edge(*a, *b)) {
                out[*a as usize] += 1;
            }
        }
        let mut changed = false;
        for (f, t) in faces.iter().enumerate() {
            if !keep[f] {
                continue;
            }
            let on_bad_edge = (0..3).any(|k| bad_edge.contains(&edge(t[k], t[(k + 1) % 3])));
            let on_pinch = t.iter().any(|&v| out[v as usize] > 1);
            if on_bad_edge || on_pinch {
                keep[f] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut faces = surface.faces.clone();
    retain_used(&mut faces, &keep);
    // Step (4): boundary loops, following each boundary half-edge a → b.
    let directed = directed_edges(&faces);
    let mut next = vec![u32::MAX; nv];
    let mut rim_normal = vec![Vec3::zero(); nv];
    let mut starts: Vec<u32> = Vec::new();
    for t in &faces {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if !directed.contains(&(b, a)) {
                next[a as usize] = b;
                let [p, q, r] = t.map(|v| surface.y[v as usize]);
                rim_normal[a as usize] = (q - p).cross(r - p);
                starts.push(a);
            }
        }
    }
    starts.sort_unstable();
    starts.dedup();
    let mut seen = vec![false; nv];
    let mut loops = Vec::new();
    for &s in &starts {
        if seen[s as usize] {
            continue;
        }
        let mut lp = Vec::new();
        let mut v = s;
        while !seen[v as usize] && next[v as usize] != u32::MAX {
            seen[v as usize] = true;
            lp.push(v);
            v = next[v as usize];
        }
        if v != s || lp.len() < 3 {
            continue; // not a closed loop (cannot happen after step 3): leave it open
        }
        let normal = lp.iter().fold(Vec3::zero(), |a, &v| a + rim_normal[v as usize]);
        loops.push(super::merge::Loop { vertices: lp, normal });
    }
    // Step (5): facing holes become seams.
    if let Some(within) = pair_within {
        let (rest, seams, rims) = super::merge::pair_and_stitch(
            &surface.y,
            &surface.nopair,
            &surface.vcomp,
            loops,
            within,
            &mut faces,
        );
        seam.extend(rims);
        loops = rest;
        stats.seams = seams;
    }
    // Step (6): a fan around the centroid of each loop, wound so the cap's
    // normals face outwards (boundary edge a → b gives the cap face b, a, c).
    for lp in loops.iter().map(|l| &l.vertices) {
        if cut {
            for &v in lp {
                surface.nopair[v as usize] = true;
            }
        }
        let centre =
            lp.iter().fold(Vec3::zero(), |a, &v| a + surface.y[v as usize]) * (1.0 / lp.len() as f32);
        // Unbound: the skin maintenance rebinds it (spec §8.3).
        let c = surface.push_vertex(centre, cut, lp[0]);
        for k in 0..lp.len() {
            let (a, b) = (lp[k], lp[(k + 1) % lp.len()]);
            faces.push([b, a, c]);
        }
        stats.caps += 1;
    }
    // Drop unreferenced vertices; faces and per-vertex arrays follow.
    let map = surface.set_faces_dropping_unused(faces);
    for v in seam.iter_mut() {
        *v = map[*v as usize];
    }
    stats.components = label_vertices(surface);
    stats
}

/// Union-find over triangle edges: `surface.vcomp[v]` = the smallest vertex
/// index of v's component. Returns the number of components.
pub fn label_vertices(surface: &mut Surface) -> u32 {
    let n = surface.y.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(p: &mut [u32], mut v: u32) -> u32 {
        while p[v as usize] != v {
            p[v as usize] = p[p[v as usize] as usize];
            v = p[v as usize];
        }
        v
    }
    for t in &surface.faces {
        for k in 0..3 {
            let (a, b) = (find(&mut parent, t[k]), find(&mut parent, t[(k + 1) % 3]));
            // The smaller root wins, so the root is the smallest index.
            if a < b {
                parent[b as usize] = a;
            } else if b < a {
                parent[a as usize] = b;
            }
        }
    }
    surface.vcomp = (0..n as u32).map(|v| find(&mut parent, v)).collect();
    count_roots(&surface.vcomp)
}

/// Components of a labelling where each label is its smallest vertex index.
fn count_roots(vcomp: &[u32]) -> u32 {
    vcomp
        .iter()
        .enumerate()
        .filter(|&(v, &c)| c as usize == v)
        .count() as u32
}

/// Spec §7 steps 2–4 for body `b`: particle labels from the skin (the
/// majority of a particle's references; ties to the smaller label), then
/// the nearest labelled particle over same-label pairs closer than 2r
/// (multi-source breadth-first search in ascending particle order), else
/// the label of the nearest labelled particle of the body; each cluster of
/// the body takes its members' label, or [`NONE`] when they disagree (then
/// re-sampling removes it). `grid` holds body b's particles in cells of 2r
/// (the tracking pass's grid, on the same positions).
pub fn label_particles(state: &mut State, b: usize, r: f32, grid: &Grid) {
    let s = &state.surfaces[b];
    let pt = &mut state.particles;
    let body = b as u32;
    let n = pt.len();
    // Votes: (particle, label) pairs from every used skin slot.
    let mut votes: Vec<(u32, u32)> = Vec::new();
    for (v, k) in s.skin.iter().enumerate() {
        let label = s.vcomp.get(v).copied().unwrap_or(0);
        for a in 0..4 {
            if k.weight[a] > 0.0 && (k.particle[a] as usize) < n && pt.body[k.particle[a] as usize] == body {
                votes.push((k.particle[a], label));
            }
        }
    }
    votes.sort_unstable();
    let mut label = vec![NONE; n];
    let mut i = 0;
    while i < votes.len() {
        let p = votes[i].0;
        let (mut best, mut best_n) = (NONE, 0usize);
        while i < votes.len() && votes[i].0 == p {
            let l = votes[i].1;
            let mut j = i;
            while j < votes.len() && votes[j] == (p, l) {
                j += 1;
            }
            if j - i > best_n {
                (best, best_n) = (l, j - i);
            }
            i = j;
        }
        label[p as usize] = best;
    }
    // The new labels are written below, after the search has read the old ones.
    let prev = &pt.component;
    let mut queue: VecDeque<u32> = (0..n as u32)
        .filter(|&i| pt.body[i as usize] == body && label[i as usize] != NONE)
        .collect();
    let mut near = Vec::new();
    while let Some(i) = queue.pop_front() {
        let i = i as usize;
        grid.within(&pt.x, pt.x[i], 2.0 * r, &mut near);
        for &j in &near {
            let j = j as usize;
            if label[j] == NONE && prev[j] == prev[i] {
                label[j] = label[i];
                queue.push_back(j as u32);
            }
        }
    }
    // Unreached (a particle cut off from every labelled one of its old label):
    // the nearest labelled particle of the body.
    let labelled: Vec<u32> = (0..n as u32)
        .filter(|&i| pt.body[i as usize] == body && label[i as usize] != NONE)
        .collect();
    for i in 0..n {
        if pt.body[i] != body || label[i] != NONE {
            continue;
        }
        let x = pt.x[i];
        if let Some(&j) = labelled.iter().min_by(|&&a, &&c| {
            (pt.x[a as usize] - x)
                .norm_squared()
                .total_cmp(&(pt.x[c as usize] - x).norm_squared())
                .then(a.cmp(&c))
        }) {
            label[i] = label[j as usize];
        }
    }
    for (i, l) in label.iter().enumerate() {
        if pt.body[i] == body {
            pt.component[i] = *l;
        }
    }
    let cl = &mut state.clusters;
    for c in 0..cl.len() {
        if cl.body[c] != body {
            continue;
        }
        let mut it = cl.entries(c).map(|e| pt.component[cl.member[e] as usize]);
        let first = it.next().unwrap_or(NONE);
        cl.component[c] = if it.all(|l| l == first) { first } else { NONE };
    }
}
