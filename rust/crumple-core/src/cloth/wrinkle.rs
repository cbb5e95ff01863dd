//! Scalar internal-variable kernels of the persistent-wrinkle model (spec
//! `persistent_wrinkles.md` §4, App. A.1): friction with dwell (§4.1),
//! hardening plasticity with a plastic-flow clock (§4.2), the Dahl friction
//! baseline (App. A.1) and the hold-time warp (§4.6).
//!
//! The same kernels serve the hinges (input = dihedral angle in radians, spec
//! §0 and A4) and the three in-plane Green-strain components of each triangle
//! (§5.2–5.3). They are called once per element per step, *before* the linear
//! solve, with the start-of-step configuration (§6.1 (a)–(c), A21), for about
//! 60K hinges per step: they allocate nothing, are `#[inline]`, and skip the
//! `exp` calls whenever the result cannot depend on them.
//!
//! [`SingleHinge`] and [`one_dof_protocol`] are a 1-DOF driver for the hinge
//! protocol of §9 (tests T7–T12, experiment E1); they are also meant to be
//! exposed to Python.

use crate::{Result, invalid};

/// `sign(x)` as the stored flow direction: +1, −1, or 0 for 0 (and NaN).
///
/// §4.2 needs `sign(0) = 0` so that a virgin element (`dir = 0`) counts its
/// first yield as "not same direction" (A14); `f64::signum` returns ±1 for ±0.
#[inline]
fn sign_i8(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// Checks that `v` is finite (the message names `what` and `field`).
fn require_finite(v: f64, what: &str, field: &str) -> Result<()> {
    if !v.is_finite() {
        return invalid!("{what}: {field} must be a finite number, got {v}; pass a finite value");
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// §4.1 Friction with dwell
// ---------------------------------------------------------------------------

/// Friction with dwell (§4.1): thresholds in strain units (radians for hinges,
/// Green strain for membrane components).
///
/// The slip threshold grows with the time the element has stuck (`t_stick`):
/// `thr(t) = ε∞ − (ε∞ − ε0)·exp(−t/τ)`, so `thr ∈ [ε0, ε∞]`. With `ε∞ = ε0`
/// there is no dwell effect (a plain Jenkins element).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionParams {
    /// Threshold at zero dwell `ε0` (rad for hinges, Green strain for membrane), ≥ 0.
    pub eps0: f64,
    /// Asymptotic threshold after a long dwell `ε∞` (same unit as `eps0`), ≥ `eps0`.
    pub eps_inf: f64,
    /// Dwell time constant `τ_f`, seconds, > 0.
    pub tau: f64,
}

/// Per-element friction state (§2.3–2.4): the anchor (rest value of the
/// friction spring) and the dwell clock. `Default` is the virgin state of a
/// flat hinge or an unstrained membrane component (anchor 0, clock 0 s).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrictionState {
    /// Anchor `θ_a` (rad for hinges, Green strain for membrane components).
    pub anchor: f64,
    /// Dwell clock `t_stick`: time since the last slip, seconds (≥ 0).
    pub t_stick: f64,
}

impl FrictionParams {
    /// Checks the parameters: all finite, `eps0 ≥ 0`, `eps_inf ≥ eps0`,
    /// `tau > 0`. `what` names the element in the message (e.g. "bending friction").
    pub fn validate(&self, what: &str) -> Result<()> {
        require_finite(self.eps0, what, "eps0 (threshold at zero dwell)")?;
        require_finite(self.eps_inf, what, "eps_inf (asymptotic threshold)")?;
        require_finite(self.tau, what, "tau (dwell time constant, s)")?;
        if self.eps0 < 0.0 {
            return invalid!(
                "{what}: eps0 (threshold at zero dwell) must be ≥ 0, got {}; pass a non-negative threshold",
                self.eps0
            );
        }
        if self.eps_inf < self.eps0 {
            return invalid!(
                "{what}: eps_inf = {} must be ≥ eps0 = {} (the threshold grows with dwell); \
                 raise eps_inf or set it equal to eps0 for no dwell effect",
                self.eps_inf,
                self.eps0
            );
        }
        if self.tau <= 0.0 {
            return invalid!(
                "{what}: tau (dwell time constant, s) must be > 0, got {}; pass a positive time",
                self.tau
            );
        }
        Ok(())
    }

    /// Slip threshold after a dwell of `t_stick` seconds:
    /// `ε∞ − (ε∞ − ε0)·exp(−t_stick/τ)`, in the unit of `eps0`.
    #[inline]
    pub fn threshold(&self, t_stick: f64) -> f64 {
        // No dwell effect (e.g. the polyester trousers, ε0 = ε∞): skip the exp.
        if self.eps_inf == self.eps0 {
            return self.eps0;
        }
        // ε0 + (ε∞ − ε0)(1 − e^{−t/τ}), the same value as the spec's form but
        // written with expm1: exactly ε0 at zero dwell (the state right after
        // every slip) and never below ε0.
        self.eps0 - (self.eps_inf - self.eps0) * (-t_stick / self.tau).exp_m1()
    }
}

impl FrictionState {
    /// Hold-time warp of the dwell clock (§4.6): `t_stick += dt_warp` (s).
    #[inline]
    pub fn warp(&mut self, dt_warp: f64) {
        self.t_stick += dt_warp;
    }
}

/// §4.1 update; returns Δ = θ − anchor after the update. `h` = step (s).
/// Strict '>' for slip (A13).
///
/// `theta` is the total strain at the start of the step (A5: friction acts on
/// the total angle, not the elastic one): radians for hinges, Green strain for
/// membrane components. The threshold uses the dwell clock *before* this
/// step's update. On a slip the anchor is dragged so that `|θ − θ_a| = thr`
/// (Alg. 1 / code form, A3) and the clock resets to 0; otherwise the clock
/// advances by `h`. After the call `|Δ| ≤ thr` holds exactly in floating
/// point, so a hinge held at the angle it just slipped to sticks on the next
/// step and its dwell clock starts running.
#[inline]
pub fn friction_update(st: &mut FrictionState, p: &FrictionParams, theta: f64, h: f64) -> f64 {
    let thr = p.threshold(st.t_stick);
    let d = theta - st.anchor;
    if d.abs() > thr {
        // `anchor + sign(d)(|d| − thr)` = `θ − sign(d)·thr` up to rounding.
        // Rounding matters here: if the stored anchor ends up an ulp too far
        // from θ, then `|θ − θ_a| > thr` again on the next step at the same θ,
        // the hinge slips every step and its dwell clock never runs (this
        // would silently break the hold-time effect, T7/T9). So the anchor is
        // moved towards θ, one ulp at a time, until `|θ − θ_a| ≤ thr` holds as
        // computed. One rounding is at most an ulp off, so the loop runs 0–2
        // times; the cap only guards against pathological inputs (NaN).
        let mut anchor = if d > 0.0 { theta - thr } else { theta + thr };
        let mut nudges = 0;
        while (theta - anchor).abs() > thr && nudges < 4 {
            anchor = if d > 0.0 {
                anchor.next_up()
            } else {
                anchor.next_down()
            };
            nudges += 1;
        }
        st.anchor = anchor;
        st.t_stick = 0.0;
    } else {
        st.t_stick += h;
    }
    theta - st.anchor
}

// ---------------------------------------------------------------------------
// §4.2 Hardening plasticity with a plastic-flow clock
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// App. A.1 Dahl baseline
// ---------------------------------------------------------------------------

/// Dahl friction baseline (App. A.1) for experiment E9: state σ_f, input angle increment δ.
///
/// `dσ_f/dθ = (σ_s/ε_s)(1 − sign(δ)·σ_f/σ_s)`: no stick phase and no dwell, so
/// held and immediate releases give identical results.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DahlParams {
    /// Saturation moment `σ_s` (angle-stiffness units, J; spec's choice
    /// `κ_f ε∞`), ≥ 0.
    pub sigma_s: f64,
    /// Characteristic angle `ε_s`, rad (spec's choice `ε0`), > 0.
    pub eps_s: f64,
}

