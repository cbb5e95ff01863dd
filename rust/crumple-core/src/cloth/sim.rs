//! The convenience wrapper: a [`Model`], its [`State`] and a [`Solver`], plus
//! pins and scripted handles, colliders and the hold-time warp schedule.

use super::material::{Material, Wrinkles};
use super::model::{Garment, MaterialFrame, Model};
use super::solver::{Pins, Solver, State, StepParams, StepStats};
use crate::collide::{Collider, Motion, RigidHandle};
use crate::geometry::TriMesh;
use crate::math::Vec3;
use crate::{Error, Result, invalid};

/// Implicit cloth with persistent wrinkles: build from a mesh, pin, add
/// colliders, step.
pub struct Simulation {
    /// The garments as added (the model is rebuilt from them when one is added).
    garments: Vec<Garment>,
    model: Model,
    state: State,
    /// The state at the start of the step in progress: a step that diverges
    /// restores it, so the caller can lower `dt` and continue (no allocation
    /// after the first step: `clone_from` reuses the buffers).
    backup: State,
    /// The solver's warm start at the start of the step in progress.
    backup_dv: Vec<f64>,
    solver: Solver,
    params: StepParams,
    pins: Pins,
    handles: Vec<RigidHandle>,
    colliders: Vec<Collider>,
    /// Hold-time warp per step (s) and the number of steps it still applies.
    warp_per_step: f64,
    warp_steps_left: u64,
    last: StepStats,
}

impl Simulation {
    /// A simulation of `mesh` at rest (positions = rest shape, zero velocity).
    pub fn new(
        mesh: &TriMesh,
        material: Material,
        wrinkles: Wrinkles,
        frame: &MaterialFrame,
        init_rest_from_mesh: bool,
        params: StepParams,
    ) -> Result<Self> {
        Self::from_garments(
            vec![Garment {
                mesh: mesh.clone(),
                material,
                wrinkles,
                frame: frame.clone(),
                init_rest_from_mesh,
            }],
            params,
        )
    }

    /// A simulation of one or more garments at rest; they are numbered in
    /// order (vertices, faces, hinges) and collide with each other when
    /// self-collision is on.
    pub fn from_garments(garments: Vec<Garment>, params: StepParams) -> Result<Self> {
        params.validate()?;
        let model = Model::from_garments(&garments)?;
        let n = model.num_vertices();
        let state = State::new(&model, model.rest_positions.clone(), vec![Vec3::zero(); n]);
        let solver = Solver::new(&model)?;
        Ok(Simulation {
            garments,
            model,
            backup: state.clone(),
            state,
            backup_dv: Vec::new(),
            solver,
            params,
            pins: Pins {
                stiffness: vec![0.0; n],
                target: vec![Vec3::zero(); n],
            },
            handles: Vec::new(),
            colliders: Vec::new(),
            warp_per_step: 0.0,
            warp_steps_left: 0,
            last: StepStats::default(),
        })
    }

    /// Adds a garment at rest to a running simulation and returns the range
    /// of its vertices. The model, pattern and solver are rebuilt; the state,
    /// pins and handles of the garments already there are kept as they are
    /// (new garments come after them in every array).
    pub fn add_garment(&mut self, garment: Garment) -> Result<core::ops::Range<usize>> {
        let mut garments = self.garments.clone();
        garments.push(garment);
        let model = Model::from_garments(&garments)?;
        let solver = Solver::new(&model)?;
        let n = model.num_vertices();
        let n0 = self.model.num_vertices();
        let mut x = self.state.x.clone();
        x.extend_from_slice(&model.rest_positions[n0..]);
        let mut v = self.state.v.clone();
        v.resize(n, Vec3::zero());
        let mut state = State::new(&model, x, v);
        let (nh, nt) = (self.model.hinges.len(), self.model.faces.len());
        let old = &self.state;
        state.hinge_angle[..nh].copy_from_slice(&old.hinge_angle);
        state.hinge_friction[..nh].copy_from_slice(&old.hinge_friction);
        state.hinge_plastic[..nh].copy_from_slice(&old.hinge_plastic);
        state.hinge_dahl[..nh].copy_from_slice(&old.hinge_dahl);
        state.tri_friction[..nt].copy_from_slice(&old.tri_friction);
        state.tri_plastic[..nt].copy_from_slice(&old.tri_plastic);
        state.time = old.time;
        state.step = old.step;
        self.pins.stiffness.resize(n, 0.0);
        self.pins.target.resize(n, Vec3::zero());
        self.garments = garments;
        self.model = model;
        self.backup = state.clone();
        self.state = state;
        self.solver = solver;
        Ok(n0..n)
    }

