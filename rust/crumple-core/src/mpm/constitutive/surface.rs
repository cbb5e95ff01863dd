//! Surfaces (cloth, m = 2): the QR-based anisotropic energy of spec `mpm_anisotropic.md` §4.3 with the
//! stress of §4.2, and the Coulomb return map of §5.1.
//!
//! Input is always the element's `F̃` in its orthonormal rest frame (§2.3): columns 1–2 are the
//! mesh-derived tangents `Ds Dm⁻¹`, column 3 is the advected normal `d_3`. `F̃ = Q R̃` with
//! `Q ∈ SO(3)` and signed `r33` ([`qr3`], §4.1). The energy only sees `R̃`:
//!
//! ```text
//! ψ̂ = h(R_in) + (γ/2)(r13² + r23²) + f(r33)
//! h = μ‖R_in − U_in‖² + (λ/2)(r11 r22 − 1)²      (2-D fixed corotated, U_in = polar rotation)
//! f = (k/3)(1 − r33)³ for r33 ≤ 1, else 0          (compression-only normal stiffness)
//! ```

use super::{ReturnEvent, friction_angle_radians, lame_parameters, piola_from_a, qr_unusable};
use crate::Result;
use crate::math::{Mat3, Qr3, Real, Vec3, qr3};

/// Material parameters of a surface (spec §4.3, §5.1, Table 1 of §6.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceParams<T> {
    /// In-plane shear modulus `μ` of the 2-D corotated energy `h` (from `E`, `ν`, §2.5).
    pub mu: T,
    /// In-plane Lamé `λ` of `h` (3-D formula, §9 A11).
    pub lambda: T,
    /// Shear stiffness `γ` of the normal (sliding resistance, §4.3).
    pub gamma: T,
    /// Normal compression (contact) stiffness `k` (§4.3, §9 A12).
    pub k: T,
    /// Friction coefficient `c_F = tan Φ_F` (§5.1).
    pub c_f: T,
}

impl<T: Real> SurfaceParams<T> {
    /// Parameters from user values (spec §2.5, §6.1): Young's modulus `E` and Poisson ratio `ν` of the
    /// in-plane energy, normal shear stiffness `γ`, normal compression stiffness `k`, and the friction
    /// angle `Φ_F` in degrees (`c_F = tan Φ_F`).
    ///
    /// Errors ([`Error::InvalidInput`](crate::Error::InvalidInput), naming the parameter): a negative
    /// or non-finite `youngs_modulus`, `gamma` or `k`; `poisson_ratio` outside `(−1, 0.5)`;
    /// `friction_angle` outside `[0, 90)`.
    pub fn from_material(
        youngs_modulus: f64,
        poisson_ratio: f64,
        gamma: f64,
        k: f64,
        friction_angle_deg: f64,
    ) -> Result<Self> {
        let (mu, lambda) = lame_parameters(youngs_modulus, poisson_ratio)?;
        crate::validate::non_negative("gamma (shear stiffness of the normal)", gamma)?;
        crate::validate::non_negative("k (normal compression stiffness)", k)?;
        let phi = friction_angle_radians(friction_angle_deg)?;
        Ok(Self {
            mu: T::from_f64(mu),
            lambda: T::from_f64(lambda),
            gamma: T::from_f64(gamma),
            k: T::from_f64(k),
            c_f: T::from_f64(phi.tan()),
        })
    }
}

/// `(cos θ, sin θ)` of the polar rotation `U_in = rot(θ)` of `R_in = [[r11, r12], [0, r22]]`,
/// `θ = atan2(−r12, r11 + r22)` (spec §4.3, Appendix A.1).
#[inline]
fn in_plane_rotation<T: Real>(r: &Mat3<T>) -> (T, T) {
    // (cos θ, sin θ) of θ = atan2(−r12, r11 + r22) without trigonometry: the
    // normalised vector itself (a hot path: once per element per step).
    let (x, y) = (r.m[0][0] + r.m[1][1], -r.m[0][1]);
    let n = x.hypot(y);
    if n > T::ZERO {
        (x / n, y / n)
    } else {
        (T::ONE, T::ZERO)
    }
}

/// Normal energy `f(r33) = (k/3)(1 − r33)³` for `r33 ≤ 1`, else 0, and `f'(r33) = −k(1 − r33)²`
/// (spec §4.3: compression only, C² at `r33 = 1`).
#[inline]
fn normal_energy<T: Real>(k: T, r33: T) -> (T, T) {
    if r33 <= T::ONE {
        let d = T::ONE - r33;
        (k * d * d * d / T::from_f64(3.0), -k * d * d)
    } else {
        (T::ZERO, T::ZERO)
    }
}

