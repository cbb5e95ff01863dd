//! One shape-matching step on the device (spec shape_matching §9 steps
//! 1–10, §14): every dispatch of a step recorded into one command buffer,
//! one small read-back of the stats block per step (divergence and the
//! counters), a device-side backup restored when a step diverges.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::collide::Collider;
use crate::error::{Error, Result};
use crate::gpu::dispatch::dispatch_2d;
use crate::gpu::radix_sort::SortPlan;
use crate::gpu::stage::Stages;
use crate::gpu::{GpuBuffer, GpuContext, GpuRadixSort, read_mapped_u32s};
use crate::pbd::model::Model;
use crate::pbd::plasticity::PlasticCounts;
use crate::pbd::skin;
use crate::pbd::solver::{Solver, StepStats};
use crate::pbd::state::State;

use super::device::Device;
use super::params::GpuParams;
use super::{KEY_BITS, stat};

/// Bind groups and the recorded sort of the current buffers.
struct Plan {
    sort: SortPlan,
    groups: BTreeMap<&'static str, wgpu::BindGroup>,
}

/// The device state and pipelines of one simulation.
pub struct GpuSolver {
    dev: Device,
    stages: Arc<Stages>,
    sort: GpuRadixSort,
    plan: Option<Plan>,
    /// The host changed the state or model: upload before the next step.
    upload_needed: bool,
    /// The host moved kinematic targets only: upload them before the next step.
    targets_needed: bool,
    /// The device holds steps the host has not read back.
    host_stale: bool,
}

impl std::fmt::Debug for GpuSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuSolver")
            .field("adapter", &self.adapter_name())
            .field("upload_needed", &self.upload_needed)
            .field("host_stale", &self.host_stale)
            .finish_non_exhaustive()
    }
}

