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

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::sparse::linalg::cholesky::{SymbolicCholesky, factorize_symbolic_cholesky};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};
use rayon::prelude::*;

use super::hinge;
use super::material::BendFriction;
use super::membrane::{self, Strain};
use super::model::Model;
use super::selfcollide::{ProximityPair, SelfCollision};
use super::wrinkle::{self, FrictionState, PlasticState};
use crate::collide::{BoundaryMode, Collider, boundary_response};
use crate::math::{Mat3, Vec3};
use crate::parallel::for_each_segment_mut;
use crate::{Error, Result, invalid};

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
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return invalid!("dt must be a positive number of seconds, got {}", self.dt);
        }
        if !self.gravity.is_finite() {
            return invalid!("gravity must be finite, got {:?}", self.gravity);
        }
        let nonneg = |v: f64, what: &str| -> Result<()> {
            if !(v.is_finite() && v >= 0.0) {
                return invalid!("{what} must be finite and ≥ 0, got {v}");
            }
            Ok(())
        };
        nonneg(self.damping, "damping")?;
        nonneg(self.handle_stiffness, "handle_stiffness")?;
        nonneg(self.contact.repulsion_stiffness, "repulsion_stiffness")?;
        nonneg(self.contact.self_friction, "self_friction")?;
        if !(self.contact.repulsion_distance.is_finite() && self.contact.repulsion_distance > 0.0) {
            return invalid!(
                "repulsion_distance must be > 0 m, got {}",
                self.contact.repulsion_distance
            );
        }
        if !(self.contact.thickness.is_finite()
            && self.contact.thickness >= 0.0
            && self.contact.thickness < self.contact.repulsion_distance)
        {
            return invalid!(
                "thickness must be ≥ 0 and smaller than repulsion_distance ({} m), got {}",
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

/// Handle springs per vertex (spec §6.1 step 4): stiffness 0 = free.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pins {
    /// Spring stiffness per vertex, N/m (0 for free vertices).
    pub stiffness: Vec<f64>,
    /// Target position per vertex at the end of the step, m.
    pub target: Vec<Vec3<f64>>,
}

/// Everything that changes while stepping (structure of arrays).
#[derive(Debug, PartialEq)]
pub struct State {
    /// Positions, m.
    pub x: Vec<Vec3<f64>>,
    /// Velocities, m/s.
    pub v: Vec<Vec3<f64>>,
    /// Dihedral angle per hinge at the start of the last step, rad.
    pub hinge_angle: Vec<f64>,
    /// Bending friction state (anchor angle, stick clock).
    pub hinge_friction: Vec<FrictionState>,
    /// Bending plasticity state (plastic angle, hardening, clock).
    pub hinge_plastic: Vec<PlasticState>,
    /// Dahl friction moment per hinge (baseline E9), angle-stiffness units.
    pub hinge_dahl: Vec<f64>,
    /// Tensile friction state per triangle and component (uu, vv, uv).
    pub tri_friction: Vec<[FrictionState; 3]>,
    /// Tensile plasticity state per triangle and component.
    pub tri_plastic: Vec<[PlasticState; 3]>,
    /// Simulated time, s.
    pub time: f64,
    /// Steps taken.
    pub step: u64,
}

/// `clone_from` copies field by field into the existing buffers (the derived
/// one would allocate anew): the step's rollback copy relies on it to stay
/// allocation-free.
impl Clone for State {
    fn clone(&self) -> Self {
        Self {
            x: self.x.clone(),
            v: self.v.clone(),
            hinge_angle: self.hinge_angle.clone(),
            hinge_friction: self.hinge_friction.clone(),
            hinge_plastic: self.hinge_plastic.clone(),
            hinge_dahl: self.hinge_dahl.clone(),
            tri_friction: self.tri_friction.clone(),
            tri_plastic: self.tri_plastic.clone(),
            time: self.time,
            step: self.step,
        }
    }

    fn clone_from(&mut self, src: &Self) {
        self.x.clone_from(&src.x);
        self.v.clone_from(&src.v);
        self.hinge_angle.clone_from(&src.hinge_angle);
        self.hinge_friction.clone_from(&src.hinge_friction);
        self.hinge_plastic.clone_from(&src.hinge_plastic);
        self.hinge_dahl.clone_from(&src.hinge_dahl);
        self.tri_friction.clone_from(&src.tri_friction);
        self.tri_plastic.clone_from(&src.tri_plastic);
        self.time = src.time;
        self.step = src.step;
    }
}

impl State {
    /// Rest state of `model` at positions `x` (often the rest positions) and
    /// velocities `v`.
    pub fn new(model: &Model, x: Vec<Vec3<f64>>, v: Vec<Vec3<f64>>) -> Self {
        let nh = model.hinges.len();
        let nt = model.faces.len();
        let hinge_friction = model
            .hinge_theta_bar
            .iter()
            .map(|&t| FrictionState {
                anchor: t,
                t_stick: 0.0,
            })
            .collect();
        let params = |g: u32| &model.garments[g as usize].params;
        let hinge_plastic = model
            .hinge_garment
            .iter()
            .map(|&g| params(g).hinge_plastic0)
            .collect();
        let tri_plastic = model
            .face_garment
            .iter()
            .map(|&g| params(g).tri_plastic0)
            .collect();
        State {
            x,
            v,
            hinge_angle: model.hinge_theta_bar.clone(),
            hinge_friction,
            hinge_plastic,
            hinge_dahl: vec![0.0; nh],
            tri_friction: vec![[FrictionState::default(); 3]; nt],
            tri_plastic,
            time: 0.0,
            step: 0,
        }
    }
}

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

/// Contribution of one hinge to the step: gradient, moment, GN coefficient.
#[derive(Clone, Copy, Debug, Default)]
struct HingeOut {
    g: [Vec3<f64>; 4],
    moment: f64,
    coef: f64,
}

/// Contribution of one triangle: forces and GN Jacobian blocks (∂f_a/∂x_b).
#[derive(Clone, Copy, Debug, Default)]
struct TriOut {
    f: [Vec3<f64>; 3],
    jac: [[Mat3<f64>; 3]; 3],
}

/// Scalar CSR view of the system matrix (symmetric, full storage).
struct CsrOp<'a> {
    ptr: &'a [u32],
    idx: &'a [u32],
    val: &'a [f64],
}

