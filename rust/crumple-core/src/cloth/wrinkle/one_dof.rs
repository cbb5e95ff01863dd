//! A 1-DOF hinge driver (spec §4.4, §9): one hinge driven by a prescribed
//! angle through load, hold and quasi-static release, for tests T7–T12 and
//! experiment E1.

use super::*;
use crate::{Result, invalid};

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
