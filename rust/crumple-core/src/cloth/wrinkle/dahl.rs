//! The Dahl friction baseline (spec App. A.1) of experiment E9.

use super::require_finite;
use crate::{Result, invalid};

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
