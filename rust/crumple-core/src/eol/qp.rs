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
    /// Dual feasibility: `max(0, −min μ) / max(‖f̃‖∞, 1)` (stationarity's
    /// scale: a multiplier is a force; at cloth scale, where ‖f̃‖∞ < 1,
    /// both are absolute bounds).
    pub dual: f64,
}

impl Kkt {
    /// Within §10 test 10's bounds (stationarity 1e-6 relative, equality
    /// and inequality 1e-9, complementarity 1e-8; the spec's `μ ≥ 0` to
    /// stationarity's 1e-6 relative).
    pub fn ok(&self) -> bool {
        self.stationarity <= 1e-6
            && self.equality <= 1e-9
            && self.inequality <= 1e-9
            && self.complementarity <= 1e-8
            && self.dual <= 1e-6
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
    // The cloth's masses are ~1e-4 kg, so M̃ and f̃ are tiny next to the
    // solver's absolute tolerances: scale the objective to a unit largest
    // entry (the minimizer is unchanged, the multipliers scale back below).
    let scale = 1.0
        / qp.p_upper
            .nzval
            .iter()
            .fold(f64::MIN_POSITIVE, |a, v| a.max(v.abs()));
    // The multipliers come back divided by `scale`, and so does the duality
    // gap: μ·slack in the caller's units is Clarabel's gap over `scale`. A
    // stiff step (scale ≪ 1) met both gap tolerances (Clarabel stops at
    // either) and still missed §10's complementarity bound (1.6e-8 against
    // 1e-8 after 500 more steps of the corner scene, found by the soak), so
    // both are asked for in the caller's units.
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(tol * scale.min(1.0))
        .tol_gap_rel(tol * scale.min(1.0))
        .tol_feas(tol)
        .max_iter(100)
        .build()
        .map_err(|e| Error::Solver(format!("Clarabel settings: {e:?}")))?;
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
    let dual = sol.mu.iter().fold(0.0f64, |a, &m| a.max(-m)) / scale;
    Kkt {
        stationarity,
        equality,
        inequality,
        complementarity,
        dual,
    }
}

/// Refines an interior-point solution on its active set (the rows whose
/// multiplier exceeds their slack, and every equality): [`solve_active_set`]
/// from that guess, up to 12 passes, each one KKT solve on faer's sparse
/// LDLᵀ ([`KktWorkspace`]), puts the active rows at zero residual, where the
/// interior point leaves a slack of about tolerance / multiplier (for an EOL
/// vertex pressed on an edge, ~1e-6 m/s: a drift off the feature of ~1e-9 m
/// per step), and corrects the guess where it is not exact. Returns `None`
/// (keep the interior-point solution) when the passes do not settle, the
/// result misses the KKT bounds of §10 test 10 or a factorization fails.
pub fn polish(qp: &Qp<'_>, sol: &QpSolution, ws: &mut KktWorkspace) -> Option<QpSolution> {
    let slack = qp.slack(&sol.v);
    let active: Vec<bool> = (0..qp.a_in.rows).map(|k| sol.mu[k] > slack[k].max(0.0)).collect();
    // Its own sign-reading state: a polish (a diagnostic's or a fallback's)
    // must not change how the stepper's later QPs are solved.
    let (mut out, _) = solve_active_set(qp, active, 12, ws, &mut 0)?;
    out.iterations = sol.iterations;
    Some(out)
}

/// The fast path (issue 16, spec §12.2 "custom active-set"): a
/// primal–dual active-set method from a warm guess `active` (the previous
/// step's active rows). Each pass solves the KKT system with the active
/// inequalities held as equalities, then drops every active row with a
/// negative multiplier and adds every violated inactive row at once (the
/// block update of Hintermüller–Ito–Kunisch, which converges in a few
/// passes when the guess is close, as it is from one step to the next).
/// The block update can cycle when rows are nearly dependent (a point
/// vertex's rows next to Lagrangian contacts: three sets in turn, seen on
/// the NAILS row), or wander when many rows change at once (a sheet
/// landing on three faces of a tilted box). Two safeguards: when an
/// active set comes back, every later pass changes one row, the first
/// that violates its sign (Murty's least-index rule, which ends for a
/// strictly convex QP with independent rows); and as in Júdice and Pires'
/// block principal pivoting, when `BLOCK_TRIES` passes in a row leave no
/// fewer wrong rows than the best pass so far, passes change one row
/// until a pass beats it. Murty's steps get up to `MURTY_PASSES` more
/// passes. Before either single-row rule, and when the passes run out,
/// the rows found wrong so far (after the first pass, whose wrong rows
/// are the warm start's misses) are handed to a dense oracle
/// (`settle_contested`, up to `ORACLE_TRIES` times a call): their own
/// complementarity problem, the other rows held, solved exactly by a
/// monotone method; its answer becomes the next pass's set. On the drops
/// of `benches/eol_drop_sweep.py` the block update and Murty's passes
/// wandered for 100 passes and more on the Lagrangian baselines (rows
/// strongly coupled through a stiff membrane) and gave 13 of 720 steps to
/// Clarabel; with the oracle none. The first pass is one
/// numeric factorization (Clarabel costs about as much as fifty of them);
/// the later ones re-solve against it, bordered with the rows whose state
/// changed (`KktWorkspace::border`: one column per changed row, a pass's
/// new columns solved together, about 0.75 + 0.13·k ms for k of them
/// against 5.8 ms for a factorization on the FRICTION row), and factor
/// again when a pass needs more than `MAX_FRESH` (32) new columns, more
/// than `MAX_BORDER` rows differ, or the bordered answer is not finite.
/// Passes whose set changes read their signs from the unrefined solve;
/// after a repeat or seven passes they read refined ones, and so do the
/// next 20 calls with the same `exact_solves` count (the caller's state).
/// Returns the solution with its KKT residuals (the caller's check, not
/// computed twice), or `None` when the passes run out without a KKT-valid
/// point (the caller falls back to Clarabel). The equalities of the step
/// (EOL Eulerian rows, tangential rows, pins) are always in the system.
pub fn solve_active_set(
    qp: &Qp<'_>,
    mut active: Vec<bool>,
    max_passes: usize,
    ws: &mut KktWorkspace,
    exact_solves: &mut u32,
) -> Option<(QpSolution, Kkt)> {
    let mi = qp.a_in.rows;
    if active.len() != mi {
        active = vec![false; mi];
    }
    let mut seen = std::collections::HashSet::new();
    let (mut budget, mut single) = (max_passes, false);
    // The block update's safeguard (Júdice and Pires' block principal
    // pivoting): the fewest wrong rows of a pass so far, and how many
    // passes in a row may still flip every wrong row without beating it;
    // once none may, a pass flips only the first wrong row (Murty's step)
    // until a pass beats the fewest again.
    let (mut fewest, mut tries, mut murty) = (usize::MAX, BLOCK_TRIES, false);
    let mut pass = 0;
    // Whether the passes read refined solves only: from a repeat or the
    // eighth pass on, and for the next 20 solves after that (the caller
    // keeps the count, `exact_solves`: it is state, saved with the run).
    // An unrefined solve can get a sign wrong where the system is nearly
    // singular (the static wire rows at dt = 1e-3 s went round in circles
    // to Clarabel on most steps; read refined, they take 10 ms a step, as
    // before).
    let mut exact = *exact_solves > 0;
    *exact_solves = exact_solves.saturating_sub(1);
    // The rows found wrong in some pass of this call after the first (the
    // contested ones), and how many more times the passes may hand them to
    // the dense oracle (`settle_contested`): where the block update stops
    // making progress or comes back to a set (before Murty's steps), and
    // where the passes run out (allocated at the first such row: most calls
    // end before one).
    let mut contested: Vec<bool> = Vec::new();
    let mut oracle_left = ORACLE_TRIES;
    while pass < budget {
        if !single {
            seen.insert(active.clone());
        }
        // The first pass factors; the others re-solve against that factor,
        // bordered with the rows whose state changed since, unless there
        // are too many of them (then they factor again).
        if pass == 0 || ws.border(qp, &active).is_none() {
            ws.factor(qp, &active)?;
        }
        // A pass whose set changes is thrown away, so its signs are read
        // from the unrefined solve (δ-regularized), ignoring violations
        // under LOOSE_TOL; a sign it gets wrong costs a pass, not the
        // answer: only a pass that looks final is refined (two to six more
        // solves, and GMRES's up to 40 if those stall on its answer) and
        // read again at full strictness, and only that one can end the loop.
        let mut flips = Vec::new();
        if !exact {
            let out = ws.solution(qp, &active, pass as u32 + 1)?;
            flips = wrong_rows(qp, &out, &active, LOOSE_TOL);
        }
        let mut out = None;
        if flips.is_empty() {
            // Refined until a correction is near rounding, up to six steps:
            // a bordered answer converges more slowly (its factor is of
            // another set: the error shrinks about 500-fold a step on the
            // FRICTION row, 3000-fold with a fresh factor; usually four
            // steps), and near a corner vertex (its Eulerian direction
            // fixed by inequality rows only) two steps left even a fresh
            // factor's answer at a stationarity residual of 4e-10, 4e-5
            // (relative to the largest velocity) from the converged one.
            // Refined this far, the fast path and Clarabel's polished
            // answer agree to 3e-10 over 250 steps of the corner scene
            // (with two steps: 4e-5).
            ws.refine(6);
            let mut refined = ws.solution(qp, &active, pass as u32 + 1)?;
            flips = wrong_rows(qp, &refined, &active, (1e-12, 1e-10));
            if flips.is_empty() {
                let check = kkt(qp, &refined);
                if check.ok() {
                    return Some((refined, check));
                }
                // The plain refinement stalled on the answer (nearly
                // dependent active rows, see `KktWorkspace::refine`):
                // GMRES on the same factor, then read the signs again.
                // Only here: on passes that go on it would cost up to 40
                // solves each (it ran on every pass of a non-conformal
                // sheet's Murty steps, a third slower). So a pass whose
                // stalled answer shows a wrong sign along the slow
                // direction flips on that answer, without GMRES.
                ws.gmres(GMRES_ITERATIONS);
                refined = ws.solution(qp, &active, pass as u32 + 1)?;
                flips = wrong_rows(qp, &refined, &active, (1e-12, 1e-10));
            }
            out = Some(refined);
        }
        if flips.is_empty() {
            let out = out?;
            let check = kkt(qp, &out);
            return check.ok().then_some((out, check));
        }
        // The safeguard compares counts read at one strictness: before the
        // refined-only passes begin, a pass that looked final to the loose
        // read and showed wrong rows only when refined flips them all and
        // leaves the bookkeeping alone.
        let comparable = exact || out.is_none();
        let block = !single
            && (!comparable
                || if flips.len() < fewest {
                    (fewest, tries) = (flips.len(), BLOCK_TRIES);
                    true
                } else if tries > 0 {
                    tries -= 1;
                    true
                } else {
                    false
                });
        // The first pass's wrong rows are the warm start's misses, not
        // contested ones: where a sheet lands, most of its rows are (980 of
        // 1236 on the FRICTION row's landing), and counted they kept the
        // oracle out (over MAX_CONTESTED) while the passes wandered on
        // 10-50 rows to the end of their budget and Clarabel.
        if pass > 0 && !flips.is_empty() {
            contested.resize(mi, false);
            for &k in &flips {
                contested[k] = true;
            }
        }
        // No progress (or a repeat, below): the oracle first, then Murty;
        // at most once a pass, and not in the single-row passes after a
        // repeat (they begin where the oracle had no way forward).
        let mut consulted = false;
        if !block && !single && oracle_left > 0 {
            oracle_left -= 1;
            consulted = true;
            if settle_contested(qp, ws, &mut active, &contested) == Some(true) {
                seen.clear();
                (fewest, tries) = (usize::MAX, BLOCK_TRIES);
                budget = budget.max(pass + 1 + max_passes);
                pass += 1;
                continue;
            }
        }
        if !block {
            flips.truncate(1);
            // Murty's steps change one row a pass and take as many passes
            // as rows are wrong, or more: they get a budget of their own,
            // once.
            if !murty {
                murty = true;
                budget = budget.max(pass + 1 + MURTY_PASSES);
            }
        }
        for k in flips {
            active[k] = !active[k];
        }
        if !exact && (seen.contains(&active) || pass >= 7) {
            exact = true;
            *exact_solves = 20;
            seen.clear();
            // The unrefined passes' counts are not the refined ones'.
            (fewest, tries) = (usize::MAX, BLOCK_TRIES);
            // The refined passes get a full budget of their own.
            budget = budget.max(pass + 1 + max_passes);
        } else if !single && !consulted && seen.contains(&active) && oracle_left > 0 && {
            oracle_left -= 1;
            consulted = true;
            settle_contested(qp, ws, &mut active, &contested) == Some(true)
        } {
            seen.clear();
            (fewest, tries) = (usize::MAX, BLOCK_TRIES);
            budget = budget.max(pass + 1 + max_passes);
        } else if !single && seen.contains(&active) {
            single = true;
            // At least as many passes as a repeat always had.
            budget = budget.max(pass + 1 + 2 * max_passes);
            if !murty {
                murty = true;
                budget = budget.max(pass + 1 + MURTY_PASSES);
            }
        }
        // Out of passes: the oracle settles what the passes contested, and
        // they go on from there.
        if pass + 1 >= budget && !consulted && oracle_left > 0 {
            oracle_left -= 1;
            // (Also when the oracle agrees with the set the last flips made:
            // no pass has read that set yet.)
            if settle_contested(qp, ws, &mut active, &contested).is_some() {
                seen.clear();
                (fewest, tries) = (usize::MAX, BLOCK_TRIES);
                budget = pass + 1 + max_passes;
            }
        }
        pass += 1;
    }
    None
}

/// Sets the states of the contested rows (`contested[k]`) of `active` to
/// those that solve their own sub-problem exactly, every other row held in
/// its state: the oracle [`solve_active_set`] consults when the block
/// update stops making progress or comes back to an active set, and when
/// its passes run out. With
/// `K₀` the KKT system with the contested rows off, `x₀ = K₀⁻¹b` and
/// `Z = K₀⁻¹C` (C: the contested rows as columns), the rows' slacks are
/// `g(μ) = g₀ + Sμ` with `S = CᵀZ` (positive semidefinite: `C`'s block
/// of the primal part of `K₀⁻¹`) and `g₀ = Cᵀx₀ − b`, and their states
/// solve the linear complementarity problem `μ ≥ 0, g ≥ 0, μᵀg = 0`, that
/// is the bound-constrained QP `min ½μᵀSμ + g₀ᵀμ, μ ≥ 0`
/// ([`nonnegative_qp`]: a primal active-set method that lowers its
/// objective at every step, so it does not cycle where the block update
/// and the sparse Murty passes did). Written
/// here because it runs on the workspace's factor; the dense sub-problem
/// is small (the rows found wrong in the call's passes after the first:
/// tens to a few hundred on the drops of `benches/eol_drop_sweep.py`).
/// Returns whether it changed a row's state (`Some(false)`: its answer is
/// the set as it is), `None` when there are no contested rows or more
/// than [`MAX_CONTESTED`], or a factorization or solve fails (the caller
/// goes on without it). Leaves
/// the workspace factored with the contested rows off, which the next
/// pass borders.
fn settle_contested(
    qp: &Qp<'_>,
    ws: &mut KktWorkspace,
    active: &mut [bool],
    contested: &[bool],
) -> Option<bool> {
    let rows: Vec<usize> = (0..contested.len()).filter(|&k| contested[k]).collect();
    if rows.is_empty() || rows.len() > MAX_CONTESTED {
        return None;
    }
    let states = ws.contested_states(qp, active, &rows)?;
    if rows.iter().zip(&states).all(|(&k, &on)| active[k] == on) {
        return Some(false);
    }
    for (&k, &on) in rows.iter().zip(&states) {
        active[k] = on;
    }
    Some(true)
}

/// The most contested rows [`settle_contested`] takes (a dense `m × m`
/// sub-problem and `m` columns of the factor's size).
const MAX_CONTESTED: usize = 256;

/// How many times one [`solve_active_set`] call consults the oracle.
const ORACLE_TRIES: usize = 3;

/// `min ½μᵀSμ + gᵀμ` over `μ ≥ 0` (`S` dense `m × m`, column-major,
/// positive semidefinite), by Lawson and Hanson's active-set method for
/// nonnegativity bounds: from `μ = 0`, free the bound index with the most
/// negative gradient, solve on the free set, and step back to the first
/// free index that would turn negative, binding it again, until no bound
/// index has a gradient below `−1e-12` of the larger of `|g|` and
/// `|S|·Σμ` (rounding). In exact arithmetic every free lowers the
/// objective, so the method ends; under rounding an index whose gradient
/// is only just negative may not be able to enter (it blocks the step at
/// once), and then `μ` is optimal to rounding and returned, and a cap of
/// `4m + 20` frees guards the rest. The free set's systems are regularized
/// by `1e-12` of `S`'s largest diagonal entry (dependent rows make `S`
/// singular) and solved by faer's dense LU, sequentially so a run does not
/// depend on the thread count. `None` when the input is not finite, a
/// solve is not, or the cap is reached.
fn nonnegative_qp(s: &[f64], g: &[f64], m: usize) -> Option<Vec<f64>> {
    use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
    use faer::linalg::lu::partial_pivoting::{factor, solve};
    use faer::perm::PermRef;
    use faer::{MatMut, MatRef, Par};
    if s.len() != m * m || g.len() != m || s.iter().chain(g).any(|v| !v.is_finite()) {
        return None;
    }
    let req = StackReq::any_of(&[
        factor::lu_in_place_scratch::<usize, f64>(m, m, Par::Seq, Default::default()),
        solve::solve_in_place_scratch::<usize, f64>(m, 1, Par::Seq),
    ]);
    let mut mem = MemBuffer::try_new(req).ok()?;
    let big = (0..m)
        .map(|i| s[i + i * m].abs())
        .fold(0.0f64, f64::max)
        .max(1e-300);
    let g_big = g.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let mut mu = vec![0.0; m];
    let mut free = vec![false; m];
    let (mut lu, mut z) = (Vec::with_capacity(m * m), Vec::with_capacity(m));
    let (mut fwd, mut inv) = (vec![0usize; m], vec![0usize; m]);
    for _ in 0..4 * m + 20 {
        let tol = 1e-12 * g_big.max(big * mu.iter().sum::<f64>());
        let grad = |mu: &[f64], i: usize| g[i] + (0..m).map(|j| s[i + j * m] * mu[j]).sum::<f64>();
        let entered = match (0..m)
            .filter(|&i| !free[i])
            .map(|i| (grad(&mu, i), i))
            .min_by(|a, b| a.0.total_cmp(&b.0))
        {
            Some((gi, i)) if gi < -tol => i,
            _ => return Some(mu),
        };
        free[entered] = true;
        // Each inner pass that does not end the loop binds an index again,
        // so there are at most m + 1.
        for _ in 0..=m {
            let f: Vec<usize> = (0..m).filter(|&i| free[i]).collect();
            let k = f.len();
            if k == 0 {
                break;
            }
            lu.clear();
            for &c in &f {
                lu.extend(
                    f.iter()
                        .map(|&r| s[r + c * m] + if r == c { 1e-12 * big } else { 0.0 }),
                );
            }
            z.clear();
            z.extend(f.iter().map(|&i| -g[i]));
            factor::lu_in_place(
                MatMut::from_column_major_slice_mut(&mut lu, k, k),
                &mut fwd[..k],
                &mut inv[..k],
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            );
            let a = MatRef::from_column_major_slice(&lu, k, k);
            solve::solve_in_place(
                a,
                a,
                PermRef::new_checked(&fwd[..k], &inv[..k], k),
                MatMut::from_column_major_slice_mut(&mut z, k, 1),
                Par::Seq,
                MemStack::new(&mut mem),
            );
            if z.iter().any(|v| !v.is_finite()) {
                return None;
            }
            if z.iter().all(|&v| v > 0.0) {
                for (&i, &v) in f.iter().zip(&z) {
                    mu[i] = v;
                }
                break;
            }
            // Step towards z until the first free value reaches 0 (the
            // blocking index), which is bound again with any other that
            // reaches 0 with it.
            let mut step: Option<(f64, usize)> = None;
            for (&i, &v) in f.iter().zip(&z) {
                if v <= 0.0 {
                    // mu[i] ≥ 0 ≥ v: the step to 0 is mu / (mu − v).
                    let d = mu[i] - v;
                    let a = if d > 0.0 { mu[i] / d } else { 0.0 };
                    if step.is_none_or(|(b, _)| a < b) {
                        step = Some((a, i));
                    }
                }
            }
            let (alpha, blocking) = step?;
            if blocking == entered && mu[entered] == 0.0 {
                // The index cannot enter (its gradient was negative only
                // by rounding): μ is optimal as it is.
                return Some(mu);
            }
            let top = f.iter().fold(0.0f64, |a, &i| a.max(mu[i]));
            for (&i, &v) in f.iter().zip(&z) {
                mu[i] += alpha * (v - mu[i]);
                if i == blocking || (v <= 0.0 && mu[i] <= 1e-15 * top) {
                    mu[i] = 0.0;
                    free[i] = false;
                }
            }
        }
    }
    None
}

/// Relative tolerances `(slack, multiplier)` under which an unrefined pass
/// does not flip a row (see [`solve_active_set`]).
const LOOSE_TOL: (f64, f64) = (1e-7, 1e-7);

/// Passes in a row that may flip every wrong row without fewer wrong rows
/// than the best pass so far (Júdice and Pires' safeguard takes 3 to 10).
const BLOCK_TRIES: usize = 3;

/// The passes one call may spend on Murty's steps (see
/// [`solve_active_set`]): Clarabel costs about fifty factorizations at
/// the bench's sizes, a bordered pass less than one. Measured on six
/// sheets (5-17 quads a side, EOL and the Lagrangian modes) dropped for
/// 0.6 s on boxes tilted at random: without the block safeguard and with
/// 24 Murty passes, 37 of their 720 steps went to Clarabel; with both
/// safeguards, 96 passes and GMRES on a stalled refinement
/// ([`KktWorkspace::gmres`]), 10, and the six runs took 35 s instead of
/// 41 s.
const MURTY_PASSES: usize = 96;

/// The inequality rows whose state is wrong at `out`: an active row with a
/// negative multiplier, an inactive one with a negative slack, each beyond
/// `tol` (slack and multiplier, relative to their largest magnitudes), in
/// row order.
fn wrong_rows(qp: &Qp<'_>, out: &QpSolution, active: &[bool], tol: (f64, f64)) -> Vec<usize> {
    let g = qp.slack(&out.v);
    let g_tol = tol.0 * g.iter().fold(1.0f64, |a, x| a.max(x.abs()));
    let mu_tol = tol.1 * out.mu.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let wrong = |k: usize| {
        if active[k] {
            out.mu[k] < -mu_tol
        } else {
            g[k] < -g_tol
        }
    };
    (0..active.len()).filter(|&k| wrong(k)).collect()
}

/// The KKT solves of the active-set passes, on faer's sparse LDLᵀ with
/// the symbolic analysis kept while the structure does not change.
///
/// The system is the symmetric quasi-definite
/// `[[M̃ + εI, Aᵀ], [A, −D]] [q̇; w] = [−q; b]` over every row of the step,
/// equality and inequality: an active row has `D = δ` (it holds as an
/// equality, `−w` its multiplier), an inactive one keeps its structural
/// entries with the value 0 and `D = 1`, `b = 0` (so `w = 0`). The
/// structure therefore depends only on the mesh, the EOL set and the rows,
/// not on the active set, and one symbolic factorization serves every pass
/// of a step and the steps after it until the remesher or the contact set
/// changes it. ε = 1e-14 of the largest entry of M̃ only makes the system
/// solvable when active rows repeat each other. The factorization is
/// faer's; what is written here is the assembly and the bookkeeping.
#[derive(Default)]
pub struct KktWorkspace {
    /// The structure of the last solve (the patterns of M̃ and the rows)
    /// and, per KKT entry in assembly order, its stored entry: while the
    /// structure repeats the values are scattered into the kept pattern.
    key: Option<KktKey>,
    scratch: Vec<f64>,
    map: Vec<u32>,
    /// The system's lower triangle in the factor's (permuted) order.
    colptr: Vec<usize>,
    rowval: Vec<usize>,
    values: Vec<f64>,
    /// The fill-reducing ordering of the structure: unknown `perm[p]` is
    /// at `p` in the factored system, `perm_inv` the inverse.
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    symbolic: Option<faer::sparse::linalg::cholesky::SymbolicCholesky<usize>>,
    l_values: Vec<f64>,
    /// The factored system's right-hand side, the refinement's
    /// regularization per unknown, the solution and a residual (in the
    /// factor's order).
    b: Vec<f64>,
    reg: Vec<f64>,
    x: Vec<f64>,
    r: Vec<f64>,
    signs: Vec<i8>,
    mem: Option<faer::dyn_stack::MemBuffer>,
    /// δ of the kept factor.
    delta: f64,
    /// The active set of the kept factor and its unrefined solve `K₀⁻¹b`
    /// (factor order): the passes after a step's first re-solve against
    /// it, bordered (see [`Self::border`]).
    base: Vec<bool>,
    x0: Vec<f64>,
    /// The bordering columns solved so far against the kept factor: per
    /// inequality row its column's index in `borders` (`u32::MAX` none),
    /// the columns, and `K₀⁻¹c` per column (column-major, `dim` each).
    border_of: Vec<u32>,
    borders: Vec<Border>,
    z: Vec<f64>,
    /// The columns of the last solve (indices into `borders`), their
    /// unknowns, and the LU factors of their Schur complement (column-major)
    /// with its row permutation.
    used: Vec<usize>,
    y: Vec<f64>,
    s_lu: Vec<f64>,
    s_perm: (Vec<usize>, Vec<usize>),
    /// Scratch of the dense LU and its solves (for `MAX_BORDER` rows).
    s_mem: Option<faer::dyn_stack::MemBuffer>,
    /// GMRES's Krylov basis (`k_max + 1` vectors of the bordered
    /// system's size), its scratch vector, and its small dense arrays
    /// (Hessenberg matrix, rotations, right-hand side, coefficients).
    krylov: Vec<f64>,
    krylov_w: Vec<f64>,
    krylov_small: Vec<f64>,
    /// Per primal unknown, its node in the graph the fill-reducing
    /// ordering is computed on (see [`Self::group_unknowns`]); empty: each
    /// unknown is its own node.
    groups: Vec<u32>,
    /// Symbolic analyses done (diagnostics).
    pub analyses: usize,
    /// Numeric factorizations done.
    pub factorizations: usize,
}

impl Clone for KktWorkspace {
    /// A copy starts without a factorization (it is a cache).
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for KktWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KktWorkspace")
            .field("dimension", &self.colptr.len().saturating_sub(1))
            .field("analyses", &self.analyses)
            .field("factorizations", &self.factorizations)
            .finish()
    }
}

