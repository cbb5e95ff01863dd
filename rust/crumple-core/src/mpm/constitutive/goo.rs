//! Goo / slime: viscoplastic von Mises on the Hencky strain. **Our choice**: the paper uses goo and
//! slime (Figs. 18, 19) but gives no model (spec `mpm_anisotropic.md` §4.6, §9 A20); this follows the
//! Bingham-type viscoplasticity of Yue et al. 2015 in its simplest form.
//!
//! Elastic response: the Hencky StVK energy ([`hencky_piola`](super::hencky_piola)) with `μ`, `λ`.
//! Plasticity, applied to `F^E = U Σ Vᵀ` after each step with `ε = ln max(|Σ|, 1e-4)`:
//!
//! ```text
//! e = ε − (tr ε/3)·1              deviatoric Hencky strain; dev τ = 2μ e (Kirchhoff)
//! yield:   ‖dev τ‖ ≤ s_Y = sqrt(2/3) τ_Y   ⇔   ‖e‖ ≤ e_Y = s_Y/(2μ)
//! flow:    ε̇_p = (‖dev τ‖ − s_Y)/(2η) · e/‖e‖    (Perzyna/Bingham, viscosity η)
//! ```
//!
//! At fixed total strain the excess `Δ = ‖e‖ − e_Y` then obeys `Δ̇ = −(μ/η) Δ`, which we integrate
//! exactly over the step: `Δ ← Δ exp(−μ Δt/η)` (unconditionally stable for any `Δt`, `η`). `η = 0`
//! is rate-independent von Mises (instant return to the yield surface); `η → ∞` is elastic. The
//! direction of `e` and the volumetric part `tr ε` are kept, so plastic flow is isochoric and the
//! material stays elastic in pure compression/expansion. With `τ_Y = 0` this is a Maxwell fluid of
//! viscosity `η` and relaxation time `η/μ`.

use super::hencky::hencky_strain;
use super::{SQRT_2_3, is_positive, lame_parameters};
use crate::Result;
use crate::math::{Mat3, Real, Vec3, svd3};

/// Goo parameters (spec §4.6, our model; module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GooParams<T> {
    /// Shear modulus `μ` of the Hencky energy.
    pub mu: T,
    /// Lamé `λ` of the Hencky energy.
    pub lambda: T,
    /// Uniaxial yield stress `τ_Y` (Pa); the von Mises radius is `sqrt(2/3) τ_Y`.
    pub yield_stress: T,
    /// Viscosity `η` (Pa·s) of the relaxation of the stress excess; 0 = instant (rate-independent).
    pub viscosity: T,
}

impl<T: Real> GooParams<T> {
    /// Parameters from user values: `E`, `ν`, yield stress `τ_Y` (Pa) and viscosity `η` (Pa·s).
    ///
    /// Errors ([`Error::InvalidInput`](crate::Error::InvalidInput), naming the parameter): negative or
    /// non-finite `youngs_modulus`, `yield_stress` or `viscosity`; `poisson_ratio` outside `(−1, 0.5)`.
    pub fn from_material(
        youngs_modulus: f64,
        poisson_ratio: f64,
        yield_stress: f64,
        viscosity: f64,
    ) -> Result<Self> {
        let (mu, lambda) = lame_parameters(youngs_modulus, poisson_ratio)?;
        crate::validate::non_negative("yield_stress", yield_stress)?;
        crate::validate::non_negative("viscosity", viscosity)?;
        Ok(Self {
            mu: T::from_f64(mu),
            lambda: T::from_f64(lambda),
            yield_stress: T::from_f64(yield_stress),
            viscosity: T::from_f64(viscosity),
        })
    }
}

/// Viscoplastic return map of the goo model over a step `dt` (module docs): relaxes the deviatoric
/// Hencky strain beyond the von Mises yield surface by `exp(−μ dt/η)` and returns the new `F^E`.
///
/// At or below yield (`2μ‖e‖ ≤ sqrt(2/3) τ_Y`), or with `μ = 0`, the input is returned bit for bit.
/// Above yield `F^E ← U exp(ε') Vᵀ` with `tr ε' = tr ε` and `e' ∥ e`.
pub fn goo_return_map<T: Real>(p: &GooParams<T>, f: &Mat3<T>, dt: T) -> Mat3<T> {
    if !is_positive(p.mu) {
        return *f;
    }
    let d = svd3(f);
    let (eps, _) = hencky_strain(&d);
    let third = (eps.x + eps.y + eps.z) / T::from_f64(3.0);
    let e = eps - Vec3::splat(third);
    let e_norm = e.norm();
    let e_yield = T::from_f64(SQRT_2_3) * p.yield_stress / (T::TWO * p.mu);
    // Also true for a NaN strain (non-finite input), which is then left for the solver to report.
    if !is_positive(e_norm - e_yield) {
        return *f;
    }
    let decay = if p.viscosity > T::ZERO {
        (-p.mu * dt / p.viscosity).exp()
    } else {
        T::ZERO
    };
    let target = e_yield + (e_norm - e_yield) * decay;
    let scale = target / e_norm;
    let h = Vec3::splat(third) + e * scale;
    d.recompose(Vec3::new(h.x.exp(), h.y.exp(), h.z.exp()))
}

