//! The convenience wrapper: a [`Simulation`] owns a model, a state, a solver,
//! colliders and pins, builds particles from meshes, strands and point sets
//! (spec §2.6), and advances by CFL-limited steps that land exactly on the
//! requested time (spec §3.2).

use std::ops::Range;

use crate::collide::{Collider, Motion, RigidHandle};
use crate::error::{Error, Result};
use crate::geometry::{Curves, TriMesh};
use crate::invalid;
use crate::math::{Mat3, Real, Vec3, qr3};

mod checkpoint;
mod objects;
mod pins;
mod readouts;

use super::gpu::backend::{GpuMpm, StepOutcome};
use super::material::{CodimMaterial, VolumeMaterial, codim_energy, volume_energy};
use super::model::{Element, Model, State};
use super::params::{OutOfDomain, SolverParams};
use super::solver::{Counters, ParticleBounds, Pin, Solver, element_ft, max_speed};
use crate::gpu::GpuContext;

/// What kind of object a handle refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// Type (i) particles: sand, goo, elastic solid.
    Volume,
    /// A triangle mesh (cloth): vertices are type (ii), triangles type (iii).
    Surface,
    /// Strands (hair, yarn): vertices type (ii), segments type (iii).
    Curves,
}

/// One added object: where its particles live inside their type range.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    pub kind: ObjectKind,
    /// Particles (volume) or vertices (surface, curves), as offsets within the type range.
    pub points: Range<usize>,
    /// Elements, as offsets within the element range (empty for volumes).
    pub elements: Range<usize>,
}

/// How much of an element's volume weights its elastic energy (spec §9 A10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EnergyWeight {
    /// `V_e/(m+2)`, the paper's split (its Table 1 values were tuned with it):
    /// the effective stiffness is E/4 (surfaces) or E/3 (curves).
    #[default]
    Split,
    /// `V_e`: the nominal stiffness.
    Full,
}

crate::named_enum!(EnergyWeight { "split" => Split, "full" => Full });

/// Speed (m/s) above which a step is reported as diverged.
pub const DIVERGED_SPEED: f64 = 1e4;

/// An MPM simulation in precision `T` (f32 by default in the bindings).
///
/// With the GPU backend ([`Simulation::use_gpu`]) the state lives on the
/// device between steps; `state` is brought up to date by
/// [`Simulation::sync_host`] (the bindings call it before reading arrays),
/// and methods that edit the model or state sync first and re-upload before
/// the next step.
#[derive(Debug)]
pub struct Simulation<T> {
    pub params: SolverParams,
    pub model: Model<T>,
    pub state: State<T>,
    pub solver: Solver<T>,
    pub colliders: Vec<Collider>,
    pub pins: Vec<Pin>,
    /// Scripted handles: pinned vertices (numbered in the vertex range, like
    /// [`Pin::vertex`]) moved along a path; their pins' targets are set from
    /// the path before every step, on both backends.
    pub handles: Vec<RigidHandle>,
    pub objects: Vec<Object>,
    /// Volumetric particles deleted so far ([`OutOfDomain::Remove`]).
    pub removed: u64,
    /// The state at the start of the CPU step in progress: a step that
    /// diverges restores it (no allocation after the first step).
    backup: State<T>,
    gpu: Option<GpuSlot>,
}

/// A copy on the CPU backend. A GPU simulation's copy takes the host copy
/// of the state, so call [`Simulation::sync_host`] first to copy the latest
/// device state.
impl<T: Real> Clone for Simulation<T> {
    fn clone(&self) -> Self {
        Self {
            params: self.params.clone(),
            model: self.model.clone(),
            state: self.state.clone(),
            solver: self.solver.clone(),
            colliders: self.colliders.clone(),
            pins: self.pins.clone(),
            handles: self.handles.clone(),
            objects: self.objects.clone(),
            removed: self.removed,
            backup: State::default(),
            gpu: None,
        }
    }
}

