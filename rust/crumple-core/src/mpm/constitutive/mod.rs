//! Constitutive models: one pure function per material and particle (spec `mpm_anisotropic.md` §4, §5).
//!
//! * Codimensional elements (type iii): [`surface`] (cloth, m = 2, §4.3, §5.1) and [`curve`] (yarn and
//!   hair, m = 1, §4.4, §5.2). Both take the element's `F̃` in its orthonormal rest frame (§2.3) and
//!   work on the upper-triangular factor `R̃` of `F̃ = Q R̃` ([`qr3`](crate::math::qr3), §4.1).
//! * Volumetric particles (type i): [`corotated`] (elastic solid), [`hencky`] (the St.Venant–Kirchhoff
//!   energy on Hencky strain shared by sand and goo), [`sand`] (Drucker–Prager with hardening, §5.4)
//!   and [`goo`] (viscoplastic von Mises, our choice, §4.6).
//!
//! Every function is pure, allocation-free and generic over [`Real`], so the f32 solver, the f64 tests
//! and the GPU kernels share one description of the math. Parameters are validated once, when a
//! material is built from user values (returning [`Error::InvalidInput`](crate::Error::InvalidInput));
//! the per-particle functions then trust them.

/// `cast<U>()` for a parameter struct whose fields are all `T`: the same
/// values in another precision (f64 setup, f32 solver).
macro_rules! impl_params_cast {
    ($name:ident { $($field:ident),* }) => {
        impl<T: crate::math::Real> $name<T> {
            /// The same parameters in another precision (f64 setup, f32 solver).
            pub fn cast<U: crate::math::Real>(&self) -> $name<U> {
                $name { $($field: U::from_f64(self.$field.to_f64())),* }
            }
        }
    };
}
pub(crate) use impl_params_cast;

pub mod corotated;
pub mod curve;
pub mod goo;
pub mod hencky;
pub mod sand;
pub mod surface;

#[cfg(test)]
pub(crate) mod test_util;

pub use corotated::{corotated_energy, corotated_piola};
pub use curve::{
    CurveParams, curve_a, curve_cross_yield, curve_energy, curve_energy_r, curve_fibre_yield, curve_piola,
    curve_piola_qr, curve_project_r, curve_return_map,
};
pub use goo::{GooParams, goo_return_map};
pub use hencky::{hencky_energy, hencky_piola};
pub use sand::{DpCase, SandParams, sand_return_map};
pub use surface::{
    SurfaceParams, surface_a, surface_energy, surface_energy_r, surface_piola, surface_piola_qr,
    surface_project_r, surface_return_map, surface_yield,
};

use crate::Result;
use crate::math::{Mat3, Qr3, Real};

/// Lower clamp of singular values before a logarithm (spec §4.4, §5.2, §5.4, §5.5: `max(σ, 1e-4)`),
/// so Hencky strains stay finite for collapsed or inverted elements.
pub const LOG_CLAMP: f64 = 1e-4;

/// `sqrt(2/3)` of the von Mises and Drucker–Prager forms (Klár et al. 2016; spec §5.4), rounded
/// once to `T` where used.
pub const SQRT_2_3: f64 = 0.816_496_580_927_726;

/// Degrees to radians for the hardened friction angle of sand (`SandParams::alpha`), rounded once
/// to `T` where used.
pub const DEG_TO_RAD: f64 = core::f64::consts::PI / 180.0;

/// What a return map did to one particle (spec §5.1, §5.2, §5.5), so the solver can count events
/// (a high `Inverted` rate means `Δt` is too large; `Degenerate` elements get no stress).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReturnEvent {
    /// Inside the yield surface: the deformation is returned unchanged (bit for bit).
    Elastic,
    /// Separation: surfaces `r̂33 > 1` (§5.1), curves `tr ε̂ ≥ 0` (§5.2). Normal-space stress reset to 0.
    Tension,
    /// Inverted normal: surface `r̂33 < 0` ("red" case, §5.1), curve `det R̂_3 < 0` (§5.5).
    Inverted,
    /// Projected onto the friction cone: surface shear scaled (§5.1), curve cross-section
    /// Drucker–Prager projection and/or fibre shear scaled (§5.2).
    Slide,
    /// `r11` or `r22` below the degeneracy threshold, or non-finite input: no projection (§4.1, §5.5).
    Degenerate,
}

