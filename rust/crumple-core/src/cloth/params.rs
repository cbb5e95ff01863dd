//! Step settings of the implicit cloth solver (spec §6.1, §6.3, §7.4): the
//! time step, gravity, damping, handle springs, the contact model and the
//! linear solver, each documented with its unit and checked by `validate`.

use crate::math::Vec3;
use crate::{Result, invalid};

/// Which linear solver runs the one solve per step (spec §6.1 step 10, §11.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolver {
    /// Sparse Cholesky (faer, supernodal) in f64, symbolic analysis once per
    /// model, numeric factorization every step. Exact to rounding; the
    /// ground truth the others are tested against.
    Cholesky,
    /// Conjugate gradient (faer) preconditioned by a single-precision sparse
    /// Cholesky factor of a recent system matrix, refactorized only when CG
    /// needs more than a few iterations (the matrix changes little from step
    /// to step). Stops at `cg_tolerance` like `Cg`; the default, because it
    /// is the fastest at equal accuracy (measured in `benches/cloth_wrinkles.py`).
    #[default]
    LaggedCholesky,
    /// Conjugate gradient (faer) with 3×3 block-Jacobi preconditioning,
    /// warm-started from the previous step's Δv, stopping at a relative
    /// residual of `cg_tolerance`.
    Cg,
}

/// Contact parameters (spec §6.3, reference values in §7.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactParams {
    /// Repulsion distance `d_rep`, m: pairs closer than this are pushed apart.
    pub repulsion_distance: f64,
    /// Repulsion stiffness `k_c` of the cubic penalty.
    pub repulsion_stiffness: f64,
    /// Collision thickness `d_col`, m, kept by the post-step projection.
    pub thickness: f64,
    /// Cloth–cloth friction coefficient.
    pub self_friction: f64,
}

impl Default for ContactParams {
    fn default() -> Self {
        ContactParams {
            repulsion_distance: 0.005,
            repulsion_stiffness: 3e3,
            thickness: 0.001,
            self_friction: 0.01,
        }
    }
}

/// Step settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepParams {
    /// Time step `h`, s.
    pub dt: f64,
    /// Gravity, m/s².
    pub gravity: Vec3<f64>,
    /// Rayleigh stiffness damping γ, s (spec §6.1 step 9; 0 in the paper).
    pub damping: f64,
    /// Handle (pin) spring stiffness `k_h`, N/m (spec §6.2: 1e5).
    pub handle_stiffness: f64,
    /// Contact parameters.
    pub contact: ContactParams,
    /// Cloth–cloth repulsion and the continuous-collision fail-safe.
    pub self_collision: bool,
    /// Linear solver.
    pub linear_solver: LinearSolver,
    /// Relative residual at which CG stops (A20: 1e-8).
    pub cg_tolerance: f64,
    /// CG iteration cap.
    pub cg_max_iterations: usize,
}

impl Default for StepParams {
    fn default() -> Self {
        StepParams {
            dt: 1e-3,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            damping: 0.0,
            handle_stiffness: 1e5,
            contact: ContactParams::default(),
            self_collision: false,
            linear_solver: LinearSolver::LaggedCholesky,
            cg_tolerance: 1e-8,
            cg_max_iterations: 5000,
        }
    }
}

impl StepParams {
    /// Checks every field; messages name the field and the fix.
    pub fn validate(&self) -> Result<()> {
        use crate::validate::{finite_vec, non_negative, positive};
        positive("dt (s)", self.dt)?;
        finite_vec("gravity", self.gravity)?;
        non_negative("rayleigh_damping", self.damping)?;
        non_negative("handle_stiffness", self.handle_stiffness)?;
        non_negative("repulsion_stiffness", self.contact.repulsion_stiffness)?;
        non_negative("self_friction", self.contact.self_friction)?;
        positive("repulsion_distance (m)", self.contact.repulsion_distance)?;
        let thickness = non_negative("contact_thickness (m)", self.contact.thickness)?;
        if thickness >= self.contact.repulsion_distance {
            return invalid!(
                "contact_thickness must be smaller than repulsion_distance ({} m), got {}",
                self.contact.repulsion_distance,
                self.contact.thickness
            );
        }
        if !(self.cg_tolerance.is_finite() && self.cg_tolerance > 0.0 && self.cg_tolerance < 1.0) {
            return invalid!("cg_tolerance must be in (0, 1), got {}", self.cg_tolerance);
        }
        if self.cg_max_iterations == 0 {
            return invalid!("cg_max_iterations must be ≥ 1");
        }
        Ok(())
    }
}

crate::named_enum!(LinearSolver { "lagged" => LaggedCholesky, "cholesky" => Cholesky, "cg" => Cg });

// The Python names of the step settings (`crumple.cloth.Simulation(...)`), listed once.
crate::params!(StepParams, base = StepParams::default(), {
    "dt": f64 = dt,
    "gravity": vec3 = gravity,
    "rayleigh_damping": f64 = damping,
    "handle_stiffness": f64 = handle_stiffness,
    "repulsion_distance": f64 = contact.repulsion_distance,
    "repulsion_stiffness": f64 = contact.repulsion_stiffness,
    "contact_thickness": f64 = contact.thickness,
    "self_friction": f64 = contact.self_friction,
    "self_collision": bool = self_collision,
    "linear_solver": name<LinearSolver> = linear_solver,
    "cg_tolerance": f64 = cg_tolerance,
    "cg_max_iterations": int = cg_max_iterations,
});