/// The device copy and whether either side is ahead.
#[derive(Debug)]
struct GpuSlot {
    mpm: Box<GpuMpm>,
    /// The device has stepped since the last download.
    host_stale: bool,
    /// The host model or state changed since the last upload.
    device_stale: bool,
    /// Largest speed after the last device step (for the CFL rule).
    max_speed: f64,
    /// Active blocks of the last device step.
    active_blocks: usize,
}

fn splice<V: Clone>(v: &mut Vec<V>, at: usize, items: impl IntoIterator<Item = V>) {
    v.splice(at..at, items);
}

impl<T: Real> Simulation<T> {
    /// A new, empty simulation; errors on invalid parameters.
    pub fn new(params: SolverParams) -> Result<Self> {
        params.validate()?;
        Ok(Self {
            params,
            model: Model::default(),
            state: State::default(),
            solver: Solver::default(),
            colliders: Vec::new(),
            pins: Vec::new(),
            handles: Vec::new(),
            objects: Vec::new(),
            removed: 0,
            backup: State::default(),
            gpu: None,
        })
    }

    /// Runs every later step on the GPU of `ctx` (f32 only): uploads the
    /// model and state now.
    pub fn use_gpu(&mut self, ctx: &std::sync::Arc<GpuContext>) -> Result<()> {
        if T::EPSILON.to_f64() < 1e-10 {
            return invalid!(
                "the GPU backend runs in single precision; use precision='f32' with backend='gpu'"
            );
        }
        self.sync_host()?;
        let mpm = GpuMpm::new(ctx, &self.model, &self.state)?;
        self.gpu = Some(GpuSlot {
            mpm: Box::new(mpm),
            host_stale: false,
            device_stale: false,
            max_speed: max_speed(&self.state),
            active_blocks: 0,
        });
        Ok(())
    }

    /// The adapter name when running on the GPU, else `None`.
    pub fn gpu_adapter(&self) -> Option<&str> {
        self.gpu.as_ref().map(|g| g.mpm.adapter_name())
    }

    /// Active 4³-node blocks of the sparse grid in the last step.
    pub fn active_blocks(&self) -> usize {
        match &self.gpu {
            Some(g) => g.active_blocks,
            None => self.solver.grid.num_blocks(),
        }
    }

    /// Total grid mass of the last step, kg (spec E8: equals the particle mass).
    pub fn grid_mass(&self) -> Result<f64> {
        match &self.gpu {
            Some(g) => g.mpm.grid_mass(g.active_blocks),
            None => Ok(self.solver.grid.total_mass()),
        }
    }

    /// Brings `state` up to date with the device (no-op on the CPU backend).
    pub fn sync_host(&mut self) -> Result<()> {
        if let Some(g) = self.gpu.as_mut()
            && g.host_stale
        {
            g.mpm.download(&mut self.state)?;
            g.host_stale = false;
        }
        Ok(())
    }

    /// Call before editing `model` or `state` from outside: syncs the host
    /// copy and marks the device copy for re-upload before the next step.
    pub fn begin_host_edit(&mut self) -> Result<()> {
        self.sync_host()?;
        if let Some(g) = self.gpu.as_mut() {
            g.device_stale = true;
        }
        Ok(())
    }

    /// The time step the CFL rule allows now (spec §3.2), without the frame end.
    pub fn stable_dt(&self) -> f64 {
        let vmax = match &self.gpu {
            // the device is ahead: its last step's speed (a host edit syncs
            // first, so then the host copy is current)
            Some(g) if g.host_stale => g.max_speed,
            _ => max_speed(&self.state),
        };
        let cfl = if vmax > 0.0 {
            self.params.cfl * self.params.dx / vmax
        } else {
            f64::INFINITY
        };
        self.params.dt_max.min(cfl)
    }