impl CsrOp<'_> {
    /// `out = A x`, rows in parallel (each row summed in its fixed order).
    fn mul(&self, x: &[f64], out: &mut [f64]) {
        out.par_chunks_mut(512).enumerate().for_each(|(c, chunk)| {
            for (k, o) in chunk.iter_mut().enumerate() {
                let r = c * 512 + k;
                let (lo, hi) = (self.ptr[r] as usize, self.ptr[r + 1] as usize);
                let mut s = 0.0;
                for j in lo..hi {
                    s += self.val[j] * x[self.idx[j] as usize];
                }
                *o = s;
            }
        });
    }
}

/// Dot product with the fixed summation tree of
/// [`crate::parallel::ordered_sum_with`], so CG is bitwise reproducible for
/// any thread count; `partial` holds the chunk sums (reused, no allocation).
fn dot(a: &[f64], b: &[f64], partial: &mut Vec<f64>) -> f64 {
    crate::parallel::ordered_sum_with(a.len(), |i| a[i] * b[i], partial)
}

/// The matrix pattern as faer's symbolic CSC (the matrix is symmetric, so
/// our CSR is its CSC). [`Pattern`](super::model::Pattern) builds it with
/// sorted, in-range indices; `new_checked` re-verifies that in O(nnz).
fn pattern<'a>(ptr: &'a [u32], idx: &'a [u32]) -> SymbolicSparseColMatRef<'a, u32> {
    let n = ptr.len() - 1;
    SymbolicSparseColMatRef::new_checked(n, n, ptr, None, idx)
}

/// Work vectors of the preconditioned conjugate gradient.
struct CgWork {
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    ap: Vec<f64>,
    /// Chunk sums of the dot products.
    partial: Vec<f64>,
}

/// Outcome of [`pcg`].
struct CgOutcome {
    iterations: usize,
    converged: bool,
}

/// Preconditioned conjugate gradient on `A x = b` from the initial `x`,
/// stopping when `‖r‖ ≤ tol ‖b‖` (spec §6.1 step 10, A20).
///
/// Written here rather than calling faer's block CG: that one decides the
/// rank of `pᵀAp` with an absolute threshold, and cloth systems have entries
/// of order 1e-7 (vertex masses in kg), so it stopped after one iteration
/// with a zero update. The plain scalar recurrence has no such threshold.
fn pcg(
    a: &CsrOp<'_>,
    precond: &mut dyn FnMut(&[f64], &mut [f64]),
    b: &[f64],
    x: &mut [f64],
    tol: f64,
    max_iter: usize,
    w: &mut CgWork,
) -> CgOutcome {
    let bn = dot(b, b, &mut w.partial).sqrt();
    if bn == 0.0 {
        x.fill(0.0);
        return CgOutcome {
            iterations: 0,
            converged: true,
        };
    }
    a.mul(x, &mut w.r);
    w.r.par_iter_mut()
        .zip(b.par_iter())
        .for_each(|(r, b)| *r = b - *r);
    let stop = tol * bn;
    if dot(&w.r, &w.r, &mut w.partial).sqrt() <= stop {
        return CgOutcome {
            iterations: 0,
            converged: true,
        };
    }
    precond(&w.r, &mut w.z);
    w.p.copy_from_slice(&w.z);
    let mut rz = dot(&w.r, &w.z, &mut w.partial);
    for it in 1..=max_iter {
        a.mul(&w.p, &mut w.ap);
        let pap = dot(&w.p, &w.ap, &mut w.partial);
        if pap.is_nan() || pap <= 0.0 || !rz.is_finite() {
            return CgOutcome {
                iterations: it,
                converged: false,
            };
        }
        let alpha = rz / pap;
        x.par_iter_mut()
            .zip(w.p.par_iter())
            .for_each(|(x, p)| *x += alpha * p);
        w.r.par_iter_mut()
            .zip(w.ap.par_iter())
            .for_each(|(r, ap)| *r -= alpha * ap);
        if dot(&w.r, &w.r, &mut w.partial).sqrt() <= stop {
            return CgOutcome {
                iterations: it,
                converged: true,
            };
        }
        precond(&w.r, &mut w.z);
        let rz_new = dot(&w.r, &w.z, &mut w.partial);
        let beta = rz_new / rz;
        rz = rz_new;
        w.p.par_iter_mut()
            .zip(w.z.par_iter())
            .for_each(|(p, z)| *p = z + beta * *p);
    }
    CgOutcome {
        iterations: max_iter,
        converged: false,
    }
}

