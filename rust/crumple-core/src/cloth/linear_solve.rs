//! Step 10 of spec §6.1: the one sparse solve `A Δv = b` per step, with the
//! system matrix in a fixed CSR layout (spec §11.2-3). Three solvers share
//! it: exact sparse Cholesky (faer, nested-dissection ordering, symbolic
//! analysis once), CG preconditioned by a lagged single-precision Cholesky
//! factor (the default), and block-Jacobi CG.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::sparse::linalg::cholesky::{SymbolicCholesky, factorize_symbolic_cholesky};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};
use rayon::prelude::*;

use super::model::{Model, Pattern};
use super::params::{LinearSolver, StepParams};
use crate::math::{Mat3, Vec3};
use crate::{Error, Result, invalid};

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

/// The system `A Δv = b` of one step and everything its solvers keep
/// between steps: the CSR layout, values and right-hand side (written by
/// the assembly stage), the symbolic Cholesky analysis, the lagged factor,
/// the CG warm start and the scratch memory.
pub(super) struct LinearSystem {
    pub(super) csr_ptr: Vec<u32>,
    pub(super) csr_idx: Vec<u32>,
    /// Offsets of the block rows in `values` (`9·row_ptr`).
    pub(super) row_off: Vec<usize>,
    pub(super) values: Vec<f64>,
    pub(super) rhs: Vec<f64>,
    /// Δv: the solution, and the CG warm start of the next step.
    pub(super) dv: Vec<f64>,
    pub(super) tmp: Vec<f64>,
    /// `v_n` flattened, for the right-hand side.
    pub(super) vflat: Vec<f64>,
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
}

/// What the solve did: iterations (0 for Cholesky), relative residual
/// `‖AΔv − b‖/‖b‖`, and whether the lagged factor was recomputed.
pub(super) struct SolveOutcome {
    pub(super) iterations: usize,
    pub(super) residual: f64,
    pub(super) refactorized: bool,
}

fn mem_err<E: core::fmt::Debug>(e: E) -> Error {
    Error::Solver(format!(
        "cloth solver could not allocate its linear-solver workspace: {e:?}"
    ))
}

impl LinearSystem {
    /// The system of `model`; runs the symbolic Cholesky analysis once.
    pub(super) fn new(model: &Model) -> Result<Self> {
        let n = model.num_vertices();
        let (csr_ptr, csr_idx) = model.pattern.scalar_csr();
        let row_off: Vec<usize> = model.pattern.row_ptr.iter().map(|&r| 9 * r).collect();
        let nnz = csr_idx.len();
        let mut s = LinearSystem {
            csr_ptr,
            csr_idx,
            row_off,
            values: vec![0.0; nnz],
            rhs: vec![0.0; 3 * n],
            dv: vec![0.0; 3 * n],
            tmp: vec![0.0; 3 * n],
            vflat: vec![0.0; 3 * n],
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
        };
        s.ensure_workspace(LinearSolver::Cholesky)?;
        Ok(s)
    }

    /// `out = A x` with the current values.
    pub(super) fn mul(&self, x: &[f64], out: &mut [f64]) {
        CsrOp {
            ptr: &self.csr_ptr,
            idx: &self.csr_idx,
            val: &self.values,
        }
        .mul(x, out);
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

    /// Solves `A Δv = b` into `dv` with the solver `p` names (spec §6.1
    /// step 10) and measures the residual (one SpMV, which also catches a
    /// silently failed factorization). `step` names the step in errors.
    pub(super) fn solve(&mut self, pat: &Pattern, p: &StepParams, step: u64) -> Result<SolveOutcome> {
        let n = self.order.len();
        let mut iterations = 0;
        let mut refactorized = false;
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
                            step
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
                    self.factor32(step)?;
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
                    iterations += out.iterations;
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
                            p.cg_tolerance, out.iterations, step
                        )));
                    }
                    self.factor32(step)?;
                    fresh = true;
                }
                refactorized = fresh;
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
                iterations = out.iterations;
                if !out.converged {
                    return Err(Error::Solver(format!(
                        "conjugate gradient did not reach the tolerance {} in {} iterations at step {}; \
                         raise cg_max_iterations, loosen cg_tolerance or use linear_solver='lagged'",
                        p.cg_tolerance, out.iterations, step
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
        let residual = if bb > 0.0 { (rr / bb).sqrt() } else { rr.sqrt() };
        Ok(SolveOutcome {
            iterations,
            residual,
            refactorized,
        })
    }
}
