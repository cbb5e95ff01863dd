//! The surface mesh skinned to the particles (spec shape_matching §8): each
//! vertex follows four particles, whose orientations are the sign-aligned
//! average of their clusters' rotations; binding, normals and the volume
//! correction. Not linear-blend skinning of cluster transforms: particles
//! carry positional detail the clusters' best fits cannot (the paper's choice).

use rayon::prelude::*;

use super::grid::Grid;
use super::state::{Clusters, Memberships, Particles, Skin, Surface, flag};
use crate::math::{Quat, Vec3};

/// Spec §8.1: every particle's orientation from its clusters' quaternions,
/// each sign-aligned to the particle's previous orientation (a zero dot
/// counts as +1), summed and normalised; kept when the sum is tiny or the
/// particle is in no cluster.
pub fn orientations(particles: &mut Particles, clusters: &Clusters, memberships: &Memberships) {
    particles.q.par_iter_mut().enumerate().for_each(|(i, q)| {
        *q = orientation(i, *q, clusters, memberships);
    });
}

/// [`orientations`] of the particles where `mask` is true (the others keep
/// theirs): without re-sampling only the particles the surfaces are bound
/// to need an orientation every step, since nothing rebinds (spec §8.1
/// defines Q_i only for skinning and binding). `cluster_of` is each
/// membership's cluster in the order of `Memberships::entry` (the solver
/// loop's copy, [`super::shape_match::ClusterScratch::goal`], prepared for
/// these memberships: crate-private, as only the solver holds one): one
/// read per membership instead of two dependent ones.
pub(crate) fn orientations_masked(
    particles: &mut Particles,
    clusters: &Clusters,
    memberships: &Memberships,
    cluster_of: &[super::shape_match::GoalEntry],
    mask: &[bool],
) {
    let quat = &clusters.quat;
    particles.q.par_iter_mut().enumerate().for_each(|(i, q)| {
        if mask[i] {
            let range = memberships.offset[i] as usize..memberships.offset[i + 1] as usize;
            *q = average(*q, cluster_of[range].iter().map(|e| quat[e.cluster as usize]));
        }
    });
}

/// Marks in `mask` (resized to `n`) every particle a skin slot of `surfaces` uses.
pub fn skinned_particles(surfaces: &[Surface], n: usize, mask: &mut Vec<bool>) {
    mask.clear();
    mask.resize(n, false);
    for s in surfaces {
        for k in &s.skin {
            for a in 0..4 {
                if k.weight[a] > 0.0 && (k.particle[a] as usize) < n {
                    mask[k.particle[a] as usize] = true;
                }
            }
        }
    }
}

/// Spec §9 step 20: [`orientations`] again for the particles flagged
/// MEMBERSHIP_CHANGED only (the others' clusters did not change).
pub fn orientations_of_changed(particles: &mut Particles, clusters: &Clusters, memberships: &Memberships) {
    let flags = &particles.flags;
    particles.q.par_iter_mut().enumerate().for_each(|(i, q)| {
        if flags[i] & flag::MEMBERSHIP_CHANGED != 0 {
            *q = orientation(i, *q, clusters, memberships);
        }
    });
}

fn orientation(i: usize, prev: Quat<f32>, clusters: &Clusters, memberships: &Memberships) -> Quat<f32> {
    average(
        prev,
        (memberships.offset[i]..memberships.offset[i + 1]).map(|k| {
            let e = memberships.entry[k as usize] as usize;
            clusters.quat[memberships.entry_cluster[e] as usize]
        }),
    )
}

/// The sign-aligned average of the clusters' quaternions `qs` (spec §8.1),
/// `prev` when the sum is tiny.
#[inline]
fn average(prev: Quat<f32>, qs: impl Iterator<Item = Quat<f32>>) -> Quat<f32> {
    let mut sum = Quat::new(0.0, 0.0, 0.0, 0.0);
    for qc in qs {
        let s = if qc.dot(prev) < 0.0 { -1.0 } else { 1.0 };
        sum = sum + qc.scale(s);
    }
    if sum.norm() >= 1e-6 { sum.normalize() } else { prev }
}