/// `ψ̂(R̃)` of spec §4.3 on the upper-triangular factor (entries below the diagonal are ignored).
#[inline]
pub fn surface_energy_r<T: Real>(p: &SurfaceParams<T>, r: &Mat3<T>) -> T {
    let (r11, r12, r13) = (r.m[0][0], r.m[0][1], r.m[0][2]);
    let (r22, r23, r33) = (r.m[1][1], r.m[1][2], r.m[2][2]);
    let (c, s) = in_plane_rotation(r);
    // ‖R_in − U_in‖² with U_in = [[c, −s], [s, c]] and R_in's (1, 0) entry 0.
    let dist2 = (r11 - c) * (r11 - c) + (r12 + s) * (r12 + s) + s * s + (r22 - c) * (r22 - c);
    let j1 = r11 * r22 - T::ONE;
    let h = p.mu * dist2 + T::HALF * p.lambda * j1 * j1;
    h + T::HALF * p.gamma * (r13 * r13 + r23 * r23) + normal_energy(p.k, r33).0
}

/// `ψ(F̃) = ψ̂(R̃)` with `F̃ = Q R̃` (spec §4.3). Defined for every `F̃` (no division).
#[inline]
pub fn surface_energy<T: Real>(p: &SurfaceParams<T>, f: &Mat3<T>) -> T {
    surface_energy_r(p, &qr3(f).r)
}

/// The symmetric matrix `A = sym_up((∂ψ̂/∂R̃) R̃ᵀ)` in closed form (spec §4.3, "Explicit A"):
///
/// ```text
/// τ_in       = 2μ (R_in − U_in) R_inᵀ + λ (J_in − 1) J_in I₂
/// A[0:2,0:2] = τ_in + γ s sᵀ,   A[0:2,2] = γ r33 s,   A[2,2] = f'(r33) r33,   s = (r13, r23)
/// ```
///
/// `A / J` is the Cauchy stress in the `Q` basis (§4.2).
#[inline]
pub fn surface_a<T: Real>(p: &SurfaceParams<T>, r: &Mat3<T>) -> Mat3<T> {
    let (r11, r12, r13) = (r.m[0][0], r.m[0][1], r.m[0][2]);
    let (r22, r23, r33) = (r.m[1][1], r.m[1][2], r.m[2][2]);
    let (c, s) = in_plane_rotation(r);
    let two_mu = T::TWO * p.mu;
    let jin = r11 * r22;
    let vol = p.lambda * (jin - T::ONE) * jin;
    // (R_in − U_in) R_inᵀ; only its upper triangle is used (it is symmetric up to rounding because
    // U_in is the polar rotation, and sym_up of the exact K is what the stress needs).
    let t00 = two_mu * ((r11 - c) * r11 + (r12 + s) * r12) + vol;
    let t01 = two_mu * (r12 + s) * r22;
    let t11 = two_mu * (r22 - c) * r22 + vol;
    let g = p.gamma;
    let (a02, a12) = (g * r33 * r13, g * r33 * r23);
    let a22 = normal_energy(p.k, r33).1 * r33;
    let (a00, a01, a11) = (t00 + g * r13 * r13, t01 + g * r13 * r23, t11 + g * r23 * r23);
    Mat3::from_rows_array([[a00, a01, a02], [a01, a11, a12], [a02, a12, a22]])
}

/// First Piola–Kirchhoff stress `P̃ = ∂ψ/∂F̃ = Q A R̃^{-T}` from a precomputed QR (spec §4.2, §4.3),
/// or `None` for a degenerate element (`r11` or `r22 < eps`, or non-finite `R̃`; §4.1, §5.5: the
/// solver then skips its stress this step). See [`default_degenerate_eps`](super::default_degenerate_eps).
///
/// Computed by back-substitution with the last row of `R̃⁻¹A` set analytically to
/// `(γ r13, γ r23, f'(r33))`, so `P̃` stays finite and continuous as `r33 → 0` and through inversion.
#[inline]
pub fn surface_piola_qr<T: Real>(p: &SurfaceParams<T>, qr: &Qr3<T>, eps: T) -> Option<Mat3<T>> {
    if qr_unusable(qr, eps) {
        return None;
    }
    let r = &qr.r;
    let a = surface_a(p, r);
    let g3 = [
        p.gamma * r.m[0][2],
        p.gamma * r.m[1][2],
        normal_energy(p.k, r.m[2][2]).1,
    ];
    Some(piola_from_a(qr, &a, g3))
}

/// [`surface_piola_qr`] on `qr3(f)`: `P̃(F̃)` or `None` for a degenerate element (spec §4.2, §4.3).
#[inline]
pub fn surface_piola<T: Real>(p: &SurfaceParams<T>, f: &Mat3<T>, eps: T) -> Option<Mat3<T>> {
    surface_piola_qr(p, &qr3(f), eps)
}

