//! One linearized implicit Euler step (Baraff–Witkin; spec §6.1) with the
//! wrinkle elements updated once per step before the solve.
//!
//! Stage order (spec §6.1, steps 1–14): obstacles and handle targets are
//! moved to `t + h` by the caller; proximity (self-contact pairs) at `x_n`;
//! element kernels (membrane with tensile plasticity/friction, hinges with
//! plasticity then friction) at `x_n`; contact forces; hold-time warp;
//! assembly of `A = M + h(h+γ)K + hD` (K = −J, PSD) and
//! `b = h f − h(h+γ)K v_n`; one sparse solve `A Δv = b`; integration;
//! obstacle projection and the self-collision fail-safe.
//!
//! Determinism: element kernels write only their own slots; vertex forces and
//! matrix blocks are gathered from fixed lists (spec §11.1–2); reductions are
//! integer counts or ordered. No floating-point atomics.

use std::time::Instant;

use super::assemble;
use super::contact;
use super::elements::{self, HingeOut, TriOut};
use super::integrate::integrate;
use super::linear_solve::LinearSystem;
use super::model::Model;
use super::selfcollide::{ProximityPair, SelfCollision};
use crate::Result;
use crate::collide::Collider;
use crate::math::{Mat3, Vec3};

pub use super::params::{ContactParams, LinearSolver, StepParams};
pub use super::state::{Pins, State};

/// Seconds spent in each stage of the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Self-contact proximity search.
    pub proximity: f64,
    /// Element kernels (membrane, hinges) with the internal-state updates.
    pub elements: f64,
    /// Contact forces, gathers and matrix assembly.
    pub assemble: f64,
    /// The linear solve.
    pub solve: f64,
    /// Integration, obstacle projection and the self-collision fail-safe.
    pub collide: f64,
}

/// What happened in the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// CG iterations (0 for Cholesky).
    pub cg_iterations: usize,
    /// Relative residual `‖AΔv − b‖/‖b‖` of the solve.
    pub residual: f64,
    /// Hinges whose friction element slipped in this step.
    pub hinge_slips: usize,
    /// Hinges that yielded plastically in this step.
    pub hinge_yields: usize,
    /// Cloth–cloth proximity pairs used for repulsion.
    pub proximity_pairs: usize,
    /// Vertices inside an obstacle's repulsion layer.
    pub obstacle_contacts: usize,
    /// Collisions the fail-safe resolved.
    pub collisions: usize,
    /// Impact zones the fail-safe formed.
    pub impact_zones: usize,
    /// Whether the lagged Cholesky factor was recomputed in this step.
    pub refactorized: bool,
    /// Stage timings.
    pub times: StageTimes,
}

/// Scratch buffers and the linear system for stepping one [`Model`].
pub struct Solver {
    hinge_out: Vec<HingeOut>,
    tri_out: Vec<TriOut>,
    force: Vec<Vec3<f64>>,
    /// Per-vertex diagonal stiffness (handles, obstacle penalty, lumped self-contact), N/m.
    k_diag: Vec<Mat3<f64>>,
    /// Per-vertex diagonal damping of contact friction, kg/s.
    d_diag: Vec<Mat3<f64>>,
    system: LinearSystem,
    self_collision: Option<SelfCollision>,
    pairs: Vec<ProximityPair>,
    x_prev: Vec<Vec3<f64>>,
    /// End-of-step positions before the fail-safe.
    cand: Vec<Vec3<f64>>,
    inv_mass: Vec<f64>,
}

impl Solver {
    /// Scratch for `model`; runs the symbolic Cholesky analysis once.
    pub fn new(model: &Model) -> Result<Self> {
        let n = model.num_vertices();
        Ok(Solver {
            hinge_out: vec![HingeOut::default(); model.hinges.len()],
            tri_out: vec![TriOut::default(); model.faces.len()],
            force: vec![Vec3::zero(); n],
            k_diag: vec![Mat3::zero(); n],
            d_diag: vec![Mat3::zero(); n],
            system: LinearSystem::new(model)?,
            self_collision: None,
            pairs: Vec::new(),
            x_prev: vec![Vec3::zero(); n],
            cand: vec![Vec3::zero(); n],
            inv_mass: model.mass.iter().map(|&m| 1.0 / m).collect(),
        })
    }