/// Spec §8.3: a vertex at `y` bound to a particle at `x` with orientation
/// `q` keeps `z = R(q)ᵀ (y − x)`, so that skinning puts it back at `y`.
#[inline]
pub fn offset(q: Quat<f32>, y: Vec3<f32>, x: Vec3<f32>) -> Vec3<f32> {
    q.to_mat3().transpose() * (y - x)
}

/// Spec §8.2: `y = Σ_a w_a (R(Q_{l_a}) z_a + x_{l_a})` for every vertex.
pub fn skin_vertices(surface: &mut Surface, particles: &Particles) {
    let Surface { y, skin, .. } = surface;
    y.par_iter_mut().zip(skin.par_iter()).for_each(|(y, s)| {
        // An unbound vertex (a new cap vertex the skin maintenance could not
        // yet bind, surface level 2) keeps its position.
        if s.weight.iter().all(|w| *w == 0.0) {
            return;
        }
        let mut p = Vec3::zero();
        for a in 0..4 {
            if s.weight[a] == 0.0 {
                continue;
            }
            let l = s.particle[a] as usize;
            p += (particles.q[l].to_mat3() * s.offset[a] + particles.x[l]) * s.weight[a];
        }
        *y = p;
    });
}

/// The surface's vertex velocities for frames (m/s): `Σ_a w_a v_{l_a}`,
/// the particles' velocities blended with the skinning weights (the
/// particles' spin, which turns the offsets `z_a`, is left out: this is a
/// read-out for pictures and datasets, not part of the step). An unbound
/// vertex (all weights 0) reads 0.
pub fn skinned_velocities(surface: &Surface, particles: &Particles) -> Vec<Vec3<f32>> {
    surface
        .skin
        .iter()
        .map(|s| {
            let mut v = Vec3::zero();
            for a in 0..4 {
                if s.weight[a] != 0.0 {
                    v += particles.v[s.particle[a] as usize] * s.weight[a];
                }
            }
            v
        })
        .collect()
}

/// Clears the slots of `s` whose particle was deleted (index `u32::MAX`
/// after compaction) and renormalises the other weights to sum 1.
pub fn drop_dead_slots(s: &mut Skin) {
    for a in 0..4 {
        if s.particle[a] == u32::MAX {
            s.weight[a] = 0.0;
        }
    }
    let total: f32 = s.weight.iter().sum();
    if total > 0.0 {
        for w in &mut s.weight {
            *w /= total;
        }
    }
}

/// Spec §8.3 full rebind of vertex position `y` to the four nearest
/// particles among `candidates` (weights ∝ 1/max(d, 1e-4 r), offsets in
/// each particle's frame, so the vertex does not move).
pub fn bind(y: Vec3<f32>, candidates: &[u32], particles: &Particles, r: f32) -> Skin {
    let mut best: [(f32, u32); 4] = [(f32::INFINITY, u32::MAX); 4];
    for &j in candidates {
        let d = (particles.x[j as usize] - y).norm();
        // Insertion into the four nearest, ties to the lower index.
        let mut k = 4;
        while k > 0 && (d < best[k - 1].0 || (d == best[k - 1].0 && j < best[k - 1].1)) {
            k -= 1;
        }
        if k < 4 {
            for m in (k + 1..4).rev() {
                best[m] = best[m - 1];
            }
            best[k] = (d, j);
        }
    }
    let mut s = Skin::default();
    let mut total = 0.0f32;
    for (a, &(d, j)) in best.iter().enumerate() {
        if j == u32::MAX {
            continue;
        }
        s.particle[a] = j;
        s.weight[a] = 1.0 / d.max(1e-4 * r);
        total += s.weight[a];
    }
    for a in 0..4 {
        if s.weight[a] > 0.0 {
            s.weight[a] /= total;
            let l = s.particle[a] as usize;
            s.offset[a] = offset(particles.q[l], y, particles.x[l]);
        }
    }
    s
}

