//! Cluster re-sampling (spec shape_matching §6): existing clusters adopt
//! the particles seeded this step, invalid and redundant clusters are
//! removed, and new clusters are made where particles are in too few, with
//! rest shapes interpolated from the step's snapshot so the plastic shape
//! is kept.

use super::REMOVE_NORM;
use crate::math::{Mat3, Vec3, sym_eigen3};
use crate::pbd::clusters::{NewCluster, choose_centres, push_cluster};
use crate::pbd::grid::Grid;
use crate::pbd::model::Model;
use crate::pbd::params::StepParams;
use crate::pbd::plasticity::Snapshot;
use crate::pbd::shape_match::{ClusterFit, weight};
use crate::pbd::state::{Clusters, State, flag};

/// Spec §6.2: every cluster adopts the NEW particles of its body within
/// r^C of its centre, with rest positions `W (x − c)`, `W = Qsum B⁻¹`
/// (the inverse of its best-fit total map; `F_P⁻¹ Rᵀ` when B is nearly
/// singular or the cluster degenerate). Needs current memberships.
pub(super) fn update_clusters(state: &mut State, p: &StepParams, r: f32) {
    let pt = &state.particles;
    let new: Vec<usize> = (0..pt.len()).filter(|&i| pt.flags[i] & flag::NEW != 0).collect();
    if new.is_empty() {
        return;
    }
    let rc = (p.cluster_radius as f32) * r;
    let cl = &state.clusters;
    let ms = &state.memberships;
    let mut adds: Vec<Vec<(u32, Vec3<f32>)>> = vec![Vec::new(); cl.len()];
    let mut any = false;
    for (c, add) in adds.iter_mut().enumerate() {
        let range = cl.entries(c);
        if range.is_empty() {
            continue;
        }
        // The same weighted sums as the solver's fit (c and B), so W
        // inverts exactly the map the cluster is matched with.
        let members = range.map(|e| {
            let i = cl.member[e] as usize;
            (i, cl.rest[e], weight(p.weights, pt.m[i], ms.count(i)))
        });
        let fit = ClusterFit::compute(&pt.x, members, &cl.fp[c]);
        let centre = fit.c.cast::<f32>();
        // W (an SVD and an inverse) only for a cluster that adopts someone.
        let mut w = None;
        for &i in &new {
            if pt.body[i] == cl.body[c]
                && pt.component[i] == cl.component[c]
                && (pt.x[i] - centre).norm() < rc
            {
                let w = *w.get_or_insert_with(|| {
                    w_of(
                        &fit.b,
                        &cl.qsum[c],
                        &cl.fp[c],
                        &cl.quat[c].to_mat3(),
                        cl.degenerate[c],
                    )
                });
                add.push((i as u32, w * (pt.x[i] - centre)));
                any = true;
            }
        }
    }
    if !any {
        return;
    }
    // Rebuild the CSR with the additions appended to each cluster.
    let old = std::mem::take(&mut state.clusters.offset);
    let members = std::mem::take(&mut state.clusters.member);
    let rest = std::mem::take(&mut state.clusters.rest);
    let cl = &mut state.clusters;
    cl.offset.push(0);
    for (c, add) in adds.iter().enumerate() {
        let range = old[c] as usize..old[c + 1] as usize;
        cl.member.extend_from_slice(&members[range.clone()]);
        cl.rest.extend_from_slice(&rest[range]);
        for &(i, q) in add {
            cl.member.push(i);
            cl.rest.push(q);
            state.particles.flags[i as usize] |= flag::MEMBERSHIP_CHANGED;
        }
        cl.offset.push(cl.member.len() as u32);
    }
}

