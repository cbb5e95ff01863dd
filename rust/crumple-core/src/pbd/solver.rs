//! One step of the shape-matching solver in the spec's order (shape_matching
//! §9): external forces, prediction, contacts, the solver iterations
//! (shape matching → particle contacts → world contacts), the velocity
//! update, the end-of-step plasticity, orientations and skinning. Each stage
//! is a function of its own file; this file only orders them and keeps the
//! scratch space, which is reused from step to step.

use std::time::Instant;

use rayon::prelude::*;

use super::contacts::{ContactParams, Contacts};
use super::model::Model;
use super::plasticity::{PlasticCounts, PlasticParams, Snapshot, end_of_step};
use super::resample::{ResampleStats, ResampleTimes, Resampler};
use super::shape_match::{ClusterParams, ClusterScratch, apply_goals, fit_clusters};
use super::skin;
use super::state::{State, flag};
use crate::Result;
use crate::collide::Collider;
use crate::error::Error;
use crate::math::Vec3;

/// Seconds spent per stage since the solver was made (the paper's Table 1
/// columns: `sim` = PBD + plasticity, `skin` = orientations, skinning, normals).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Forces, prediction, velocity update.
    pub integrate: f64,
    /// Neighbour grid and contact candidates.
    pub contacts: f64,
    /// Shape matching (fit and goals) over all iterations.
    pub shape_matching: f64,
    /// Contact projections over all iterations.
    pub projection: f64,
    /// End-of-step plasticity.
    pub plasticity: f64,
    /// Orientations, skinning, normals, volume correction.
    pub skin: f64,
    /// Particle and cluster re-sampling, skin maintenance (spec §5–§6, §8.3).
    pub resample: f64,
}

impl StageTimes {
    /// Every stage by its Python name (`stage_times()` keys, `stats()`'s
    /// `time_<name>`), listed once.
    pub fn named(&self) -> [(&'static str, f64); 7] {
        [
            ("integrate", self.integrate),
            ("contacts", self.contacts),
            ("shape_matching", self.shape_matching),
            ("projection", self.projection),
            ("plasticity", self.plasticity),
            ("skin", self.skin),
            ("resample", self.resample),
        ]
    }

    /// The seconds spent per stage since `before` (an earlier reading).
    pub fn since(&self, before: &StageTimes) -> StageTimes {
        StageTimes {
            integrate: self.integrate - before.integrate,
            contacts: self.contacts - before.contacts,
            shape_matching: self.shape_matching - before.shape_matching,
            projection: self.projection - before.projection,
            plasticity: self.plasticity - before.plasticity,
            skin: self.skin - before.skin,
            resample: self.resample - before.resample,
        }
    }
}

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Clusters with plastic flow, cap rejections, degenerate clusters.
    pub plastic: PlasticCounts,
    /// Particle–particle candidate pairs (each counted once per particle).
    pub particle_contacts: u32,
    /// Particle–collider candidates.
    pub world_contacts: u32,
    /// What re-sampling did (zeros when it is off).
    pub resample: ResampleStats,
    /// The step's seconds per stage (set by `Simulation::step_dt`: every
    /// module's `stats()` reports its last step's as `time_<stage>`).
    pub times: StageTimes,
}

/// Scratch space of the step, reused between steps.
#[derive(Clone, Debug, Default)]
pub struct Solver {
    xs: Vec<Vec3<f32>>,
    contacts: Contacts,
    scratch: ClusterScratch,
    stiffness: Vec<f32>,
    plastic: Vec<PlasticParams>,
    /// The last end-of-step snapshot (spec §6.1).
    pub snapshot: Snapshot,
    resampler: Resampler,
    /// Particles a surface is bound to (orientations without re-sampling).
    skinned: Vec<bool>,
    /// Face normals' scratch of the vertex normals.
    face_normals: Vec<Vec3<f32>>,
    /// What `scratch` was prepared for (memberships id, weights, sizes).
    prepared: Option<(u64, super::params::Weights, usize, usize)>,
    /// Stage timings.
    pub times: StageTimes,
}

fn timed<R>(acc: &mut f64, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    *acc += t.elapsed().as_secs_f64();
    r
}

impl Solver {
    /// Seconds per re-sampling phase (the paper's BH, PD, PA, CS, SK, Oth).
    pub fn resample_times(&self) -> ResampleTimes {
        self.resampler.times
    }

    /// Per-cluster material of the coming step (clusters change with re-sampling).
    fn cluster_materials(&mut self, model: &Model, state: &State) {
        let capped = !model.params.resampling;
        let n = state.clusters.len();
        self.stiffness.clear();
        self.plastic.clear();
        for c in 0..n {
            let m = &model.bodies[state.clusters.body[c] as usize].material;
            self.stiffness.push(m.stiffness as f32);
            self.plastic.push(PlasticParams {
                flow_rate: m.flow_rate as f32,
                hardening: m.hardening as f32,
                cap: m.plastic_cap as f32,
                capped,
            });
        }
    }