/// Binds every vertex of `surface` to the particles of `body` and
/// `component` (search radius 2r doubling to 8r, spec §8.3).
pub fn bind_all(surface: &mut Surface, particles: &Particles, body: u32, r: f32, grid: &mut Grid) {
    grid.build(&particles.x, 8.0 * r, |i| particles.body[i] == body);
    let mut near = Vec::new();
    surface.skin.clear();
    for &y in &surface.y {
        let mut radius = 2.0 * r;
        loop {
            grid.within(&particles.x, y, radius, &mut near);
            if near.len() >= 4 || radius >= 8.0 * r {
                break;
            }
            radius *= 2.0;
        }
        if near.is_empty() {
            // Nothing within 8r: bind to the nearest particle of the body anywhere.
            let nearest = (0..particles.len())
                .filter(|&i| particles.body[i] == body)
                .min_by(|&a, &b| {
                    (particles.x[a] - y)
                        .norm()
                        .total_cmp(&(particles.x[b] - y).norm())
                });
            near.extend(nearest.map(|i| i as u32));
        }
        surface.skin.push(bind(y, &near, particles, r));
    }
}

/// Spec §8.4: area-weighted vertex normals (counter-clockwise outward faces).
pub fn normals(surface: &mut Surface) {
    normals_with(surface, &mut Vec::new());
}

/// [`normals`] with the face normals' scratch `faces` (reused by the
/// solver from step to step): the cross products in parallel, then each
/// vertex's sum in face order on one thread (the same sums as a serial
/// pass, for any thread count).
pub fn normals_with(surface: &mut Surface, faces: &mut Vec<Vec3<f32>>) {
    let n = surface.y.len();
    let y = &surface.y;
    faces.clear();
    faces.par_extend(surface.faces.par_iter().map(|f| {
        let [a, b, c] = f.map(|i| y[i as usize]);
        (b - a).cross(c - a)
    }));
    surface.normals.clear();
    surface.normals.resize(n, Vec3::zero());
    for (f, &nrm) in surface.faces.iter().zip(faces.iter()) {
        for &i in f {
            surface.normals[i as usize] += nrm;
        }
    }
    surface
        .normals
        .par_iter_mut()
        .for_each(|v| *v = v.normalize_or_zero());
}

/// Enclosed volume `(1/6) Σ y_a · (y_b × y_c)` and area of a closed surface, m³ and m².
pub fn volume_and_area(surface: &Surface) -> (f64, f64) {
    let mut vol = 0.0f64;
    let mut area = 0.0f64;
    for f in &surface.faces {
        let [a, b, c] = f.map(|i| surface.y[i as usize].cast::<f64>());
        vol += a.dot(b.cross(c)) / 6.0;
        area += 0.5 * (b - a).cross(c - a).norm();
    }
    (vol, area)
}

/// Spec §8.5: moves every vertex by `(V_target − V)/A` along its normal and
/// re-expresses its skin offsets (no rebind), so the enclosed volume returns
/// to the target.
// NaN must take the refusing branch of every `!(a > b)` below.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub fn correct_volume(surface: &mut Surface, particles: &Particles) {
    let (vol, area) = volume_and_area(surface);
    if !(area > 0.0) {
        return;
    }
    let shift = ((surface.volume_target - vol) / area) as f32;
    let Surface { y, normals, skin, .. } = surface;
    y.par_iter_mut()
        .zip(normals.par_iter())
        .zip(skin.par_iter_mut())
        .for_each(|((y, n), s)| {
            *y += *n * shift;
            for a in 0..4 {
                if s.weight[a] > 0.0 {
                    let l = s.particle[a] as usize;
                    s.offset[a] = offset(particles.q[l], *y, particles.x[l]);
                }
            }
        });
}
