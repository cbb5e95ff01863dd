//! Friction with dwell (spec §4.1, Alg. 1): a shifting anchor whose stick
//! threshold grows with the time the element has stuck.

use super::require_finite;
use crate::{Result, invalid};

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
