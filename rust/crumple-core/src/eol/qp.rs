//! The step's convex QP (spec eol_cloth §3.6, §7, §12.2):
//!
//! `min ½ q̇ᵀ M̃ q̇ − q̇ᵀ f̃   s.t.   A_eq q̇ = b_eq,   A_in q̇ ≥ b_in`.
//!
//! The reference solver is Clarabel (an interior-point method in pure Rust,
//! the algorithm class of the paper's MOSEK; a library, because a robust
//! conic solver is not something to write by hand). Every solution is
//! checked against the KKT conditions of §10 test 10 before it is accepted.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus, SupportedConeT,
    ZeroConeT,
};

use super::sparse::{Csc, Triplet};
use crate::{Error, Result};

/// One QP. `p_upper` is the upper triangle of the symmetric `M̃`; `q = −f̃`.
#[derive(Clone, Copy, Debug)]
pub struct Qp<'a> {
    /// Upper triangle of `M̃` (n × n).
    pub p_upper: &'a Csc,
    /// Linear term `−f̃` (n).
    pub q: &'a [f64],
    /// Equality rows (m_e × n).
    pub a_eq: &'a Csc,
    /// Equality right-hand side (m_e).
    pub b_eq: &'a [f64],
    /// Inequality rows (m_i × n), `A_in q̇ ≥ b_in`.
    pub a_in: &'a Csc,
    /// Inequality right-hand side (m_i).
    pub b_in: &'a [f64],
}

impl Qp<'_> {
    /// `A_in q̇ − b_in`: each inequality row's slack (≥ 0 when it holds).
    pub fn slack(&self, v: &[f64]) -> Vec<f64> {
        self.a_in
            .mul(v)
            .iter()
            .zip(self.b_in)
            .map(|(a, b)| a - b)
            .collect()
    }
}

/// A solution and its multipliers, in the convention
/// `M̃ q̇ − f̃ = A_eqᵀ λ + A_inᵀ μ`, `μ ≥ 0`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QpSolution {
    /// q̇ (n).
    pub v: Vec<f64>,
    /// Equality multipliers λ (m_e).
    pub lambda: Vec<f64>,
    /// Inequality multipliers μ ≥ 0 (m_i).
    pub mu: Vec<f64>,
    /// Interior-point iterations.
    pub iterations: u32,
}

/// The KKT residuals of §10 test 10 at a solution.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Kkt {
    /// `‖M̃q̇ − f̃ − A_eqᵀλ − A_inᵀμ‖∞ / max(‖f̃‖∞, 1)`.
    pub stationarity: f64,
    /// `‖A_eq q̇ − b_eq‖∞`.
    pub equality: f64,
    /// `max(0, −min(A_in q̇ − b_in))`.
    pub inequality: f64,
    /// `max |μ_k (A_in q̇ − b_in)_k|`.
    pub complementarity: f64,
}

impl Kkt {
    /// Within §10 test 10's bounds (stationarity 1e-6 relative, equality
    /// and inequality 1e-9, complementarity 1e-8).
    pub fn ok(&self) -> bool {
        self.stationarity <= 1e-6
            && self.equality <= 1e-9
            && self.inequality <= 1e-9
            && self.complementarity <= 1e-8
    }
}

fn to_clarabel(m: &Csc) -> CscMatrix<f64> {
    CscMatrix::new(
        m.rows,
        m.cols,
        m.colptr.clone(),
        m.rowval.clone(),
        m.nzval.clone(),
    )
}