impl KktWorkspace {
    /// One KKT solve with the inequality rows flagged in `active` held as
    /// equalities (multipliers of the others zero), refined twice; `None`
    /// if the factorization fails or the result is not finite.
    pub fn solve(&mut self, qp: &Qp<'_>, active: &[bool], iterations: u32) -> Option<QpSolution> {
        self.factor(qp, active)?;
        self.refine(2);
        self.solution(qp, active, iterations)
    }

    /// Groups the primal unknowns (`groups[d]` for unknown `d`, in the
    /// order of q̇) for the next structure analyses: the unknowns of a
    /// group are ordered together, and the fill-reducing ordering is
    /// computed on the graph of the groups and the rows. The stepper puts
    /// a vertex's three ẋ unknowns in one group and an EOL vertex's two Ẋ
    /// in another ([`super::system::Dofs::groups`]), so M̃'s part of that
    /// graph has about a ninth of its entries (a 3 × 3 vertex block is one
    /// edge); on the non-conformal bench row AMD on every unknown was a
    /// third of the analysis, which the remesher makes necessary every
    /// step, and the analysis bounded the stretch it shares with the force
    /// assembly. Each group's first unknown (lowest index) must be coupled
    /// in M̃ to the first unknown of every group the others are coupled
    /// to (true of these groups: M̃'s vertex blocks are stored whole).
    /// Any grouping gives a valid factorization; the grouping changes its
    /// fill and, where pivots are regularized (a corner vertex, see
    /// [`Self::factor`]), how close the refined solve comes to the exact
    /// one (see `Dofs::groups`). A list of the wrong length, or with a
    /// group past its length, is ignored (each unknown its own node).
    /// Takes effect at the next analysis: a structure already analysed
    /// keeps its ordering.
    pub fn group_unknowns(&mut self, groups: impl IntoIterator<Item = u32>) {
        self.groups.clear();
        self.groups.extend(groups);
    }