impl GpuSolver {
    /// Compiles (or reuses) the stages on `ctx`; the first step uploads the state.
    pub fn new(ctx: &Arc<GpuContext>) -> Result<Self> {
        Ok(Self {
            dev: Device::new(ctx)?,
            stages: super::stages(ctx)?,
            sort: GpuRadixSort::new(ctx)?,
            plan: None,
            upload_needed: true,
            targets_needed: false,
            host_stale: false,
        })
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> &str {
        &self.dev.ctx.adapter_info().name
    }

    /// The host changed the state or the model (bodies, pins, velocities,
    /// settings, a checkpoint): the next step uploads everything.
    pub fn host_changed(&mut self) {
        self.upload_needed = true;
    }

    /// The host moved kinematic targets and nothing else (the device never
    /// changes them): the next step uploads the targets alone.
    pub fn targets_changed(&mut self) {
        self.targets_needed = true;
    }

    /// Brings `state` up to date with the device: particles and clusters
    /// read back, surfaces skinned, their normals and volume correction
    /// (spec §8.2–8.5; pure functions of the particles, so the same as the
    /// CPU's end of step).
    pub fn sync(&mut self, state: &mut State, model: &Model) -> Result<()> {
        if !self.host_stale {
            return Ok(());
        }
        self.dev.download(state)?;
        for (b, surface) in state.surfaces.iter_mut().enumerate() {
            skin::skin_vertices(surface, &state.particles);
            skin::normals(surface);
            if model.bodies[b].material.volume_correction {
                skin::correct_volume(surface, &state.particles);
                skin::normals(surface);
            }
        }
        self.host_stale = false;
        Ok(())
    }

    fn make_plan(&mut self) -> Result<()> {
        let sort = self.sort.plan(&self.dev.keys, &self.dev.vals, Some(KEY_BITS))?;
        if sort.needs_copy_back() {
            return Err(Error::Backend(
                "internal: the neighbour sort must end in place".into(),
            ));
        }
        let mut groups = BTreeMap::new();
        for (name, module) in &self.stages.modules {
            groups.insert(
                *name,
                module.bind_group(&self.dev.ctx, "pbd", |n| self.dev.resource(n))?,
            );
        }
        self.plan = Some(Plan { sort, groups });
        self.dev.rebind = false;
        Ok(())
    }

    /// One step of `dt` s (spec §9). `colliders` are at their pose at
    /// `t + dt`. With re-sampling on, the loop runs here and the rest of the
    /// step on the host through `solver`; otherwise the whole step stays on
    /// the device and `state` is stale until [`GpuSolver::sync`]. A diverged
    /// step restores the device state and errs with [`Error::Diverged`].
    pub fn step(
        &mut self,
        state: &mut State,
        model: &Model,
        colliders: &[Collider],
        dt: f64,
        solver: &mut Solver,
    ) -> Result<StepStats> {
        if self.upload_needed {
            self.sync(state, model)?;
            self.dev.upload(model, state)?;
            self.upload_needed = false;
        } else if self.targets_needed {
            self.dev.upload_targets(state)?;
        }
        self.targets_needed = false;
        self.dev.upload_colliders(colliders)?;
        if self.plan.is_none() || self.dev.rebind {
            self.make_plan()?;
        }
        let on_device_end = !model.params.resampling;
        let (n, nc) = (state.particles.len(), state.clusters.len());
        let params = GpuParams::new(model, dt, n, nc, colliders.len());
        let ctx = Arc::clone(&self.dev.ctx);
        ctx.queue()
            .write_buffer(&self.dev.params, 0, bytemuck::bytes_of(&params));
        let mut init = [0u32; stat::WORDS];
        init[stat::BAD_FINITE] = u32::MAX;
        self.dev.stats.upload(&init)?;
        let mut encoder = ctx.encoder("pbd step");
        // Keep the start of the step (device-side copy, no host sync); with
        // the end of the step on the host, only x, v and the rotations change.
        let saved = if on_device_end { 5 } else { 3 };
        copy_state(
            &mut encoder,
            &self.dev.state_buffers()[..saved],
            &self.dev.backup[..saved],
        );
        {
            let Some(plan) = self.plan.as_ref() else {
                return Err(Error::Backend("internal: shape-matching plan missing".into()));
            };
            let m = &self.stages.modules;
            let max = ctx.limits().max_compute_workgroups_per_dimension;
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("pbd step"),
                timestamp_writes: None,
            });
            let run = |pass: &mut wgpu::ComputePass<'_>, stage: &str, entry: &str, threads: usize| {
                if threads == 0 {
                    return;
                }
                let (x, y) = dispatch_2d((threads as u32).div_ceil(64), max);
                pass.set_pipeline(&m[stage].pipelines[entry]);
                pass.set_bind_group(0, &plan.groups[stage], &[]);
                pass.dispatch_workgroups(x, y, 1);
            };
            for _ in 0..model.params.substeps {
                run(&mut pass, "integrate", "reset_counts", 1);
                run(&mut pass, "integrate", "predict", n);
                run(&mut pass, "contacts", "cell_keys", n);
                plan.sort.record(&mut pass);
                run(&mut pass, "contacts", "find_neighbors", n);
                run(&mut pass, "contacts", "world_candidates", n);
                for _ in 0..model.params.iterations {
                    run(&mut pass, "shape_match", "fit_clusters", nc);
                    run(&mut pass, "shape_match", "apply_goals", n);
                    run(&mut pass, "contacts", "project_particles", n);
                    run(&mut pass, "contacts", "project_world", n);
                }
                run(&mut pass, "integrate", "finish", n);
            }
            if on_device_end {
                run(&mut pass, "plasticity", "end_of_step", nc);
                run(&mut pass, "plasticity", "orientations", n);
            }
        }
        let words = (stat::WORDS * 4) as u64;
        encoder.copy_buffer_to_buffer(self.dev.stats.raw(), 0, &self.dev.stats_read, 0, words);
        ctx.capture("submitting a shape-matching step", || {
            ctx.queue().submit([encoder.finish()]);
        })?;
        let mut s = [0u32; stat::WORDS];
        read_mapped_u32s(
            &ctx,
            &self.dev.stats_read,
            &mut s,
            "reading the shape-matching step stats",
            std::time::Duration::from_secs(600),
        )?;
        if s[stat::BAD_FINITE] != u32::MAX {
            self.restore_backup(saved)?;
            let i = s[stat::BAD_FINITE] as usize;
            return Err(crate::pbd::solver::diverged(
                i,
                state.particles.body.get(i).copied().unwrap_or(0),
            ));
        }
        let mut stats = StepStats {
            particle_contacts: s[stat::PARTICLE_CONTACTS],
            world_contacts: s[stat::WORLD_CONTACTS],
            ..StepStats::default()
        };
        if on_device_end {
            stats.plastic = PlasticCounts {
                flowed: s[stat::FLOWED],
                capped: s[stat::CAPPED],
                degenerate: s[stat::DEGENERATE],
            };
            state.time += dt;
            state.step += 1;
            self.host_stale = true;
            // Volume correction (spec §8.5) moves vertices and re-expresses
            // their skin offsets every step: host state that the next step's
            // correction starts from, so a body with it syncs every step.
            if model.bodies.iter().any(|b| b.material.volume_correction) {
                self.sync(state, model)?;
            }
        } else {
            // Spec §14.1 v1: the loop's results come back, re-sampling runs
            // on the host (no skinning here: its end of step does it), then
            // a fresh upload.
            self.dev.download_loop(state)?;
            solver.finish_on_host(state, model, colliders, dt, &mut stats);
            self.upload_needed = true;
        }
        Ok(stats)
    }

    /// Copies the first `saved` state buffers saved at the start of the
    /// last step back (after a diverged step).
    fn restore_backup(&self, saved: usize) -> Result<()> {
        let ctx = &self.dev.ctx;
        let mut encoder = ctx.encoder("pbd restore");
        copy_state(
            &mut encoder,
            &self.dev.backup[..saved],
            &self.dev.state_buffers()[..saved],
        );
        ctx.submit_and_wait("restoring the state of a diverged shape-matching step", encoder)
    }
}

/// Records copies of `from[k]` into `to[k]` (the state buffers and their
/// backups have the same lengths).
fn copy_state<A: Borrow<GpuBuffer<[f32; 4]>>, B: Borrow<GpuBuffer<[f32; 4]>>>(
    encoder: &mut wgpu::CommandEncoder,
    from: &[A],
    to: &[B],
) {
    for (src, dst) in from.iter().zip(to) {
        let (src, dst) = (src.borrow(), dst.borrow());
        let bytes = (src.len() * std::mem::size_of::<[f32; 4]>()) as u64;
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(src.raw(), 0, dst.raw(), 0, bytes);
        }
    }
}