/// Solves `qp` with Clarabel at gap and feasibility tolerance `tol`
/// (spec §12.2: 1e-9). Errors ([`Error::Solver`]) when the status is not
/// solved or almost solved, or the sizes disagree.
pub fn solve_clarabel(qp: &Qp<'_>, tol: f64) -> Result<QpSolution> {
    let n = qp.p_upper.cols;
    let (me, mi) = (qp.a_eq.rows, qp.a_in.rows);
    if qp.q.len() != n || qp.a_eq.cols != n || qp.a_in.cols != n || qp.b_eq.len() != me || qp.b_in.len() != mi
    {
        return Err(Error::Solver(format!(
            "QP sizes disagree: n = {n}, q {}, A_eq {}×{}, b_eq {}, A_in {}×{}, b_in {}",
            qp.q.len(),
            me,
            qp.a_eq.cols,
            qp.b_eq.len(),
            mi,
            qp.a_in.cols,
            qp.b_in.len()
        )));
    }
    // Clarabel's form A q̇ + s = b, s ∈ K: [A_eq; −A_in], [b_eq; −b_in],
    // cones Zero(m_e) × Nonneg(m_i) (spec §7 "Solver forms").
    let mut t: Vec<Triplet> = qp
        .a_eq
        .triplets()
        .chain(qp.a_in.triplets().map(|(r, c, v)| (r + me as u32, c, -v)))
        .collect();
    let a = Csc::from_triplets(me + mi, n, &mut t);
    let b: Vec<f64> = qp
        .b_eq
        .iter()
        .copied()
        .chain(qp.b_in.iter().map(|v| -v))
        .collect();
    let mut cones: Vec<SupportedConeT<f64>> = Vec::new();
    if me > 0 {
        cones.push(ZeroConeT(me));
    }
    if mi > 0 {
        cones.push(NonnegativeConeT(mi));
    }
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(tol)
        .tol_gap_rel(tol)
        .tol_feas(tol)
        .max_iter(100)
        .build()
        .map_err(|e| Error::Solver(format!("Clarabel settings: {e:?}")))?;
    // The cloth's masses are ~1e-4 kg, so M̃ and f̃ are tiny next to the
    // solver's absolute tolerances: scale the objective to a unit largest
    // entry (the minimizer is unchanged, the multipliers scale back below).
    let scale = 1.0
        / qp.p_upper
            .nzval
            .iter()
            .fold(f64::MIN_POSITIVE, |a, v| a.max(v.abs()));
    let mut p = qp.p_upper.clone();
    p.nzval.iter_mut().for_each(|v| *v *= scale);
    let q: Vec<f64> = qp.q.iter().map(|v| v * scale).collect();
    let mut solver = DefaultSolver::new(&to_clarabel(&p), &q, &to_clarabel(&a), &b, &cones, settings)
        .map_err(|e| Error::Solver(format!("Clarabel could not set up the QP: {e:?}")))?;
    solver.solve();
    let s = &solver.solution;
    if !matches!(s.status, SolverStatus::Solved | SolverStatus::AlmostSolved) {
        return Err(Error::Solver(format!(
            "the step's QP was not solved: Clarabel ended with {:?} after {} iterations; \
             try a smaller time step",
            s.status, s.iterations
        )));
    }
    // Clarabel's stationarity P q̇ + q + Aᵀz = 0 gives λ = −z_eq, μ = z_in.
    Ok(QpSolution {
        v: s.x.clone(),
        lambda: s.z[..me].iter().map(|z| -z / scale).collect(),
        mu: s.z[me..].iter().map(|z| z / scale).collect(),
        iterations: s.iterations,
    })
}

/// The KKT residuals of `sol` for `qp`.
pub fn kkt(qp: &Qp<'_>, sol: &QpSolution) -> Kkt {
    let mut r = qp.p_upper.sym_mul(&sol.v);
    for (ri, qi) in r.iter_mut().zip(qp.q) {
        *ri += qi;
    }
    let ae = qp.a_eq.mul_t(&sol.lambda);
    let ai = qp.a_in.mul_t(&sol.mu);
    let inf = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0f64, |a, b| a.max(b.abs()));
    let scale = inf(&mut qp.q.iter().copied()).max(1.0);
    let stationarity = inf(&mut (0..r.len()).map(|k| r[k] - ae[k] - ai[k])) / scale;
    let eq = qp.a_eq.mul(&sol.v);
    let equality = inf(&mut eq.iter().zip(qp.b_eq).map(|(a, b)| a - b));
    let ineq = qp.slack(&sol.v);
    let inequality = ineq.iter().fold(0.0f64, |a, &g| a.max(-g));
    let complementarity = inf(&mut ineq.iter().zip(&sol.mu).map(|(g, m)| g * m));
    Kkt {
        stationarity,
        equality,
        inequality,
        complementarity,
    }
}