    /// One step of exactly `dt` seconds.
    pub fn step(&mut self, dt: f64) -> Result<()> {
        if !(dt.is_finite() && dt > 0.0) {
            return invalid!("dt must be > 0; got {dt}");
        }
        if self.model.num_particles() == 0 {
            return invalid!("the simulation has no particles; add cloth, strands or a volume first");
        }
        if !self.handles.is_empty() {
            self.update_handle_pins(self.state.time + dt)?;
        }
        if self.gpu.is_some() {
            return self.step_gpu(dt);
        }
        if self.params.out_of_domain == OutOfDomain::Remove {
            self.remove_escaped_particles();
        }
        // Keep the start of the step: a diverged step is undone, so the
        // caller can lower dt_max or a stiffness and continue the run.
        let tangents = self.params.eulerian_tangents;
        self.backup.copy_from(&self.state, tangents);
        let result = self
            .solver
            .step(
                &self.model,
                &mut self.state,
                &self.params,
                &mut self.colliders,
                &self.pins,
                dt,
            )
            .and_then(|()| {
                let vmax = max_speed(&self.state);
                if vmax > DIVERGED_SPEED {
                    return Err(Error::Diverged {
                        step: self.state.step,
                        time: self.state.time,
                        what: format!(
                            "a particle reached {vmax:.3e} m/s; lower dt_max, raise damping or lower the stiffness"
                        ),
                    });
                }
                Ok(())
            });
        if let Err(e) = result {
            self.state.copy_from(&self.backup, tangents);
            for c in self.colliders.iter_mut() {
                c.advance_to(self.state.time)?;
            }
            return Err(match e {
                Error::Diverged { what, .. } => Error::Diverged {
                    step: self.state.step,
                    time: self.state.time,
                    what,
                },
                e => e,
            });
        }
        Ok(())
    }

    /// One device step (the twin of [`Solver::step`]); see [`GpuMpm`].
    pub(super) fn step_gpu(&mut self, dt: f64) -> Result<()> {
        loop {
            let Some(g) = self.gpu.as_mut() else {
                return invalid!("internal: no GPU backend");
            };
            if g.device_stale {
                g.mpm.upload(&self.model, &self.state)?;
                g.device_stale = false;
            }
            let t_new = self.state.time + dt;
            for c in self.colliders.iter_mut() {
                c.advance_to(t_new)?;
            }
            let outcome = match g
                .mpm
                .step(&self.model, &self.params, &self.colliders, &self.pins, dt, t_new)
            {
                Ok(o) => o,
                Err(Error::Diverged { what, .. }) => {
                    // The device restored the start of the step (as the CPU
                    // backend does): the clock and the colliders stay where
                    // they were.
                    for c in self.colliders.iter_mut() {
                        c.advance_to(self.state.time)?;
                    }
                    return Err(Error::Diverged {
                        step: self.state.step,
                        time: self.state.time,
                        what,
                    });
                }
                Err(e) => return Err(e),
            };
            match outcome {
                StepOutcome::Done(stats) => {
                    if stats.max_speed > DIVERGED_SPEED {
                        // Undo the step on the device, as the CPU backend does.
                        g.mpm.restore_backup()?;
                        for c in self.colliders.iter_mut() {
                            c.advance_to(self.state.time)?;
                        }
                        return Err(Error::Diverged {
                            step: self.state.step,
                            time: self.state.time,
                            what: format!(
                                "a particle reached {:.3e} m/s; lower dt_max, raise damping or lower the stiffness",
                                stats.max_speed
                            ),
                        });
                    }
                    g.host_stale = true;
                    g.max_speed = stats.max_speed;
                    let ne = self.model.elements.len() as u64;
                    use super::material::ReturnEvent as R;
                    let c = &mut self.solver.counters;
                    c.slide += u64::from(stats.events[R::Slide as usize]);
                    c.tension += u64::from(stats.events[R::Tension as usize]);
                    c.inverted += u64::from(stats.events[R::Inverted as usize]);
                    c.degenerate += u64::from(stats.events[R::Degenerate as usize]);
                    c.element_steps += ne;
                    g.active_blocks = stats.active_blocks as usize;
                    self.state.time = t_new;
                    self.state.step += 1;
                    return Ok(());
                }
                StepOutcome::OutsideDomain(p) => {
                    self.sync_host()?;
                    let before = self.removed;
                    if self.params.out_of_domain == OutOfDomain::Remove {
                        self.remove_escaped_particles();
                    }
                    if self.removed > before {
                        if let Some(g) = self.gpu.as_mut() {
                            g.device_stale = true;
                        }
                        continue;
                    }
                    // The CPU solver's message, for the same particle.
                    return Err(super::solver::domain_error(&self.state, &self.params, p));
                }
            }
        }
    }