    /// Analyses the KKT structure of `qp` (its ordering and symbolic
    /// factorization) unless it is the one analysed last; the values of
    /// `qp` are not read. The stepper calls it while the forces are
    /// assembled on the other thread (the structure is known from the mesh
    /// and the rows before the values are); [`Self::factor`] calls it too, so
    /// a structure that then differs is analysed again there. `None` if
    /// the analysis fails.
    pub fn analyse(&mut self, qp: &Qp<'_>) -> Option<()> {
        use faer::dyn_stack::{MemBuffer, StackReq};
        use faer::sparse::SymbolicSparseColMatRef;
        use faer::sparse::linalg::cholesky::{SymmetricOrdering, factorize_symbolic_cholesky};
        use faer::{Par, Side};
        let n = qp.p_upper.cols;
        let (me, mi) = (qp.a_eq.rows, qp.a_in.rows);
        let dim = n + me + mi;
        // The structure (and so the entries' coordinates, the ordering and
        // the kept pattern) depends only on the patterns of M̃ and the rows:
        // when they repeat (every pass of a step, and steps where the mesh
        // and the rows did not change) only the values are computed, in the
        // entries' order, and summed into the kept pattern.
        if self.symbolic.is_some()
            && self.key.as_ref().is_some_and(|k| k.matches(qp))
            && self.colptr.len() == dim + 1
        {
            return Some(());
        }
        self.symbolic = None;
        self.forget_base();
        self.key = Some(KktKey::of(qp));
        let key = self.key.as_ref()?;
        // A fill-reducing ordering (faer's AMD) of the new structure,
        // computed on the graph of the unknowns' groups and the rows; the
        // system is then assembled already permuted, so faer's numeric
        // factorization takes it as it is instead of permuting a copy on
        // every pass (a tenth of a pass on the FRICTION row).
        let (perm, perm_inv) = group_ordering(key, &self.groups, n, me, mi)?;
        let (lower, upper, map) = permuted_lower(dim, &key.coords(n, me), &perm_inv);
        // faer's analysis without an ordering reads the upper triangle
        // whatever side it is told (faer 0.24), so it gets the
        // transposed pattern; the numeric factorization takes the lower
        // triangle (a supernodal factor's own side: no copy; a simplicial
        // factor, chosen for small systems, copies it to the other side).
        let pattern = SymbolicSparseColMatRef::new_checked(dim, dim, &upper.0, None, &upper.1);
        let sym = factorize_symbolic_cholesky(
            pattern,
            Side::Upper,
            SymmetricOrdering::Identity,
            Default::default(),
        )
        .ok()?;
        let req = StackReq::any_of(&[
            sym.factorize_numeric_ldlt_scratch::<f64>(Par::Seq, Default::default()),
            sym.solve_in_place_scratch::<f64>(MAX_FRESH, Par::Seq),
        ]);
        self.mem = Some(MemBuffer::try_new(req).ok()?);
        if self.s_mem.is_none() {
            use faer::linalg::lu::partial_pivoting::{factor, solve};
            let req = StackReq::any_of(&[
                factor::lu_in_place_scratch::<usize, f64>(
                    MAX_BORDER,
                    MAX_BORDER,
                    Par::Seq,
                    Default::default(),
                ),
                solve::solve_in_place_scratch::<usize, f64>(MAX_BORDER, 1, Par::Seq),
            ]);
            self.s_mem = Some(MemBuffer::try_new(req).ok()?);
        }
        // Every entry is written by the numeric factorization.
        self.l_values.resize(sym.len_val(), 0.0);
        self.signs = perm.iter().map(|&i| if i < n { 1 } else { -1 }).collect();
        self.values = vec![0.0; lower.1.len()];
        self.colptr = lower.0;
        self.rowval = lower.1;
        self.map = map;
        self.perm = perm;
        self.perm_inv = perm_inv;
        self.symbolic = Some(sym);
        self.analyses += 1;
        Some(())
    }

