//! Particle re-sampling (spec shape_matching §5): deletion of crowded and
//! stray particles with a stable compaction, seeding near strongly deformed
//! clusters, and the optional mass and momentum fix-up of §5.3.

use super::{SEED_NORM, TRIES};
use crate::collide::Collider;
use crate::geometry::MeshInside;
use crate::math::Vec3;
use crate::pbd::clusters::{hash3, refresh_all};
use crate::pbd::grid::Grid;
use crate::pbd::model::Model;
use crate::pbd::params::StepParams;
use crate::pbd::state::{Particles, State, flag};
use rayon::prelude::*;
use std::collections::HashMap;

/// The candidates accepted so far in one seeding pass, hashed by cells of
/// side r so test (i) against them costs O(1) per candidate (the pass may
/// accept hundreds while a strand stretches).
struct Accepted {
    r: f32,
    cells: HashMap<[i32; 3], Vec<Vec3<f32>>>,
}

impl Accepted {
    fn new(r: f32) -> Self {
        Self {
            r,
            cells: HashMap::new(),
        }
    }

    fn cell(&self, x: Vec3<f32>) -> [i32; 3] {
        [x.x, x.y, x.z].map(|v| (v / self.r).floor() as i32)
    }

    /// Whether an accepted point lies closer than r to `x`.
    fn any_within(&self, x: Vec3<f32>) -> bool {
        let [i, j, k] = self.cell(x);
        for di in -1..=1 {
            for dj in -1..=1 {
                for dk in -1..=1 {
                    if let Some(v) = self.cells.get(&[i + di, j + dj, k + dk])
                        && v.iter().any(|a| (*a - x).norm_squared() < self.r * self.r)
                    {
                        return true;
                    }
                }
            }
        }
        false
    }

    fn insert(&mut self, x: Vec3<f32>) {
        let key = self.cell(x);
        self.cells.entry(key).or_default().push(x);
    }
}

/// Why a particle is deleted (spec §5.1), or kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// Stays.
    Keep,
    /// (a): its nearest same-body neighbour is within ηr and has a higher index.
    Crowded,
    /// (b): outside the inflated surface and referenced by no skin slot.
    Outside,
}

/// Spec §5.1 for every particle, in parallel (each mark reads only the
/// state before deletion, so the marks do not depend on the order);
/// kinematic particles stay. `eta` is the deletion distance η in r (the
/// paper's 0.1 unless `StepParams::deletion_distance` says otherwise; at
/// most 1, so the grid of cell r finds every neighbour within it).
pub(super) fn deletion_marks(
    grid: &mut Grid,
    state: &State,
    inside: &[Option<MeshInside>],
    r: f32,
    eta: f32,
) -> Vec<Fate> {
    let pt = &state.particles;
    let n = pt.len();
    let mut skinned = Vec::new();
    crate::pbd::skin::skinned_particles(&state.surfaces, n, &mut skinned);
    grid.build(&pt.x, r, |_| true);
    let grid = &*grid;
    (0..n)
        .into_par_iter()
        .map(|i| {
            if pt.flags[i] & flag::KINEMATIC != 0 {
                return Fate::Keep;
            }
            let same = |j: usize| pt.body[j] == pt.body[i] && pt.component[j] == pt.component[i];
            if let Some((j, _)) = grid.nearest(&pt.x, pt.x[i], eta * r, i)
                && same(j as usize)
                && (i as u32) < j
            {
                return Fate::Crowded;
            }
            if !skinned[i]
                && let Some(Some(m)) = inside.get(pt.body[i] as usize)
                && !m.contains(pt.x[i].cast::<f64>())
            {
                return Fate::Outside;
            }
            Fate::Keep
        })
        .collect()
}

