//! Hardening plasticity with a plastic-flow clock (spec §4.2, Eq. 10–14,
//! Alg. 2): return mapping with linear hardening that fades with flow time.

use super::{require_finite, sign_i8};
use crate::{Result, invalid};

/// Which plastic clock semantics (A2). All three agree during a continuous
/// hold; they differ after unloading and reloading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlasticClock {
    /// Paper Alg. 2 and the code at figure time (default): the clock advances
    /// by `h` while yielding in the stored direction, resets to 0 on a yield in
    /// another direction (including the first yield, `dir = 0`), and freezes
    /// when not yielding.
    #[default]
    Alg2,
    /// Paper Eq. 14: advances while yielding in the stored direction, resets to
    /// 0 otherwise (also on plain unloading).
    Eq14,
    /// Code HEAD (`7f0182c`): advances by `h` every step, resets to 0 only on a
    /// yield in another direction (including the first yield).
    AlwaysRunning,
}

/// Parameters of one hardening-plasticity element (§4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlasticParams {
    /// Initial yield strain `εY0` (rad for hinges, Green strain for membrane), ≥ 0.
    pub eps_y0: f64,
    /// Initial hardening modulus `K_h0` (J for hinges, N/m for membrane), ≥ 0.
    pub k_h0: f64,
    /// Hardening drop fraction `g ∈ [0, 1]`: `K_h` falls from `K_h0` to
    /// `(1 − g)·K_h0` while plastic flow lasts.
    pub g: f64,
    /// Hardening time constant `τ_p`, seconds, > 0.
    pub tau: f64,
    /// Elastic modulus the hardening is relative to, > 0: the **unscaled** table
    /// value `K̂_b` for hinges (J; not `c_b K̂_b`, A1), or K11/K22/K33 (N/m) for
    /// the membrane components (§5.2). Only the ratio `K_h/k_elastic` matters.
    pub k_elastic: f64,
    /// Plastic clock semantics (A2).
    pub clock: PlasticClock,
}

/// Per-element plastic state (§2.3–2.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlasticState {
    /// Plastic strain `θ_p` (rad for hinges, Green strain for membrane): the
    /// elastic rest value is `θ̄ + θ_p`.
    pub theta_p: f64,
    /// Accumulated plastic magnitude `ε_hp` (same unit), ≥ 0, non-decreasing.
    pub eps_hp: f64,
    /// Current yield strain `ε_Y` (same unit), ≥ `εY0`.
    pub eps_y: f64,
    /// Direction of the last plastic flow: −1, +1, or 0 before the first yield.
    pub dir: i8,
    /// Hardening clock `t_plastic`, seconds.
    pub t_plastic: f64,
}

impl PlasticState {
    /// Virgin state (§2.4): `θ_p = ε_hp = 0`, `ε_Y = εY0`, `dir = 0`, clock 0 s.
    #[inline]
    pub fn new(p: &PlasticParams) -> Self {
        Self {
            theta_p: 0.0,
            eps_hp: 0.0,
            eps_y: p.eps_y0,
            dir: 0,
            t_plastic: 0.0,
        }
    }

    /// Hold-time warp of the hardening clock (§4.6): `t_plastic += dt_warp` (s).
    #[inline]
    pub fn warp(&mut self, dt_warp: f64) {
        self.t_plastic += dt_warp;
    }
}

impl PlasticParams {
    /// Checks the parameters: all finite, `eps_y0 ≥ 0`, `k_h0 ≥ 0`,
    /// `0 ≤ g ≤ 1`, `tau > 0`, `k_elastic > 0`. `what` names the element in the
    /// message (e.g. "bending plasticity").
    pub fn validate(&self, what: &str) -> Result<()> {
        require_finite(self.eps_y0, what, "eps_y0 (initial yield strain)")?;
        require_finite(self.k_h0, what, "k_h0 (initial hardening modulus)")?;
        require_finite(self.g, what, "g (hardening drop fraction)")?;
        require_finite(self.tau, what, "tau (hardening time constant, s)")?;
        require_finite(self.k_elastic, what, "k_elastic (elastic modulus)")?;
        if self.eps_y0 < 0.0 {
            return invalid!(
                "{what}: eps_y0 (initial yield strain) must be ≥ 0, got {}; pass a non-negative yield strain",
                self.eps_y0
            );
        }
        if self.k_h0 < 0.0 {
            return invalid!(
                "{what}: k_h0 (initial hardening modulus) must be ≥ 0, got {}; pass 0 for perfect plasticity",
                self.k_h0
            );
        }
        if !(0.0..=1.0).contains(&self.g) {
            return invalid!(
                "{what}: g (hardening drop fraction) must lie in [0, 1], got {}; use 0 for time-independent \
                 hardening, values near 1 for a strong hold-time effect",
                self.g
            );
        }
        if self.tau <= 0.0 {
            return invalid!(
                "{what}: tau (hardening time constant, s) must be > 0, got {}; pass a positive time",
                self.tau
            );
        }
        if self.k_elastic <= 0.0 {
            return invalid!(
                "{what}: k_elastic (elastic modulus the hardening is relative to) must be > 0, got {}; \
                 pass the unscaled bending stiffness K̂_b or the membrane stiffness",
                self.k_elastic
            );
        }
        Ok(())
    }