    /// The garments, in the order added.
    pub fn garments(&self) -> &[Garment] {
        &self.garments
    }

    /// The model (rest data, material, switches).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The state (positions, velocities, internal variables).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Mutable state, for loading checkpoints and setting velocities.
    pub fn state_mut(&mut self) -> &mut State {
        &mut self.state
    }

    /// Step settings.
    pub fn params(&self) -> &StepParams {
        &self.params
    }

    /// Replaces the step settings (validated).
    pub fn set_params(&mut self, p: StepParams) -> Result<()> {
        p.validate()?;
        self.params = p;
        Ok(())
    }

    /// Statistics of the last step.
    pub fn last_stats(&self) -> &StepStats {
        &self.last
    }

    /// Colliders, in the order added.
    pub fn colliders(&self) -> &[Collider] {
        &self.colliders
    }

    fn check_vertices(&self, vertices: &[u32]) -> Result<()> {
        let n = self.model.num_vertices();
        if let Some(&v) = vertices.iter().find(|&&v| v as usize >= n) {
            return invalid!("vertex index {v} is out of range: the cloth has {n} vertices (0..{n})");
        }
        Ok(())
    }

    fn stiffness_or_default(&self, stiffness: Option<f64>) -> Result<f64> {
        let k = stiffness.unwrap_or(self.params.handle_stiffness);
        if !(k.is_finite() && k > 0.0) {
            return invalid!("pin stiffness must be a positive number of N/m, got {k}");
        }
        Ok(k)
    }

    /// Pins `vertices` to `targets` (or to where they are now) with handle
    /// springs of `stiffness` N/m (default: the step parameters' `k_h`).
    pub fn pin(
        &mut self,
        vertices: &[u32],
        targets: Option<&[Vec3<f64>]>,
        stiffness: Option<f64>,
    ) -> Result<()> {
        self.check_vertices(vertices)?;
        let k = self.stiffness_or_default(stiffness)?;
        if let Some(t) = targets {
            if t.len() != vertices.len() {
                return invalid!(
                    "pin: {} targets for {} vertices; pass one target per vertex",
                    t.len(),
                    vertices.len()
                );
            }
            if let Some(p) = t.iter().find(|p| !p.is_finite()) {
                return invalid!("pin: target {p:?} is not finite");
            }
        }
        for (j, &v) in vertices.iter().enumerate() {
            self.pins.stiffness[v as usize] = k;
            self.pins.target[v as usize] = targets.map_or(self.state.x[v as usize], |t| t[j]);
        }
        Ok(())
    }

    /// Moves the targets of already pinned vertices (host-scripted motion).
    pub fn set_pin_targets(&mut self, vertices: &[u32], targets: &[Vec3<f64>]) -> Result<()> {
        self.check_vertices(vertices)?;
        if targets.len() != vertices.len() {
            return invalid!(
                "{} targets for {} vertices; pass one target per vertex",
                targets.len(),
                vertices.len()
            );
        }
        // Check everything first, so that an error leaves the targets untouched.
        for (&v, t) in vertices.iter().zip(targets) {
            if !t.is_finite() {
                return invalid!("pin target {t:?} is not finite");
            }
            if self.pins.stiffness[v as usize] <= 0.0 {
                return invalid!("vertex {v} is not pinned; call pin() first");
            }
        }
        for (&v, t) in vertices.iter().zip(targets) {
            self.pins.target[v as usize] = *t;
        }
        Ok(())
    }