impl DahlParams {
    /// Checks the parameters: finite, `sigma_s ≥ 0`, `eps_s > 0`. `what` names
    /// the element in the message.
    pub fn validate(&self, what: &str) -> Result<()> {
        require_finite(self.sigma_s, what, "sigma_s (Dahl saturation moment)")?;
        require_finite(self.eps_s, what, "eps_s (Dahl characteristic angle, rad)")?;
        if self.sigma_s < 0.0 {
            return invalid!(
                "{what}: sigma_s (Dahl saturation moment) must be ≥ 0, got {}; pass a non-negative value",
                self.sigma_s
            );
        }
        if self.eps_s <= 0.0 {
            return invalid!(
                "{what}: eps_s (Dahl characteristic angle, rad) must be > 0, got {}; pass a positive angle",
                self.eps_s
            );
        }
        Ok(())
    }
}

/// One Dahl step (App. A.1): integrates `dσ_f/dθ` exactly over the angle
/// increment `delta_theta = θ_n − θ_{n−1}` (rad):
/// `σ_f ← sign(δ)σ_s + (σ_f − sign(δ)σ_s)·exp(−|δ|/ε_s)`, unchanged for δ = 0.
///
/// Returns the Jacobian coefficient of App. A.1, `(σ_s/ε_s)·exp(−|δ|/ε_s)`
/// (J/rad): the hinge Jacobian is `−s·(this)·g gᵀ`. This is the spec's
/// tangent, always ≥ 0 (keeps the system SPD). It equals the exact
/// `∂σ_f/∂θ_n` of the update only when σ_f starts at 0; the exact one carries
/// the extra factor `1 − sign(δ)σ_f,old/σ_s` ∈ [0, 2].
#[inline]
pub fn dahl_update(sigma_f: &mut f64, p: &DahlParams, delta_theta: f64) -> f64 {
    if delta_theta == 0.0 {
        return p.sigma_s / p.eps_s;
    }
    let decay = (-delta_theta.abs() / p.eps_s).exp();
    let target = if delta_theta > 0.0 { p.sigma_s } else { -p.sigma_s };
    *sigma_f = target + (*sigma_f - target) * decay;
    p.sigma_s / p.eps_s * decay
}

// ---------------------------------------------------------------------------
// §4.6 Hold-time warp
// ---------------------------------------------------------------------------

/// Hold-time warp (§4.6): add `dt_warp` (s) to both clocks (`t_stick` and
/// `t_plastic`). Called after the step's state update, so it takes effect in
/// the next step's update. Applied to every element regardless of its state
/// (A16): a slip resets `t_stick` anyway, and under Alg. 2 a virgin element's
/// first yield resets `t_plastic`; a previously yielded element keeps it.
#[inline]
pub fn warp_clocks(f: &mut FrictionState, pl: &mut PlasticState, dt_warp: f64) {
    f.warp(dt_warp);
    pl.warp(dt_warp);
}

// ---------------------------------------------------------------------------
// 1-DOF hinge driver (§4.4, §9)
// ---------------------------------------------------------------------------

/// One hinge with κ_b, κ_f, s, optional friction/plasticity, driven by a
/// prescribed angle; see §9 "1-DOF hinge protocol".
///
/// Flat rest angle (θ̄ = 0). The moment is
/// `m = s[κ_b(θ − θ_p) + κ_f Δ]` (§3.4 without the gradient), with `θ_p = 0`
/// without plasticity and `Δ = 0` without friction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SingleHinge {
    /// Friction element (parameters, state), or `None` for no friction.
    pub friction: Option<(FrictionParams, FrictionState)>,
    /// Plasticity element (parameters, state), or `None` for no plasticity.
    pub plastic: Option<(PlasticParams, PlasticState)>,
    /// Bending coefficient `κ_b = c_b K̂_b` used in the energy, J.
    pub kappa_b: f64,
    /// Friction coefficient `κ_f = c_b K̂_f`, J (unused without friction).
    pub kappa_f: f64,
    /// Shape factor `s = l̄²/Ā` (dimensionless).
    pub s: f64,
}

impl SingleHinge {
    /// An elastic hinge (no friction, no plasticity) with coefficients
    /// `kappa_b`, `kappa_f` (J) and shape factor `s`.
    pub fn new(kappa_b: f64, kappa_f: f64, s: f64) -> Self {
        Self {
            friction: None,
            plastic: None,
            kappa_b,
            kappa_f,
            s,
        }
    }

    /// Adds a virgin friction element (anchor 0, clock 0).
    pub fn with_friction(mut self, p: FrictionParams) -> Self {
        self.friction = Some((p, FrictionState::default()));
        self
    }

    /// Adds a virgin plasticity element ([`PlasticState::new`]).
    pub fn with_plastic(mut self, p: PlasticParams) -> Self {
        self.plastic = Some((p, PlasticState::new(&p)));
        self
    }

    /// Checks coefficients (finite, `kappa_b, kappa_f ≥ 0`, `s > 0`) and the
    /// element parameters.
    pub fn validate(&self) -> Result<()> {
        let what = "single hinge";
        require_finite(self.kappa_b, what, "kappa_b (J)")?;
        require_finite(self.kappa_f, what, "kappa_f (J)")?;
        require_finite(self.s, what, "s (shape factor)")?;
        if self.kappa_b < 0.0 || self.kappa_f < 0.0 {
            return invalid!(
                "{what}: kappa_b = {} and kappa_f = {} must be ≥ 0; pass non-negative stiffnesses",
                self.kappa_b,
                self.kappa_f
            );
        }
        if self.s <= 0.0 {
            return invalid!(
                "{what}: s (shape factor l̄²/Ā) must be > 0, got {}; pass a positive value",
                self.s
            );
        }
        if let Some((p, _)) = &self.friction {
            p.validate("single hinge friction")?;
        }
        if let Some((p, _)) = &self.plastic {
            p.validate("single hinge plasticity")?;
        }
        Ok(())
    }

