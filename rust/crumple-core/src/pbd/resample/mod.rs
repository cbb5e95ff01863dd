//! Re-sampling (spec shape_matching §5, §6, §8.3; §9 steps 13–22): once
//! per step, particles that crowd a neighbour or drift outside the surface
//! are deleted and new particles are seeded near strongly deformed clusters
//! ([`particles`]); clusters drop deleted members, adopt new ones, are
//! removed when too deformed or redundant, and new clusters are made where
//! coverage is thin, their rest shapes interpolated from the clusters
//! around them so the plastic state is kept ([`clusters`]). Finally the
//! skin is rebound where it lost a particle and refreshed where a
//! particle's orientation changed, so the surface never jumps.
//!
//! Every choice is deterministic: deletion and seeding run in ascending
//! particle order (the spec's sequential reference), candidates come from a
//! counter-based hash of (seed, step, particle, try), and clusters are
//! visited in index order.

mod clusters;
mod particles;
#[cfg(test)]
mod tests;

use super::clusters::refresh;
use super::grid::Grid;
use super::model::Model;
use super::plasticity::Snapshot;
use super::remesh::{self, RemeshStats};
use super::skin;
use super::state::{Skin, State, flag};
use super::topology;
use crate::collide::Collider;
use crate::geometry::MeshInside;
use crate::math::Vec3;
use clusters::{create_clusters, remove_clusters, update_clusters};
use particles::{Fate, body_momenta, compact, conserve, deletion_marks, seed};
use rayon::prelude::*;

/// ‖F_P‖_F above which a cluster's particles seed new ones (spec §5.2).
pub const SEED_NORM: f32 = 1.8;
/// ‖F_P‖_F above which a cluster is removed (spec §6.3).
pub const REMOVE_NORM: f32 = 2.0;
/// Surface inflation for the inside tests, in r (spec §5.1, §5.2).
pub const INFLATE: f32 = 0.25;
/// Facing surface triangles closer than this merge, in r (spec §8.6 step 2
/// read as contact, see `pbd::merge`).
pub const MERGE_GAP: f32 = 0.25;
/// Seeding candidates per source particle (spec §5.2).
pub const TRIES: u64 = 5;

/// What one re-sampling pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResampleStats {
    /// Particles deleted (crowded or outside).
    pub deleted: u32,
    /// Of those, crowded (spec §5.1 a).
    pub crowded: u32,
    /// Of those, outside the inflated surface and unskinned (spec §5.1 b).
    pub outside: u32,
    /// Source particles of seeding.
    pub sources: u32,
    /// Particles seeded.
    pub seeded: u32,
    /// Clusters removed.
    pub clusters_removed: u32,
    /// Clusters created.
    pub clusters_created: u32,
    /// Skin vertices rebound.
    pub rebound: u32,
    /// Surface components over all bodies after tracking (surface level 2; 0 below).
    pub components: u32,
    /// Surface vertices deleted for want of a supporting particle (level 2).
    pub unsupported: u32,
    /// Holes capped (level 2).
    pub caps: u32,
    /// Seams made by merging facing holes (level 2).
    pub seams: u32,
    /// Surface edges split, collapsed and flipped by the mesh improvement
    /// (surface level ≥ 1, `pbd::remesh`).
    pub remesh: RemeshStats,
}

/// Seconds per re-sampling phase since the solver was made, in the paper's
/// Table 1 columns (spec §10.3): Topo (surface tracking: level-2 tearing,
/// capping and merging, and the level-1 mesh improvement), BH (the
/// inflated surfaces' inside oracles, the paper's ray-cast hash), PD (deletion and compaction), PA (seeding),
/// CS (cluster update, removal and creation), SK (skin maintenance), Oth
/// (the rest: reverse maps, recentring, the conservation fix-up).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ResampleTimes {
    /// Topo.
    pub topo: f64,
    /// BH.
    pub hash: f64,
    /// PD.
    pub deletion: f64,
    /// PA.
    pub addition: f64,
    /// CS.
    pub clusters: f64,
    /// SK.
    pub skin: f64,
    /// Oth.
    pub other: f64,
}