    /// Releases the pins of `vertices` (they become free), including any
    /// handle they belong to.
    pub fn release(&mut self, vertices: &[u32]) -> Result<()> {
        self.check_vertices(vertices)?;
        for &v in vertices {
            self.pins.stiffness[v as usize] = 0.0;
        }
        Ok(())
    }

    /// Adds a scripted handle: `vertices` pinned with stiffness `stiffness`
    /// and moved rigidly by `motion` about `pivot` from now on. Returns its id.
    pub fn add_handle(
        &mut self,
        vertices: &[u32],
        pivot: Vec3<f64>,
        motion: Motion,
        stiffness: Option<f64>,
    ) -> Result<usize> {
        self.check_vertices(vertices)?;
        let k = self.stiffness_or_default(stiffness)?;
        let reference: Vec<Vec3<f64>> = vertices.iter().map(|&v| self.state.x[v as usize]).collect();
        let h = RigidHandle::new(vertices.to_vec(), reference, pivot, motion, self.state.time, true)?;
        for (&v, &r) in vertices.iter().zip(&h.reference) {
            self.pins.stiffness[v as usize] = k;
            self.pins.target[v as usize] = r;
        }
        self.handles.push(h);
        Ok(self.handles.len() - 1)
    }

    /// Restores a handle saved in a checkpoint: `reference` positions (those
    /// the vertices had when the handle was created), its creation time
    /// `start` and whether it still moves. Pin stiffnesses and targets are
    /// restored separately (from [`Pins`]).
    pub fn restore_handle(
        &mut self,
        vertices: &[u32],
        reference: Vec<Vec3<f64>>,
        pivot: Vec3<f64>,
        motion: Motion,
        start: f64,
        active: bool,
    ) -> Result<usize> {
        self.check_vertices(vertices)?;
        let h = RigidHandle::new(vertices.to_vec(), reference, pivot, motion, start, active)?;
        self.handles.push(h);
        Ok(self.handles.len() - 1)
    }

    /// Replaces the pins (checkpoint restore). Lengths must match the mesh.
    pub fn set_pins(&mut self, pins: Pins) -> Result<()> {
        let n = self.model.num_vertices();
        if pins.stiffness.len() != n || pins.target.len() != n {
            return invalid!("pins need {n} stiffnesses and targets");
        }
        if pins.stiffness.iter().any(|k| !(k.is_finite() && *k >= 0.0))
            || pins.target.iter().any(|t| !t.is_finite())
        {
            return invalid!("pin stiffnesses must be finite and ≥ 0 and targets finite");
        }
        self.pins = pins;
        Ok(())
    }

    /// Remaining hold warp: seconds per step and steps left.
    pub fn hold_warp(&self) -> (f64, u64) {
        (self.warp_per_step, self.warp_steps_left)
    }

    /// The linear solver's warm start (Δv of the last step), for checkpoints:
    /// the block-Jacobi CG starts from it, so restoring it keeps a restored
    /// run bit-identical.
    pub fn warm_start(&self) -> &[f64] {
        self.solver.warm_start()
    }

    /// Drops cached solver data that a checkpoint does not hold (the lagged
    /// factor); see [`Solver::invalidate_factor`].
    pub fn invalidate_solver_cache(&mut self) {
        self.solver.invalidate_factor();
    }

    /// Restores the warm start saved by [`warm_start`](Self::warm_start).
    pub fn set_warm_start(&mut self, dv: &[f64]) -> Result<()> {
        self.solver.set_warm_start(dv)
    }