    /// Assembles the KKT system of `active` (analysing its structure when
    /// it changed), factors it and solves it once, without refinement
    /// ([`Self::refine`] adds steps against the same factor).
    fn factor(&mut self, qp: &Qp<'_>, active: &[bool]) -> Option<()> {
        use faer::dyn_stack::MemStack;
        use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
        use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
        use faer::{Par, Side};
        let n = qp.p_upper.cols;
        let (me, mi) = (qp.a_eq.rows, qp.a_in.rows);
        let dim = n + me + mi;
        let scale = qp
            .p_upper
            .nzval
            .iter()
            .fold(0.0f64, |a, v| a.max(v.abs()))
            .max(1e-300);
        // ε on the (1,1) block and δ on the rows: δ·|y| is the residual an
        // active row keeps before the refinement takes it out.
        let eps = 1e-14 * scale;
        // δ = 1e-6·scale: with 1e-8 the wire scene at 32 × 32 and dt = 1e-3
        // s (small masses, a near-null Eulerian direction at EOL vertices on
        // a still-flat bend) left the two refinement steps short of the
        // stationarity bound on most steps, which then went to Clarabel; at
        // 1e-7 and 1e-6 none did on any bench row, the refined solution is
        // the same (gap 0 to Clarabel's polished one on the drape test).
        let delta = 1e-6 * scale;
        // The lower triangle, column by column: M̃ (from its upper triangle)
        // plus ρ AᵀA over the equality rows (an augmented Lagrangian: at a
        // point with A q̇ = b it changes nothing, and it makes the (1,1)
        // block definite where M̃ is not: an EOL vertex's generalized mass
        // is singular along ẋ = F Ẋ until its rows fix that direction, spec
        // §3.3.3), with ε on the diagonal; then the rows below it, then −D.
        // The inequality rows get no such term, so a row's state is only
        // its own entries, which the bordered passes rely on. An edge,
        // wire or flat vertex has Eulerian equality rows and stays covered;
        // a corner's direction is fixed by its three inequality rows only,
        // so its (1,1) pivot can be singular: the factorization's dynamic
        // regularization replaces it (δ) and the refinement takes that out,
        // as for the δ of every active row. The corner and turning-box
        // setups agree with Clarabel to 1e-6 every step with no fallback
        // (`tests/test_eol.py`), and no bench row's fallbacks changed.
        let rho = scale;
        // The kept structure, analysed again if this one differs; then only
        // the values are computed, in the entries' order, and summed into
        // the kept pattern. Until this factorization succeeds there is no
        // factor to border.
        self.forget_base();
        self.analyse(qp)?;
        let key = self.key.as_ref()?;
        let mut rhs_aug = vec![0.0; n];
        let mut values = std::mem::take(&mut self.scratch);
        values.clear();
        key.values(qp, active, eps, delta, rho, &mut values, &mut rhs_aug);
        Csc::scatter(&mut self.values, &self.map, values.iter().copied());
        self.scratch = values;
        let sym = self.symbolic.as_ref()?;
        let mem = self.mem.as_mut()?;
        let a = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(dim, dim, &self.colptr, None, &self.rowval),
            &self.values,
        );
        sym.factorize_numeric_ldlt::<f64>(
            &mut self.l_values,
            a,
            Side::Lower,
            LdltRegularization {
                dynamic_regularization_signs: Some(&self.signs),
                dynamic_regularization_delta: delta,
                dynamic_regularization_epsilon: 1e-13 * scale,
            },
            Par::Seq,
            MemStack::new(mem),
            Default::default(),
        )
        .ok()?;
        self.factorizations += 1;
        // The right-hand side [−q + ρAᵀb; b_eq; b_in (active rows)] and the
        // regularization the refinement takes out (ε, δ on active rows),
        // both in the factor's order.
        self.b.clear();
        self.b.resize(dim, 0.0);
        self.reg.clear();
        self.reg.resize(dim, 0.0);
        for (p, &i) in self.perm.iter().enumerate() {
            let (b, reg) = if i < n {
                (-qp.q[i] + rhs_aug[i], eps)
            } else if i < n + me {
                (qp.b_eq[i - n], -delta)
            } else if active[i - n - me] {
                (qp.b_in[i - n - me], -delta)
            } else {
                (0.0, 0.0)
            };
            self.b[p] = b;
            self.reg[p] = reg;
        }
        self.x.clone_from(&self.b);
        self.solve_in_place(true);
        self.delta = delta;
        self.base.clear();
        self.base.extend_from_slice(active);
        self.x0.clone_from(&self.x);
        // (The columns went with `forget_base` above.)
        self.border_of.resize(mi, u32::MAX);
        Some(())
    }

    /// The states of the inequality rows `rows` that solve their
    /// complementarity problem with every other row held as in `active`
    /// (see [`settle_contested`]): factors the system with `rows` off,
    /// refines its solve, solves the rows' columns against that factor and
    /// solves the dense sub-problem. Leaves the factor of that system (the
    /// next pass borders it). `None` if a factorization or solve fails.
    fn contested_states(&mut self, qp: &Qp<'_>, active: &[bool], rows: &[usize]) -> Option<Vec<bool>> {
        let mut off = active.to_vec();
        for &k in rows {
            off[k] = false;
        }
        self.factor(qp, &off)?;
        self.refine(6);
        let dim = self.x.len();
        let m = rows.len();
        let cols: Vec<Vec<(usize, f64)>> = rows
            .iter()
            .map(|&k| self.row_column(qp, k))
            .collect::<Option<_>>()?;
        // S column by column, `MAX_FRESH` columns of K₀⁻¹C at a time (the
        // solve's scratch is sized for that many; and a block of all of
        // them would be m × dim).
        let mut s = vec![0.0; m * m];
        let mut z = vec![0.0; MAX_FRESH.min(m) * dim];
        let (sym, mem) = (self.symbolic.as_ref()?, self.mem.as_mut()?);
        for start in (0..m).step_by(MAX_FRESH) {
            let end = (start + MAX_FRESH).min(m);
            let block = &mut z[..(end - start) * dim];
            solve_columns(
                sym,
                &self.l_values,
                mem,
                cols[start..end].iter().map(|c| c.as_slice()),
                block,
            );
            for (j, zj) in block.chunks_exact(dim).enumerate() {
                for (i, c) in cols.iter().enumerate() {
                    s[i + (start + j) * m] = column_dot(c, zj);
                }
            }
        }
        for j in 0..m {
            for i in 0..j {
                let v = 0.5 * (s[i + j * m] + s[j + i * m]);
                s[i + j * m] = v;
                s[j + i * m] = v;
            }
        }
        let g0: Vec<f64> = rows
            .iter()
            .zip(&cols)
            .map(|(&k, c)| column_dot(c, &self.x) - qp.b_in[k])
            .collect();
        let mu = nonnegative_qp(&s, &g0, m)?;
        Some(mu.iter().map(|&v| v > 0.0).collect())
    }

    /// Inequality row `k` of `qp` as a column of the factored system: its
    /// entries `(place in the factor's order, value)`.
    fn row_column(&self, qp: &Qp<'_>, k: usize) -> Option<Vec<(usize, f64)>> {
        let rows = &self.key.as_ref()?.in_rows;
        Some(
            rows.1[rows.0[k]..rows.0[k + 1]]
                .iter()
                .map(|&(ki, ci)| (self.perm_inv[ci as usize], qp.a_in.nzval[ki as usize]))
                .collect(),
        )
    }

    /// Drops the factor's active set and its bordering columns, so that
    /// [`Self::border`] declines until the next [`Self::factor`].
    fn forget_base(&mut self) {
        self.base.clear();
        self.x0.clear();
        self.border_of.clear();
        self.borders.clear();
        self.used.clear();
        self.y.clear();
    }

    /// Re-solves the last factored system for the active set `active`
    /// without factoring again: the rows whose state differs from the
    /// factor's (`base`) border it, one column and one unknown each, in
    /// the block form of Gill, Murray, Saunders and Wright's Schur
    /// complement update for active-set methods,
    /// `[[K₀, C], [Cᵀ, E]] [x; y] = [b; d]`, solved as
    /// `x = K₀⁻¹b − Z y`, `(E − CᵀZ) y = d − CᵀK₀⁻¹b` with `Z = K₀⁻¹C`.
    /// A row that turns on brings its row `a` as the column (in the first
    /// n unknowns; `E = −δ`, `d = b`: `y` is its `w`); one that turns off
    /// brings the unit column of its own unknown (`E = 0`, `d = 0`: that
    /// unknown is held at 0 and `y` takes up the row's residual). The
    /// inequality rows carry no augmented-Lagrangian term (see
    /// [`KktKey::values`]), so a row's state is exactly these entries.
    /// The new columns of a pass are solved together with the kept factor
    /// and kept for the later passes of the step (see [`MAX_FRESH`] for
    /// what they cost); on the FRICTION row the first pass changes 20–45
    /// of ~800 active rows and the later ones a few, so a step takes
    /// about one factorization instead of three or four. The unrefined
    /// answers read the same signs as a fresh factorization's (all but one
    /// of 269 bordered passes of that row, checked once).
    /// `None` (the caller factors) when a pass needs more than
    /// [`MAX_FRESH`] new columns, more than [`MAX_BORDER`] rows differ
    /// (or twice as many columns are kept), or the result is not finite.
    fn border(&mut self, qp: &Qp<'_>, active: &[bool]) -> Option<()> {
        let n = qp.p_upper.cols;
        let me = qp.a_eq.rows;
        let dim = self.x0.len();
        if self.base.len() != active.len() || dim == 0 {
            return None;
        }
        self.used.clear();
        let first = self.borders.len();
        for (k, (&on, &was)) in active.iter().zip(&self.base).enumerate() {
            if on == was {
                continue;
            }
            if self.used.len() >= MAX_BORDER {
                return None;
            }
            if self.border_of[k] == u32::MAX {
                if self.borders.len() - first >= MAX_FRESH || self.borders.len() >= 2 * MAX_BORDER {
                    return None;
                }
                let entries = if was {
                    vec![(self.perm_inv[n + me + k], 1.0)]
                } else {
                    self.row_column(qp, k)?
                };
                let (d, e) = if was {
                    (0.0, 0.0)
                } else {
                    (qp.b_in[k], -self.delta)
                };
                self.border_of[k] = self.borders.len() as u32;
                self.borders.push(Border {
                    row: k,
                    add: !was,
                    entries,
                    d,
                    e,
                });
            }
            self.used.push(self.border_of[k] as usize);
        }
        // The new columns' K₀⁻¹c, in one solve.
        let fresh = self.borders.len() - first;
        if fresh > 0 {
            self.z.resize(self.borders.len() * dim, 0.0);
            let (sym, mem) = (self.symbolic.as_ref()?, self.mem.as_mut()?);
            solve_columns(
                sym,
                &self.l_values,
                mem,
                self.borders[first..].iter().map(|c| c.entries.as_slice()),
                &mut self.z[first * dim..],
            );
        }
        // The Schur complement S = E − CᵀZ and its right-hand side.
        let m = self.used.len();
        self.s_lu.clear();
        self.s_lu.resize(m * m, 0.0);
        self.y.clear();
        for (j, &cj) in self.used.iter().enumerate() {
            let zj = &self.z[cj * dim..(cj + 1) * dim];
            for (i, &ci) in self.used.iter().enumerate() {
                let c = &self.borders[ci];
                let dot = c.dot(zj);
                self.s_lu[i + j * m] = if i == j { c.e - dot } else { -dot };
            }
            let c = &self.borders[cj];
            self.y.push(c.d - c.dot(&self.x0));
        }
        self.factor_schur()?;
        let mut y = std::mem::take(&mut self.y);
        self.solve_schur(&mut y);
        self.x.clone_from(&self.x0);
        for (&c, &yj) in self.used.iter().zip(&y) {
            for (x, z) in self.x.iter_mut().zip(&self.z[c * dim..(c + 1) * dim]) {
                *x -= z * yj;
            }
        }
        let finite = y.iter().chain(&self.x).all(|v| v.is_finite());
        self.y = y;
        finite.then_some(())
    }

    /// LU-factors the Schur complement in `s_lu` in place (faer's dense
    /// partial-pivoting LU, sequential so a run does not depend on the
    /// thread count).
    fn factor_schur(&mut self) -> Option<()> {
        use faer::dyn_stack::MemStack;
        use faer::linalg::lu::partial_pivoting::factor::lu_in_place;
        use faer::{MatMut, Par};
        let m = self.used.len();
        if m == 0 {
            return Some(());
        }
        self.s_perm.0.resize(m, 0);
        self.s_perm.1.resize(m, 0);
        lu_in_place(
            MatMut::from_column_major_slice_mut(&mut self.s_lu, m, m),
            &mut self.s_perm.0,
            &mut self.s_perm.1,
            Par::Seq,
            MemStack::new(self.s_mem.as_mut()?),
            Default::default(),
        );
        Some(())
    }

    /// Solves `S y = rhs` in place with the factors of [`Self::factor_schur`].
    fn solve_schur(&mut self, rhs: &mut [f64]) {
        use faer::dyn_stack::MemStack;
        use faer::linalg::lu::partial_pivoting::solve::solve_in_place;
        use faer::perm::PermRef;
        use faer::{MatMut, MatRef, Par};
        let m = self.used.len();
        if m == 0 {
            return;
        }
        let Some(mem) = self.s_mem.as_mut() else {
            rhs.fill(f64::NAN);
            return;
        };
        let lu = MatRef::from_column_major_slice(&self.s_lu, m, m);
        solve_in_place(
            lu,
            lu,
            PermRef::new_checked(&self.s_perm.0, &self.s_perm.1, m),
            MatMut::from_column_major_slice_mut(rhs, m, 1),
            Par::Seq,
            MemStack::new(mem),
        );
    }

    /// Solves with the kept factor in place: `self.x` if `on_x`, else `self.r`.
    fn solve_in_place(&mut self, on_x: bool) {
        use faer::dyn_stack::MemStack;
        use faer::sparse::linalg::cholesky::LdltRef;
        use faer::{Conj, MatMut, Par};
        let (Some(sym), Some(mem)) = (self.symbolic.as_ref(), self.mem.as_mut()) else {
            return;
        };
        let v = if on_x { &mut self.x } else { &mut self.r };
        let dim = v.len();
        LdltRef::new(sym, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(v, dim, 1),
            Par::Seq,
            MemStack::new(mem),
        );
    }

    /// Up to `steps` of iterative refinement of the last solve against the
    /// system without ε and δ (the factor is of the regularized one):
    /// z += P r, P the regularized bordered solve, stopping once a
    /// correction is under `1e-10` of the solution (largest magnitudes;
    /// each step shrinks the error several hundredfold as a rule, so what
    /// is left is near rounding); two usually take the stationarity
    /// residual from ~1e-6 to rounding with a fresh factor. Along a
    /// direction where active rows are nearly dependent a step shrinks
    /// the error only by δ/(δ + σ), σ the Schur complement's small
    /// eigenvalue there (2% a step on a coarse sheet dropped on a tilted
    /// box): [`Self::gmres`] takes over there.
    fn refine(&mut self, steps: usize) {
        let dim = self.x.len();
        let len = dim + self.used.len();
        if len == 0 {
            return;
        }
        let mut w = std::mem::take(&mut self.krylov_w);
        w.resize(len, 0.0);
        for _ in 0..steps {
            self.residual_into(&mut w);
            self.precondition(&mut w);
            let (mut dx, mut xs) = (0.0f64, 0.0f64);
            for (x, d) in self.x.iter_mut().zip(&w[..dim]) {
                *x += d;
                dx = dx.max(d.abs());
                xs = xs.max(x.abs());
            }
            for (y, d) in self.y.iter_mut().zip(&w[dim..]) {
                *y += d;
            }
            if dx <= 1e-10 * xs {
                break;
            }
        }
        self.krylov_w = w;
    }

    /// Restarted GMRES on the last solve's bordered system without ε and
    /// δ, left-preconditioned by the regularized solve P, from the current
    /// solution: up to `k_max` iterations a cycle (modified Gram–Schmidt,
    /// Givens rotations) and [`GMRES_CYCLES`] cycles, each begun with the
    /// true residual, until the preconditioned residual P r (2-norm over
    /// all unknowns, the next plain refinement's correction) is under
    /// `1e-10` of the largest unknown, multipliers included (`refine`
    /// measures its corrections in the largest magnitude instead). Its
    /// first search direction is the plain refinement's correction, with
    /// the step that minimizes the residual, and it deals with a few slow
    /// directions in a few iterations: on the coarse sheet
    /// above, where six plain steps left the equality residual at 1e-7 (the
    /// step went to Clarabel), it ended in 1-8. Written here because it
    /// runs on the workspace's bordered factor; its vectors are kept in
    /// the workspace.
    fn gmres(&mut self, k_max: usize) {
        let dim = self.x.len();
        let m = self.used.len();
        let len = dim + m;
        let k_max = k_max.max(1);
        if len == 0 {
            return;
        }
        let mut basis = std::mem::take(&mut self.krylov);
        basis.resize((k_max + 1) * len, 0.0);
        let mut w = std::mem::take(&mut self.krylov_w);
        w.resize(len, 0.0);
        let mut small = std::mem::take(&mut self.krylov_small);
        small.clear();
        small.resize((k_max + 1) * k_max + 4 * k_max + 1, 0.0);
        let (h, rest) = small.split_at_mut((k_max + 1) * k_max);
        let (cs, rest) = rest.split_at_mut(k_max);
        let (sn, rest) = rest.split_at_mut(k_max);
        let (g, c) = rest.split_at_mut(k_max + 1);
        for _ in 0..GMRES_CYCLES {
            // w = P (b̂ − K̂ z): the plain refinement's correction.
            self.residual_into(&mut w);
            self.precondition(&mut w);
            let beta = norm(&w);
            let big = self.x.iter().chain(&self.y).fold(0.0f64, |a, v| a.max(v.abs()));
            let tol = 1e-10 * big;
            if beta <= tol || !beta.is_finite() {
                // Converged, or not finite (the caller's checks see that).
                break;
            }
            for (v, wi) in basis[..len].iter_mut().zip(&w) {
                *v = wi / beta;
            }
            g.fill(0.0);
            g[0] = beta;
            let mut used_k = 0;
            for j in 0..k_max {
                // w = P K̂ v_j, orthogonalized against v_0..v_j.
                let (head, tail) = basis.split_at_mut((j + 1) * len);
                self.apply_into(&head[j * len..], &mut w);
                self.precondition(&mut w);
                for i in 0..=j {
                    let vi = &head[i * len..(i + 1) * len];
                    let hij = dot(&w, vi);
                    h[i + j * (k_max + 1)] = hij;
                    for (wk, vk) in w.iter_mut().zip(vi) {
                        *wk -= hij * vk;
                    }
                }
                let hn = norm(&w);
                h[j + 1 + j * (k_max + 1)] = hn;
                if hn > 0.0 {
                    for (v, wi) in tail[..len].iter_mut().zip(&w) {
                        *v = wi / hn;
                    }
                }
                // The earlier rotations on the new column, then its own.
                let col = &mut h[j * (k_max + 1)..(j + 1) * (k_max + 1)];
                for i in 0..j {
                    let t = cs[i] * col[i] + sn[i] * col[i + 1];
                    col[i + 1] = -sn[i] * col[i] + cs[i] * col[i + 1];
                    col[i] = t;
                }
                let r = col[j].hypot(col[j + 1]);
                (cs[j], sn[j]) = if r > 0.0 {
                    (col[j] / r, col[j + 1] / r)
                } else {
                    (1.0, 0.0)
                };
                col[j] = r;
                col[j + 1] = 0.0;
                g[j + 1] = -sn[j] * g[j];
                g[j] *= cs[j];
                used_k = j + 1;
                // Converged by GMRES's own residual estimate: the next
                // cycle's first residual checks it (near a corner vertex the
                // estimate read converged while the answer was still 1e-4 of
                // the largest velocity from Clarabel's).
                if g[j + 1].abs() <= tol || !g[j + 1].is_finite() || hn == 0.0 {
                    break;
                }
            }
            // z += V c with H c = g (upper triangular, `used_k` square).
            for i in (0..used_k).rev() {
                let mut t = g[i];
                for l in i + 1..used_k {
                    t -= h[i + l * (k_max + 1)] * c[l];
                }
                let d = h[i + i * (k_max + 1)];
                c[i] = if d != 0.0 { t / d } else { 0.0 };
            }
            if c[..used_k].iter().any(|v| !v.is_finite()) {
                // Leave the answer as it was (the caller's checks see it).
                break;
            }
            for (i, &ci) in c[..used_k].iter().enumerate() {
                let v = &basis[i * len..(i + 1) * len];
                for (x, vi) in self.x.iter_mut().zip(&v[..dim]) {
                    *x += ci * vi;
                }
                for (y, vi) in self.y.iter_mut().zip(&v[dim..]) {
                    *y += ci * vi;
                }
            }
        }
        self.krylov = basis;
        self.krylov_w = w;
        self.krylov_small = small;
    }

    /// `out = b̂ − K̂ (x, y)`: the residual of the last solve in the system
    /// without ε and δ, the bordering rows last (their `E` is 0 there: a
    /// row that turns on holds exactly).
    fn residual_into(&self, out: &mut [f64]) {
        let dim = self.x.len();
        let (r, ry) = out.split_at_mut(dim);
        r.copy_from_slice(&self.b);
        for (rc, &c) in ry.iter_mut().zip(&self.used) {
            *rc = self.borders[c].d;
        }
        self.sub_apply(&self.x, &self.y, r, ry);
    }

    /// `out = K̂ v` (the system without ε and δ, `v` = (x part, y part)).
    fn apply_into(&self, v: &[f64], out: &mut [f64]) {
        let dim = self.x.len();
        let (r, ry) = out.split_at_mut(dim);
        r.fill(0.0);
        ry.fill(0.0);
        self.sub_apply(&v[..dim], &v[dim..], r, ry);
        for o in out.iter_mut() {
            *o = -*o;
        }
    }

    /// `(r, ry) −= K̂ (x, y)`.
    fn sub_apply(&self, x: &[f64], y: &[f64], r: &mut [f64], ry: &mut [f64]) {
        for c in 0..x.len() {
            for k in self.colptr[c]..self.colptr[c + 1] {
                let (row, v) = (self.rowval[k], self.values[k]);
                r[row] -= v * x[c];
                if row != c {
                    r[c] -= v * x[row];
                }
            }
            r[c] += self.reg[c] * x[c];
        }
        for ((&c, &yj), rc) in self.used.iter().zip(y).zip(ry.iter_mut()) {
            let col = &self.borders[c];
            for &(i, v) in &col.entries {
                r[i] -= v * yj;
                *rc -= v * x[i];
            }
        }
    }

    /// `v ← P v`, P the inverse of the regularized bordered system: the
    /// kept factor's solve, then the Schur complement's for the bordering
    /// unknowns (see [`Self::border`]).
    fn precondition(&mut self, v: &mut [f64]) {
        let dim = self.x.len();
        self.r.clear();
        self.r.extend_from_slice(&v[..dim]);
        self.solve_in_place(false);
        let (vx, vy) = v.split_at_mut(dim);
        vx.copy_from_slice(&self.r);
        if self.used.is_empty() {
            return;
        }
        for (rc, &c) in vy.iter_mut().zip(&self.used) {
            *rc -= self.borders[c].dot(vx);
        }
        self.solve_schur(vy);
        for (&c, &dy) in self.used.iter().zip(vy.iter()) {
            for (x, z) in vx.iter_mut().zip(&self.z[c * dim..(c + 1) * dim]) {
                *x -= z * dy;
            }
        }
    }

    /// The last solve, in the QP's unknowns; `None` if it is not finite.
    fn solution(&self, qp: &Qp<'_>, active: &[bool], iterations: u32) -> Option<QpSolution> {
        let n = qp.p_upper.cols;
        let me = qp.a_eq.rows;
        let at = |i: usize| self.x[self.perm_inv[i]];
        let v: Vec<f64> = (0..n).map(at).collect();
        if v.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let lambda: Vec<f64> = (n..n + me).map(|i| -at(i)).collect();
        let mut mu: Vec<f64> = active
            .iter()
            .enumerate()
            .map(|(k, &on)| {
                if on && self.base.get(k) == Some(&true) {
                    -at(n + me + k)
                } else {
                    0.0
                }
            })
            .collect();
        // A row turned on by a bordering column: its multiplier is that
        // column's unknown.
        for (&c, &yj) in self.used.iter().zip(&self.y) {
            let col = &self.borders[c];
            if col.add && active.get(col.row) == Some(&true) {
                mu[col.row] = -yj;
            }
        }
        Some(QpSolution {
            v,
            lambda,
            mu,
            iterations,
        })
    }
}