/// Spec §6.4 with the interpolation of §6.4 step 4 from the snapshot.
pub(super) fn create_clusters(
    grid: &mut Grid,
    state: &mut State,
    model: &Model,
    snapshot: &Snapshot,
    r: f32,
) -> u32 {
    let p = &model.params;
    let rc = p.cluster_radius as f32 * r;
    // A particle under a new seam counts as clusterless (spec §7 merging).
    let counts: Vec<u32> = (0..state.particles.len())
        .map(|i| {
            if state.particles.flags[i] & flag::SEAM != 0 {
                0
            } else {
                state.memberships.count(i)
            }
        })
        .collect();
    let centres = choose_centres(
        &state.particles,
        &counts,
        p.min_clusters,
        p.cluster_spacing as f32 * r,
        rc,
        p.seed,
        state.step,
        grid,
    );
    let mut made = 0;
    for (centre, members) in centres {
        if members.len() < 2 {
            continue;
        }
        let pt = &state.particles;
        let body = pt.body[centre as usize];
        let mut mass = 0.0f64;
        let mut sum = Vec3::<f64>::zero();
        for &i in &members {
            mass += f64::from(pt.m[i as usize]);
            sum += pt.x[i as usize].cast::<f64>() * f64::from(pt.m[i as usize]);
        }
        let c = (sum * (1.0 / mass)).cast::<f32>();
        let (w, yield_strain) = interpolate(snapshot, body, c, rc).unwrap_or((
            Mat3::identity(),
            model.bodies[body as usize].material.yield_strain as f32,
        ));
        let rest = members.iter().map(|&i| w * (pt.x[i as usize] - c)).collect();
        for &i in &members {
            state.particles.flags[i as usize] |= flag::MEMBERSHIP_CHANGED;
        }
        let component = state.particles.component[centre as usize];
        push_cluster(
            &mut state.clusters,
            &state.particles,
            NewCluster {
                members,
                rest,
                yield_strain,
                body,
                component,
            },
            p.rotation_iterations[2],
        );
        made += 1;
    }
    made
}

/// Volume of the intersection of two spheres of radius `rc` whose centres
/// are `d` apart (`d ≤ 2 rc`), the interpolation weight ω of spec §6.4.
pub(super) fn overlap_volume(d: f64, rc: f64) -> f64 {
    std::f64::consts::PI * (4.0 * rc + d) * (2.0 * rc - d) * (2.0 * rc - d) / 12.0
}

/// `W = Qsum B⁻¹`, or `F_P⁻¹ Rᵀ` when B is nearly singular
/// (σ_min < 1e-3 σ_max) or the cluster degenerate (spec §6.2).
pub(super) fn w_of(
    b: &Mat3<f32>,
    qsum: &Mat3<f32>,
    fp: &Mat3<f32>,
    rot: &Mat3<f32>,
    degenerate: bool,
) -> Mat3<f32> {
    let fallback = || {
        fp.try_inverse(f32::MIN_POSITIVE)
            .map_or(rot.transpose(), |fi| fi * rot.transpose())
    };
    if degenerate {
        return fallback();
    }
    let s = crate::math::svd3(b).sigma;
    if !(s.x > 0.0 && s.z.abs() >= 1e-3 * s.x) {
        return fallback();
    }
    match b.try_inverse(f32::MIN_POSITIVE) {
        Some(bi) => *qsum * bi,
        None => fallback(),
    }
}