/// Default degeneracy threshold on `r11`, `r22` of `F̃` (spec §4.1: `1e-10·L` in f64, `1e-6·L` in f32).
///
/// The tangent columns of `F̃ = Ds Dm⁻¹` are stretch ratios (the rest edge length `L` is already
/// divided out by `Dm⁻¹`), so the spec's `ε·L` threshold on `Ds` is `ε` on `F̃`.
#[inline]
pub fn default_degenerate_eps<T: Real>() -> T {
    if T::EPSILON.to_f64() < 1e-10 {
        T::from_f64(1e-10)
    } else {
        T::from_f64(1e-6)
    }
}

/// Kirchhoff stress `τ = P Fᵀ` (spec §3.3: type (i) uses `V_p⁰ P(F^E) F^Eᵀ`; for codimensional
/// elements `P̃ F̃ᵀ = Q A Qᵀ`, §4.2).
#[inline]
pub fn kirchhoff<T: Real>(p: &Mat3<T>, f: &Mat3<T>) -> Mat3<T> {
    *p * f.transpose()
}

/// `sym_up(K)`: the symmetric matrix whose upper triangle (diagonal included) equals that of `K`
/// (spec notation table, §4.2: `A = sym_up((∂ψ̂/∂R̃) R̃ᵀ)`).
#[inline]
pub fn sym_up<T: Real>(k: &Mat3<T>) -> Mat3<T> {
    let mut a = *k;
    for i in 0..3 {
        for j in 0..i {
            a.m[i][j] = k.m[j][i];
        }
    }
    a
}

/// `P̃ = Q A R̃^{-T}` by back-substitution (spec §4.2): `Y = R̃⁻¹ A` row by row from the bottom and
/// `P̃ = Q Yᵀ` (`A` symmetric).
///
/// The bottom row of `Y` is not `A[2]/r33` but is passed in as `g3 = (∂ψ̂/∂r13, ∂ψ̂/∂r23, ∂ψ̂/∂r33)`:
/// for any QR energy the last row of `A = sym_up((∂ψ̂/∂R̃)R̃ᵀ)` is exactly `r33 · g3`, so this is the
/// analytic cancellation of `r33` the spec asks for and `P̃` stays finite as `r33 → 0` (only `1/r11`
/// and `1/r22` remain; the caller guards them with the degeneracy test).
#[inline]
pub(crate) fn piola_from_a<T: Real>(qr: &Qr3<T>, a: &Mat3<T>, g3: [T; 3]) -> Mat3<T> {
    let r = &qr.r.m;
    let y2 = g3;
    let y1: [T; 3] = core::array::from_fn(|j| (a.m[1][j] - r[1][2] * y2[j]) / r[1][1]);
    let y0: [T; 3] = core::array::from_fn(|j| (a.m[0][j] - r[0][1] * y1[j] - r[0][2] * y2[j]) / r[0][0]);
    let y = [y0, y1, y2];
    let mut p = Mat3::zero();
    for (row, qi) in p.m.iter_mut().zip(qr.q.m.iter()) {
        for (pij, yj) in row.iter_mut().zip(y.iter()) {
            *pij = qi[0] * yj[0] + qi[1] * yj[1] + qi[2] * yj[2];
        }
    }
    p
}

/// `x > 0`, and `false` for NaN: guards that must also route NaN to their safe branch.
#[inline]
pub(crate) fn is_positive<T: Real>(x: T) -> bool {
    x > T::ZERO
}

/// Whether a QR factorisation is unusable for stress or plasticity (spec §4.1, §5.5): `r11` or `r22`
/// below `eps`, or any non-finite entry of `R̃`.
#[inline]
pub(crate) fn qr_unusable<T: Real>(qr: &Qr3<T>, eps: T) -> bool {
    qr.is_degenerate(eps) || !qr.r.is_finite()
}

/// `ln(max(σ, 1e-4))` (spec §4.4): the clamped Hencky strain of one signed singular value, and the
/// clamped value itself (the divisor of the stress, see [`curve`]).
#[inline]
pub(crate) fn clamped_log<T: Real>(sigma: T) -> (T, T) {
    let s = sigma.max(T::from_f64(LOG_CLAMP));
    (s.ln(), s)
}