/// The cycles of [`KktWorkspace::gmres`] (each begun with the true
/// residual).
const GMRES_CYCLES: usize = 4;

/// The iterations of one cycle of [`KktWorkspace::gmres`].
const GMRES_ITERATIONS: usize = 10;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// The most new bordering columns one pass of [`KktWorkspace::border`]
/// solves; past that the pass factors again. Measured on the FRICTION row
/// (5,700 unknowns): a factorization and its solve take 5.8 ms, a solve
/// of k columns together about 0.75 + 0.13·k ms, even at k ≈ 39.
const MAX_FRESH: usize = 32;

/// The most rows whose state may differ from the kept factor's in a
/// bordered solve (the Schur complement is dense, its size this), and
/// half the most columns kept per factor (each `dim` values).
const MAX_BORDER: usize = 96;

/// A bordering column of [`KktWorkspace::border`]: the inequality row it
/// stands for, whether it turns that row on, its entries (factor order),
/// its right-hand side `d` and diagonal `E`.
#[derive(Clone, Debug)]
struct Border {
    row: usize,
    add: bool,
    entries: Vec<(usize, f64)>,
    d: f64,
    e: f64,
}

impl Border {
    /// `cᵀx` (`x` in the factor's order).
    fn dot(&self, x: &[f64]) -> f64 {
        column_dot(&self.entries, x)
    }
}