fn add_remesh(total: &mut RemeshStats, m: RemeshStats) {
    total.splits += m.splits;
    total.collapses += m.collapses;
    total.flips += m.flips;
}

fn lap(t: &mut std::time::Instant) -> f64 {
    let now = std::time::Instant::now();
    let dt = (now - *t).as_secs_f64();
    *t = now;
    dt
}

/// Scratch space of re-sampling.
#[derive(Clone, Debug, Default)]
pub struct Resampler {
    /// Seconds per phase.
    pub times: ResampleTimes,
    wide: Grid,
    grid: Grid,
    face_grid: Grid,
    seam: Vec<u32>,
    near: Vec<u32>,
}

/// The inside oracle of body `b`'s surface inflated by `offset` (m) along the
/// vertex normals (spec §8.7); `None` for a body without surface triangles.
fn inflated_inside(state: &State, b: usize, offset: f32) -> Option<MeshInside> {
    let s = &state.surfaces[b];
    if s.faces.is_empty() {
        return None;
    }
    let v: Vec<Vec3<f64>> =
        s.y.iter()
            .zip(&s.normals)
            .map(|(y, n)| (*y + *n * offset).cast::<f64>())
            .collect();
    // The faces are the body's input mesh's, which passed the closedness check.
    Some(MeshInside::from_closed(v, s.faces.clone()))
}