    /// Drops the lagged Cholesky factor so the next step refactorizes. Saving
    /// a checkpoint calls this, so that the saved run and a run restored from
    /// the checkpoint continue identically (the factor is not saved).
    pub fn invalidate_factor(&mut self) {
        self.system.invalidate_factor();
    }

    /// Δv of the last step (the CG warm start).
    pub fn warm_start(&self) -> &[f64] {
        self.system.warm_start()
    }

    /// Restores the CG warm start; `dv` has 3 values per vertex.
    pub fn set_warm_start(&mut self, dv: &[f64]) -> Result<()> {
        self.system.set_warm_start(dv)
    }

    /// Advances `state` by one step `p.dt` (spec §6.1): proximity →
    /// elements → contact → assembly → linear solve → integration, each
    /// stage in its own file. `pins` hold the handle targets at `t + h`;
    /// `colliders` must already be at their `t + h` pose. `warp` is the
    /// hold-time warp added to the clocks (§4.6).
    ///
    /// Errors: [`Error::Diverged`](crate::Error::Diverged) when the state
    /// becomes non-finite or explodes; [`Error::Solver`](crate::Error::Solver)
    /// when the linear solve fails.
    pub fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        pins: &Pins,
        colliders: &[Collider],
        p: &StepParams,
        warp: f64,
    ) -> Result<StepStats> {
        let mut stats = StepStats::default();
        let h = p.dt;
        let n = model.num_vertices();

        // ---- 2. proximity (cloth–cloth pairs at x_n) ----
        let t0 = Instant::now();
        self.pairs.clear();
        if p.self_collision {
            let sc = self
                .self_collision
                .get_or_insert_with(|| SelfCollision::new(n, &model.faces, &model.edges));
            sc.proximity(&state.x, p.contact.repulsion_distance, &mut self.pairs);
        }
        stats.proximity_pairs = self.pairs.len();
        stats.times.proximity = t0.elapsed().as_secs_f64();

        // ---- 5, 6, 8. element kernels and the hold warp ----
        let t0 = Instant::now();
        (stats.hinge_slips, stats.hinge_yields) =
            elements::element_forces(model, state, h, warp, &mut self.tri_out, &mut self.hinge_out);
        stats.times.elements = t0.elapsed().as_secs_f64();

        // ---- 3, 4, 7. gravity, handles, obstacle and cloth–cloth contact ----
        let t0 = Instant::now();
        stats.obstacle_contacts = contact::vertex_terms(
            model,
            state,
            pins,
            colliders,
            p,
            &mut self.force,
            &mut self.k_diag,
            &mut self.d_diag,
        );
        contact::self_contact(
            &self.pairs,
            state,
            &self.inv_mass,
            p,
            &mut self.force,
            &mut self.k_diag,
            &mut self.d_diag,
        );

        // ---- 9. gather and assemble A Δv = b ----
        assemble::gather_element_forces(model, &self.tri_out, &self.hinge_out, &mut self.force);
        assemble::system(
            model,
            state,
            h,
            p.damping,
            &self.tri_out,
            &self.hinge_out,
            &self.k_diag,
            &self.d_diag,
            &self.force,
            &mut self.system,
        );
        stats.times.assemble = t0.elapsed().as_secs_f64();

        // ---- 10. solve ----
        let t0 = Instant::now();
        let solved = self.system.solve(&model.pattern, p, state.step)?;
        stats.cg_iterations = solved.iterations;
        stats.residual = solved.residual;
        stats.refactorized = solved.refactorized;
        stats.times.solve = t0.elapsed().as_secs_f64();

        // ---- 11–14. integrate, obstacle projection, fail-safe, clock ----
        let t0 = Instant::now();
        let sc = if p.self_collision {
            self.self_collision.as_mut()
        } else {
            None
        };
        (stats.collisions, stats.impact_zones) = integrate(
            state,
            &self.system.dv,
            colliders,
            p,
            sc,
            &mut self.x_prev,
            &mut self.cand,
            &self.inv_mass,
        )?;
        stats.times.collide = t0.elapsed().as_secs_f64();
        Ok(stats)
    }
}
