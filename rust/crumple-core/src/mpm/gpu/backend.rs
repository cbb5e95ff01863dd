//! The MPM step on the device: the recorded step and its dispatch order.
//!
//! A step is one command buffer over the stages of [`super::stages`] (one
//! WGSL file each, named like its CPU twin in [`crate::mpm::solver`]), on the
//! memory of [`super::buffers`]; state stays on the device and comes back
//! only through [`GpuMpm::download`]. The host reads back a 64-byte stats
//! block per step: the largest speed (the CFL rule of spec §3.2 needs it to
//! choose the next Δt), the first particle outside the domain or non-finite
//! (the errors the CPU reports), the number of active blocks (so the node
//! buffer grows when particles spread: a step that needs more blocks than
//! allocated is a no-op on the device and is re-run after growing) and the
//! return-map events.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::collide::Collider;
use crate::error::{Error, Result};
use crate::gpu::dispatch::{Dispatch, dispatch_2d};
use crate::gpu::radix_sort::SortPlan;
use crate::gpu::{GpuContext, GpuRadixSort, GpuScan};
use crate::math::Real;
use crate::mpm::model::{Model, State};
use crate::mpm::params::SolverParams;
use crate::mpm::solver::Pin;

use super::buffers::Device;
use super::stages::{StageModule, Stages, stat};
use super::step_params::StepParams;

/// Storage buffers the largest stage binds at once (`stress.wgsl`).
pub const STORAGE_BUFFERS_NEEDED: u32 = 13;

/// What one device step reports back.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Largest particle speed after the step, m/s.
    pub max_speed: f64,
    /// Active blocks of the sparse grid.
    pub active_blocks: u32,
    /// Return-map events by [`crate::mpm::ReturnEvent`] discriminant.
    pub events: [u32; 5],
}

/// Why a device step did not complete.
#[derive(Debug)]
pub enum StepOutcome {
    /// The step ran.
    Done(StepStats),
    /// Particle `p` is outside the domain; nothing moved.
    OutsideDomain(usize),
}

fn groups_for(threads: usize, ctx: &GpuContext) -> (u32, u32) {
    let g = threads.div_ceil(64).max(1) as u32;
    dispatch_2d(g, ctx.limits().max_compute_workgroups_per_dimension)
}

/// The device copy of an MPM model and state, and the step.
pub struct GpuMpm {
    ctx: Arc<GpuContext>,
    stages: Arc<Stages>,
    dev: Device,
    sort: GpuRadixSort,
    scan: GpuScan,
    key_bits: u32,
    /// Recorded plans, rebuilt when a buffer is reallocated.
    plan: Option<Plan>,
}

impl std::fmt::Debug for GpuMpm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuMpm")
            .field("adapter", &self.ctx.adapter_info().name)
            .field("particles", &self.dev.n)
            .field("block_capacity", &self.dev.block_capacity)
            .finish_non_exhaustive()
    }
}

struct Plan {
    sort: SortPlan,
    scan: Vec<Dispatch>,
    groups: BTreeMap<&'static str, wgpu::BindGroup>,
    p2g: Vec<wgpu::BindGroup>,
}