/// Spec §5.2: sources in ascending order, five shell candidates each,
/// accepted greedily when farther than the seed distance (r in the paper,
/// `StepParams::seed_distance` · r) from every particle (accepted ones
/// included), inside the source's inflated surface and outside every
/// collider. Returns (sources, seeded).
///
/// The tests against the existing particles, the surface and the colliders
/// do not depend on what was accepted before, so they run for all
/// candidates in parallel first; only the survivors go through the greedy
/// pass against the accepted ones, in the reference order: the same set as
/// the sequential loop (the spec's lexicographically first choice).
pub(super) fn seed(
    grid: &mut Grid,
    state: &mut State,
    inside: &[Option<MeshInside>],
    colliders: &[Collider],
    p: &StepParams,
    r: f32,
) -> (u32, u32) {
    let cl = &state.clusters;
    let n = state.particles.len();
    let mut source = vec![false; n];
    for c in 0..cl.len() {
        if cl.fp[c].norm() > SEED_NORM {
            for e in cl.entries(c) {
                source[cl.member[e] as usize] = true;
            }
        }
    }
    let sources: Vec<usize> = (0..n)
        .filter(|&i| source[i] && state.particles.flags[i] & flag::KINEMATIC == 0)
        .collect();
    if sources.is_empty() {
        return (0, 0);
    }
    // The exclusion radius is below 2r (validated), so a grid of that cell
    // size finds every particle the test (i) needs.
    let exclude = p.seed_distance as f32 * r;
    grid.build(&state.particles.x, exclude, |_| true);
    let grid = &*grid;
    let d_pw = p.world_distance * p.spacing;
    let (pt, step) = (&state.particles, state.step);
    let candidates: Vec<(usize, Vec3<f32>)> = sources
        .par_iter()
        .flat_map_iter(|&s| (0..TRIES).map(move |t| (s, t)))
        .filter_map(|(s, t)| {
            // u ∈ [0, 1) from the top 24 bits: exact in f32 (and in WGSL).
            let h = |k: u64| {
                let v = hash3(p.seed ^ 0x5eed_5eed, step, (s as u64) * 16 + t * 3 + k);
                (v >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
            };
            // Uniform in the volume of the shell r ≤ ρ ≤ 2r (spec §5.2).
            let rho = r * (1.0 + 7.0 * h(0)).cbrt();
            let z = 2.0 * h(1) - 1.0;
            let phi = 2.0 * std::f32::consts::PI * h(2);
            let s2 = (1.0 - z * z).max(0.0).sqrt();
            let c = pt.x[s] + Vec3::new(s2 * phi.cos(), s2 * phi.sin(), z) * rho;
            // (i) against the existing particles.
            if grid.any_within(&pt.x, c, exclude) {
                return None;
            }
            // (ii) inside the source's inflated surface; no surface, no seeding.
            let cd = c.cast::<f64>();
            if !matches!(inside.get(pt.body[s] as usize), Some(Some(m)) if m.contains(cd)) {
                return None;
            }
            // (iii) outside every collider.
            if colliders.iter().any(|k| k.phi(cd) < d_pw) {
                return None;
            }
            Some((s, c))
        })
        .collect();
    let mut accepted = Accepted::new(exclude);
    let mut seeded = 0;
    for (s, c) in candidates {
        // (i) against the particles accepted before it.
        if accepted.any_within(c) {
            continue;
        }
        accepted.insert(c);
        let pt = &mut state.particles;
        let (v, m, body, comp, q) = (pt.v[s], pt.m[s], pt.body[s], pt.component[s], pt.q[s]);
        pt.push(c, v, m, body, comp, q, flag::NEW);
        seeded += 1;
    }
    (sources.len() as u32, seeded)
}

/// Spec §5.1 stable compaction: keeps the particles marked in `keep` in
/// order, drops deleted members from the clusters and clears skin slots
/// that pointed at a deleted particle (they are rebound in step 20).
/// Returns, per cluster, whether it lost a member.
pub(super) fn compact(state: &mut State, keep: &[bool]) -> Vec<bool> {
    let n = keep.len();
    let mut remap = vec![None; n];
    let mut next = 0u32;
    for i in 0..n {
        if keep[i] {
            remap[i] = Some(next);
            next += 1;
        }
    }
    let mut lost_any = vec![false; state.clusters.len()];
    if next as usize == n {
        return lost_any;
    }
    let pt = std::mem::take(&mut state.particles);
    let mut out = Particles {
        next_id: pt.next_id,
        ..Particles::default()
    };
    for i in (0..n).filter(|&i| keep[i]) {
        out.x.push(pt.x[i]);
        out.v.push(pt.v[i]);
        out.m.push(pt.m[i]);
        out.w.push(pt.w[i]);
        out.body.push(pt.body[i]);
        out.component.push(pt.component[i]);
        out.q.push(pt.q[i]);
        out.flags.push(pt.flags[i]);
        out.target.push(pt.target[i]);
        out.id.push(pt.id[i]);
    }
    state.particles = out;
    // Clusters: drop deleted members (their rest positions go with them).
    let cl = &mut state.clusters;
    let old_offset = std::mem::take(&mut cl.offset);
    let old_member = std::mem::take(&mut cl.member);
    let old_rest = std::mem::take(&mut cl.rest);
    cl.offset.push(0);
    for c in 0..old_offset.len().saturating_sub(1) {
        let mut lost = false;
        for e in old_offset[c] as usize..old_offset[c + 1] as usize {
            match remap[old_member[e] as usize] {
                Some(j) => {
                    cl.member.push(j);
                    cl.rest.push(old_rest[e]);
                }
                None => lost = true,
            }
        }
        cl.offset.push(cl.member.len() as u32);
        if lost {
            lost_any[c] = true;
            for e in cl.entries(c) {
                state.particles.flags[cl.member[e] as usize] |= flag::MEMBERSHIP_CHANGED;
            }
        }
    }
    for s in &mut state.surfaces {
        for k in &mut s.skin {
            for a in 0..4 {
                if k.weight[a] == 0.0 {
                    continue;
                }
                match remap[k.particle[a] as usize] {
                    Some(j) => k.particle[a] = j,
                    None => k.particle[a] = u32::MAX,
                }
            }
        }
    }
    lost_any
}

/// Linear momentum of each body, kg m/s (f64 sums in particle order).
pub(super) fn body_momenta(state: &State, bodies: usize) -> Vec<Vec3<f64>> {
    let pt = &state.particles;
    let mut out = vec![Vec3::<f64>::zero(); bodies];
    for i in 0..pt.len() {
        out[pt.body[i] as usize] += pt.v[i].cast::<f64>() * f64::from(pt.m[i]);
    }
    out
}

/// Spec §5.3 `conserve_mass_momentum`: per body, masses scaled back to the
/// body's initial mass, then the momentum lost or gained spread as one
/// velocity shift over the non-kinematic particles. Clusters are refreshed
/// because their weights changed.
pub(super) fn conserve(state: &mut State, model: &Model, before: &[Vec3<f64>]) {
    let nb = model.bodies.len();
    let pt = &mut state.particles;
    let mut now = vec![0.0f64; nb];
    for i in 0..pt.len() {
        now[pt.body[i] as usize] += f64::from(pt.m[i]);
    }
    for i in 0..pt.len() {
        let b = pt.body[i] as usize;
        if now[b] > 0.0 {
            pt.m[i] = (f64::from(pt.m[i]) * model.bodies[b].mass / now[b]) as f32;
            if pt.flags[i] & flag::KINEMATIC == 0 {
                pt.w[i] = 1.0 / pt.m[i];
            }
        }
    }
    let after = body_momenta(state, nb);
    let pt = &mut state.particles;
    for i in 0..pt.len() {
        let b = pt.body[i] as usize;
        if pt.flags[i] & flag::KINEMATIC == 0 {
            let dv = (before[b] - after[b]) * (1.0 / model.bodies[b].mass);
            pt.v[i] += dv.cast::<f32>();
        }
    }
    refresh_all(
        &mut state.clusters,
        &state.particles,
        &mut state.memberships,
        model.params.weights,
    );
}