/// `block ← K⁻¹C` for the factor `(sym, l_values)` and the sparse columns
/// `cols` (entries `(place, value)`, factor order), solved together;
/// `block` holds one column per entry of `cols`, column-major, and at most
/// [`MAX_FRESH`] columns (the solve's scratch in `mem` is sized for that).
fn solve_columns<'c>(
    sym: &faer::sparse::linalg::cholesky::SymbolicCholesky<usize>,
    l_values: &[f64],
    mem: &mut faer::dyn_stack::MemBuffer,
    cols: impl ExactSizeIterator<Item = &'c [(usize, f64)]>,
    block: &mut [f64],
) {
    use faer::dyn_stack::MemStack;
    use faer::sparse::linalg::cholesky::LdltRef;
    use faer::{Conj, MatMut, Par};
    let k = cols.len();
    if k == 0 {
        return;
    }
    let dim = block.len() / k;
    block.fill(0.0);
    for (j, c) in cols.enumerate() {
        for &(i, v) in c {
            block[j * dim + i] = v;
        }
    }
    LdltRef::new(sym, l_values).solve_in_place_with_conj(
        Conj::No,
        MatMut::from_column_major_slice_mut(block, dim, k),
        Par::Seq,
        MemStack::new(mem),
    );
}

/// `cᵀx` for a sparse column `c` (entries `(place, value)`).
fn column_dot(c: &[(usize, f64)], x: &[f64]) -> f64 {
    c.iter().map(|&(i, v)| v * x[i]).sum()
}

/// The lower triangle of `P K Pᵀ` (`perm_inv[i]` the new place of `i`)
/// from the coordinates of `K`'s lower-triangle entries (duplicates
/// allowed): its pattern and its transpose's (column pointers, sorted
/// rows), and per coordinate its entry's index in the new pattern.
#[allow(clippy::type_complexity)]
fn permuted_lower(
    dim: usize,
    entries: &[(u32, u32)],
    perm_inv: &[usize],
) -> ((Vec<usize>, Vec<usize>), (Vec<usize>, Vec<usize>), Vec<u32>) {
    let coords: Vec<(u32, u32)> = entries
        .iter()
        .map(|&(r, c)| {
            let (r, c) = (perm_inv[r as usize] as u32, perm_inv[c as usize] as u32);
            (r.max(c), r.min(c))
        })
        .collect();
    let (lower, map) = Csc::pattern(dim, dim, &coords);
    let (colptr, rowval) = (lower.colptr, lower.rowval);
    // The transpose: column c of the upper triangle lists the rows of row
    // c of the lower one, in increasing order as the columns are walked.
    let mut uptr = vec![0usize; dim + 1];
    for &r in &rowval {
        uptr[r + 1] += 1;
    }
    for c in 0..dim {
        uptr[c + 1] += uptr[c];
    }
    let mut next = uptr.clone();
    let mut urow = vec![0usize; rowval.len()];
    for c in 0..dim {
        for &r in &rowval[colptr[c]..colptr[c + 1]] {
            urow[next[r]] = c;
            next[r] += 1;
        }
    }
    ((colptr, rowval), (uptr, urow), map)
}

/// A fill-reducing ordering of the KKT structure `key` (faer's AMD), as
/// `(perm, perm_inv)` over its `n + me + mi` unknowns, computed on the
/// graph whose nodes are the groups of the primal unknowns (`groups`,
/// see [`KktWorkspace::group_unknowns`]; each unknown alone when it does
/// not fit) and the rows; a group's unknowns are placed together in
/// index order. The symbolic analysis reads the permuted structure
/// itself, so any ordering gives a valid factorization (see
/// [`KktWorkspace::group_unknowns`] for what a grouping changes). AMD
/// weighs a group of three unknowns, one of two and a row alike; the
/// factors of the bench rows hold from 1 % fewer to 3 % more entries than
/// with AMD on every unknown. `None` if AMD fails.
fn group_ordering(
    key: &KktKey,
    groups: &[u32],
    n: usize,
    me: usize,
    mi: usize,
) -> Option<(Vec<usize>, Vec<usize>)> {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::sparse::SymbolicSparseColMatRef;
    let grouped = groups.len() == n && groups.iter().all(|&g| (g as usize) < n);
    let ng = if grouped {
        groups.iter().map(|&g| g as usize + 1).max().unwrap_or(0)
    } else {
        n
    };
    let node = |d: usize| {
        if d >= n {
            ng + (d - n)
        } else if grouped {
            groups[d] as usize
        } else {
            d
        }
    };
    // A group's members in index order (a counting sort), and its first
    // one, the leader whose M̃ couplings stand for the group's.
    let mut start = vec![0usize; ng + 1];
    for d in 0..n {
        start[node(d) + 1] += 1;
    }
    for g in 0..ng {
        start[g + 1] += start[g];
    }
    let mut next = start.clone();
    let mut members = vec![0usize; n];
    let mut leader = vec![false; n];
    for (d, first) in leader.iter_mut().enumerate() {
        let g = node(d);
        *first = next[g] == start[g];
        members[next[g]] = d;
        next[g] += 1;
    }
    // The edges between nodes (lower triangle, duplicates allowed): M̃
    // between leaders, ρAᵀA between the groups an equality row touches,
    // and each row to the groups of its entries.
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut edge = |a: usize, b: usize| {
        if a != b {
            edges.push((a.max(b) as u32, a.min(b) as u32));
        }
    };
    let (colptr, rowval) = &key.p;
    for c in 0..n.min(colptr.len().saturating_sub(1)) {
        if leader[c] {
            for &r in &rowval[colptr[c]..colptr[c + 1]] {
                if r < n && leader[r] {
                    edge(node(r), node(c));
                }
            }
        }
    }
    let rows = &key.eq_rows;
    for k in 0..rows.0.len().saturating_sub(1) {
        let row = &rows.1[rows.0[k]..rows.0[k + 1]];
        for (a, &(_, ci)) in row.iter().enumerate() {
            for &(_, cj) in &row[a + 1..] {
                edge(node(ci as usize), node(cj as usize));
            }
        }
    }
    for (off, (_, colptr, rowval)) in [(n, &key.eq), (n + me, &key.ineq)] {
        for c in 0..colptr.len().saturating_sub(1) {
            for &r in &rowval[colptr[c]..colptr[c + 1]] {
                edge(node(off + r), node(c));
            }
        }
    }
    let nodes = ng + me + mi;
    let (graph, _) = Csc::pattern(nodes, nodes, &edges);
    let mut order = vec![0usize; nodes];
    let mut order_inv = vec![0usize; nodes];
    let mut amd_mem = MemBuffer::try_new(faer::sparse::linalg::amd::order_scratch::<usize>(
        nodes,
        graph.rowval.len(),
    ))
    .ok()?;
    faer::sparse::linalg::amd::order(
        &mut order,
        &mut order_inv,
        SymbolicSparseColMatRef::new_checked(nodes, nodes, &graph.colptr, None, &graph.rowval),
        Default::default(),
        MemStack::new(&mut amd_mem),
    )
    .ok()?;
    let dim = n + me + mi;
    let mut perm = Vec::with_capacity(dim);
    for &g in &order {
        if g < ng {
            perm.extend_from_slice(&members[start[g]..start[g + 1]]);
        } else {
            perm.push(n + (g - ng));
        }
    }
    let mut perm_inv = vec![0usize; dim];
    for (p, &i) in perm.iter().enumerate() {
        perm_inv[i] = p;
    }
    Some((perm, perm_inv))
}

/// The structure a KKT system is assembled on: the patterns of `M̃` (upper),
/// `A_eq` and `A_in`, and each row's entries (storage index and column, in
/// column order: the order an equality row's `AᵀA` block is written in; an
/// inequality row's entries make its bordering column).
struct KktKey {
    p: (Vec<usize>, Vec<usize>),
    eq: (usize, Vec<usize>, Vec<usize>),
    ineq: (usize, Vec<usize>, Vec<usize>),
    eq_rows: (Vec<usize>, Vec<(u32, u32)>),
    in_rows: (Vec<usize>, Vec<(u32, u32)>),
}

/// Per row of `a`, its entries `(storage index, column)` in column order,
/// as a CSR (row starts, entries).
fn row_entries(a: &Csc) -> (Vec<usize>, Vec<(u32, u32)>) {
    let mut start = vec![0usize; a.rows + 1];
    for &r in &a.rowval {
        start[r + 1] += 1;
    }
    for r in 0..a.rows {
        start[r + 1] += start[r];
    }
    let mut next = start.clone();
    let mut out = vec![(0u32, 0u32); a.rowval.len()];
    for c in 0..a.cols {
        for k in a.colptr[c]..a.colptr[c + 1] {
            let r = a.rowval[k];
            out[next[r]] = (k as u32, c as u32);
            next[r] += 1;
        }
    }
    (start, out)
}

impl KktKey {
    fn of(qp: &Qp<'_>) -> Self {
        Self {
            p: (qp.p_upper.colptr.clone(), qp.p_upper.rowval.clone()),
            eq: (qp.a_eq.rows, qp.a_eq.colptr.clone(), qp.a_eq.rowval.clone()),
            ineq: (qp.a_in.rows, qp.a_in.colptr.clone(), qp.a_in.rowval.clone()),
            eq_rows: row_entries(qp.a_eq),
            in_rows: row_entries(qp.a_in),
        }
    }

    fn matches(&self, qp: &Qp<'_>) -> bool {
        self.p.0 == qp.p_upper.colptr
            && self.p.1 == qp.p_upper.rowval
            && self.eq.0 == qp.a_eq.rows
            && self.eq.1 == qp.a_eq.colptr
            && self.eq.2 == qp.a_eq.rowval
            && self.ineq.0 == qp.a_in.rows
            && self.ineq.1 == qp.a_in.colptr
            && self.ineq.2 == qp.a_in.rowval
    }