/// CG iterations above which the lagged factor is refreshed for the next
/// step. A refactorization costs about as much as ten preconditioned
/// iterations on the 27K-vertex tube; refreshing when a solve needs more
/// than this keeps the average near its minimum.
const LAG_REFRESH_ITERATIONS: usize = 6;
/// With a stale factor, give up after this many iterations and refactorize.
const LAG_MAX_ITERATIONS: usize = 40;

/// Scratch buffers and the factorization plan for stepping one [`Model`].
pub struct Solver {
    hinge_out: Vec<HingeOut>,
    tri_out: Vec<TriOut>,
    force: Vec<Vec3<f64>>,
    /// Per-vertex diagonal stiffness (handles, obstacle penalty, lumped self-contact), N/m.
    k_diag: Vec<Mat3<f64>>,
    /// Per-vertex diagonal damping of contact friction, kg/s.
    d_diag: Vec<Mat3<f64>>,
    csr_ptr: Vec<u32>,
    csr_idx: Vec<u32>,
    /// Offsets of the block rows in `values` (`9·row_ptr`).
    row_off: Vec<usize>,
    values: Vec<f64>,
    rhs: Vec<f64>,
    dv: Vec<f64>,
    tmp: Vec<f64>,
    jacobi: Vec<Mat3<f64>>,
    symbolic: Option<SymbolicCholesky<u32>>,
    /// Vertex elimination order for the Cholesky (nested dissection).
    order: Vec<u32>,
    l_values: Vec<f64>,
    /// Single-precision factor of the lagged-Cholesky preconditioner.
    l32: Vec<f32>,
    values32: Vec<f32>,
    buf32: Vec<f32>,
    cg: CgWork,
    /// True when `l32` holds a usable factor.
    have_factor: bool,
    mem: MemBuffer,
    mem_bytes: usize,
    self_collision: Option<SelfCollision>,
    pairs: Vec<ProximityPair>,
    x_prev: Vec<Vec3<f64>>,
    /// End-of-step positions before the fail-safe.
    cand: Vec<Vec3<f64>>,
    vflat: Vec<f64>,
    inv_mass: Vec<f64>,
}

fn mem_err<E: core::fmt::Debug>(e: E) -> Error {
    Error::Solver(format!(
        "cloth solver could not allocate its linear-solver workspace: {e:?}"
    ))
}

impl Solver {
    /// Scratch for `model`; runs the symbolic Cholesky analysis once.
    pub fn new(model: &Model) -> Result<Self> {
        let n = model.num_vertices();
        let (csr_ptr, csr_idx) = model.pattern.scalar_csr();
        let row_off: Vec<usize> = model.pattern.row_ptr.iter().map(|&r| 9 * r).collect();
        let nnz = csr_idx.len();
        let mut s = Solver {
            hinge_out: vec![HingeOut::default(); model.hinges.len()],
            tri_out: vec![TriOut::default(); model.faces.len()],
            force: vec![Vec3::zero(); n],
            k_diag: vec![Mat3::zero(); n],
            d_diag: vec![Mat3::zero(); n],
            csr_ptr,
            csr_idx,
            row_off,
            values: vec![0.0; nnz],
            rhs: vec![0.0; 3 * n],
            dv: vec![0.0; 3 * n],
            tmp: vec![0.0; 3 * n],
            jacobi: vec![Mat3::zero(); n],
            symbolic: None,
            order: super::model::nested_dissection(&model.rest_positions, &model.pattern),
            l_values: Vec::new(),
            l32: Vec::new(),
            values32: vec![0.0; nnz],
            buf32: vec![0.0; 3 * n],
            cg: CgWork {
                r: vec![0.0; 3 * n],
                z: vec![0.0; 3 * n],
                p: vec![0.0; 3 * n],
                ap: vec![0.0; 3 * n],
                partial: Vec::new(),
            },
            have_factor: false,
            mem: MemBuffer::new(StackReq::EMPTY),
            mem_bytes: 0,
            self_collision: None,
            pairs: Vec::new(),
            x_prev: vec![Vec3::zero(); n],
            cand: vec![Vec3::zero(); n],
            vflat: vec![0.0; 3 * n],
            inv_mass: model.mass.iter().map(|&m| 1.0 / m).collect(),
        };
        s.ensure_workspace(LinearSolver::Cholesky)?;
        Ok(s)
    }