impl GpuMpm {
    /// Compiles the stages (once per process) and uploads `model` and `state`.
    pub fn new<T: Real>(ctx: &Arc<GpuContext>, model: &Model<T>, state: &State<T>) -> Result<Self> {
        let stages = super::stages::stages(ctx)?;
        // Keys pack 10 bits per axis (30 bits): 8 radix passes, an even
        // number, so the sort ends in place.
        let key_bits = 30;
        let mut gpu = Self {
            ctx: Arc::clone(ctx),
            stages,
            dev: Device::new(ctx)?,
            sort: GpuRadixSort::new(ctx)?,
            scan: GpuScan::new(ctx)?,
            key_bits,
            plan: None,
        };
        gpu.upload(model, state)?;
        Ok(gpu)
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> &str {
        &self.ctx.adapter_info().name
    }

    /// Uploads the whole model and state (after the host changed either).
    pub fn upload<T: Real>(&mut self, model: &Model<T>, state: &State<T>) -> Result<()> {
        self.dev.upload(model, state)
    }

    /// Reads the state back into `state` (positions, velocities, C, F, q, d, tangents).
    pub fn download<T: Real>(&self, state: &mut State<T>) -> Result<()> {
        self.dev.download(state)
    }

    /// Total mass on the grid nodes of the last step (kg), summed in node order.
    pub fn grid_mass(&self, active_blocks: usize) -> Result<f64> {
        self.dev.grid_mass(active_blocks)
    }

    /// Copies the state saved at the start of the last step back (after a
    /// diverged step).
    pub fn restore_backup(&self) -> Result<()> {
        self.dev.restore_backup()
    }

    /// A bind group of `module` over the device buffers, each resource
    /// looked up by the name the shader declares.
    fn bind_group(&self, module: &StageModule, colour: usize) -> Result<wgpu::BindGroup> {
        module.bind_group(&self.ctx, "mpm", |name| self.dev.resource(name, colour))
    }

    fn make_plan(&mut self) -> Result<()> {
        let sort = self
            .sort
            .plan(&self.dev.bufs.keys, &self.dev.bufs.values, Some(self.key_bits))?;
        if sort.needs_copy_back() {
            return Err(Error::Backend(
                "internal: the block sort must end in place".into(),
            ));
        }
        let scan = self.scan.plan(&self.dev.bufs.flags)?;
        let mut groups = BTreeMap::new();
        for (name, module) in &self.stages.modules {
            groups.insert(*name, self.bind_group(module, 0)?);
        }
        let p2g_module = &self.stages.modules["p2g"];
        let p2g = (0..8)
            .map(|c| self.bind_group(p2g_module, c))
            .collect::<Result<Vec<_>>>()?;
        self.plan = Some(Plan {
            sort,
            scan,
            groups,
            p2g,
        });
        Ok(())
    }

    /// One step of `dt` seconds on the device (spec §3): colliders must
    /// already be advanced to `t_new`; pins are evaluated at `t_new`.
    #[allow(clippy::too_many_arguments)]
    pub fn step<T: Real>(
        &mut self,
        model: &Model<T>,
        params: &SolverParams,
        colliders: &[Collider],
        pins: &[Pin],
        dt: f64,
        t_new: f64,
    ) -> Result<StepOutcome> {
        self.dev.upload_colliders(colliders)?;
        self.dev.upload_pins(pins, t_new)?;
        loop {
            if std::mem::take(&mut self.dev.rebind) {
                self.plan = None;
            }
            if self.plan.is_none() {
                self.make_plan()?;
            }
            self.dev.ensure_backup()?;
            let stats = self.run_step(model, params, colliders.len(), pins.len(), dt)?;
            if stats[stat::OVERFLOW] & 2 != 0 {
                return Ok(StepOutcome::OutsideDomain(stats[stat::BAD_DOMAIN] as usize));
            }
            if stats[stat::OVERFLOW] & 1 != 0 {
                // The step was a no-op on the device: grow with headroom and redo it.
                let need = stats[stat::BLOCKS] as usize;
                self.dev.grow(need + need / 2)?;
                continue;
            }
            if stats[stat::BAD_FINITE] != u32::MAX {
                self.dev.restore_backup()?;
                return Err(Error::Diverged {
                    step: 0, // the caller fills in its step count and time
                    time: 0.0,
                    what: crate::mpm::solver::non_finite_message(model, stats[stat::BAD_FINITE] as usize),
                });
            }
            let mut events = [0u32; 5];
            events.copy_from_slice(&stats[stat::EVENTS..stat::EVENTS + 5]);
            return Ok(StepOutcome::Done(StepStats {
                max_speed: f64::from(f32::from_bits(stats[stat::MAX_SPEED])),
                active_blocks: stats[stat::BLOCKS],
                events,
            }));
        }
    }

    fn run_step<T: Real>(
        &mut self,
        model: &Model<T>,
        params: &SolverParams,
        n_colliders: usize,
        n_pins: usize,
        dt: f64,
    ) -> Result<[u32; stat::WORDS]> {
        let ctx = Arc::clone(&self.ctx);
        let sp = StepParams::new(model, params, &self.dev, n_colliders, n_pins, dt);
        let q = ctx.queue();
        q.write_buffer(&self.dev.params, 0, bytemuck::bytes_of(&sp));
        let mut init = [0u32; stat::WORDS];
        init[stat::BAD_DOMAIN] = u32::MAX;
        init[stat::BAD_FINITE] = u32::MAX;
        q.write_buffer(&self.dev.stats, 0, bytemuck::cast_slice(&init));

        let Some(plan) = self.plan.as_ref() else {
            return Err(Error::Backend("internal: MPM plan missing".into()));
        };
        let m = &self.stages.modules;
        let pipe = |stage: &str, entry: &str| -> &wgpu::ComputePipeline { &m[stage].pipelines[entry] };
        let n = self.dev.n;
        let (nvol, nvert, nelem) = (model.vol.len(), model.vert.len(), model.elem.len());
        let slots = self.dev.hash_slots;
        let mut encoder = ctx.encoder("mpm step");
        // Keep the start of the step (device-side copy, no host sync).
        for (src, dst) in self.dev.state_buffers().into_iter().zip(self.dev.backup()) {
            encoder.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
        encoder.clear_buffer(self.dev.bufs.hash_keys.raw(), 0, None);
        encoder.clear_buffer(self.dev.bufs.hash_ranges.raw(), 0, None);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("mpm step"),
                timestamp_writes: None,
            });
            let run = |pass: &mut wgpu::ComputePass<'_>, stage: &str, entry: &str, threads: usize| {
                if threads == 0 {
                    return;
                }
                let (gx, gy) = groups_for(threads, &ctx);
                pass.set_pipeline(pipe(stage, entry));
                pass.set_bind_group(0, &plan.groups[stage], &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            };
            let indirect =
                |pass: &mut wgpu::ComputePass<'_>, stage: &str, entry: &str, bg: &wgpu::BindGroup| {
                    pass.set_pipeline(pipe(stage, entry));
                    pass.set_bind_group(0, bg, &[]);
                    pass.dispatch_workgroups_indirect(&self.dev.indirect, 0);
                };
            run(&mut pass, "bin", "bin", n);
            plan.sort.record(&mut pass);
            run(&mut pass, "grid_build", "mark", n);
            run(&mut pass, "grid_build", "flag", slots + 1);
            for s in &plan.scan {
                s.record(&mut pass);
            }
            run(&mut pass, "grid_build", "compact", slots);
            run(&mut pass, "stress", "stress_volume", nvol);
            run(&mut pass, "stress", "stress_elements", nelem);
            run(&mut pass, "stress", "gather_forces", nvert);
            indirect(&mut pass, "p2g", "clear_nodes", &plan.groups["p2g"]);
            for bg in &plan.p2g {
                indirect(&mut pass, "p2g", "p2g", bg);
            }
            indirect(
                &mut pass,
                "grid_update",
                "grid_update",
                &plan.groups["grid_update"],
            );
            run(&mut pass, "g2p", "g2p", n);
            let moved = if params.enslave_elements {
                model.vert.end
            } else {
                model.elem.end
            };
            run(&mut pass, "advect", "advect_particles", moved);
            run(&mut pass, "advect", "apply_pins", n_pins);
            run(&mut pass, "advect", "advect_elements", nelem);
            run(&mut pass, "plasticity", "plasticity_volume", nvol);
            if params.codim_return_map {
                run(&mut pass, "plasticity", "return_map", nelem);
            }
            run(&mut pass, "advect", "check", n);
        }
        encoder.copy_buffer_to_buffer(
            &self.dev.stats,
            0,
            &self.dev.stats_read,
            0,
            (stat::WORDS * 4) as u64,
        );
        ctx.capture("submitting an MPM step", || {
            ctx.queue().submit([encoder.finish()]);
        })?;
        self.read_stats()
    }

    fn read_stats(&self) -> Result<[u32; stat::WORDS]> {
        let mut out = [0u32; stat::WORDS];
        crate::gpu::read_mapped_u32s(
            &self.ctx,
            &self.dev.stats_read,
            &mut out,
            "reading the MPM step stats",
            std::time::Duration::from_secs(600),
        )?;
        Ok(out)
    }
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