impl Resampler {
    /// Spec §9 steps 13–20 and 22 on `state` after a step. `snapshot` is
    /// the end-of-step fit (spec §6.1); `state.step` seeds the random numbers.
    pub fn run(
        &mut self,
        state: &mut State,
        model: &Model,
        colliders: &[Collider],
        snapshot: &Snapshot,
    ) -> ResampleStats {
        let p = &model.params;
        let r = p.spacing as f32;
        let mut stats = ResampleStats::default();
        let mut clock = std::time::Instant::now();
        let momentum_before = if p.conserve_mass_momentum {
            body_momenta(state, model.bodies.len())
        } else {
            Vec::new()
        };
        self.times.other += lap(&mut clock);
        // Spec §7 and §8.6 level 2, before deletion: the surfaces tear where
        // no particle supports them, holes are capped, components labelled
        // and passed on to the particles and clusters.
        if p.surface_level >= 2 {
            for b in 0..state.surfaces.len() {
                let body = b as u32;
                self.grid
                    .build(&state.particles.x, 2.0 * r, |i| state.particles.body[i] == body);
                let (grid, x) = (&self.grid, &state.particles.x);
                // Spec §8.6 step 5: holes closer than 2·MaxE + r pair
                // (MaxE is finite at levels 1 and 2, `StepParams::validate`).
                let max_edge = p.max_edge as f32 * r;
                let merge = topology::MergeParams {
                    gap: MERGE_GAP * r,
                    cell: 2.0 * r,
                    within: 2.0 * max_edge + r,
                };
                let t = topology::track(
                    &mut state.surfaces[b],
                    |y| grid.any_within(x, y, 2.0 * r),
                    Some((merge, &mut self.face_grid, &mut self.seam)),
                );
                // The particles under a new seam become cluster-creation
                // candidates (§6.4), so clusters form across it (X12).
                let s = &state.surfaces[b];
                for &v in &self.seam {
                    let k = &s.skin[v as usize];
                    for a in 0..4 {
                        if k.weight[a] > 0.0 && (k.particle[a] as usize) < state.particles.len() {
                            state.particles.flags[k.particle[a] as usize] |= flag::SEAM;
                        }
                    }
                }
                // Step (7): level 1 on the closed mesh; the seam's vertex
                // numbers were used above, the labels are made afresh.
                let m = remesh::improve(&mut state.surfaces[b], max_edge);
                add_remesh(&mut stats.remesh, m);
                skin::normals(&mut state.surfaces[b]);
                topology::label_particles(state, b, r, &self.grid);
                stats.components += t.components;
                stats.unsupported += t.unsupported;
                stats.caps += t.caps;
                stats.seams += t.seams;
            }
            self.times.topo += lap(&mut clock);
        } else if p.surface_level == 1 {
            // Level 1 alone: the mesh improves, its topology stays.
            let max_edge = p.max_edge as f32 * r;
            for s in state.surfaces.iter_mut() {
                let m = remesh::improve(s, max_edge);
                add_remesh(&mut stats.remesh, m);
                if m != RemeshStats::default() {
                    skin::normals(s);
                }
            }
            self.times.topo += lap(&mut clock);
        }
        // 13. The inside oracles of the inflated surfaces.
        let inside: Vec<Option<MeshInside>> = (0..state.surfaces.len())
            .map(|b| inflated_inside(state, b, INFLATE * r))
            .collect();
        self.times.hash += lap(&mut clock);
        let counts_before: Vec<u32> = (0..state.particles.len())
            .map(|i| state.memberships.count(i))
            .collect();
        // 14. Deletion, stable compaction; clusters that lost members are recentred.
        let fates = deletion_marks(&mut self.grid, state, &inside, r, p.deletion_distance as f32);
        stats.crowded = fates.iter().filter(|f| **f == Fate::Crowded).count() as u32;
        stats.outside = fates.iter().filter(|f| **f == Fate::Outside).count() as u32;
        stats.deleted = stats.crowded + stats.outside;
        let keep: Vec<bool> = fates.iter().map(|f| *f == Fate::Keep).collect();
        let lost = compact(state, &keep);
        let mut counts: Vec<u32> = (0..keep.len())
            .filter(|&i| keep[i])
            .map(|i| counts_before[i])
            .collect();
        state.memberships.rebuild(state.particles.len(), &state.clusters);
        for (c, l) in lost.iter().enumerate() {
            if *l {
                refresh(
                    &mut state.clusters,
                    c,
                    &state.particles,
                    &state.memberships,
                    p.weights,
                );
            }
        }
        self.times.deletion += lap(&mut clock);
        // 15. Seeding.
        let (sources, seeded) = seed(&mut self.grid, state, &inside, colliders, p, r);
        stats.sources = sources;
        stats.seeded = seeded;
        counts.resize(state.particles.len(), 0);
        self.times.addition += lap(&mut clock);
        state.memberships.rebuild(state.particles.len(), &state.clusters);
        // 16. Existing clusters adopt the new particles.
        update_clusters(state, p, r);
        // 17. Remove invalid clusters.
        stats.clusters_removed = remove_clusters(state, p);
        // 18. New clusters where coverage is thin.
        state.memberships.rebuild(state.particles.len(), &state.clusters);
        stats.clusters_created = create_clusters(&mut self.grid, state, model, snapshot, r);
        self.times.clusters += lap(&mut clock);
        // 19. Reverse map; recentre the clusters holding a particle whose n_i
        // or membership changed (new clusters are centred here too).
        state.memberships.rebuild(state.particles.len(), &state.clusters);
        for (i, n) in counts.iter().enumerate() {
            if state.memberships.count(i) != *n {
                state.particles.flags[i] |= flag::MEMBERSHIP_CHANGED;
            }
        }
        let changed = |state: &State, c: usize| {
            state.clusters.entries(c).any(|e| {
                state.particles.flags[state.clusters.member[e] as usize] & flag::MEMBERSHIP_CHANGED != 0
            })
        };
        for c in 0..state.clusters.len() {
            if changed(state, c) {
                refresh(
                    &mut state.clusters,
                    c,
                    &state.particles,
                    &state.memberships,
                    p.weights,
                );
            }
        }
        self.times.other += lap(&mut clock);
        // 20. Skin maintenance: orientations of the changed particles, rebinds, offsets.
        skin::orientations_of_changed(&mut state.particles, &state.clusters, &state.memberships);
        stats.rebound = self.maintain_skin(state, r);
        self.times.skin += lap(&mut clock);
        // 22. Optional conservation fix-up (spec §5.3).
        if p.conserve_mass_momentum {
            conserve(state, model, &momentum_before);
        }
        self.times.other += lap(&mut clock);
        stats
    }