/// Lamé parameters `μ = E/(2(1+ν))`, `λ = Eν/((1+ν)(1−2ν))` from Young's modulus and Poisson's ratio
/// (spec §2.5, 3-D formulas also for the 2×2 energies, §9 A11).
///
/// Errors name the parameter: `youngs_modulus` must be finite and `≥ 0`, `poisson_ratio` must lie in
/// the open interval `(−1, 0.5)` (at 0.5 `λ` is infinite, at −1 `μ` is).
pub fn lame_parameters(youngs_modulus: f64, poisson_ratio: f64) -> Result<(f64, f64)> {
    crate::validate::non_negative("youngs_modulus (E)", youngs_modulus)?;
    if !(poisson_ratio > -1.0 && poisson_ratio < 0.5) {
        return crate::invalid!(
            "poisson_ratio must lie strictly between -1 and 0.5 (0.5 is incompressible and makes lambda \
             infinite), got {poisson_ratio}"
        );
    }
    let (e, nu) = (youngs_modulus, poisson_ratio);
    Ok((e / (2.0 * (1.0 + nu)), e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))))
}

/// A friction angle in degrees, checked to lie in `[0, 90)` (spec §6.1: `c_F = tan Φ_F` is infinite at
/// 90°), returned in radians.
pub(crate) fn friction_angle_radians(degrees: f64) -> Result<f64> {
    if degrees.is_finite() && (0.0..90.0).contains(&degrees) {
        Ok(degrees.to_radians())
    } else {
        crate::invalid!("friction_angle must be in degrees within [0, 90), got {degrees}")
    }
}

/// Klár et al. 2016's Drucker–Prager coefficient `α = sqrt(2/3) · 2 sin Φ / (3 − sin Φ)` for a friction
/// angle in radians (spec §5.2 curves, §5.4 sand).
#[inline]
pub fn drucker_prager_alpha<T: Real>(friction_angle_rad: T) -> T {
    let s = friction_angle_rad.sin();
    T::from_f64(SQRT_2_3) * T::TWO * s / (T::from_f64(3.0) - s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lame_and_validation() {
        let (mu, la) = lame_parameters(400.0, 0.3).unwrap();
        assert!((mu - 153.846_153_846).abs() < 1e-6 && (la - 230.769_230_769).abs() < 1e-6);
        let msg = lame_parameters(-1.0, 0.3).unwrap_err().to_string();
        assert!(msg.contains("youngs_modulus"), "{msg}");
        for nu in [0.5, -1.0, 0.7, f64::NAN] {
            let msg = lame_parameters(1.0, nu).unwrap_err().to_string();
            assert!(msg.contains("poisson_ratio"), "{msg}");
        }
        assert!(lame_parameters(0.0, 0.0).is_ok());
        for deg in [-1.0, 90.0, f64::INFINITY] {
            assert!(
                friction_angle_radians(deg)
                    .unwrap_err()
                    .to_string()
                    .contains("friction_angle")
            );
        }
        // Table 1: Φ = 40° gives α = 0.4453, Φ = 10° gives 0.1003.
        assert!((drucker_prager_alpha(40f64.to_radians()) - 0.4453).abs() < 5e-5);
        assert!((drucker_prager_alpha(10f64.to_radians()) - 0.1003).abs() < 5e-5);
        assert_eq!(default_degenerate_eps::<f64>(), 1e-10);
        assert_eq!(default_degenerate_eps::<f32>(), 1e-6);
        // The named constants are the expressions they stand for, to the bit.
        assert_eq!(SQRT_2_3, (2.0f64 / 3.0).sqrt());
        assert_eq!(DEG_TO_RAD, 1f64.to_radians());
    }

    #[test]
    fn sym_up_and_kirchhoff() {
        let k = Mat3::<f64>::from_rows_array([[1.0, 2.0, 3.0], [9.0, 4.0, 5.0], [9.0, 9.0, 6.0]]);
        let a = sym_up(&k);
        assert_eq!(
            a,
            Mat3::from_rows_array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
        );
        let f = Mat3::<f64>::from_rows_array([[1.0, 0.5, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]);
        let t = kirchhoff(&Mat3::identity(), &f);
        assert_eq!(t, f.transpose());
    }
}