    /// Hardening modulus after `t_plastic` seconds of plastic flow:
    /// `K_h0·(1 − g·(1 − exp(−t_plastic/τ)))`, in the unit of `k_h0`; lies in
    /// `[(1 − g)K_h0, K_h0]` for `t_plastic ≥ 0`.
    #[inline]
    pub fn hardening_modulus(&self, t_plastic: f64) -> f64 {
        // Time-independent hardening (the E6 baseline, A.2): skip the exp.
        if self.g == 0.0 {
            return self.k_h0;
        }
        // K_h0(1 − g(1 − e^{−t/τ})) written with expm1 (exactly K_h0 at t = 0).
        self.k_h0 * (1.0 + self.g * (-t_plastic / self.tau).exp_m1())
    }
}

/// §4.2 update with the elastic strain ε_e = `strain` − θ_p (caller passes
/// θ − θ̄ for hinges, E_i for membrane components).
/// Returns true when this step yielded.
///
/// Yield iff `|ε_e| > ε_Y` with `ε_Y` from the previous step (strict, A13);
/// "same direction" compares with the stored `dir` (A14). The clock follows
/// `p.clock` (A2). On yield, the closest-point return for 1D linear hardening
/// `λ = k_e/(k_e + K_h)·(|ε_e| − ε_Y)` is added to `ε_hp` and, signed, to `θ_p`.
/// `ε_Y = εY0 + ε_hp·K_h/k_e` is then recomputed every step, since `K_h`
/// changes with the clock. `h` is the step in seconds.
#[inline]
pub fn plastic_update(st: &mut PlasticState, p: &PlasticParams, strain: f64, h: f64) -> bool {
    let ee = strain - st.theta_p;
    let abs_ee = ee.abs();
    let yielded = abs_ee > st.eps_y;
    let sgn = sign_i8(ee);
    // A virgin element has dir = 0, so its first yield is "not same" and the
    // clock starts from 0 at the first yield in every variant (A16 note).
    let same = st.dir == sgn;
    st.t_plastic = match p.clock {
        PlasticClock::Alg2 => match (yielded, same) {
            (true, true) => st.t_plastic + h,
            (true, false) => 0.0,
            (false, _) => st.t_plastic,
        },
        PlasticClock::Eq14 => {
            if yielded && same {
                st.t_plastic + h
            } else {
                0.0
            }
        }
        PlasticClock::AlwaysRunning => {
            if yielded && !same {
                0.0
            } else {
                st.t_plastic + h
            }
        }
    };
    if yielded {
        let kh = p.hardening_modulus(st.t_plastic);
        let lambda = p.k_elastic / (p.k_elastic + kh) * (abs_ee - st.eps_y);
        st.eps_hp += lambda;
        st.theta_p += f64::from(sgn) * lambda;
        st.dir = sgn;
        st.eps_y = p.eps_y0 + st.eps_hp * kh / p.k_elastic;
    } else if st.eps_hp != 0.0 {
        // Not yielding but hardened: K_h may still move (clock variants,
        // warp), so ε_Y is recomputed as the spec prescribes.
        let kh = p.hardening_modulus(st.t_plastic);
        st.eps_y = p.eps_y0 + st.eps_hp * kh / p.k_elastic;
    } else {
        // Never yielded: ε_hp = 0 ⇒ ε_Y = εY0 whatever K_h is (no exp needed;
        // this is the common case for most hinges).
        st.eps_y = p.eps_y0;
    }
    yielded
}