    /// Releases handle `id`: its vertices become free.
    pub fn release_handle(&mut self, id: usize) -> Result<()> {
        let Some(h) = self.handles.get_mut(id) else {
            return invalid!("no handle {id}; {} handles exist", self.handles.len());
        };
        h.active = false;
        for &v in &h.vertices {
            self.pins.stiffness[v as usize] = 0.0;
        }
        Ok(())
    }

    /// Stops handle `id` where it is (its vertices stay pinned there).
    pub fn freeze_handle(&mut self, id: usize) -> Result<()> {
        let Some(h) = self.handles.get_mut(id) else {
            return invalid!("no handle {id}; {} handles exist", self.handles.len());
        };
        h.active = false;
        Ok(())
    }

    /// Adds a kinematic collider.
    pub fn add_collider(&mut self, c: Collider) {
        self.colliders.push(c);
    }

    /// Removes collider `i` (e.g. lifting the container away, scene E8).
    pub fn remove_collider(&mut self, i: usize) -> Result<Collider> {
        if i >= self.colliders.len() {
            return invalid!("no collider {i}; {} colliders exist", self.colliders.len());
        }
        Ok(self.colliders.remove(i))
    }

    /// Mutable collider `i` (to change its motion or pose).
    pub fn collider_mut(&mut self, i: usize) -> Result<&mut Collider> {
        let n = self.colliders.len();
        match self.colliders.get_mut(i) {
            Some(c) => Ok(c),
            None => invalid!("no collider {i}; {n} colliders exist"),
        }
    }

    /// Hold-time warp (§4.6): add `per_step` seconds to every hinge's clocks
    /// after each of the next `steps` steps (paper: 10 s × 50 steps = 500 s).
    pub fn set_hold_warp(&mut self, per_step: f64, steps: u64) -> Result<()> {
        if !(per_step.is_finite() && per_step >= 0.0) {
            return invalid!("hold warp must be ≥ 0 seconds per step, got {per_step}");
        }
        self.warp_per_step = per_step;
        self.warp_steps_left = steps;
        Ok(())
    }

    fn update_handle_targets(&mut self, t: f64) -> Result<()> {
        for h in self.handles.iter().filter(|h| h.active) {
            let pose = h.pose(t)?;
            for (k, &v) in h.vertices.iter().enumerate() {
                if self.pins.stiffness[v as usize] > 0.0 {
                    self.pins.target[v as usize] = h.target(&pose, k).0;
                }
            }
        }
        Ok(())
    }

    /// One step of the configured `dt` (spec §6.1).
    pub fn step(&mut self) -> Result<StepStats> {
        self.step_dt(self.params.dt)
    }

    /// One step of `dt` seconds (the configured step unless the caller
    /// shortens it, as [`advance`](Self::advance) does for the last step).
    ///
    /// A step that diverges leaves the simulation as it was at the start of
    /// the step (state, solver warm start, hold-warp schedule), so the caller
    /// can lower `dt` or a stiffness and continue.
    pub fn step_dt(&mut self, dt: f64) -> Result<StepStats> {
        if !(dt.is_finite() && dt > 0.0) {
            return invalid!("step: dt must be a positive number of seconds, got {dt}");
        }
        self.backup.clone_from(&self.state);
        self.backup_dv.clear();
        self.backup_dv.extend_from_slice(self.solver.warm_start());
        let warp_left = self.warp_steps_left;
        // On one of rayon's workers, so that the step's parallel loops (many
        // short ones per CG iteration) fork and join inside the pool rather
        // than each being injected from the caller's thread, which sleeps
        // until a woken worker is done (as pbd's and eol's steps do). Same
        // loops and chunks: the same bits.
        let this = &mut *self;
        let result = rayon::scope(|_| this.step_unchecked(dt));
        if let Err(e) = &result {
            core::mem::swap(&mut self.state, &mut self.backup);
            let (time, step) = (self.state.time, self.state.step);
            self.warp_steps_left = warp_left;
            // The failed step's factor and Δv are not a good start.
            self.solver.invalidate_factor();
            self.solver.set_warm_start(&self.backup_dv)?;
            // Handle targets and colliders at the restored time.
            self.update_handle_targets(time)?;
            for c in &mut self.colliders {
                c.advance_to(time)?;
            }
            if let Error::Diverged { what, .. } = e {
                return Err(Error::Diverged {
                    step,
                    time,
                    what: what.clone(),
                });
            }
        }
        result
    }