    /// Advances by `duration` seconds with CFL-limited steps, landing exactly
    /// on `time + duration` (spec §3.2). Returns the number of steps taken.
    pub fn advance(&mut self, duration: f64) -> Result<u64> {
        Ok(self.advance_with(duration, || false)?.0)
    }

    /// [`advance`](Self::advance) that calls `stop()` between steps and
    /// returns early, at a step boundary with the state intact, when it
    /// answers true (the bindings check for Ctrl-C there). Returns the steps
    /// taken and whether it stopped early.
    pub fn advance_with(&mut self, duration: f64, mut stop: impl FnMut() -> bool) -> Result<(u64, bool)> {
        if !(duration.is_finite() && duration >= 0.0) {
            return invalid!("duration must be >= 0; got {duration}");
        }
        let t_end = self.state.time + duration;
        let mut steps = 0;
        // A step shorter than this fraction of dt_max is merged into the previous one.
        let tiny = 1e-9 * self.params.dt_max;
        while t_end - self.state.time > tiny {
            if stop() {
                return Ok((steps, true));
            }
            let remaining = t_end - self.state.time;
            let mut dt = self.stable_dt().min(remaining);
            if remaining - dt <= tiny {
                dt = remaining;
            }
            self.step(dt)?;
            steps += 1;
        }
        self.state.time = t_end;
        Ok((steps, false))
    }

    /// Deletes volumetric particles outside the domain (policy
    /// [`OutOfDomain::Remove`]), compacting every per-particle array in place
    /// and shrinking the objects' ranges. Mesh particles are left for the
    /// solver's domain check. Allocation-free.
    pub(super) fn remove_escaped_particles(&mut self) {
        let vol = self.model.vol.clone();
        let bounds = ParticleBounds::<T>::new(&self.params);
        if self.state.x[vol.clone()].iter().all(|&x| bounds.contains(x)) {
            return;
        }
        let (m, s) = (&mut self.model, &mut self.state);
        let mut write = 0usize;
        // Volume objects, in order: their point ranges tile the volume range.
        let mut removed_before = 0usize;
        for o in self.objects.iter_mut().filter(|o| o.kind == ObjectKind::Volume) {
            let mut removed_in = 0usize;
            for read in o.points.clone() {
                let p = vol.start + read;
                if !bounds.contains(s.x[p]) {
                    removed_in += 1;
                    continue;
                }
                let w = vol.start + write;
                m.mass[w] = m.mass[p];
                m.volume[w] = m.volume[p];
                m.damping[w] = m.damping[p];
                m.vol_material[write] = m.vol_material[read];
                s.x[w] = s.x[p];
                s.v[w] = s.v[p];
                s.c[w] = s.c[p];
                s.f[write] = s.f[read];
                s.q[write] = s.q[read];
                write += 1;
            }
            o.points = o.points.start - removed_before..o.points.end - removed_before - removed_in;
            removed_before += removed_in;
        }
        let gone = vol.len() - write;
        // shift everything after the volume range down by `gone`
        let tail = vol.end..m.mass.len();
        let to = vol.start + write;
        m.mass.copy_within(tail.clone(), to);
        m.volume.copy_within(tail.clone(), to);
        m.damping.copy_within(tail.clone(), to);
        s.x.copy_within(tail.clone(), to);
        s.v.copy_within(tail.clone(), to);
        s.c.copy_within(tail, to);
        let n = m.mass.len() - gone;
        m.mass.truncate(n);
        m.volume.truncate(n);
        m.damping.truncate(n);
        s.x.truncate(n);
        s.v.truncate(n);
        s.c.truncate(n);
        m.vol_material.truncate(write);
        s.f.truncate(write);
        s.q.truncate(write);
        m.vol.end -= gone;
        m.vert = m.vert.start - gone..m.vert.end - gone;
        m.elem = m.elem.start - gone..m.elem.end - gone;
        self.removed += gone as u64;
    }
}