    /// Symbolic factorization and scratch sizes for `which` (once).
    fn ensure_workspace(&mut self, which: LinearSolver) -> Result<()> {
        let par = Par::rayon(0);
        let req = match which {
            LinearSolver::Cholesky | LinearSolver::LaggedCholesky => {
                if self.symbolic.is_none() {
                    let n3 = 3 * self.order.len();
                    let fwd: Vec<u32> = self
                        .order
                        .iter()
                        .flat_map(|&v| [3 * v, 3 * v + 1, 3 * v + 2])
                        .collect();
                    let mut inv = vec![0u32; n3];
                    for (k, &f) in fwd.iter().enumerate() {
                        inv[f as usize] = k as u32;
                    }
                    // Nested dissection on the vertices (model::nested_dissection):
                    // 22.5M vs 25.4M factor entries with faer's AMD on the
                    // 27K-vertex tube, and 3×3 blocks stay together.
                    let ord = faer::sparse::linalg::cholesky::SymmetricOrdering::Custom(
                        faer::perm::PermRef::new_checked(&fwd, &inv, n3),
                    );
                    let sym = factorize_symbolic_cholesky(
                        pattern(&self.csr_ptr, &self.csr_idx),
                        Side::Lower,
                        ord,
                        Default::default(),
                    )
                    .map_err(|e| Error::Solver(format!("symbolic Cholesky analysis failed: {e:?}")))?;
                    self.l_values = vec![0.0; sym.len_val()];
                    self.l32 = vec![0.0; sym.len_val()];
                    self.symbolic = Some(sym);
                }
                let sym = self.symbolic.as_ref().expect("just built");
                StackReq::any_of(&[
                    sym.factorize_numeric_llt_scratch::<f64>(par, Default::default()),
                    sym.factorize_numeric_llt_scratch::<f32>(par, Default::default()),
                    sym.solve_in_place_scratch::<f64>(1, par),
                    sym.solve_in_place_scratch::<f32>(1, par),
                ])
            }
            LinearSolver::Cg => StackReq::EMPTY,
        };
        if req.size_bytes() > self.mem_bytes {
            self.mem = MemBuffer::try_new(req).map_err(mem_err)?;
            self.mem_bytes = req.size_bytes();
        }
        Ok(())
    }

    /// Drops the lagged Cholesky factor so the next step refactorizes. Saving
    /// a checkpoint calls this, so that the saved run and a run restored from
    /// the checkpoint continue identically (the factor is not saved).
    pub fn invalidate_factor(&mut self) {
        self.have_factor = false;
    }

    /// Δv of the last step (the CG warm start).
    pub fn warm_start(&self) -> &[f64] {
        &self.dv
    }

    /// Restores the CG warm start; `dv` has 3 values per vertex.
    pub fn set_warm_start(&mut self, dv: &[f64]) -> Result<()> {
        if dv.len() != self.dv.len() || dv.iter().any(|v| !v.is_finite()) {
            return invalid!(
                "warm start needs {} finite values, got {}",
                self.dv.len(),
                dv.len()
            );
        }
        self.dv.copy_from_slice(dv);
        Ok(())
    }

    /// Single-precision numeric factorization of the current system matrix
    /// into `l32` (the lagged-Cholesky preconditioner).
    fn factor32(&mut self, step: u64) -> Result<()> {
        for (d, s) in self.values32.iter_mut().zip(&self.values) {
            *d = *s as f32;
        }
        let sym = self.symbolic.as_ref().expect("built in ensure_workspace");
        let a = SparseColMatRef::new(pattern(&self.csr_ptr, &self.csr_idx), &self.values32);
        let stack = MemStack::new(&mut self.mem);
        sym.factorize_numeric_llt::<f32>(
            &mut self.l32,
            a,
            Side::Lower,
            LltRegularization::default(),
            Par::rayon(0),
            stack,
            Default::default(),
        )
        .map_err(|e| {
            Error::Solver(format!(
                "the cloth system matrix is not positive definite in single precision at step {step} \
                 ({e:?}); use linear_solver='cholesky' (double precision) or a smaller dt"
            ))
        })?;
        self.have_factor = true;
        Ok(())
    }

    /// Advances `state` by one step `p.dt` (spec §6.1). `pins` hold the
    /// handle targets at `t + h`; `colliders` must already be at their
    /// `t + h` pose. `warp` is the hold-time warp added to the clocks (§4.6).
    ///
    /// Errors: [`Error::Diverged`] when the state becomes non-finite or
    /// explodes; [`Error::Solver`] when the linear solve fails.
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
        // Element constants of the garment each element belongs to.
        let garment = |g: u32| &model.garments[g as usize].params;

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

        // ---- 5. membrane (parallel over triangles) ----
        let t0 = Instant::now();
        let x = &state.x;
        self.tri_out
            .par_iter_mut()
            .zip(state.tri_plastic.par_iter_mut())
            .zip(state.tri_friction.par_iter_mut())
            .enumerate()
            .for_each(|(t, ((out, tp), tf))| {
                let f = model.faces[t];
                let gp = garment(model.face_garment[t]);
                let w = &gp.wrinkles;
                let y = [x[f[0] as usize], x[f[1] as usize], x[f[2] as usize]];
                let rest = &model.tri_rest[t];
                let s: Strain = membrane::green_strain(rest, &y);
                let mut e_el = s.e;
                if w.tensile_plasticity {
                    for c in 0..3 {
                        wrinkle::plastic_update(&mut tp[c], &gp.tensile_plastic[c], s.e[c], h);
                        e_el[c] -= tp[c].theta_p;
                    }
                }
                *out = TriOut::default();
                membrane::add_membrane(rest, &s, &gp.membrane, &e_el, &mut out.f, &mut out.jac);
                if w.tensile_friction {
                    let mut delta = [0.0; 3];
                    for c in 0..3 {
                        delta[c] = wrinkle::friction_update(&mut tf[c], &gp.tensile_friction[c], s.e[c], h);
                    }
                    membrane::add_tensile_friction(
                        rest,
                        &s,
                        &gp.tensile_friction_stiffness,
                        &delta,
                        &mut out.f,
                        &mut out.jac,
                    );
                }
            });