    /// The lower triangle's entries, in assembly order: M̃ (from its upper
    /// triangle, transposed), ε on the first n diagonal entries, ρ AᵀA over
    /// the equality rows, the equality rows, the inequality rows (0 when
    /// inactive), then −δ for the equality rows and −δ or −1 for the
    /// inequality rows. `rhs_aug` (n) gets ρ Aᵀb over the equality rows.
    #[allow(clippy::too_many_arguments)]
    fn values(
        &self,
        qp: &Qp<'_>,
        active: &[bool],
        eps: f64,
        delta: f64,
        rho: f64,
        out: &mut Vec<f64>,
        rhs_aug: &mut [f64],
    ) {
        let n = qp.p_upper.cols;
        out.extend_from_slice(&qp.p_upper.nzval);
        out.extend(std::iter::repeat_n(eps, n));
        let (a, rows) = (qp.a_eq, &self.eq_rows);
        // b has one entry per row of a (the rows are built with their bounds).
        for (k, &bk) in qp.b_eq.iter().enumerate().take(a.rows) {
            let row = &rows.1[rows.0[k]..rows.0[k + 1]];
            for &(ki, ci) in row {
                let vi = a.nzval[ki as usize];
                rhs_aug[ci as usize] += rho * vi * bk;
                for &(kj, cj) in row {
                    if cj >= ci {
                        out.push(rho * vi * a.nzval[kj as usize]);
                    }
                }
            }
        }
        out.extend_from_slice(&qp.a_eq.nzval);
        out.extend(
            qp.a_in
                .rowval
                .iter()
                .zip(&qp.a_in.nzval)
                .map(|(&r, &v)| if active[r] { v } else { 0.0 }),
        );
        out.extend(std::iter::repeat_n(-delta, qp.a_eq.rows));
        out.extend(active.iter().map(|&on| if on { -delta } else { -1.0 }));
    }

    /// The coordinates of [`Self::values`]'s entries, in its order.
    fn coords(&self, n: usize, me: usize) -> Vec<(u32, u32)> {
        let mut t = Vec::new();
        let (colptr, rowval) = &self.p;
        for c in 0..colptr.len().saturating_sub(1) {
            for &r in &rowval[colptr[c]..colptr[c + 1]] {
                t.push((c as u32, r as u32));
            }
        }
        t.extend((0..n as u32).map(|i| (i, i)));
        let rows = &self.eq_rows;
        for k in 0..rows.0.len().saturating_sub(1) {
            let row = &rows.1[rows.0[k]..rows.0[k + 1]];
            for &(_, ci) in row {
                for &(_, cj) in row {
                    if cj >= ci {
                        t.push((cj, ci));
                    }
                }
            }
        }
        for (off, (_, colptr, rowval)) in [(n, &self.eq), (n + me, &self.ineq)] {
            for c in 0..colptr.len().saturating_sub(1) {
                for &r in &rowval[colptr[c]..colptr[c + 1]] {
                    t.push(((off + r) as u32, c as u32));
                }
            }
        }
        let mi = self.ineq.0;
        t.extend((0..(me + mi) as u32).map(|k| ((n as u32) + k, (n as u32) + k)));
        t
    }
}

#[cfg(test)]
mod active_set_tests {
    use super::*;

    /// `got` and `want` agree in q̇, λ and μ to `tol` of their largest
    /// magnitude (at least 1).
    fn assert_same_solution(got: &QpSolution, want: &QpSolution, tol: f64) {
        let all =
            |s: &QpSolution| -> Vec<f64> { s.v.iter().chain(&s.lambda).chain(&s.mu).copied().collect() };
        let (g, w) = (all(got), all(want));
        assert_eq!(g.len(), w.len());
        let scale = w.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        for (x, y) in g.iter().zip(&w) {
            assert!((x - y).abs() <= tol * scale, "{x} vs {y}");
        }
    }

    /// `nonnegative_qp` solves the complementarity problem `μ ≥ 0,
    /// g + Sμ ≥ 0, μᵀ(g + Sμ) = 0` to rounding: for positive definite `S`
    /// (rows of a coupled sheet: not an M-matrix, the case the block update
    /// cycles on) and for singular ones (`S = BBᵀ` of rank m/2: dependent
    /// rows, `g` made from a known answer so that there is one), 40 seeded
    /// problems each, the definite ones with some bounds active and some
    /// not at the answer.
    #[test]
    fn the_nonnegative_qp_solves_its_complementarity_problem() {
        use rand::rngs::StdRng;
        use rand::{RngExt, SeedableRng};
        let mut rng = StdRng::seed_from_u64(16);
        for case in 0..80 {
            let m = 6 + case % 25;
            let rank = if case % 2 == 0 { m } else { m / 2 };
            let b: Vec<f64> = (0..m * rank).map(|_| rng.random_range(-1.0..1.0)).collect();
            let mut s = vec![0.0; m * m];
            for i in 0..m {
                for j in 0..m {
                    s[i + j * m] = (0..rank).map(|k| b[i + k * m] * b[j + k * m]).sum::<f64>()
                        + if i == j && rank == m { 0.1 } else { 0.0 };
                }
            }
            // A singular S: g from a known answer (half the rows on), so
            // that the problem has one (dependent rows of a feasible QP).
            let g: Vec<f64> = if rank == m {
                (0..m).map(|_| rng.random_range(-1.0..1.0)).collect()
            } else {
                let on: Vec<f64> = (0..m)
                    .map(|i| {
                        if i % 2 == 0 {
                            rng.random_range(0.1..1.0)
                        } else {
                            0.0
                        }
                    })
                    .collect();
                (0..m)
                    .map(|i| {
                        let slack = if i % 2 == 0 {
                            0.0
                        } else {
                            rng.random_range(0.0..1.0)
                        };
                        slack - (0..m).map(|j| s[i + j * m] * on[j]).sum::<f64>()
                    })
                    .collect()
            };
            let mu = nonnegative_qp(&s, &g, m).unwrap_or_else(|| panic!("case {case} did not end"));
            let slack: Vec<f64> = (0..m)
                .map(|i| g[i] + (0..m).map(|j| s[i + j * m] * mu[j]).sum::<f64>())
                .collect();
            let scale = 1.0 + mu.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            for i in 0..m {
                assert!(mu[i] >= 0.0, "case {case}: μ{i} = {}", mu[i]);
                assert!(slack[i] >= -1e-9 * scale, "case {case}: slack {i} = {}", slack[i]);
                assert!((mu[i] * slack[i]).abs() <= 1e-9 * scale, "case {case}: row {i}");
            }
            if rank == m {
                let on = mu.iter().filter(|&&v| v > 0.0).count();
                assert!(on > 0 && on < m, "case {case}: {on} of {m} rows on");
            }
        }
    }

    /// A 3-D QP (three independent rows `A q̇ ≥ b`) on which the block
    /// update from the empty set runs {0} → {0, 1, 2} → {1} → {0} (found by
    /// a search over small random QPs: the rows' Schur complement is not
    /// an M-matrix). `solve_active_set` still solves it within its passes
    /// (at the repeat the contested rows' own complementarity problem sets
    /// them, `settle_contested`; before that oracle the single-row rule,
    /// and before the rule `None` and a Clarabel step) and agrees with
    /// Clarabel to 1e-8 at a KKT-valid point.
    #[test]
    fn the_active_set_leaves_a_cycle_of_the_block_update() {
        let pm = [[1.8, 0.9, -0.2], [0.9, 3.1, 3.1], [-0.2, 3.1, 5.9]];
        let mut t: Vec<Triplet> = (0..3)
            .flat_map(|c| (0..=c).map(move |r| (r as u32, c as u32, pm[r][c])))
            .collect();
        let p = Csc::from_triplets(3, 3, &mut t);
        let q = [0.1, -0.3, 1.0];
        let a = [[-0.5, -1.9, 0.3], [-1.4, 0.0, -0.9], [-1.7, 1.7, -0.1]];
        let mut t: Vec<Triplet> = (0..3)
            .flat_map(|r| (0..3).map(move |c| (r as u32, c as u32, a[r][c])))
            .collect();
        let a_in = Csc::from_triplets(3, 3, &mut t);
        let b_in = [0.9, 0.7, -0.7];
        let a_eq = Csc::from_triplets(0, 3, &mut []);
        let qp = Qp {
            p_upper: &p,
            q: &q,
            a_eq: &a_eq,
            b_eq: &[],
            a_in: &a_in,
            b_in: &b_in,
        };
        // The block update alone (one pass at a time from the empty set)
        // comes back to a set it had.
        let mut ws = KktWorkspace::default();
        let mut active = vec![false; 3];
        let mut sets = vec![active.clone()];
        let mut repeats = false;
        for pass in 0..6 {
            let out = ws.solve(&qp, &active, pass + 1).unwrap();
            let g = qp.slack(&out.v);
            for k in 0..3 {
                if (active[k] && out.mu[k] < -1e-12) || (!active[k] && g[k] < -1e-12) {
                    active[k] = !active[k];
                }
            }
            repeats |= sets.contains(&active) && sets.last() != Some(&active);
            sets.push(active.clone());
        }
        assert!(repeats, "the block update did not cycle: {sets:?}");
        let fast = solve_active_set(&qp, vec![false; 3], 12, &mut ws, &mut 0)
            .expect("the active set gave up")
            .0;
        let reference = solve_clarabel(&qp, 1e-10).unwrap();
        assert!(kkt(&qp, &fast).ok());
        for (x, y) in fast.v.iter().zip(&reference.v) {
            assert!((x - y).abs() < 1e-8, "{:?} vs {:?}", fast.v, reference.v);
        }
        // The oracle alone: from each set the block update went through,
        // with every row contested, or with one row held in its state at
        // the answer and the other two contested, it gives the answer's
        // set, and the solve on that set is the answer.
        let answer: Vec<bool> = fast.mu.iter().map(|&m| m > 0.0).collect();
        for start in &sets {
            for held in [None, Some(0), Some(1), Some(2)] {
                let mut active = start.clone();
                let mut contested = vec![true; 3];
                if let Some(h) = held {
                    active[h] = answer[h];
                    contested[h] = false;
                }
                let before = active.clone();
                let changed = settle_contested(&qp, &mut ws, &mut active, &contested);
                assert_eq!(active, answer, "from {start:?}, row {held:?} held");
                assert_eq!(changed, Some(before != answer));
                let out = ws.solve(&qp, &active, 1).unwrap();
                assert!(kkt(&qp, &out).ok());
                assert_same_solution(&out, &fast, 1e-9);
            }
        }
        assert_eq!(
            settle_contested(&qp, &mut ws, &mut answer.clone(), &[false; 3]),
            None
        );
    }