    /// The weights and particle-ordered copies of the memberships for the
    /// coming step. They change only with the memberships (a rebuild gives
    /// a new id) or, with re-sampling on, with the clusters' rest shapes:
    /// without re-sampling they are prepared once and reused.
    fn prepare_scratch(&mut self, state: &State, p: &super::params::StepParams) {
        let key = (
            state.memberships.id,
            p.weights,
            state.particles.len(),
            state.clusters.len(),
        );
        if p.resampling || key.0 == 0 || self.prepared != Some(key) {
            self.scratch
                .prepare(&state.particles, &state.clusters, &state.memberships, p.weights);
            self.prepared = Some(key);
        }
    }

    /// Advances `state` by `dt` (spec §9 steps 1–10). `colliders` must be at
    /// their pose at `t + dt`. Errors with [`Error::Diverged`] (step and time
    /// filled in by the caller) when a position or velocity is not finite.
    pub fn step(
        &mut self,
        state: &mut State,
        model: &Model,
        colliders: &[Collider],
        dt: f64,
    ) -> Result<StepStats> {
        let p = &model.params;
        self.cluster_materials(model, state);
        let LoopParams {
            h,
            gravity: g,
            keep,
            vmax,
            contact: cp,
        } = LoopParams::new(p, dt);
        let mut stats = StepStats::default();
        self.prepare_scratch(state, p);
        let mut finite = true;
        for _ in 0..p.substeps {
            let pt = &mut state.particles;
            // Steps 1–2: forces, damping, speed clamp, prediction (kinematic: the target).
            timed(&mut self.times.integrate, || {
                self.xs.resize(pt.len(), Vec3::zero());
                let (x, w, target) = (&pt.x, &pt.w, &pt.target);
                pt.v.par_iter_mut()
                    .zip(self.xs.par_iter_mut())
                    .enumerate()
                    .for_each(|(i, (v, xs))| {
                        if w[i] == 0.0 {
                            *xs = target[i];
                            return;
                        }
                        *v = (*v + g * h) * keep;
                        let s = v.norm();
                        if s > vmax {
                            *v *= vmax / s;
                        }
                        *xs = x[i] + *v * h;
                    });
            });
            // Steps 3–5: grid and candidates.
            timed(&mut self.times.contacts, || {
                self.contacts.find(
                    &self.xs,
                    &state.particles,
                    colliders,
                    &cp,
                    p.max_neighbors as usize,
                );
            });
            stats.world_contacts = self.contacts.world.len() as u32;
            stats.particle_contacts = self.contacts.neighbor_count.iter().sum();
            // Step 7: the iterations, groups in order (spec §13 item 12).
            let cparams = ClusterParams {
                stiffness: &self.stiffness,
                fit: p.rotation_fit,
                rotation_iterations: p.rotation_iterations[0],
                weights: p.weights,
            };
            for _ in 0..p.iterations {
                timed(&mut self.times.shape_matching, || {
                    fit_clusters(&self.xs, &mut state.clusters, &cparams, &mut self.scratch);
                    apply_goals(
                        &mut self.xs,
                        &state.particles,
                        &state.memberships,
                        cp.sor,
                        &self.scratch,
                    );
                });
                timed(&mut self.times.projection, || {
                    self.contacts
                        .project_particles(&mut self.xs, &state.particles, &cp);
                    self.contacts
                        .project_world(&mut self.xs, &state.particles, colliders, &cp, h);
                });
            }
            // Step 8: velocities from the positions (kinematic ones from
            // their motion), and whether all stayed finite (a boolean `all`:
            // the same for any grouping; the serial search for the first bad
            // particle runs only when one is not).
            let pt = &mut state.particles;
            finite &= timed(&mut self.times.integrate, || {
                let inv = 1.0 / h;
                pt.x.par_iter_mut()
                    .zip(pt.v.par_iter_mut())
                    .zip(self.xs.par_iter())
                    .map(|((x, v), xs)| {
                        *v = (*xs - *x) * inv;
                        *x = *xs;
                        x.is_finite() && v.is_finite()
                    })
                    .reduce(|| true, |a, b| a && b)
            });
        }
        if !finite {
            check_finite(state)?;
        }
        self.finish(state, model, colliders, dt, &mut stats);
        Ok(stats)
    }