super::impl_params_cast!(GooParams {
    mu,
    lambda,
    yield_stress,
    viscosity
});

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    fn params(viscosity: f64) -> GooParams<f64> {
        GooParams::from_material(1.0e4, 0.35, 300.0, viscosity).unwrap()
    }

    /// `(tr ε, e)` of `F` (no clamp needed in these tests).
    fn strain(f: &Mat3<f64>) -> (f64, Vec3<f64>, Mat3<f64>, Mat3<f64>) {
        let d = svd3(f);
        let eps = Vec3::new(d.sigma.x.ln(), d.sigma.y.ln(), d.sigma.z.ln());
        let tr = eps.x + eps.y + eps.z;
        (tr, eps - Vec3::splat(tr / 3.0), d.u, d.v)
    }

    #[test]
    fn goo_validation() {
        for (r, name) in [
            (
                GooParams::<f64>::from_material(-1.0, 0.3, 1.0, 1.0),
                "youngs_modulus",
            ),
            (
                GooParams::<f64>::from_material(1.0, 0.3, -1.0, 1.0),
                "yield_stress",
            ),
            (
                GooParams::<f64>::from_material(1.0, 0.3, 1.0, f64::NAN),
                "viscosity",
            ),
        ] {
            let msg = r.unwrap_err().to_string();
            assert!(msg.contains(name), "{msg} should name {name}");
        }
    }

    #[test]
    fn goo_below_yield_unchanged() {
        let p = params(10.0);
        let mut g = rng(61);
        let e_y = (2.0f64 / 3.0).sqrt() * p.yield_stress / (2.0 * p.mu);
        let mut n = 0;
        for _ in 0..500 {
            let f = near_identity(&mut g, 0.02);
            let (_, e, _, _) = strain(&f);
            if e.norm() <= e_y {
                n += 1;
                assert_eq!(goo_return_map(&p, &f, 1e-3), f);
            }
        }
        assert!(n > 50, "{n}");
        // Pure volume change never yields, however large.
        let f = Mat3::<f64>::identity() * 0.5;
        assert_eq!(goo_return_map(&p, &f, 1e-3), f);
    }

    #[test]
    fn goo_excess_relaxes_toward_yield_surface() {
        let mut g = rng(62);
        for _ in 0..300 {
            let f = near_identity(&mut g, 0.3);
            let (tr, e, _, _) = strain(&f);
            let dt = 1e-3;
            for eta in [0.0, 1.0, 10.0, 1e9] {
                let p = params(eta);
                let e_y = (2.0f64 / 3.0).sqrt() * p.yield_stress / (2.0 * p.mu);
                if e.norm() <= e_y {
                    continue;
                }
                let fnew = goo_return_map(&p, &f, dt);
                let (tr2, e2, _, _) = strain(&fnew);
                // Volume part untouched.
                assert!((tr2 - tr).abs() < 1e-13 && (fnew.determinant() - f.determinant()).abs() < 1e-13);
                // The excess decays by exactly exp(−μ dt/η) and stays ≥ 0.
                let want = if eta > 0.0 { (-p.mu * dt / eta).exp() } else { 0.0 };
                let got = (e2.norm() - e_y) / (e.norm() - e_y);
                assert!((got - want).abs() < 1e-9, "η = {eta}: ratio {got} vs {want}");
                assert!(e2.norm() >= e_y - 1e-14 && e2.norm() <= e.norm() + 1e-14);
                // Deviatoric direction kept: e2 ∥ e (same principal frame, same ordering).
                let cos = e2.dot(e) / (e2.norm() * e.norm());
                assert!((cos - 1.0).abs() < 1e-10 || e2.norm() < 1e-12, "cos = {cos}");
                if eta == 0.0 {
                    // On the yield surface: ‖dev τ‖ = sqrt(2/3) τ_Y.
                    let s = 2.0 * p.mu * e2.norm();
                    assert!((s - (2.0f64 / 3.0).sqrt() * p.yield_stress).abs() < 1e-9 * p.yield_stress);
                }
            }
        }
    }

    #[test]
    fn goo_f32_smoke() {
        let p = params(1.0);
        let p32 = p.cast::<f32>();
        let mut g = rng(63);
        for _ in 0..100 {
            let f = round_to::<f32>(&near_identity(&mut g, 0.3));
            let a = goo_return_map(&p, &f, 1e-3);
            let b = goo_return_map(&p32, &f.cast::<f32>(), 1e-3f32);
            assert!(b.is_finite() && rel_err(&b.cast(), &a, 1.0) < 1e-5);
        }
    }
}