    #[test]
    fn gmres_ends_a_refinement_that_nearly_dependent_rows_stall() {
        // min ½|v|² + qᵀv with two equality rows 1e-4 apart in direction,
        // consistent at v = (0.3, 0.2, ·): a plain refinement step shrinks
        // the error only by δ/(δ + σ) ≈ 0.99 along their difference.
        let mut t: Vec<Triplet> = (0..3).map(|c| (c, c, 1.0)).collect();
        let p = Csc::from_triplets(3, 3, &mut t);
        let q = [-1.0, -2.0, 0.5];
        let eta = 1e-4;
        let mut t: Vec<Triplet> = vec![(0, 0, 1.0), (1, 0, 1.0), (1, 1, eta)];
        let a_eq = Csc::from_triplets(2, 3, &mut t);
        let b_eq = [0.3, 0.3 + eta * 0.2];
        let a_in = Csc::from_triplets(0, 3, &mut []);
        let qp = Qp {
            p_upper: &p,
            q: &q,
            a_eq: &a_eq,
            b_eq: &b_eq,
            a_in: &a_in,
            b_in: &[],
        };
        let mut ws = KktWorkspace::default();
        ws.factor(&qp, &[]).unwrap();
        ws.refine(6);
        let stalled = kkt(&qp, &ws.solution(&qp, &[], 1).unwrap());
        assert!(!stalled.ok(), "the plain refinement did not stall: {stalled:?}");
        ws.gmres(GMRES_ITERATIONS);
        let sol = ws.solution(&qp, &[], 1).unwrap();
        let check = kkt(&qp, &sol);
        assert!(check.ok() && check.equality < 1e-12, "{check:?}");
        for (v, want) in sol.v.iter().zip([0.3, 0.2, -0.5]) {
            assert!((v - want).abs() < 1e-10, "{:?}", sol.v);
        }
        // The active-set path takes it there too (instead of Clarabel).
        let (out, check) = solve_active_set(&qp, vec![], 12, &mut KktWorkspace::default(), &mut 0).unwrap();
        assert_eq!(
            check,
            kkt(&qp, &out),
            "the returned residuals are not the solution's"
        );
        assert!(kkt(&qp, &out).ok());

        // The same near dependence through a bordered row: the second row
        // as an inequality (v₁ + ηv₂ ≥ 0.3 + 0.2η, active at the answer as
        // q pushes v₂ down), factored inactive and then turned on by
        // `border`, so the Schur complement part of the preconditioner and
        // the bordering unknown are in the iteration.
        let mut t: Vec<Triplet> = vec![(0, 0, 1.0)];
        let a_eq = Csc::from_triplets(1, 3, &mut t);
        let mut t: Vec<Triplet> = vec![(0, 0, 1.0), (0, 1, eta)];
        let a_in = Csc::from_triplets(1, 3, &mut t);
        let q = [-1.0, 2.0, 0.5];
        let qp = Qp {
            p_upper: &p,
            q: &q,
            a_eq: &a_eq,
            b_eq: &b_eq[..1],
            a_in: &a_in,
            b_in: &b_eq[1..],
        };
        let mut ws = KktWorkspace::default();
        ws.factor(&qp, &[false]).unwrap();
        ws.border(&qp, &[true]).unwrap();
        assert_eq!(ws.used.len(), 1);
        ws.refine(6);
        let stalled = kkt(&qp, &ws.solution(&qp, &[true], 1).unwrap());
        assert!(
            !stalled.ok(),
            "the bordered refinement did not stall: {stalled:?}"
        );
        ws.gmres(GMRES_ITERATIONS);
        let sol = ws.solution(&qp, &[true], 1).unwrap();
        let check = kkt(&qp, &sol);
        assert!(check.ok() && check.inequality < 1e-12, "{check:?}");
        assert!(sol.mu[0] > 0.0, "{:?}", sol.mu);
        for (v, want) in sol.v.iter().zip([0.3, 0.2, -0.5]) {
            assert!((v - want).abs() < 1e-10, "{:?}", sol.v);
        }
    }

    /// The bordered re-solve ([`KktWorkspace::border`]) against a factor
    /// of one active set gives, after the same two refinement steps, the
    /// solution of a fresh factorization of another set (rows turned on,
    /// rows turned off, both), to 1e-10 relative, on a random strictly
    /// convex QP with equality rows; with more than `MAX_FRESH` rows
    /// changed it declines (the passes then factor).
    #[test]
    fn the_bordered_solve_equals_a_fresh_factorization() {
        use crate::test_util::Rng;
        let mut r = Rng::new(41);
        let (n, me, mi) = (18, 3, 40);
        // P = BᵀB + I (upper triangle), dense rows.
        let bm: Vec<Vec<f64>> = (0..n).map(|_| (0..n).map(|_| r.sym()).collect()).collect();
        let mut t: Vec<Triplet> = Vec::new();
        for c in 0..n {
            for rr in 0..=c {
                let v: f64 =
                    (0..n).map(|k| bm[k][rr] * bm[k][c]).sum::<f64>() + if rr == c { 1.0 } else { 0.0 };
                t.push((rr as u32, c as u32, v));
            }
        }
        let p = Csc::from_triplets(n, n, &mut t);
        let q: Vec<f64> = (0..n).map(|_| r.sym()).collect();
        let mut rows = |m: usize| {
            let mut t: Vec<Triplet> = Vec::new();
            for k in 0..m {
                // Sparse rows of four entries, like the contact rows.
                for _ in 0..4 {
                    let c = (r.next_u64() % n as u64) as u32;
                    t.push((k as u32, c, r.sym()));
                }
            }
            let a = Csc::from_triplets(m, n, &mut t);
            let b: Vec<f64> = (0..m).map(|_| r.sym()).collect();
            (a, b)
        };
        let (a_eq, b_eq) = rows(me);
        let (a_in, b_in) = rows(mi);
        let (a_in2, b_in2) = rows(mi);
        let qp = Qp {
            p_upper: &p,
            q: &q,
            a_eq: &a_eq,
            b_eq: &b_eq,
            a_in: &a_in,
            b_in: &b_in,
        };
        // Fewer active rows than unknowns keeps the rows independent.
        let set = |r: &mut Rng| -> Vec<bool> { (0..mi).map(|_| r.unit_f64() < 0.2).collect() };
        let base = set(&mut r);
        let mut bordered = KktWorkspace::default();
        bordered.factor(&qp, &base).unwrap();
        let mut fresh = KktWorkspace::default();
        let mut tried = 0;
        for _ in 0..12 {
            // Change 1..8 rows of the base at random.
            let mut active = base.clone();
            for _ in 0..=(r.next_u64() % 8) {
                let k = (r.next_u64() % mi as u64) as usize;
                active[k] = !active[k];
            }
            if active.iter().filter(|&&on| on).count() + me >= n {
                continue;
            }
            tried += 1;
            bordered.border(&qp, &active).expect("a few rows are bordered");
            bordered.refine(2);
            let got = bordered.solution(&qp, &active, 1).unwrap();
            let want = fresh.solve(&qp, &active, 1).unwrap();
            assert_same_solution(&got, &want, 1e-10);
        }
        assert!(tried >= 8, "too few sets tried: {tried}");
        assert_eq!(bordered.factorizations, 1);
        // Every row changed against a new factor: more than MAX_FRESH new
        // columns, declined.
        let all: Vec<bool> = base.iter().map(|&on| !on).collect();
        assert!(mi > MAX_FRESH);
        bordered.factor(&qp, &base).unwrap();
        assert!(bordered.border(&qp, &all).is_none());
        // A new structure analysed but not yet factored: nothing to border.
        let qp2 = Qp {
            a_in: &a_in2,
            b_in: &b_in2,
            ..qp
        };
        bordered.factor(&qp, &base).unwrap();
        bordered.analyse(&qp2).unwrap();
        let mut one = base.clone();
        one[0] = !one[0];
        assert!(bordered.border(&qp2, &one).is_none());
    }

    /// The stepper's grouping ([`Dofs::groups`]: a vertex's ẋ unknowns one
    /// node of the ordering, its Ẋ another): the ordering keeps each
    /// group's unknowns together in index order, the factor is about as full as AMD's on every unknown,
    /// and the solve is the same to rounding; a grouping of the wrong
    /// length is ignored.
    #[test]
    fn the_grouped_ordering_solves_the_same_system() {
        use crate::eol::system::{Dofs, Mesh, assemble, test_params};
        use crate::geometry::grid_mesh;
        use crate::math::Vec3;
        use crate::test_util::Rng;
        let m = grid_mesh((1.0, 1.0), (14, 14), Vec3::zero(), 2).unwrap();
        let mut g = Rng::new(12);
        let mesh = Mesh {
            eol: (0..m.vertices().len()).map(|i| i % 9 == 4).collect(),
            x: m.vertices().iter().map(|v| *v * 1.05 + g.vec(0.02)).collect(),
            u: m.vertices().iter().map(|v| [v.x, v.y]).collect(),
            faces: m.faces().to_vec(),
            hinges: m.topology().hinges().to_vec(),
        };
        let s = assemble(&mesh, &test_params(9.8)).unwrap();
        let dofs = Dofs::new(&mesh.eol);
        let (n, nv) = (dofs.len(), dofs.vertices);
        let qd: Vec<f64> = (0..n).map(|_| 0.1 * g.sym()).collect();
        let (p, q) = s.qp_terms(5e-3, &qd);
        // Equalities: an Eulerian row per EOL vertex (its Ẋ only) and a pin
        // of one component of every 25th vertex; inequalities: rows over
        // the three corners of random faces, like vertex-face contacts.
        let mut te = Vec::new();
        for (k, &i) in dofs.eol.iter().enumerate() {
            let u = dofs.u(i as usize).unwrap() as u32;
            te.push((k as u32, u, g.sym()));
            te.push((k as u32, u + 1, g.sym()));
        }
        let pins: Vec<usize> = (0..nv).step_by(25).collect();
        for (k, &i) in pins.iter().enumerate() {
            te.push(((dofs.eol.len() + k) as u32, (3 * i + k % 3) as u32, 1.0));
        }
        let me = dofs.eol.len() + pins.len();
        let a_eq = Csc::from_triplets(me, n, &mut te);
        let b_eq: Vec<f64> = (0..me).map(|_| 0.01 * g.sym()).collect();
        let mi = 60;
        let mut ti = Vec::new();
        for k in 0..mi {
            let f = mesh.faces[(g.next_u64() % mesh.faces.len() as u64) as usize];
            for v in f {
                for c in 0..3 {
                    ti.push((k as u32, 3 * v + c, g.sym()));
                }
            }
        }
        let a_in = Csc::from_triplets(mi, n, &mut ti);
        let b_in: Vec<f64> = (0..mi).map(|_| 0.01 * g.sym()).collect();
        let qp = Qp {
            p_upper: &p,
            q: &q,
            a_eq: &a_eq,
            b_eq: &b_eq,
            a_in: &a_in,
            b_in: &b_in,
        };
        let active: Vec<bool> = (0..mi).map(|_| g.unit_f64() < 0.3).collect();
        let groups: Vec<u32> = dofs.groups().collect();
        let group = |d: usize| groups[d];
        let mut grouped = KktWorkspace::default();
        grouped.group_unknowns(groups.iter().copied());
        let mut plain = KktWorkspace::default();
        let want = plain.solve(&qp, &active, 1).unwrap();
        let got = grouped.solve(&qp, &active, 1).unwrap();
        // Each group's unknowns are consecutive in the factor's order, in
        // index order; a row is a node of its own.
        let dim = n + me + mi;
        assert_eq!(grouped.perm.len(), dim);
        let mut p = 0;
        while p < dim {
            let d = grouped.perm[p];
            if d >= n {
                p += 1;
                continue;
            }
            let members: Vec<usize> = (0..n).filter(|&e| group(e) == group(d)).collect();
            let len = members.len();
            assert_eq!(&grouped.perm[p..p + len], &members[..], "group {}", group(d));
            p += len;
        }
        for (i, &d) in grouped.perm.iter().enumerate() {
            assert_eq!(grouped.perm_inv[d], i);
        }
        assert!(plain.perm != grouped.perm, "the grouping changed nothing");
        let (lg, lp) = (grouped.l_values.len(), plain.l_values.len());
        assert!(
            (lg as f64) < 1.1 * lp as f64,
            "factor entries {lg} grouped, {lp} not"
        );
        assert_same_solution(&got, &want, 1e-9);
        // A grouping of the wrong length, or with a group past the
        // unknowns: every unknown its own node, as without one.
        for bad in [vec![0, 1, 2], vec![n as u32; n]] {
            let mut ws = KktWorkspace::default();
            ws.group_unknowns(bad);
            ws.solve(&qp, &active, 1).unwrap();
            assert_eq!(ws.perm, plain.perm);
        }
    }
}