        // ---- 6. bending (parallel over hinges) ----
        let (slips, yields) = self
            .hinge_out
            .par_iter_mut()
            .zip(state.hinge_plastic.par_iter_mut())
            .zip(state.hinge_friction.par_iter_mut())
            .zip(state.hinge_dahl.par_iter_mut())
            .zip(state.hinge_angle.par_iter_mut())
            .enumerate()
            .map(|(e, ((((out, pl), fr), dahl_sigma), angle))| {
                let hv = model.hinges[e];
                let gp = garment(model.hinge_garment[e]);
                let w = &gp.wrinkles;
                let (kappa_b, kappa_f) = (gp.kappa_b, gp.kappa_f);
                let xs = [
                    x[hv[0] as usize],
                    x[hv[1] as usize],
                    x[hv[2] as usize],
                    x[hv[3] as usize],
                ];
                let (theta, g) = hinge::dihedral_angle_and_gradient(&xs);
                let theta_bar = model.hinge_theta_bar[e];
                let s = model.hinge_s[e];
                let mut yielded = false;
                if w.bend_plasticity {
                    yielded = wrinkle::plastic_update(pl, &gp.bend_plastic, theta - theta_bar, h);
                }
                let theta_p = if w.bend_plasticity { pl.theta_p } else { 0.0 };
                let mut moment = s * kappa_b * (theta - theta_bar - theta_p);
                let mut coef = s * kappa_b;
                let mut slipped = false;
                match w.bend_friction {
                    BendFriction::Off => {}
                    BendFriction::Dwell => {
                        let delta = wrinkle::friction_update(fr, &gp.bend_friction, theta, h);
                        // A slip resets the dwell clock (§4.1).
                        slipped = fr.t_stick == 0.0;
                        moment += s * kappa_f * delta;
                        if w.friction_slip_tangent || !slipped {
                            coef += s * kappa_f;
                        }
                    }
                    BendFriction::Dahl => {
                        let slope = wrinkle::dahl_update(dahl_sigma, &gp.dahl, theta - *angle);
                        moment += s * *dahl_sigma;
                        coef += s * slope.max(0.0);
                    }
                }
                *angle = theta;
                *out = HingeOut { g, moment, coef };
                (slipped as usize, yielded as usize)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        stats.hinge_slips = slips;
        stats.hinge_yields = yields;

        // ---- 8. hold-time warp (§4.6): all hinges, optionally all triangles ----
        if warp > 0.0 {
            state
                .hinge_friction
                .par_iter_mut()
                .zip(state.hinge_plastic.par_iter_mut())
                .for_each(|(f, pl)| wrinkle::warp_clocks(f, pl, warp));
            // Triangle clocks only for garments whose switches ask for it.
            state
                .tri_friction
                .par_iter_mut()
                .zip(state.tri_plastic.par_iter_mut())
                .zip(model.face_garment.par_iter())
                .filter(|(_, g)| garment(**g).wrinkles.warp_faces)
                .for_each(|((f, pl), _)| {
                    for c in 0..3 {
                        wrinkle::warp_clocks(&mut f[c], &mut pl[c], warp);
                    }
                });
        }
        stats.times.elements = t0.elapsed().as_secs_f64();

        // ---- 3, 4, 7. gravity, handles, obstacle contact: per-vertex terms ----
        let t0 = Instant::now();
        let cp = p.contact;
        let contacts = self
            .force
            .par_iter_mut()
            .zip(self.k_diag.par_iter_mut())
            .zip(self.d_diag.par_iter_mut())
            .enumerate()
            .map(|(i, ((f, kd), dd))| {
                let xi = state.x[i];
                let mut fi = p.gravity * model.mass[i];
                let mut ki = Mat3::zero();
                let mut di = Mat3::zero();
                if let Some(&kh) = pins.stiffness.get(i)
                    && kh > 0.0
                {
                    // Spec §6.1 step 4 (A19): f = −k_h (x − x_h), J = −k_h I.
                    fi -= (xi - pins.target[i]) * kh;
                    ki += Mat3::identity() * kh;
                }
                let mut touching = 0usize;
                for c in colliders {
                    // Cubic penalty of §6.3 between a vertex and an obstacle
                    // surface: gap c = φ − d_rep, q = max(−c, 0),
                    // E = k_c A q³/(6 d_rep).
                    let Some(ct) = c.query_within(xi, cp.repulsion_distance) else {
                        continue;
                    };
                    let q = cp.repulsion_distance - ct.phi;
                    if q <= 0.0 {
                        continue;
                    }
                    touching = 1;
                    let a = model.vertex_area[i];
                    let kc = cp.repulsion_stiffness * a;
                    let fn_mag = kc * q * q / (2.0 * cp.repulsion_distance);
                    fi += ct.normal * fn_mag;
                    ki += Mat3::outer(ct.normal, ct.normal) * (kc * q / cp.repulsion_distance);
                    // Coulomb friction as implicit tangential damping, capped so
                    // that it at most stops the relative slide in one step.
                    let mu = match c.mode() {
                        BoundaryMode::Sticky => f64::INFINITY,
                        BoundaryMode::Slip => 0.0,
                        BoundaryMode::Separate => c.friction(),
                    };
                    let nn = Mat3::outer(ct.normal, ct.normal);
                    let proj = Mat3::identity() - nn;
                    let vrel = state.v[i] - ct.velocity;
                    let vn = vrel.dot(ct.normal);
                    if vn < 0.0 {
                        // Inelastic approach inside the repulsion layer (as the
                        // repulsion impulses of Bridson et al. 2002, which the
                        // paper cites for contact): implicit normal damping that
                        // removes the approach speed within the step. Without
                        // it the cubic penalty is a lossless spring and cloth
                        // bounces off obstacles like a ball.
                        let cn = model.mass[i] / h;
                        fi -= ct.normal * (cn * vn);
                        di += nn * cn;
                    }
                    let vt = proj * vrel;
                    let vtn = vt.norm();
                    if mu > 0.0 && vtn > 0.0 {
                        let cap = model.mass[i] / h;
                        let cf = (mu * fn_mag / vtn).min(cap);
                        fi -= vt * cf;
                        di += proj * cf;
                    }
                }
                *f = fi;
                *kd = ki;
                *dd = di;
                touching
            })
            .sum::<usize>();
        stats.obstacle_contacts = contacts;

        // Cloth–cloth repulsion (§6.3), lumped onto the diagonal blocks of the
        // four vertices so the matrix pattern stays fixed (the force is exact;
        // only its Jacobian is approximated, which keeps A SPD). Sequential:
        // pairs are few and this keeps the sum order fixed.
        for pr in &self.pairs {
            let q = cp.repulsion_distance - pr.distance;
            if q <= 0.0 {
                continue;
            }
            let kc = cp.repulsion_stiffness * pr.area;
            let fn_mag = kc * q * q / (2.0 * cp.repulsion_distance);
            let stiff = kc * q / cp.repulsion_distance;
            let nn = Mat3::outer(pr.normal, pr.normal);
            let proj = Mat3::identity() - nn;
            let mut vrel = Vec3::zero();
            let mut wm = 0.0;
            for (&vi, &wk) in pr.vertices.iter().zip(&pr.weights) {
                vrel += state.v[vi as usize] * wk;
                wm += wk * wk * self.inv_mass[vi as usize];
            }
            let vt = proj * vrel;
            let vtn = vt.norm();
            let cf = if vtn > 0.0 && wm > 0.0 {
                (cp.self_friction * fn_mag / vtn).min(1.0 / (h * wm))
            } else {
                0.0
            };
            // Inelastic approach, as for obstacles: the relative normal
            // speed of the pair is removed within the step.
            let vn = vrel.dot(pr.normal);
            let cn = if vn < 0.0 && wm > 0.0 { 1.0 / (h * wm) } else { 0.0 };
            for (&vi, &wk) in pr.vertices.iter().zip(&pr.weights) {
                let i = vi as usize;
                self.force[i] += pr.normal * (fn_mag * wk - cn * vn * wk) - vt * (cf * wk);
                self.k_diag[i] += nn * (stiff * wk * wk);
                self.d_diag[i] += proj * (cf * wk * wk) + nn * (cn * wk * wk);
            }
        }

        // Element forces gathered per vertex in a fixed order (spec §11.1).
        let pat = &model.pattern;
        let tri_out = &self.tri_out;
        let hinge_out = &self.hinge_out;
        self.force.par_iter_mut().enumerate().for_each(|(i, f)| {
            for &code in &pat.inc[pat.inc_ptr[i] as usize..pat.inc_ptr[i + 1] as usize] {
                let c = (code & 3) as usize;
                let e = (code >> 3) as usize;
                if code & 4 == 0 {
                    *f += tri_out[e].f[c];
                } else {
                    *f -= hinge_out[e].g[c] * hinge_out[e].moment;
                }
            }
        });

        // ---- 9. assemble A = M + h(h+γ)K + hD, block rows in parallel ----
        let hk = h * (h + p.damping);
        let k_diag = &self.k_diag;
        let d_diag = &self.d_diag;
        for_each_segment_mut(&mut self.values, &self.row_off, &|i, seg: &mut [f64]| {
            let (lo, hi) = (pat.row_ptr[i], pat.row_ptr[i + 1]);
            let nb = hi - lo;
            for kb in lo..hi {
                let mut kblk = Mat3::zero();
                for &code in &pat.src[pat.src_ptr[kb] as usize..pat.src_ptr[kb + 1] as usize] {
                    let slot = (code & 15) as usize;
                    let e = (code >> 5) as usize;
                    if code & 16 == 0 {
                        kblk -= tri_out[e].jac[slot / 3][slot % 3];
                    } else {
                        let ho = &hinge_out[e];
                        kblk += Mat3::outer(ho.g[slot / 4], ho.g[slot % 4]) * ho.coef;
                    }
                }
                let mut a = kblk * hk;
                if kb == pat.diag[i] {
                    a += k_diag[i] * hk + d_diag[i] * h + Mat3::identity() * model.mass[i];
                }
                let q = kb - lo;
                for r in 0..3 {
                    let base = 3 * r * nb + 3 * q;
                    seg[base..base + 3].copy_from_slice(&a.m[r]);
                }
            }
        });
        // b = h f − h(h+γ)K v_n = h f − (A − M − hD) v_n  (spec §6.1 step 9).
        for (d, v) in self.vflat.chunks_exact_mut(3).zip(&state.v) {
            d.copy_from_slice(&v.to_array());
        }
        let op = CsrOp {
            ptr: &self.csr_ptr,
            idx: &self.csr_idx,
            val: &self.values,
        };
        op.mul(&self.vflat, &mut self.tmp);
        self.rhs.par_chunks_mut(3).enumerate().for_each(|(i, b)| {
            let v = state.v[i];
            let mv = v * model.mass[i] + d_diag[i] * v * h;
            let av = Vec3::new(self.tmp[3 * i], self.tmp[3 * i + 1], self.tmp[3 * i + 2]);
            let r = self.force[i] * h - (av - mv);
            b.copy_from_slice(&r.to_array());
        });
        stats.times.assemble = t0.elapsed().as_secs_f64();

        // ---- 10. solve A Δv = b ----
        let t0 = Instant::now();
        self.ensure_workspace(p.linear_solver)?;
        match p.linear_solver {
            LinearSolver::Cholesky => {
                let sym = self.symbolic.as_ref().expect("built in ensure_workspace");
                let nn = 3 * n;
                let a = SparseColMatRef::new(pattern(&self.csr_ptr, &self.csr_idx), &self.values);
                let stack = MemStack::new(&mut self.mem);
                let llt = sym
                    .factorize_numeric_llt::<f64>(
                        &mut self.l_values,
                        a,
                        Side::Lower,
                        LltRegularization::default(),
                        Par::rayon(0),
                        stack,
                        Default::default(),
                    )
                    .map_err(|e| {
                        Error::Solver(format!(
                            "the cloth system matrix is not positive definite at step {} ({e:?}); \
                             a material or contact stiffness is probably negative or non-finite",
                            state.step
                        ))
                    })?;
                self.dv.copy_from_slice(&self.rhs);
                let rhs = MatMut::from_column_major_slice_mut(&mut self.dv, nn, 1);
                let stack = MemStack::new(&mut self.mem);
                llt.solve_in_place_with_conj(Conj::No, rhs, Par::rayon(0), stack);
            }
            LinearSolver::LaggedCholesky => {
                let mut fresh = false;
                if !self.have_factor {
                    self.factor32(state.step)?;
                    fresh = true;
                }
                loop {
                    let sym = self.symbolic.as_ref().expect("built in ensure_workspace");
                    let (l32, buf, mem) = (&self.l32, &mut self.buf32, &mut self.mem);
                    // M⁻¹ r: solve with the single-precision factor of a
                    // recent matrix; r and z stay f64 in the iteration.
                    let mut precond = |r: &[f64], z: &mut [f64]| {
                        for (b, r) in buf.iter_mut().zip(r) {
                            *b = *r as f32;
                        }
                        let llt = faer::sparse::linalg::cholesky::LltRef::new(sym, l32);
                        let nn = buf.len();
                        llt.solve_in_place_with_conj(
                            Conj::No,
                            MatMut::from_column_major_slice_mut(&mut buf[..], nn, 1),
                            Par::rayon(0),
                            MemStack::new(mem),
                        );
                        for (z, b) in z.iter_mut().zip(buf.iter()) {
                            *z = *b as f64;
                        }
                    };
                    let op = CsrOp {
                        ptr: &self.csr_ptr,
                        idx: &self.csr_idx,
                        val: &self.values,
                    };
                    self.dv.fill(0.0);
                    let max_iter = if fresh {
                        p.cg_max_iterations
                    } else {
                        LAG_MAX_ITERATIONS
                    };
                    let out = pcg(
                        &op,
                        &mut precond,
                        &self.rhs,
                        &mut self.dv,
                        p.cg_tolerance,
                        max_iter,
                        &mut self.cg,
                    );
                    stats.cg_iterations += out.iterations;
                    if out.converged {
                        if out.iterations > LAG_REFRESH_ITERATIONS {
                            // Refresh the factor before the next step.
                            self.have_factor = false;
                        }
                        break;
                    }
                    if fresh {
                        return Err(Error::Solver(format!(
                            "preconditioned conjugate gradient did not reach the tolerance {} in {} \
                             iterations at step {}; use linear_solver='cholesky'",
                            p.cg_tolerance, out.iterations, state.step
                        )));
                    }
                    self.factor32(state.step)?;
                    fresh = true;
                }
                stats.refactorized = fresh;
            }
            LinearSolver::Cg => {
                // 3×3 block-Jacobi (spec §11.3 [R]): handles make the diagonal
                // ratio h²k/m reach ~1e5, so plain Jacobi is not enough.
                let values = &self.values;
                let row_off = &self.row_off;
                self.jacobi.par_iter_mut().enumerate().for_each(|(i, inv)| {
                    let (lo, hi) = (pat.row_ptr[i], pat.row_ptr[i + 1]);
                    let nb = hi - lo;
                    let q = pat.diag[i] - lo;
                    let mut d = Mat3::zero();
                    for r in 0..3 {
                        for c in 0..3 {
                            d.m[r][c] = values[row_off[i] + 3 * r * nb + 3 * q + c];
                        }
                    }
                    *inv = d.try_inverse(0.0).unwrap_or(Mat3::identity());
                });
                let jac = &self.jacobi;
                let mut precond = |r: &[f64], z: &mut [f64]| {
                    z.par_chunks_mut(3)
                        .zip(jac.par_iter())
                        .enumerate()
                        .for_each(|(i, (z, m))| {
                            let v = *m * Vec3::new(r[3 * i], r[3 * i + 1], r[3 * i + 2]);
                            z.copy_from_slice(&v.to_array());
                        });
                };
                let op = CsrOp {
                    ptr: &self.csr_ptr,
                    idx: &self.csr_idx,
                    val: &self.values,
                };
                // Warm start from the previous step's Δv (spec §11.3 [R]).
                let out = pcg(
                    &op,
                    &mut precond,
                    &self.rhs,
                    &mut self.dv,
                    p.cg_tolerance,
                    p.cg_max_iterations,
                    &mut self.cg,
                );
                stats.cg_iterations = out.iterations;
                if !out.converged {
                    return Err(Error::Solver(format!(
                        "conjugate gradient did not reach the tolerance {} in {} iterations at step {}; \
                         raise cg_max_iterations, loosen cg_tolerance or use linear_solver='lagged'",
                        p.cg_tolerance, out.iterations, state.step
                    )));
                }
            }
        }
        // Residual of the solve (cheap: one SpMV), reported and used to catch
        // a silently failed factorization.
        CsrOp {
            ptr: &self.csr_ptr,
            idx: &self.csr_idx,
            val: &self.values,
        }
        .mul(&self.dv, &mut self.tmp);
        let (mut rr, mut bb) = (0.0, 0.0);
        for (t, b) in self.tmp.iter().zip(&self.rhs) {
            rr += (t - b) * (t - b);
            bb += b * b;
        }
        stats.residual = if bb > 0.0 { (rr / bb).sqrt() } else { rr.sqrt() };
        stats.times.solve = t0.elapsed().as_secs_f64();

        // ---- 11–12. integrate, obstacle projection, fail-safe ----
        let t0 = Instant::now();
        self.x_prev.copy_from_slice(&state.x);
        let dv = &self.dv;
        state
            .x
            .par_iter_mut()
            .zip(state.v.par_iter_mut())
            .enumerate()
            .for_each(|(i, (x, v))| {
                *v += Vec3::new(dv[3 * i], dv[3 * i + 1], dv[3 * i + 2]);
                *x += *v * h;
                for c in colliders {
                    // Post-step projection to the thickness layer (§6.3 [R]):
                    // push out along the normal, then the shared boundary
                    // response removes the approaching normal velocity.
                    if let Some(ct) = c.query_within(*x, cp.thickness)
                        && ct.phi < cp.thickness
                    {
                        *x += ct.normal * (cp.thickness - ct.phi);
                        *v = boundary_response(*v, ct.velocity, ct.normal, c.mode(), c.friction());
                    }
                }
            });
        if p.self_collision {
            let sc = self
                .self_collision
                .as_mut()
                .expect("created in the proximity stage");
            self.cand.copy_from_slice(&state.x);
            let rs = sc.resolve(&self.x_prev, &mut state.x, &self.inv_mass, cp.thickness)?;
            stats.collisions = rs.collisions;
            stats.impact_zones = rs.zones;
            // v += (x_corrected − x_candidate)/h (spec §6.1 step 12).
            let cand = &self.cand;
            state.v.par_iter_mut().enumerate().for_each(|(i, v)| {
                *v += (state.x[i] - cand[i]) * (1.0 / h);
            });
        }
        stats.times.collide = t0.elapsed().as_secs_f64();

        state.time += h;
        state.step += 1;
        check_finite(state, h)?;
        Ok(stats)
    }
}

/// Largest speed accepted before a step is declared diverged, m/s. Cloth in
/// these scenes moves at most a few m/s; 1e3 means the solve blew up.
const MAX_SPEED: f64 = 1e3;

fn check_finite(state: &State, h: f64) -> Result<()> {
    let bad = state
        .x
        .par_iter()
        .zip(state.v.par_iter())
        .position_first(|(x, v)| {
            !x.is_finite() || !v.is_finite() || v.norm_squared() > MAX_SPEED * MAX_SPEED
        });
    if let Some(i) = bad {
        return Err(Error::Diverged {
            step: state.step,
            time: state.time,
            what: format!(
                "vertex {i} has position {:?} and velocity {:?} (limit {MAX_SPEED} m/s); reduce dt \
                 (now {h} s), lower the stiffnesses, or check pins and colliders that fight each other",
                state.x[i], state.v[i]
            ),
        });
    }
    Ok(())
}