/// Yield function `y_S(R̃) = γ sqrt(r13² + r23²) − c_F k (1 − r33)²` (spec §5.1; the common factor
/// `1/(r11 r22)` of `f_f` and `f_n` cancels). For `r33 > 1` the normal force is 0, so `y_S = γ|s|`.
#[inline]
pub fn surface_yield<T: Real>(p: &SurfaceParams<T>, r: &Mat3<T>) -> T {
    let fn_ = -normal_energy(p.k, r.m[2][2]).1;
    p.gamma * r.m[0][2].hypot(r.m[1][2]) - p.c_f * fn_
}

/// The projection of spec §5.1 on `R̂` itself: returns the projected `R` (only `r13`, `r23`, `r33`
/// may change) and what happened.
///
/// * `r̂33 > 1` (separation): `r13 = r23 = 0`, `r33 = 1`, zero traction ([`ReturnEvent::Tension`]).
/// * `r̂33 < 0` (normal inverted, "red" case): `r13 = r23 = 0`, `r33` kept (clamped to `≥ −1` when
///   `clamp_inverted`) so elasticity pushes it back ([`ReturnEvent::Inverted`], §9 A13).
/// * otherwise (compression), if `γ|ŝ| > c_F k(1 − r̂33)²`: scale `(r13, r23)` by
///   `c_F k(1 − r̂33)²/(γ|ŝ|) ∈ [0, 1)` ([`ReturnEvent::Slide`], lands on `y_S = 0`, §9 A4); else
///   unchanged ([`ReturnEvent::Elastic`]). With `γ = 0` the shear carries no stress and is left as is
///   (no 0/0); with `c_F = 0` any shear is removed.
#[inline]
pub fn surface_project_r<T: Real>(
    p: &SurfaceParams<T>,
    r_hat: &Mat3<T>,
    clamp_inverted: bool,
) -> (Mat3<T>, ReturnEvent) {
    let mut r = *r_hat;
    let r33 = r_hat.m[2][2];
    if r33 > T::ONE {
        r.m[0][2] = T::ZERO;
        r.m[1][2] = T::ZERO;
        r.m[2][2] = T::ONE;
        return (r, ReturnEvent::Tension);
    }
    if r33 < T::ZERO {
        r.m[0][2] = T::ZERO;
        r.m[1][2] = T::ZERO;
        if clamp_inverted {
            r.m[2][2] = r33.max(-T::ONE);
        }
        return (r, ReturnEvent::Inverted);
    }
    if p.gamma == T::ZERO {
        return (r, ReturnEvent::Elastic);
    }
    let ff = p.gamma * r_hat.m[0][2].hypot(r_hat.m[1][2]);
    let d = T::ONE - r33;
    let limit = p.c_f * p.k * d * d;
    // `ff > limit ≥ 0` implies `ff > 0`, so the scale is a finite number in [0, 1).
    if ff > limit {
        let s = limit / ff;
        r.m[0][2] = s * r_hat.m[0][2];
        r.m[1][2] = s * r_hat.m[1][2];
        return (r, ReturnEvent::Slide);
    }
    (r, ReturnEvent::Elastic)
}

/// Surface return map (spec §5.1, §3.10): `(Q, R̂) = QR(F̃_trial)`, project `R̂ → R`
/// ([`surface_project_r`]), and return `F̃_new = Q R` with the event.
///
/// The tangent columns of the result are copied from `f_trial` (bit for bit: `Q R` reproduces them
/// only to rounding, and they belong to the mesh, §3.9); only the normal column `Q R[:, 2]` is new.
/// `Elastic` and `Degenerate` (`r11` or `r22 < eps`, or non-finite input, §5.5) return `f_trial`
/// unchanged. `clamp_inverted` optionally clamps `r33 ≥ −1` in the inverted case.
pub fn surface_return_map<T: Real>(
    p: &SurfaceParams<T>,
    f_trial: &Mat3<T>,
    eps: T,
    clamp_inverted: bool,
) -> (Mat3<T>, ReturnEvent) {
    let qr = qr3(f_trial);
    if qr_unusable(&qr, eps) || !f_trial.is_finite() {
        return (*f_trial, ReturnEvent::Degenerate);
    }
    let (r, event) = surface_project_r(p, &qr.r, clamp_inverted);
    if event == ReturnEvent::Elastic {
        return (*f_trial, event);
    }
    let mut out = *f_trial;
    out.set_col(2, qr.q * Vec3::new(r.m[0][2], r.m[1][2], r.m[2][2]));
    (out, event)
}

super::impl_params_cast!(SurfaceParams {
    mu,
    lambda,
    gamma,
    k,
    c_f
});

#[cfg(test)]
#[path = "surface_tests.rs"]
mod tests;