    /// The part of a step after the PBD loop, for a loop that ran elsewhere
    /// (the GPU backend with re-sampling on runs the loop on the device and
    /// this on the host): plasticity, skinning, re-sampling, volume
    /// correction, the step count. `stats` gets the plastic and re-sampling
    /// counters.
    pub fn finish_on_host(
        &mut self,
        state: &mut State,
        model: &Model,
        colliders: &[Collider],
        dt: f64,
        stats: &mut StepStats,
    ) {
        self.cluster_materials(model, state);
        self.prepare_scratch(state, &model.params);
        self.finish(state, model, colliders, dt, stats);
    }

    fn finish(
        &mut self,
        state: &mut State,
        model: &Model,
        colliders: &[Collider],
        dt: f64,
        stats: &mut StepStats,
    ) {
        let p = &model.params;
        // Step 9 (spec §9 step 8): plasticity and the snapshot, once per step.
        stats.plastic = timed(&mut self.times.plasticity, || {
            end_of_step(
                &state.particles,
                &mut state.clusters,
                &self.scratch,
                &self.plastic,
                p.rotation_fit,
                p.rotation_iterations[1],
                dt as f32,
                p.particle_distance() as f32,
                &mut self.snapshot,
            )
        });
        // Spec §9 steps 9–10: orientations, skin, normals.
        timed(&mut self.times.skin, || {
            if p.resampling {
                // Rebinding may bind any particle: every orientation is kept current.
                skin::orientations(&mut state.particles, &state.clusters, &state.memberships);
            } else {
                skin::skinned_particles(&state.surfaces, state.particles.len(), &mut self.skinned);
                skin::orientations_masked(
                    &mut state.particles,
                    &state.clusters,
                    &state.memberships,
                    &self.scratch.goal,
                    &self.skinned,
                );
            }
            for surface in &mut state.surfaces {
                skin::skin_vertices(surface, &state.particles);
                skin::normals_with(surface, &mut self.face_normals);
            }
        });
        // Steps 13–20 and 22: re-sampling, once per step.
        if p.resampling {
            stats.resample = timed(&mut self.times.resample, || {
                self.resampler.run(state, model, colliders, &self.snapshot)
            });
        }
        // Step 21: volume correction.
        timed(&mut self.times.skin, || {
            for (b, surface) in state.surfaces.iter_mut().enumerate() {
                if model.bodies[b].material.volume_correction {
                    skin::correct_volume(surface, &state.particles);
                    skin::normals_with(surface, &mut self.face_normals);
                }
            }
        });
        for f in state.particles.flags.iter_mut() {
            *f &= !(flag::NEW | flag::MEMBERSHIP_CHANGED | flag::SEAM);
        }
        state.time += dt;
        state.step += 1;
    }
}

/// The PBD loop's settings for a step of `dt` (shared with the GPU twin,
/// `pbd/gpu/params.rs`, so both read the same f32 values).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopParams {
    /// Sub-step, s.
    pub h: f32,
    /// Gravity, m/s².
    pub gravity: Vec3<f32>,
    /// Velocity kept per sub-step after damping.
    pub keep: f32,
    /// Largest speed, m/s.
    pub vmax: f32,
    /// Contact distances, friction and over-relaxation.
    pub contact: ContactParams,
}

impl LoopParams {
    /// From the step settings and the step `dt`, s.
    pub fn new(p: &super::params::StepParams, dt: f64) -> Self {
        let h = (dt / f64::from(p.substeps)) as f32;
        Self {
            h,
            gravity: p.gravity.cast::<f32>(),
            keep: (1.0 - p.damping * f64::from(h)).max(0.0) as f32,
            vmax: p.max_speed as f32,
            contact: ContactParams {
                d_pp: p.particle_distance() as f32,
                d_pw: (p.world_distance * p.spacing) as f32,
                margin: (p.contact_margin * p.spacing) as f32,
                mu_pp: (
                    p.particle_static_friction as f32,
                    p.particle_kinetic_friction as f32,
                ),
                static_ratio: p.static_friction_ratio as f32,
                sor: p.sor as f32,
            },
        }
    }
}

/// The first particle with a non-finite position or velocity, as [`Error::Diverged`].
fn check_finite(state: &State) -> Result<()> {
    let pt = &state.particles;
    match (0..pt.len()).find(|&i| !(pt.x[i].is_finite() && pt.v[i].is_finite())) {
        Some(i) => Err(diverged(i, pt.body[i])),
        None => Ok(()),
    }
}

/// [`Error::Diverged`] for particle `i` of `body` (step and time filled in
/// by the caller); the CPU and GPU steps say the same.
pub(crate) fn diverged(i: usize, body: u32) -> Error {
    Error::Diverged {
        step: 0,
        time: 0.0,
        what: format!(
            "particle {i} of body {body} has a non-finite position or velocity; lower dt or the \
             material's stiffness, or add substeps"
        ),
    }
}
