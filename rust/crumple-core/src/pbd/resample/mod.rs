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
use super::skin;
use super::state::{State, flag};
use crate::collide::Collider;
use crate::geometry::MeshInside;
use crate::math::Vec3;
use clusters::{create_clusters, remove_clusters, update_clusters};
use particles::{body_momenta, compact, conserve, deletion_marks, seed};

/// ‖F_P‖_F above which a cluster's particles seed new ones (spec §5.2).
pub const SEED_NORM: f32 = 1.8;
/// ‖F_P‖_F above which a cluster is removed (spec §6.3).
pub const REMOVE_NORM: f32 = 2.0;
/// Deletion distance η, in r (spec §5.1).
pub const ETA: f32 = 0.1;
/// Surface inflation for the inside tests, in r (spec §5.1, §5.2).
pub const INFLATE: f32 = 0.25;
/// Seeding candidates per source particle (spec §5.2).
pub const TRIES: u64 = 5;

/// What one re-sampling pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResampleStats {
    /// Particles deleted (crowded or outside).
    pub deleted: u32,
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
}

/// Scratch space of re-sampling.
#[derive(Clone, Debug, Default)]
pub struct Resampler {
    grid: Grid,
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
        let momentum_before = if p.conserve_mass_momentum {
            body_momenta(state, model.bodies.len())
        } else {
            Vec::new()
        };
        // 13. The inside oracles of the inflated surfaces.
        let inside: Vec<Option<MeshInside>> = (0..state.surfaces.len())
            .map(|b| inflated_inside(state, b, INFLATE * r))
            .collect();
        let counts_before: Vec<u32> = (0..state.particles.len())
            .map(|i| state.memberships.count(i))
            .collect();
        // 14. Deletion, stable compaction; clusters that lost members are recentred.
        let keep = deletion_marks(&mut self.grid, state, &inside, r);
        stats.deleted = keep.iter().filter(|k| !**k).count() as u32;
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
        // 15. Seeding.
        let (sources, seeded) = seed(&mut self.grid, &mut self.near, state, &inside, colliders, p, r);
        stats.sources = sources;
        stats.seeded = seeded;
        counts.resize(state.particles.len(), 0);
        state.memberships.rebuild(state.particles.len(), &state.clusters);
        // 16. Existing clusters adopt the new particles.
        update_clusters(state, p, r);
        // 17. Remove invalid clusters.
        stats.clusters_removed = remove_clusters(state, p);
        // 18. New clusters where coverage is thin.
        state.memberships.rebuild(state.particles.len(), &state.clusters);
        stats.clusters_created = create_clusters(&mut self.grid, state, model, snapshot, r);
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
        // 20. Skin maintenance: orientations of the changed particles, rebinds, offsets.
        skin::orientations_of_changed(&mut state.particles, &state.clusters, &state.memberships);
        stats.rebound = self.maintain_skin(state, r);
        // 22. Optional conservation fix-up (spec §5.3).
        if p.conserve_mass_momentum {
            conserve(state, model, &momentum_before);
        }
        stats
    }

    /// Spec §8.3, §9 step 20: vertices bound to a deleted particle (their slot
    /// was cleared by the compaction) get a full rebind; every slot whose
    /// particle changed membership gets its offset refreshed at the fixed
    /// vertex position. Returns the vertices rebound.
    fn maintain_skin(&mut self, state: &mut State, r: f32) -> u32 {
        let mut rebound = 0;
        for b in 0..state.surfaces.len() {
            self.grid.build(&state.particles.x, 8.0 * r, |i| {
                state.particles.body[i] as usize == b
            });
            let pt = &state.particles;
            let s = &mut state.surfaces[b];
            for (k, y) in s.y.iter().enumerate() {
                let skin = &mut s.skin[k];
                // A used slot whose particle was deleted (compaction set it to MAX).
                if skin.weight.iter().all(|w| *w == 0.0)
                    || (0..4).any(|a| skin.weight[a] > 0.0 && skin.particle[a] == u32::MAX)
                {
                    let mut radius = 2.0 * r;
                    loop {
                        self.grid.within(&pt.x, *y, radius, &mut self.near);
                        if self.near.len() >= 4 || radius >= 8.0 * r {
                            break;
                        }
                        radius *= 2.0;
                    }
                    if !self.near.is_empty() {
                        *skin = skin::bind(*y, &self.near, pt, r);
                        rebound += 1;
                    }
                    continue;
                }
                for a in 0..4 {
                    let l = skin.particle[a] as usize;
                    if skin.weight[a] > 0.0 && pt.flags[l] & flag::MEMBERSHIP_CHANGED != 0 {
                        skin.offset[a] = pt.q[l].to_mat3().transpose() * (*y - pt.x[l]);
                    }
                }
            }
        }
        rebound
    }
}