/// Refines an interior-point solution on its active set (the rows whose
/// multiplier exceeds their slack, and every equality): one sparse LU
/// solve of the KKT system `[[M̃, −Aᵀ], [A, −εI]] [q̇; y] = [f̃; b]` puts the
/// active rows at zero residual, where the interior point leaves a slack of
/// about tolerance / multiplier (for an EOL vertex pressed on an edge,
/// ~1e-6 m/s: a drift off the feature of ~1e-9 m per step). The ε = 1e-14
/// diagonal only makes the system solvable when active rows repeat each
/// other. Up to 8 active-set corrections follow (drop the most negative
/// multiplier, or add the most violated row). Returns `None` (keep the
/// interior-point solution) when they do not settle, the result misses the
/// KKT bounds of §10 test 10 or a factorization fails. The faer sparse LU is
/// the library's; only the assembly of the KKT system is written here.
pub fn polish(qp: &Qp<'_>, sol: &QpSolution) -> Option<QpSolution> {
    let mi = qp.a_in.rows;
    let slack = qp.slack(&sol.v);
    let mut active: Vec<bool> = (0..mi).map(|k| sol.mu[k] > slack[k].max(0.0)).collect();
    // A few active-set corrections from the interior point's guess: drop
    // the most negative multiplier, or add the most violated row.
    for _ in 0..8 {
        let rows: Vec<usize> = (0..mi).filter(|&k| active[k]).collect();
        let out = solve_on_active(qp, &rows, sol.iterations)?;
        let g = qp.slack(&out.v);
        let g_tol = 1e-12 * g.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        let mu_tol = 1e-10 * out.mu.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let worst_mu = rows
            .iter()
            .map(|&k| (out.mu[k], k))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let worst_g = (0..mi)
            .filter(|&k| !active[k])
            .map(|k| (g[k], k))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match (worst_mu, worst_g) {
            (Some((m, k)), _) if m < -mu_tol => active[k] = false,
            (_, Some((v, k))) if v < -g_tol => active[k] = true,
            _ => return kkt(qp, &out).ok().then_some(out),
        }
    }
    None
}

/// The KKT solve of [`polish`] with the inequality rows `active` held as
/// equalities (multipliers of the others zero); `None` if the
/// factorization fails or the result is not finite.
fn solve_on_active(qp: &Qp<'_>, active: &[usize], iterations: u32) -> Option<QpSolution> {
    use faer::Mat;
    use faer::linalg::solvers::Solve;
    use faer::sparse::{SparseColMat, Triplet as FT};
    let n = qp.p_upper.cols;
    let (me, mi) = (qp.a_eq.rows, qp.a_in.rows);
    let m = me + active.len();
    let mut slot = vec![usize::MAX; mi];
    for (k, &r) in active.iter().enumerate() {
        slot[r] = me + k;
    }
    let scale = qp
        .p_upper
        .nzval
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()))
        .max(1e-300);
    let eps = 1e-14 * scale;
    let mut t: Vec<FT<usize, usize, f64>> = Vec::new();
    for (r, c, v) in qp.p_upper.triplets() {
        let (r, c) = (r as usize, c as usize);
        t.push(FT::new(r, c, v));
        if r != c {
            t.push(FT::new(c, r, v));
        }
    }
    for i in 0..n {
        t.push(FT::new(i, i, eps));
    }
    let mut row = |k: usize, c: u32, v: f64| {
        t.push(FT::new(n + k, c as usize, v));
        t.push(FT::new(c as usize, n + k, -v));
    };
    for (r, c, v) in qp.a_eq.triplets() {
        row(r as usize, c, v);
    }
    for (r, c, v) in qp.a_in.triplets() {
        if slot[r as usize] != usize::MAX {
            row(slot[r as usize], c, v);
        }
    }
    for k in 0..m {
        t.push(FT::new(n + k, n + k, -eps));
    }
    let kkt_matrix = SparseColMat::<usize, f64>::try_new_from_triplets(n + m, n + m, &t).ok()?;
    let lu = kkt_matrix.sp_lu().ok()?;
    let mut rhs = Mat::<f64>::zeros(n + m, 1);
    for i in 0..n {
        rhs[(i, 0)] = -qp.q[i];
    }
    for k in 0..me {
        rhs[(n + k, 0)] = qp.b_eq[k];
    }
    for (k, &r) in active.iter().enumerate() {
        rhs[(n + me + k, 0)] = qp.b_in[r];
    }
    lu.solve_in_place(&mut rhs);
    let v: Vec<f64> = (0..n).map(|i| rhs[(i, 0)]).collect();
    if v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let lambda: Vec<f64> = (0..me).map(|k| rhs[(n + k, 0)]).collect();
    let mut mu = vec![0.0; mi];
    for (k, &r) in active.iter().enumerate() {
        mu[r] = rhs[(n + me + k, 0)];
    }
    Some(QpSolution {
        v,
        lambda,
        mu,
        iterations,
    })
}