    fn step_unchecked(&mut self, dt: f64) -> Result<StepStats> {
        let t1 = self.state.time + dt;
        // Step 1: obstacles and handle targets at t + h.
        for c in &mut self.colliders {
            c.advance_to(t1)?;
        }
        self.update_handle_targets(t1)?;
        let warp = if self.warp_steps_left > 0 {
            self.warp_steps_left -= 1;
            self.warp_per_step
        } else {
            0.0
        };
        let params = StepParams { dt, ..self.params };
        let stats = self.solver.step(
            &self.model,
            &mut self.state,
            &self.pins,
            &self.colliders,
            &params,
            warp,
        )?;
        self.last = stats;
        Ok(stats)
    }

    /// Advances by `duration` seconds (≥ 0) and lands exactly on
    /// `time + duration`: steps of `dt`, the last one shortened when
    /// `duration` is not a whole number of steps (a remainder below 1e-9 of
    /// a step is absorbed instead of taking a vanishing step). Returns the
    /// number of steps taken.
    pub fn advance(&mut self, duration: f64) -> Result<u64> {
        Ok(self.advance_with(duration, || false)?.0)
    }

    /// [`advance`](Self::advance) that calls `stop()` between steps and
    /// returns early, at a step boundary with the state intact, when it
    /// answers true (the bindings check for Ctrl-C there). Returns the steps
    /// taken and whether it stopped early.
    pub fn advance_with(&mut self, duration: f64, mut stop: impl FnMut() -> bool) -> Result<(u64, bool)> {
        if !(duration.is_finite() && duration >= 0.0) {
            return invalid!("advance: duration must be a finite number of seconds ≥ 0, got {duration}");
        }
        let dt = self.params.dt;
        let end = self.state.time + duration;
        let mut steps = 0;
        while let Some(h) = crate::stepping::next_fixed_step(self.state.time, end, dt) {
            if stop() {
                return Ok((steps, true));
            }
            self.step_dt(h)?;
            steps += 1;
        }
        self.state.time = end;
        Ok((steps, false))
    }

    /// Current dihedral angle of every hinge, rad (computed from the current
    /// positions, not the start of the last step).
    pub fn hinge_angles(&self) -> Vec<f64> {
        use rayon::prelude::*;
        let x = &self.state.x;
        self.model
            .hinges
            .par_iter()
            .map(|h| {
                super::hinge::dihedral_angle(&[
                    x[h[0] as usize],
                    x[h[1] as usize],
                    x[h[2] as usize],
                    x[h[3] as usize],
                ])
            })
            .collect()
    }

    /// Handle spring forces on the cloth at the current positions, N
    /// (zero for free vertices): the reaction of E4's torque read-out.
    pub fn pin_forces(&self) -> Vec<Vec3<f64>> {
        self.state
            .x
            .iter()
            .enumerate()
            .map(|(i, &x)| (self.pins.target[i] - x) * self.pins.stiffness[i])
            .collect()
    }

    /// Pin stiffness per vertex (0 = free) and targets.
    pub fn pins(&self) -> &Pins {
        &self.pins
    }

    /// Non-adjacent triangle pairs that intersect at the current positions.
    pub fn count_self_intersections(&self) -> usize {
        super::selfcollide::count_triangle_intersections(&self.state.x, &self.model.faces)
    }
}

#[cfg(test)]
#[path = "sim_tests.rs"]
mod tests;