    /// Spec §8.3, §9 step 20: vertices bound to a deleted particle (their slot
    /// was cleared by the compaction) get a full rebind; every slot whose
    /// particle changed membership gets its offset refreshed at the fixed
    /// vertex position. Returns the vertices rebound.
    fn maintain_skin(&mut self, state: &mut State, r: f32) -> u32 {
        let mut rebound = 0;
        // A used slot whose particle was deleted (compaction set it to MAX),
        // or (surface level 2) belongs to another component than the vertex.
        let needs = |k: &Skin, comp: Option<u32>, component: &[u32]| {
            k.weight.iter().all(|w| *w == 0.0)
                || (0..4).any(|a| {
                    k.weight[a] > 0.0
                        && (k.particle[a] == u32::MAX
                            || comp.is_some_and(|c| component[k.particle[a] as usize] != c))
                })
        };
        for b in 0..state.surfaces.len() {
            let pt = &state.particles;
            let s = &mut state.surfaces[b];
            let vcomp = &s.vcomp;
            let comp_of = |k: usize| vcomp.get(k).copied();
            let todo: Vec<usize> = (0..s.skin.len())
                .filter(|&k| needs(&s.skin[k], comp_of(k), &pt.component))
                .collect();
            if !todo.is_empty() {
                // Cells of 2r serve the first query radius; the rare vertex
                // with fewer than four particles within 2r retries at 4r and
                // 8r on a coarser grid.
                self.grid.build(&pt.x, 2.0 * r, |i| pt.body[i] as usize == b);
                let (grid, y) = (&self.grid, &s.y);
                // Level 2: only particles of the vertex's component (spec §7 rule 5).
                let same = |k: usize, j: u32| comp_of(k).is_none_or(|c| pt.component[j as usize] == c);
                let bound: Vec<Option<Skin>> = todo
                    .par_iter()
                    .map_init(Vec::new, |near, &k| {
                        grid.within(&pt.x, y[k], 2.0 * r, near);
                        near.retain(|&j| same(k, j));
                        (near.len() >= 4).then(|| skin::bind(y[k], near, pt, r))
                    })
                    .collect();
                let mut wide_built = false;
                for (&k, new) in todo.iter().zip(bound) {
                    let new = match new {
                        Some(n) => Some(n),
                        None => {
                            if !wide_built {
                                self.wide.build(&pt.x, 8.0 * r, |i| pt.body[i] as usize == b);
                                wide_built = true;
                            }
                            let mut radius = 4.0 * r;
                            loop {
                                self.wide.within(&pt.x, y[k], radius, &mut self.near);
                                self.near.retain(|&j| same(k, j));
                                if self.near.len() >= 4 || radius >= 8.0 * r {
                                    break;
                                }
                                radius *= 2.0;
                            }
                            (!self.near.is_empty()).then(|| skin::bind(y[k], &self.near, pt, r))
                        }
                    };
                    match new {
                        Some(n) => {
                            s.skin[k] = n;
                            rebound += 1;
                        }
                        // No particle of its component within 8r: the
                        // slots of deleted particles are dropped and the
                        // rest renormalised; with none left the vertex is
                        // unbound and keeps its position (level 2 then
                        // deletes it as unsupported, spec §8.6 step 1).
                        None => skin::drop_dead_slots(&mut s.skin[k]),
                    }
                }
            }
            // Offsets of the slots whose particle changed orientation, at
            // the vertex's current position (no jump, spec §12 S1).
            s.skin.par_iter_mut().zip(s.y.par_iter()).for_each(|(skin, y)| {
                for a in 0..4 {
                    let l = skin.particle[a] as usize;
                    if skin.weight[a] > 0.0
                        && l != u32::MAX as usize
                        && pt.flags[l] & flag::MEMBERSHIP_CHANGED != 0
                    {
                        skin.offset[a] = skin::offset(pt.q[l], *y, pt.x[l]);
                    }
                }
            });
        }
        rebound
    }
}