/// Spec §6.4 step 4: the weighted mean of the nearby snapshot clusters'
/// left Cauchy–Green tensors `b = A Aᵀ` of their elastic maps (lens-volume
/// weights), clamped to [0.25, 4], gives `W = b^{-1/2}`; the yield is
/// averaged the same way. `None` when no snapshot cluster is near.
pub(super) fn interpolate(snapshot: &Snapshot, body: u32, c: Vec3<f32>, rc: f32) -> Option<(Mat3<f32>, f32)> {
    let mut wsum = 0.0f64;
    let mut b = Mat3::<f64>::zero();
    let mut ys = 0.0f64;
    for k in 0..snapshot.c.len().min(snapshot.body.len()) {
        if snapshot.body[k] != body {
            continue;
        }
        let d = (snapshot.c[k] - c).norm();
        // NaN-safe: a non-finite centre is skipped.
        if d.partial_cmp(&(2.0 * rc)) != Some(std::cmp::Ordering::Less) {
            continue;
        }
        let omega = overlap_volume(f64::from(d), f64::from(rc));
        let a = snapshot.a[k].cast::<f64>();
        b += a * a.transpose() * omega;
        ys += f64::from(snapshot.yield_strain[k]) * omega;
        wsum += omega;
    }
    if wsum <= 0.0 {
        return None;
    }
    let b = b * (1.0 / wsum);
    let e = sym_eigen3(&b);
    let v = e.eigenvectors;
    let l = e.eigenvalues;
    let d = Vec3::new(
        l.x.clamp(0.25, 4.0).powf(-0.5),
        l.y.clamp(0.25, 4.0).powf(-0.5),
        l.z.clamp(0.25, 4.0).powf(-0.5),
    );
    let w = v * Mat3::from_diagonal(d) * v.transpose();
    Some((w.cast::<f32>(), (ys / wsum) as f32))
}

/// Spec §6.3: removes clusters that shrank below half or grew beyond twice
/// their creation size, whose ‖F_P‖_F exceeds 2, that are empty or mix
/// components, and then, greedily in index order, those whose every member
/// is covered by more than M_max other clusters. Returns how many.
pub(super) fn remove_clusters(state: &mut State, p: &StepParams) -> u32 {
    let n = state.particles.len();
    let cl = &state.clusters;
    let mut count = vec![0u32; n];
    for &m in &cl.member {
        count[m as usize] += 1;
    }
    let mut remove = vec![false; cl.len()];
    for (c, rm) in remove.iter_mut().enumerate() {
        let range = cl.entries(c);
        let size = range.len() as u32;
        let mixed = range
            .clone()
            .any(|e| state.particles.component[cl.member[e] as usize] != cl.component[c]);
        *rm =
            size == 0 || 2 * size < cl.n0[c] || size > 2 * cl.n0[c] || cl.fp[c].norm() > REMOVE_NORM || mixed;
        if *rm {
            for e in range {
                count[cl.member[e] as usize] -= 1;
            }
        }
    }
    for (c, rm) in remove.iter_mut().enumerate() {
        if *rm {
            continue;
        }
        let range = cl.entries(c);
        if range
            .clone()
            .all(|e| count[cl.member[e] as usize] - 1 > p.max_clusters)
        {
            *rm = true;
            for e in range {
                count[cl.member[e] as usize] -= 1;
            }
        }
    }
    let removed = remove.iter().filter(|r| **r).count() as u32;
    if removed == 0 {
        return 0;
    }
    for (c, rm) in remove.iter().enumerate() {
        if *rm {
            for e in state.clusters.entries(c) {
                state.particles.flags[state.clusters.member[e] as usize] |= flag::MEMBERSHIP_CHANGED;
            }
        }
    }
    retain_clusters(&mut state.clusters, &remove);
    removed
}

/// Keeps the clusters not marked in `remove`, in order.
fn retain_clusters(cl: &mut Clusters, remove: &[bool]) {
    let old = std::mem::take(cl);
    cl.offset.push(0);
    for (c, _) in remove.iter().enumerate().filter(|(_, r)| !**r) {
        let range = old.entries(c);
        cl.member.extend_from_slice(&old.member[range.clone()]);
        cl.rest.extend_from_slice(&old.rest[range]);
        cl.offset.push(cl.member.len() as u32);
        cl.fp.push(old.fp[c]);
        cl.yield_strain.push(old.yield_strain[c]);
        cl.n0.push(old.n0[c]);
        cl.quat.push(old.quat[c]);
        cl.body.push(old.body[c]);
        cl.component.push(old.component[c]);
        cl.qsum.push(old.qsum[c]);
        cl.mass.push(old.mass[c]);
        cl.degenerate.push(old.degenerate[c]);
    }
}