    /// Plastic rest angle `θ_p` (rad); 0 without plasticity.
    #[inline]
    pub fn theta_p(&self) -> f64 {
        self.plastic.as_ref().map_or(0.0, |(_, st)| st.theta_p)
    }

    /// Friction anchor `θ_a` (rad), or `None` without friction.
    #[inline]
    pub fn anchor(&self) -> Option<f64> {
        self.friction.as_ref().map(|(_, st)| st.anchor)
    }

    /// One step of §4.3 at angle `theta` (rad) with step `h` (s): plastic update
    /// first, then friction (the order is irrelevant, the code's order is kept).
    /// Returns the moment `m = s[κ_b(θ−θ_p) + κ_f Δ]` (J) with the updated state.
    #[inline]
    pub fn update(&mut self, theta: f64, h: f64) -> f64 {
        let theta_p = match &mut self.plastic {
            Some((p, st)) => {
                plastic_update(st, p, theta, h);
                st.theta_p
            }
            None => 0.0,
        };
        let delta = match &mut self.friction {
            Some((p, st)) => friction_update(st, p, theta, h),
            None => 0.0,
        };
        self.s * (self.kappa_b * (theta - theta_p) + self.kappa_f * delta)
    }

    /// Hold-time warp (§4.6) of the clocks that exist, `dt_warp` seconds.
    #[inline]
    pub fn warp(&mut self, dt_warp: f64) {
        if let Some((_, st)) = &mut self.friction {
            st.warp(dt_warp);
        }
        if let Some((_, st)) = &mut self.plastic {
            st.warp(dt_warp);
        }
    }

    /// Quasi-static free angle with the current (frozen) state (§4.4):
    /// `(κ_b θ_p + κ_f θ_a)/(κ_b + κ_f)` (rad). Without friction the friction
    /// spring is absent, so this is `θ_p`; with `κ_b + κ_f = 0` (no spring at
    /// all) it also returns `θ_p`.
    #[inline]
    pub fn free_equilibrium(&self) -> f64 {
        let theta_p = self.theta_p();
        match &self.friction {
            Some((_, st)) => {
                let k = self.kappa_b + self.kappa_f;
                if k > 0.0 {
                    (self.kappa_b * theta_p + self.kappa_f * st.anchor) / k
                } else {
                    theta_p
                }
            }
            None => theta_p,
        }
    }
}

/// Hold phase of the 1-DOF protocol.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hold {
    /// Hold for `T` seconds of simulated time: `round(T/h)` updates at Θ, no warp.
    Duration(f64),
    /// `n_steps` updates at Θ, each followed by a clock warp of `dt_warp`
    /// seconds (§4.6; the paper's 500 s hold is 50 steps × 10 s). `dt_warp = 0`
    /// is the "immediate" release with an equal step count.
    Warp {
        /// Number of hold steps.
        n_steps: usize,
        /// Warp added to every clock after each hold step, seconds.
        dt_warp: f64,
    },
}

/// The 1-DOF protocol of §9: load, hold, quasi-static release.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneDofProtocol {
    /// Peak angle Θ, rad.
    pub theta_max: f64,
    /// Time step `h`, seconds.
    pub h: f64,
    /// Load steps: updates at `θ_k = Θ·k/n_load` for `k = 0..n_load−1` (§9:
    /// 1000, i.e. 1 s at h = 1e-3; T9's dt study uses `round(1 s / h)`).
    pub n_load: usize,
    /// Hold phase at Θ.
    pub hold: Hold,
    /// Release steps of {update at θ; θ ← free equilibrium} (§9: 2000).
    pub n_release: usize,
}

impl OneDofProtocol {
    /// The §9 protocol: `n_load = 1000`, `n_release = 2000`.
    pub fn new(theta_max: f64, h: f64, hold: Hold) -> Self {
        Self {
            theta_max,
            h,
            n_load: 1000,
            hold,
            n_release: 2000,
        }
    }

    /// Checks that Θ is finite, `h > 0` finite, and the hold is finite and ≥ 0.
    pub fn validate(&self) -> Result<()> {
        let what = "1-DOF protocol";
        require_finite(self.theta_max, what, "theta_max (rad)")?;
        require_finite(self.h, what, "h (time step, s)")?;
        if self.h <= 0.0 {
            return invalid!(
                "{what}: h (time step, s) must be > 0, got {}; pass a positive step",
                self.h
            );
        }
        let (v, field) = match self.hold {
            Hold::Duration(t) => (t, "hold duration (s)"),
            Hold::Warp { dt_warp, .. } => (dt_warp, "dt_warp (s)"),
        };
        require_finite(v, what, field)?;
        if v < 0.0 {
            return invalid!("{what}: {field} must be ≥ 0, got {v}; pass a non-negative time");
        }
        Ok(())
    }

    /// Number of hold steps (`round(T/h)` for [`Hold::Duration`]).
    pub fn hold_steps(&self) -> usize {
        match self.hold {
            // `as` saturates (NaN → 0): never panics on bad input.
            Hold::Duration(t) => (t / self.h).round() as usize,
            Hold::Warp { n_steps, .. } => n_steps,
        }
    }
}

/// What [`one_dof_protocol_report`] measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneDofReport {
    /// Final angle after the release, rad (the residual fold).
    pub theta_final: f64,
    /// `θ_p` when the release starts (after the hold, before the first release
    /// update), rad; this is T8's "θ_p at release".
    pub theta_p_release: f64,
    /// Anchor when the release starts, rad (0 without friction).
    pub anchor_release: f64,
    /// `θ_p` at the end of the release, rad.
    pub theta_p_final: f64,
    /// Anchor at the end of the release, rad (0 without friction).
    pub anchor_final: f64,
}

/// The full protocol of §9: load Θ over 1000 steps, hold T (with optional
/// warp: n_hold steps with dt_warp), quasi-static release 2000 steps; returns
/// the final θ (rad).
///
/// Runs on `hinge` from its current state (normally virgin) and leaves the
/// final state in it. Inputs are not validated here (call
/// [`SingleHinge::validate`] and [`OneDofProtocol::validate`]); bad inputs give
/// NaN, never a panic.
pub fn one_dof_protocol(hinge: &mut SingleHinge, protocol: &OneDofProtocol) -> f64 {
    one_dof_protocol_report(hinge, protocol).theta_final
}

/// [`one_dof_protocol`] with the intermediate quantities of T8/T9.
///
/// Steps (§9): load `update(Θ·k/n_load)` for `k = 0..n_load−1` (update first,
/// then advance); hold: `hold_steps` updates at Θ, each followed by the warp
/// if any; release: starting at θ = Θ, `n_release` times {update at θ;
/// θ ← free equilibrium}.
pub fn one_dof_protocol_report(hinge: &mut SingleHinge, protocol: &OneDofProtocol) -> OneDofReport {
    let OneDofProtocol {
        theta_max,
        h,
        n_load,
        hold,
        n_release,
    } = *protocol;
    for k in 0..n_load {
        // Same evaluation order as the spec's Θ·k/1000.
        hinge.update(theta_max * k as f64 / n_load as f64, h);
    }
    let dt_warp = match hold {
        Hold::Duration(_) => 0.0,
        Hold::Warp { dt_warp, .. } => dt_warp,
    };
    for _ in 0..protocol.hold_steps() {
        hinge.update(theta_max, h);
        if dt_warp != 0.0 {
            hinge.warp(dt_warp);
        }
    }
    let theta_p_release = hinge.theta_p();
    let anchor_release = hinge.anchor().unwrap_or(0.0);
    let mut theta = theta_max;
    for _ in 0..n_release {
        hinge.update(theta, h);
        theta = hinge.free_equilibrium();
    }
    OneDofReport {
        theta_final: theta,
        theta_p_release,
        anchor_release,
        theta_p_final: hinge.theta_p(),
        anchor_final: hinge.anchor().unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    // ---- helpers ----------------------------------------------------------

    /// SplitMix64: a tiny deterministic generator, so the random-sequence test
    /// does not depend on an external crate's stream.
    struct Rng(u64);
    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        /// Uniform in [0, 1).
        fn unit(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn range(&mut self, a: f64, b: f64) -> f64 {
            a + (b - a) * self.unit()
        }
    }

    /// `got` equals `want` as printed with `decimals` decimals in the spec.
    #[track_caller]
    fn assert_dp(got: f64, want: f64, decimals: i32, label: &str) {
        let tol = 0.5 * 10f64.powi(-decimals) + 1e-12;
        assert!(
            (got - want).abs() <= tol,
            "{label}: got {got}, spec {want} (±{tol})"
        );
    }

    /// Cotton specimen friction (Table 2): ε0 = 0.1, ε∞ = 1.7, τ_f = 30 s.
    fn cotton_friction() -> FrictionParams {
        FrictionParams {
            eps0: 0.1,
            eps_inf: 1.7,
            tau: 30.0,
        }
    }

    /// Cotton specimen plasticity (Table 2): K̂_b = K_h0 = 5e-6, g = 0.99, τ_p = 30 s, εY0 = 1.8.
    fn cotton_plastic(clock: PlasticClock) -> PlasticParams {
        PlasticParams {
            eps_y0: 1.8,
            k_h0: 5e-6,
            g: 0.99,
            tau: 30.0,
            k_elastic: 5e-6,
            clock,
        }
    }

    /// The §9 1-DOF hinge: κ_b = 5e-6, κ_f = 1e-5, s = 1, cotton constants.
    fn protocol_hinge(friction: bool, plastic: bool, clock: PlasticClock) -> SingleHinge {
        let mut hinge = SingleHinge::new(5e-6, 1e-5, 1.0);
        if friction {
            hinge = hinge.with_friction(cotton_friction());
        }
        if plastic {
            hinge = hinge.with_plastic(cotton_plastic(clock));
        }
        hinge.validate().unwrap();
        hinge
    }

    fn run(friction: bool, plastic: bool, theta_max: f64, hold: Hold) -> OneDofReport {
        let mut hinge = protocol_hinge(friction, plastic, PlasticClock::Alg2);
        let proto = OneDofProtocol::new(theta_max, 1e-3, hold);
        proto.validate().unwrap();
        one_dof_protocol_report(&mut hinge, &proto)
    }

    // ---- T6 ---------------------------------------------------------------

    /// T6: invariants of the state updates on random strain sequences (10⁵
    /// steps per clock variant), with random steps and occasional warps.
    #[test]
    fn t6_state_update_invariants() {
        let fp = FrictionParams {
            eps0: 0.05,
            eps_inf: 0.8,
            tau: 0.3,
        };
        fp.validate("t6").unwrap();
        for (seed, clock) in [
            (1u64, PlasticClock::Alg2),
            (2, PlasticClock::Eq14),
            (3, PlasticClock::AlwaysRunning),
        ] {
            let pp = PlasticParams {
                eps_y0: 0.3,
                k_h0: 0.02,
                g: 0.9,
                tau: 0.2,
                k_elastic: 1.0,
                clock,
            };
            pp.validate("t6").unwrap();
            let mut rng = Rng(seed);
            let mut fs = FrictionState::default();
            let mut ps = PlasticState::new(&pp);
            let (mut theta, mut slips, mut yields) = (0.0f64, 0usize, 0usize);
            for _ in 0..100_000 {
                let r = rng.unit();
                if r < 0.6 {
                    theta += rng.range(-0.05, 0.05);
                } else if r < 0.65 {
                    theta = rng.range(-3.0, 3.0);
                } else if r < 0.7 {
                    // Jump just past the yield surface on a random side, so
                    // that yielding stays reachable while ε_Y hardens.
                    let side = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
                    theta = ps.theta_p + side * (ps.eps_y + rng.range(0.0, 0.5));
                } // else: stay (lets the dwell clock build up)
                let h = rng.range(0.0, 0.05);
                let thr = fp.threshold(fs.t_stick);
                assert!(
                    thr >= fp.eps0 && thr <= fp.eps_inf + 1e-15,
                    "thr {thr} out of [ε0, ε∞]"
                );
                let before = ps;
                if plastic_update(&mut ps, &pp, theta, h) {
                    yields += 1;
                }
                let t_before = fs.t_stick;
                let delta = friction_update(&mut fs, &fp, theta, h);
                if fs.t_stick == 0.0 && t_before + h != 0.0 {
                    slips += 1;
                }
                assert_eq!(delta, theta - fs.anchor);
                assert!(delta.abs() <= thr, "|Δ| {delta} > {thr}");
                assert!(fs.t_stick >= 0.0);
                assert!(ps.eps_hp >= before.eps_hp, "ε_hp decreased");
                assert!(ps.eps_y >= pp.eps_y0, "ε_Y {} < εY0", ps.eps_y);
                let kh = pp.hardening_modulus(ps.t_plastic);
                assert!(
                    kh >= (1.0 - pp.g) * pp.k_h0 * (1.0 - 1e-14) && kh <= pp.k_h0,
                    "K_h {kh}"
                );
                assert!(
                    ps.theta_p.abs() <= ps.eps_hp * (1.0 + 1e-14) + 1e-15,
                    "|θ_p| > ε_hp"
                );
                assert!((ps.eps_y - (pp.eps_y0 + ps.eps_hp * kh / pp.k_elastic)).abs() < 1e-12);
                if rng.unit() < 0.01 {
                    warp_clocks(&mut fs, &mut ps, rng.range(0.0, 1.0));
                }
            }
            assert!(
                slips > 1000 && yields > 1000,
                "{clock:?}: too few events ({slips} slips, {yields} yields)"
            );
        }

        // g = 0 (constant K_h): every yielding step ends exactly on the yield surface.
        for clock in [
            PlasticClock::Alg2,
            PlasticClock::Eq14,
            PlasticClock::AlwaysRunning,
        ] {
            let pp = PlasticParams {
                eps_y0: 0.3,
                k_h0: 0.05,
                g: 0.0,
                tau: 0.2,
                k_elastic: 1.0,
                clock,
            };
            let mut rng = Rng(17);
            let mut ps = PlasticState::new(&pp);
            let (mut theta, mut yields) = (0.0f64, 0usize);
            for _ in 0..100_000 {
                let r = rng.unit();
                if r < 0.7 {
                    theta += rng.range(-0.05, 0.05);
                } else if r < 0.85 {
                    theta = rng.range(-4.0, 4.0);
                } else {
                    let side = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
                    theta = ps.theta_p + side * (ps.eps_y + rng.range(0.0, 0.5));
                }
                if plastic_update(&mut ps, &pp, theta, 1e-3) {
                    yields += 1;
                    let gap = (theta - ps.theta_p).abs() - ps.eps_y;
                    assert!(gap.abs() <= 1e-12, "off the yield surface by {gap}");
                }
            }
            assert!(yields > 1000, "too few yields: {yields}");
        }
    }

    // ---- T7 ---------------------------------------------------------------

    /// T7: friction only, Θ = 1.5: residual 0.2000 for T < T* = 7.81 s and
    /// 0.9333 after, non-decreasing in T; warp 50 × 0 s → 0.2000, 50 × 10 s → 0.9333.
    #[test]
    fn t7_friction_dwell_residual() {
        let (kb, kf, fp) = (5e-6, 1e-5, cotton_friction());
        // Closed forms of §4.4: anchor Θ − ε0 = 1.4 after loading.
        let stuck = kf * 1.4 / (kb + kf);
        let slipped = fp.eps0 * kf / kb;
        assert_dp(stuck, 0.9333, 4, "stuck closed form");
        assert_dp(slipped, 0.2000, 4, "slipped closed form");
        let dev = kb * 1.4 / (kb + kf);
        let t_star = -fp.tau * ((fp.eps_inf - dev) / (fp.eps_inf - fp.eps0)).ln();
        assert_dp(t_star, 7.81, 2, "T*");

        let mut last = f64::NEG_INFINITY;
        for (t, want) in [
            (0.0, 0.2),
            (1.0, 0.2),
            (5.0, 0.2),
            (7.0, 0.2),
            (7.5, 0.2),
            (7.80, 0.2),
            (7.82, 0.9333),
            (8.0, 0.9333),
            (10.0, 0.9333),
            (30.0, 0.9333),
            (100.0, 0.9333),
            (500.0, 0.9333),
        ] {
            let r = run(true, false, 1.5, Hold::Duration(t));
            assert_dp(r.theta_final, want, 4, &format!("T7 residual at T = {t}"));
            assert!(r.theta_final >= last - 1e-12, "T7 residual decreased at T = {t}");
            last = r.theta_final;
        }
        let r = run(
            true,
            false,
            1.5,
            Hold::Warp {
                n_steps: 50,
                dt_warp: 0.0,
            },
        );
        assert_dp(r.theta_final, 0.2, 4, "T7 warp 0");
        let r = run(
            true,
            false,
            1.5,
            Hold::Warp {
                n_steps: 50,
                dt_warp: 10.0,
            },
        );
        assert_dp(r.theta_final, 0.9333, 4, "T7 warp 10 s");
    }

    // ---- T8 ---------------------------------------------------------------

    /// T8: plastic only, Θ = 2.5: θ_p at release for the listed holds, monotone
    /// and saturating at 0.7/1.01; clock variants agree at T = 60; warp; the
    /// exact first-yield formula.
    // The spec's saturation value 0.6931 = 0.7/1.01 is not ln 2, whatever clippy thinks.
    #[allow(clippy::approx_constant)]
    #[test]
    fn t8_plastic_hardening_vs_hold() {
        let table = [
            (0.0, 0.3503),
            (1.0, 0.3574),
            (10.0, 0.4087),
            (30.0, 0.5106),
            (60.0, 0.6126),
            (100.0, 0.6699),
            (200.0, 0.6922),
            (500.0, 0.6931),
        ];
        let mut last = f64::NEG_INFINITY;
        for (t, want) in table {
            let r = run(false, true, 2.5, Hold::Duration(t));
            // "θ_p at release" = when the release starts (after the hold's
            // updates, before the release's first update at Θ). For T > 0 that
            // first update changes θ_p by < 1e-5; for T = 0 it is one more load
            // increment (0.3516), which is T9's T = 0 state.
            assert_dp(r.theta_p_release, want, 4, &format!("T8 θ_p at T = {t}"));
            assert!(r.theta_p_release > last, "T8 not monotone at T = {t}");
            last = r.theta_p_release;
            // Plastic-only release relaxes onto the rest angle.
            assert_eq!(r.theta_final, r.theta_p_final);
            assert!(r.theta_p_final < 0.7 / 1.01);
        }
        assert_dp(0.7 / 1.01, 0.6931, 4, "saturation");
        assert!((0.7 / 1.01 - last).abs() < 1e-4);

        // Three clock variants (A2) agree during a continuous hold.
        let res: Vec<f64> = [
            PlasticClock::Alg2,
            PlasticClock::Eq14,
            PlasticClock::AlwaysRunning,
        ]
        .iter()
        .map(|&c| {
            let mut hinge = protocol_hinge(false, true, c);
            let proto = OneDofProtocol::new(2.5, 1e-3, Hold::Duration(60.0));
            one_dof_protocol_report(&mut hinge, &proto).theta_p_release
        })
        .collect();
        assert!(
            (res[0] - res[1]).abs() < 1e-5 && (res[0] - res[2]).abs() < 1e-5,
            "clocks: {res:?}"
        );
        assert_dp(res[0], 0.6126, 4, "T8 T = 60");

        let r = run(
            false,
            true,
            2.5,
            Hold::Warp {
                n_steps: 50,
                dt_warp: 10.0,
            },
        );
        assert_dp(r.theta_p_release, 0.6931, 4, "T8 warp 500 s");
        assert_dp(r.theta_final, 0.6931, 4, "T8 warp 500 s, residual");

        // First yield from a virgin state: θ_p = (θ − εY0)·K̂_b/(K̂_b + K_h0), for every clock.
        for clock in [
            PlasticClock::Alg2,
            PlasticClock::Eq14,
            PlasticClock::AlwaysRunning,
        ] {
            let p = PlasticParams {
                k_h0: 3e-6,
                ..cotton_plastic(clock)
            };
            for theta in [2.3, -1.9, 1.8000001] {
                let mut st = PlasticState::new(&p);
                st.t_plastic = 42.0; // any clock value is reset by the first yield
                assert!(plastic_update(&mut st, &p, theta, 1e-3));
                let exact = (theta.abs() - p.eps_y0) * p.k_elastic / (p.k_elastic + p.k_h0);
                assert!((st.theta_p - theta.signum() * exact).abs() <= 1e-15 * exact.max(1e-300));
                assert_eq!(st.t_plastic, 0.0);
                assert_eq!(st.dir, theta.signum() as i8);
                assert_eq!(st.eps_hp, st.theta_p.abs());
            }
        }
        // ... and the first yielding step of the T8 load (k = 721: θ = 1.8025;
        // k = 720 gives θ = 1.8 = εY0 exactly, which does not yield: strict '>').
        let mut hinge = protocol_hinge(false, true, PlasticClock::Alg2);
        for k in 0..1000 {
            let theta = 2.5 * k as f64 / 1000.0;
            hinge.update(theta, 1e-3);
            if hinge.theta_p() != 0.0 {
                assert_eq!(k, 721);
                assert!((hinge.theta_p() - (theta - 1.8) * 0.5).abs() < 1e-15);
                break;
            }
        }
    }

    // ---- T9 ---------------------------------------------------------------

    /// T9: friction and plasticity, Θ = 2.5: residuals vs hold, warp versions,
    /// and dt independence of θ_p after a 60 s hold.
    #[test]
    fn t9_both_on() {
        for (t, want) in [
            (0.0, 0.5516),
            (1.0, 0.5574),
            (10.0, 0.6087),
            (30.0, 1.7702),
            (100.0, 1.8233),
            (500.0, 1.8310),
        ] {
            let r = run(true, true, 2.5, Hold::Duration(t));
            assert_dp(r.theta_final, want, 4, &format!("T9 residual at T = {t}"));
        }
        let r = run(
            true,
            true,
            2.5,
            Hold::Warp {
                n_steps: 50,
                dt_warp: 0.0,
            },
        );
        assert_dp(r.theta_final, 0.5519, 4, "T9 warp 0");
        let r = run(
            true,
            true,
            2.5,
            Hold::Warp {
                n_steps: 50,
                dt_warp: 10.0,
            },
        );
        assert_dp(r.theta_final, 1.8310, 4, "T9 warp 10 s");

        // dt independence: load over 1 s (round(1/h) steps), hold 60 s, θ_p at release.
        for (h, want) in [(1e-3f64, 0.6126), (1e-2, 0.6125), (1e-1, 0.6119)] {
            let mut hinge = protocol_hinge(true, true, PlasticClock::Alg2);
            let proto = OneDofProtocol {
                n_load: (1.0 / h).round() as usize,
                ..OneDofProtocol::new(2.5, h, Hold::Duration(60.0))
            };
            let r = one_dof_protocol_report(&mut hinge, &proto);
            assert_dp(r.theta_p_release, want, 4, &format!("T9 θ_p at h = {h}"));
        }
    }

    // ---- T10 --------------------------------------------------------------

    /// Loop areas `∮ m dθ` (trapezoid rule) per cycle of θ = A sin(2πt/P),
    /// friction only with κ_f s = 1, `n` steps per cycle.
    fn friction_loop_areas(fp: FrictionParams, amp: f64, period: f64, n: usize, cycles: usize) -> Vec<f64> {
        let mut hinge = SingleHinge::new(0.0, 1.0, 1.0).with_friction(fp);
        hinge.validate().unwrap();
        let h = period / n as f64;
        let mut areas = vec![0.0; cycles];
        let (mut th_prev, mut m_prev) = (0.0, 0.0);
        for k in 0..=cycles * n {
            let th = amp * (2.0 * std::f64::consts::PI * k as f64 / n as f64).sin();
            let m = hinge.update(th, h); // κ_b = 0: m = κ_f s Δ
            if k > 0 {
                areas[(k - 1) / n] += 0.5 * (m + m_prev) * (th - th_prev);
            }
            (th_prev, m_prev) = (th, m);
        }
        areas
    }

    /// T10: hysteresis of the friction element: 0.16000 (= 4 s κ_f ε0 (A − ε0))
    /// for A = 0.5 at P = 2 s and 20 s (rate independent), 0.15996 at 200
    /// steps/cycle, 0 for A = 0.05; with dwell 0.3600/0.3602/0.3640/0.5503 for
    /// P = 0.5/2/10/50 s and 0 at P = 200 s.
    #[test]
    fn t10_hysteresis_loop() {
        let no_dwell = FrictionParams {
            eps0: 0.1,
            eps_inf: 0.1,
            tau: 30.0,
        };
        let analytic = 4.0 * 1.0 * no_dwell.eps0 * (0.5 - no_dwell.eps0);
        assert_dp(analytic, 0.16000, 5, "analytic loop area");
        for (amp, period, n, want) in [
            (0.5, 2.0, 2000, 0.16000),
            (0.5, 20.0, 2000, 0.16000),
            (0.5, 2.0, 200, 0.15996),
            (0.05, 2.0, 2000, 0.0),
        ] {
            let a = friction_loop_areas(no_dwell, amp, period, n, 3);
            assert_dp(
                a[2],
                want,
                5,
                &format!("T10 A = {amp}, P = {period}, {n} steps/cycle"),
            );
            assert!(a.iter().all(|&x| x >= -1e-12), "negative dissipation {a:?}");
        }
        for (period, want) in [
            (0.5, 0.3600),
            (2.0, 0.3602),
            (10.0, 0.3640),
            (50.0, 0.5503),
            (200.0, 0.0),
        ] {
            let a = friction_loop_areas(cotton_friction(), 1.0, period, 2000, 3);
            assert_dp(a[2], want, 4, &format!("T10 dwell, P = {period}"));
            assert!(a.iter().all(|&x| x >= -1e-12), "negative dissipation {a:?}");
        }
    }

    // ---- T11 --------------------------------------------------------------

    /// T11: breakaway deviation after a dwell of T at θ = 0 (h = 1e-2), then a
    /// ramp in 1e-4 steps with h = 1e-9: 0.1001, 0.5536, 1.1114, 1.6430, 1.7000.
    #[test]
    fn t11_breakaway_vs_dwell() {
        let fp = cotton_friction();
        for (t, want) in [
            (0.0, 0.1001),
            (10.0, 0.5536),
            (30.0, 1.1114),
            (100.0, 1.6430),
            (300.0, 1.7000),
        ] {
            let mut st = FrictionState::default();
            for _ in 0..(t / 1e-2f64).round() as usize {
                friction_update(&mut st, &fp, 0.0, 1e-2);
            }
            assert!(st.anchor == 0.0 && (st.t_stick - t).abs() < 1e-9);
            let analytic = fp.threshold(t);
            let mut j = 0u32;
            let dev = loop {
                j += 1;
                let theta = f64::from(j) * 1e-4;
                let anchor = st.anchor;
                friction_update(&mut st, &fp, theta, 1e-9);
                if st.t_stick == 0.0 {
                    break theta - anchor;
                }
            };
            assert_dp(dev, want, 4, &format!("T11 breakaway at T = {t}"));
            // The first slip is the first ramp point beyond the analytic threshold.
            assert!(
                dev > analytic && dev - 1e-4 <= analytic + 1e-9,
                "T = {t}: {dev} vs {analytic}"
            );
        }
    }

    // ---- T12 --------------------------------------------------------------

    /// T12: plastic cyclic loop θ = 2.5 sin(2πt/10), 10⁴ steps/cycle, 4 cycles,
    /// κ_b s = K̂_b = K_h0 = 1: dissipation 1.5545 in cycle 1 (ε_hp += 0.7214),
    /// then |·| < 1e-3 (shakedown); never < −1e-6.
    #[test]
    fn t12_plastic_cyclic_loop() {
        let p = PlasticParams {
            eps_y0: 1.8,
            k_h0: 1.0,
            g: 0.99,
            tau: 30.0,
            k_elastic: 1.0,
            clock: PlasticClock::Alg2,
        };
        let mut hinge = SingleHinge::new(1.0, 0.0, 1.0).with_plastic(p);
        hinge.validate().unwrap();
        let n = 10_000usize;
        let h = 10.0 / n as f64;
        let mut diss = [0.0; 4];
        let mut ehp = [0.0; 5];
        let (mut th_prev, mut m_prev) = (0.0, 0.0);
        for k in 0..=4 * n {
            let th = 2.5 * (2.0 * std::f64::consts::PI * k as f64 / n as f64).sin();
            let m = hinge.update(th, h);
            if k > 0 {
                diss[(k - 1) / n] += 0.5 * (m + m_prev) * (th - th_prev);
            }
            if k % n == 0 {
                ehp[k / n] = hinge.plastic.unwrap().1.eps_hp;
            }
            (th_prev, m_prev) = (th, m);
        }
        assert_dp(diss[0], 1.5545, 4, "T12 cycle 1 dissipation");
        assert_dp(ehp[1] - ehp[0], 0.7214, 4, "T12 cycle 1 ε_hp increment");
        for (c, d) in diss.iter().enumerate().skip(1) {
            assert!(d.abs() < 1e-3, "T12 cycle {} dissipation {d}", c + 1);
        }
        assert!(diss.iter().all(|&d| d >= -1e-6), "negative dissipation {diss:?}");
    }

    // ---- further checks ---------------------------------------------------

    /// E2's 1-DOF predictions (§8): friction Φ = 1.0 → 0.2 (immediate) vs 0.6
    /// (held); plastic Φ = 2.6 → ≈ 0.40 vs 0.79.
    #[test]
    fn e2_one_dof_predictions() {
        let imm = Hold::Warp {
            n_steps: 50,
            dt_warp: 0.0,
        };
        let held = Hold::Warp {
            n_steps: 50,
            dt_warp: 10.0,
        };
        assert_dp(
            run(true, false, 1.0, imm).theta_final,
            0.2,
            3,
            "friction immediate",
        );
        assert_dp(run(true, false, 1.0, held).theta_final, 0.6, 3, "friction held");
        assert_dp(
            run(false, true, 2.6, imm).theta_final,
            0.40,
            2,
            "plastic immediate",
        );
        assert_dp(run(false, true, 2.6, held).theta_final, 0.79, 2, "plastic held");
    }

    /// A13: slip iff |d| > thr, yield iff |ε_e| > ε_Y (equality sticks / stays elastic).
    #[test]
    fn strict_comparisons() {
        let fp = FrictionParams {
            eps0: 0.25,
            eps_inf: 0.25,
            tau: 1.0,
        };
        let mut st = FrictionState::default();
        assert_eq!(friction_update(&mut st, &fp, 0.25, 0.5), 0.25);
        assert_eq!((st.anchor, st.t_stick), (0.0, 0.5));
        let d = friction_update(&mut st, &fp, (-0.25f64).next_down(), 0.5);
        assert_eq!(st.t_stick, 0.0);
        assert!((d + 0.25).abs() <= 1e-16, "Δ = {d}");

        let pp = PlasticParams {
            eps_y0: 0.5,
            k_h0: 1.0,
            g: 0.5,
            tau: 1.0,
            k_elastic: 1.0,
            clock: PlasticClock::Alg2,
        };
        let mut ps = PlasticState::new(&pp);
        assert!(!plastic_update(&mut ps, &pp, -0.5, 0.1));
        assert_eq!(ps, PlasticState::new(&pp));
        assert!(plastic_update(&mut ps, &pp, 0.5f64.next_up(), 0.1));
    }

    /// After a slip, an update at the same θ sticks (the anchor is rounded
    /// towards θ), so the dwell clock runs during a hold. Without this, the
    /// exact-arithmetic `|θ − θ_a| = thr` can round to `> thr` (e.g. θ = 1.5,
    /// ε0 = 0.1) and the hinge re-slips every step.
    #[test]
    fn slip_then_hold_sticks() {
        let mut rng = Rng(99);
        for _ in 0..100_000 {
            let fp = FrictionParams {
                eps0: rng.range(0.0, 0.5),
                eps_inf: 1.0,
                tau: 10.0,
            };
            let theta = rng.range(-4.0, 4.0);
            let mut st = FrictionState {
                anchor: theta + rng.range(-3.0, 3.0),
                t_stick: 0.0,
            };
            let thr = fp.threshold(0.0);
            let slipped = (theta - st.anchor).abs() > thr;
            friction_update(&mut st, &fp, theta, 1e-3);
            assert!((theta - st.anchor).abs() <= thr);
            if slipped {
                assert_eq!(st.t_stick, 0.0);
                assert!(((theta - st.anchor).abs() - thr).abs() <= 1e-15 * theta.abs().max(1.0));
                friction_update(&mut st, &fp, theta, 1e-3);
                assert_eq!(st.t_stick, 1e-3, "re-slipped at θ = {theta}, ε0 = {}", fp.eps0);
            }
        }
        // The case that exposed it: θ = 1.5 after the T7 load.
        let fp = cotton_friction();
        let mut st = FrictionState {
            anchor: 1.3985,
            t_stick: 0.0,
        };
        friction_update(&mut st, &fp, 1.5, 1e-3);
        friction_update(&mut st, &fp, 1.5, 1e-3);
        assert_eq!(st.t_stick, 1e-3);
    }

    /// A2: the three clock semantics after unloading, reloading and reversal.
    #[test]
    fn plastic_clock_variants() {
        let h = 0.1;
        let run = |clock| {
            let p = PlasticParams {
                eps_y0: 1.0,
                k_h0: 1.0,
                g: 0.5,
                tau: 10.0,
                k_elastic: 1.0,
                clock,
            };
            let mut st = PlasticState::new(&p);
            let mut clocks = Vec::new();
            // yield ×3 (+), unload ×2, reload beyond the yield surface (+), reverse (−)
            for theta in [1.5, 1.6, 1.7, 0.0, 0.0, 2.5, -3.0] {
                plastic_update(&mut st, &p, theta, h);
                clocks.push((st.t_plastic * 1e6).round() / 1e6);
            }
            clocks
        };
        assert_eq!(run(PlasticClock::Alg2), [0.0, 0.1, 0.2, 0.2, 0.2, 0.3, 0.0]);
        assert_eq!(run(PlasticClock::Eq14), [0.0, 0.1, 0.2, 0.0, 0.0, 0.1, 0.0]);
        assert_eq!(
            run(PlasticClock::AlwaysRunning),
            [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.0]
        );
    }

    /// §4.6: the warp adds to both clocks; a warped dwell raises the threshold.
    #[test]
    fn warp_adds_to_both_clocks() {
        let fp = cotton_friction();
        let pp = cotton_plastic(PlasticClock::Alg2);
        let mut fs = FrictionState {
            anchor: 0.3,
            t_stick: 1.0,
        };
        let mut ps = PlasticState {
            t_plastic: 2.0,
            ..PlasticState::new(&pp)
        };
        warp_clocks(&mut fs, &mut ps, 10.0);
        assert_eq!((fs.t_stick, ps.t_plastic, fs.anchor), (11.0, 12.0, 0.3));
        assert!(fp.threshold(fs.t_stick) > fp.threshold(1.0));
        assert_eq!(fp.threshold(0.0), fp.eps0);
        assert!((fp.threshold(1e6) - fp.eps_inf).abs() < 1e-15);
        assert_eq!(pp.hardening_modulus(0.0), pp.k_h0);
        assert!((pp.hardening_modulus(1e6) - (1.0 - pp.g) * pp.k_h0).abs() < 1e-20);
    }

    /// App. A.1: Dahl saturates at ±σ_s, does not move for δ = 0, and its
    /// tangent matches the finite difference of the update from σ_f = 0.
    #[test]
    fn dahl_baseline() {
        let p = DahlParams {
            sigma_s: 2.0,
            eps_s: 0.1,
        };
        p.validate("dahl").unwrap();
        let mut s = 0.0;
        for _ in 0..200 {
            dahl_update(&mut s, &p, 0.01);
            assert!(s.abs() <= p.sigma_s);
        }
        assert!((s - 2.0).abs() < 1e-6);
        let before = s;
        assert_eq!(dahl_update(&mut s, &p, 0.0), p.sigma_s / p.eps_s);
        assert_eq!(s, before);
        for _ in 0..400 {
            dahl_update(&mut s, &p, -0.01);
        }
        assert!((s + 2.0).abs() < 1e-6);
        // Tangent vs central difference of the update, from σ_f = 0.
        let (d, e) = (0.03, 1e-6);
        let upd = |delta: f64| {
            let mut s = 0.0;
            dahl_update(&mut s, &p, delta);
            s
        };
        let fd = (upd(d + e) - upd(d - e)) / (2.0 * e);
        let mut s0 = 0.0;
        let tangent = dahl_update(&mut s0, &p, d);
        assert!((tangent - fd).abs() < 1e-6 * tangent, "{tangent} vs {fd}");
    }

    /// Invalid parameters give `Error::InvalidInput` naming the element and field.
    #[test]
    fn validation_rejects_bad_parameters() {
        let is_invalid = |r: Result<()>, words: &[&str]| match r {
            Err(Error::InvalidInput(msg)) => {
                for w in words {
                    assert!(msg.contains(w), "message {msg:?} lacks {w:?}");
                }
            }
            other => panic!("expected InvalidInput, got {other:?}"),
        };
        let f = cotton_friction();
        f.validate("bend friction").unwrap();
        is_invalid(
            FrictionParams { eps0: -0.1, ..f }.validate("bend friction"),
            &["bend friction", "eps0"],
        );
        is_invalid(
            FrictionParams { eps0: f64::NAN, ..f }.validate("bend friction"),
            &["eps0", "finite"],
        );
        is_invalid(FrictionParams { eps_inf: 0.05, ..f }.validate("x"), &["eps_inf"]);
        is_invalid(
            FrictionParams {
                eps_inf: f64::INFINITY,
                ..f
            }
            .validate("x"),
            &["eps_inf"],
        );
        is_invalid(FrictionParams { tau: 0.0, ..f }.validate("x"), &["tau"]);
        is_invalid(FrictionParams { tau: -1.0, ..f }.validate("x"), &["tau"]);

        let p = cotton_plastic(PlasticClock::Alg2);
        p.validate("bend plastic").unwrap();
        is_invalid(
            PlasticParams { eps_y0: -1.0, ..p }.validate("bend plastic"),
            &["bend plastic", "eps_y0"],
        );
        is_invalid(
            PlasticParams {
                eps_y0: f64::NAN,
                ..p
            }
            .validate("x"),
            &["eps_y0"],
        );
        is_invalid(PlasticParams { k_h0: -1.0, ..p }.validate("x"), &["k_h0"]);
        is_invalid(PlasticParams { g: 1.5, ..p }.validate("x"), &["g "]);
        is_invalid(PlasticParams { g: -0.1, ..p }.validate("x"), &["g "]);
        is_invalid(PlasticParams { g: f64::NAN, ..p }.validate("x"), &["g "]);
        is_invalid(PlasticParams { tau: 0.0, ..p }.validate("x"), &["tau"]);
        is_invalid(
            PlasticParams { k_elastic: 0.0, ..p }.validate("x"),
            &["k_elastic"],
        );
        is_invalid(
            PlasticParams {
                k_elastic: f64::NAN,
                ..p
            }
            .validate("x"),
            &["k_elastic"],
        );

        let d = DahlParams {
            sigma_s: 1.0,
            eps_s: 0.1,
        };
        is_invalid(
            DahlParams { sigma_s: -1.0, ..d }.validate("dahl"),
            &["dahl", "sigma_s"],
        );
        is_invalid(DahlParams { eps_s: 0.0, ..d }.validate("dahl"), &["eps_s"]);
        is_invalid(DahlParams { eps_s: f64::NAN, ..d }.validate("dahl"), &["eps_s"]);

        is_invalid(SingleHinge::new(-1.0, 0.0, 1.0).validate(), &["kappa_b"]);
        is_invalid(SingleHinge::new(1.0, 0.0, 0.0).validate(), &["s "]);
        is_invalid(
            SingleHinge::new(1.0, 1.0, 1.0)
                .with_friction(FrictionParams { tau: -1.0, ..f })
                .validate(),
            &["tau"],
        );
        is_invalid(
            OneDofProtocol::new(1.0, 0.0, Hold::Duration(1.0)).validate(),
            &["h "],
        );
        is_invalid(
            OneDofProtocol::new(1.0, 1e-3, Hold::Duration(f64::NAN)).validate(),
            &["hold"],
        );
        is_invalid(
            OneDofProtocol::new(
                1.0,
                1e-3,
                Hold::Warp {
                    n_steps: 5,
                    dt_warp: -1.0,
                },
            )
            .validate(),
            &["dt_warp"],
        );
    }
}
