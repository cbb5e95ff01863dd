//! Sand: Drucker–Prager plasticity with hardening on the Hencky strain (Klár et al. 2016; spec
//! `mpm_anisotropic.md` §4.6, §5.4). The elastic response is [`hencky_piola`](super::hencky_piola).
//!
//! ```text
//! F^E = U Σ Vᵀ ;  ε = ln max(|Σ|, 1e-4) ;  e = ε − (tr ε/3)·1
//! φ_q = h0 + (h1 q − h3) exp(−h2 q)  (degrees) ;  α_q = sqrt(2/3)·2 sin φ_q/(3 − sin φ_q)
//! case II  (tr ε ≥ 0):   H = 0,                 δq = ‖ε‖_F     (expansion: cone tip, Σ = I)
//! case I   (δγ ≤ 0):     H = ε,                 δq = 0         (inside the cone)
//! case III (δγ > 0):     H = ε − δγ e/‖e‖,      δq = δγ        (onto the cone)
//! δγ = ‖e‖ + ((3λ + 2μ)/(2μ)) tr ε α_q ;  F^E ← U exp(H) Vᵀ ;  q ← q + δq
//! ```
//!
//! No cohesion (spec §5.4, §9 A22).

use super::hencky::hencky_strain;
use super::{DEG_TO_RAD, drucker_prager_alpha, is_positive, lame_parameters};
use crate::Result;
use crate::math::{Mat3, Real, Vec3, svd3};

/// Klár et al. 2016 sand density, kg/m³ (spec §4.6; the solver's mass uses it, not this module).
pub const KLAR_DENSITY: f64 = 2200.0;
/// Klár et al. 2016 Young's modulus, Pa (spec §4.6).
pub const KLAR_YOUNGS_MODULUS: f64 = 3.537e5;
/// Klár et al. 2016 Poisson ratio (spec §4.6).
pub const KLAR_POISSON_RATIO: f64 = 0.3;

/// Sand parameters (spec §4.6, §5.4): Lamé parameters of the Hencky energy and Klár's hardening
/// constants. `h0`, `h1`, `h3` are in degrees (the friction angle `φ_q = h0 + (h1 q − h3) e^{−h2 q}` is
/// in degrees), `h2` is dimensionless.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SandParams<T> {
    /// Shear modulus `μ` of the Hencky energy.
    pub mu: T,
    /// Lamé `λ` of the Hencky energy.
    pub lambda: T,
    /// Asymptotic friction angle `h0` (degrees; Klár 35°).
    pub h0: T,
    /// Hardening slope `h1` (degrees per unit `q`; Klár 9°).
    pub h1: T,
    /// Hardening decay `h2` (Klár 0.2).
    pub h2: T,
    /// Initial friction-angle deficit `h3` (degrees; Klár 10°): `φ_0 = h0 − h3`.
    pub h3: T,
}

/// What the sand return map did (spec §5.4, Klár's three cases), for counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DpCase {
    /// Case I: inside the cone (`δγ ≤ 0`), elastic.
    Elastic,
    /// Case II: expansion (`tr ε ≥ 0`), projected to the cone tip: `F^E = U Vᵀ` (`Σ = I`).
    Expansion,
    /// Case III: outside the cone in compression, projected onto it (volume preserved).
    Projected,
}

impl<T: Real> Default for SandParams<T> {
    /// Klár et al. 2016 sand (spec §4.6): `E = 3.537e5`, `ν = 0.3`, `h0 = 35°`, `h1 = 9°`, `h2 = 0.2`,
    /// `h3 = 10°`.
    fn default() -> Self {
        let e = KLAR_YOUNGS_MODULUS;
        let nu = KLAR_POISSON_RATIO;
        Self {
            mu: T::from_f64(e / (2.0 * (1.0 + nu))),
            lambda: T::from_f64(e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))),
            h0: T::from_f64(35.0),
            h1: T::from_f64(9.0),
            h2: T::from_f64(0.2),
            h3: T::from_f64(10.0),
        }
    }
}

impl<T: Real> SandParams<T> {
    /// Parameters from user values (spec §4.6, §5.4): `E`, `ν`, and Klár's hardening constants
    /// (`h0`, `h1`, `h3` in degrees).
    ///
    /// Errors ([`Error::InvalidInput`](crate::Error::InvalidInput), naming the parameter): negative or
    /// non-finite `youngs_modulus`, `poisson_ratio` outside `(−1, 0.5)`, `h0` outside `[0, 90)`,
    /// negative or non-finite `h1`, `h2`, `h3`, or `h3 > h0` (a negative initial friction angle).
    pub fn from_material(
        youngs_modulus: f64,
        poisson_ratio: f64,
        h0: f64,
        h1: f64,
        h2: f64,
        h3: f64,
    ) -> Result<Self> {
        let (mu, lambda) = lame_parameters(youngs_modulus, poisson_ratio)?;
        if !(h0.is_finite() && (0.0..90.0).contains(&h0)) {
            return crate::invalid!("h0 (sand friction angle, degrees) must be within [0, 90), got {h0}");
        }
        crate::validate::non_negative("h1 (sand hardening slope, degrees)", h1)?;
        crate::validate::non_negative("h2 (sand hardening decay)", h2)?;
        crate::validate::non_negative("h3 (sand initial friction deficit, degrees)", h3)?;
        if h3 > h0 {
            return crate::invalid!(
                "h3 (sand initial friction deficit) must not exceed h0, got h3 = {h3} > h0 = {h0}"
            );
        }
        Ok(Self {
            mu: T::from_f64(mu),
            lambda: T::from_f64(lambda),
            h0: T::from_f64(h0),
            h1: T::from_f64(h1),
            h2: T::from_f64(h2),
            h3: T::from_f64(h3),
        })
    }

    /// Friction angle in degrees at hardening state `q`: `φ_q = h0 + (h1 q − h3) exp(−h2 q)` (spec §5.4).
    #[inline]
    pub fn friction_angle_deg(&self, q: T) -> T {
        self.h0 + (self.h1 * q - self.h3) * (-self.h2 * q).exp()
    }

    /// Drucker–Prager coefficient `α_q = sqrt(2/3)·2 sin φ_q/(3 − sin φ_q)` (spec §5.4).
    #[inline]
    pub fn alpha(&self, q: T) -> T {
        drucker_prager_alpha(self.friction_angle_deg(q) * T::from_f64(DEG_TO_RAD))
    }
}

/// Klár's Drucker–Prager return map with hardening, exactly as spec §5.4 (module docs): returns the
/// projected `F^E`, the new hardening state `q`, and the case.
///
/// In case I the input is returned bit for bit when every singular value is `≥ 1e-4` (then
/// `U exp(ε) Vᵀ = F^E` up to rounding only); a collapsed or inverted `F^E` is rebuilt as
/// `U exp(ε) Vᵀ` with positive singular values. Degenerate parameters (`μ = 0`) give case I, never NaN.
pub fn sand_return_map<T: Real>(p: &SandParams<T>, f: &Mat3<T>, q: T) -> (Mat3<T>, T, DpCase) {
    let d = svd3(f);
    let (eps, _) = hencky_strain(&d);
    let tr = eps.x + eps.y + eps.z;
    if tr >= T::ZERO {
        let one = Vec3::splat(T::ONE);
        return (d.recompose(one), q + eps.norm(), DpCase::Expansion);
    }
    let third = tr / T::from_f64(3.0);
    let e = eps - Vec3::splat(third);
    let e_norm = e.norm();
    let alpha = p.alpha(q);
    let dgamma = e_norm + (T::from_f64(3.0) * p.lambda + T::TWO * p.mu) / (T::TWO * p.mu) * tr * alpha;
    // `!is_positive(δγ)` also catches NaN from μ = 0, which is then elastic.
    if !is_positive(dgamma) || e_norm <= T::ZERO {
        let c = T::from_f64(super::LOG_CLAMP);
        if d.sigma.min_element() >= c {
            return (*f, q, DpCase::Elastic);
        }
        let h = Vec3::new(eps.x.exp(), eps.y.exp(), eps.z.exp());
        return (d.recompose(h), q, DpCase::Elastic);
    }
    let h = eps - e * (dgamma / e_norm);
    (
        d.recompose(Vec3::new(h.x.exp(), h.y.exp(), h.z.exp())),
        q + dgamma,
        DpCase::Projected,
    )
}

super::impl_params_cast!(SandParams {
    mu,
    lambda,
    h0,
    h1,
    h2,
    h3
});

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use rand::RngExt;

    /// The Drucker–Prager cone value `‖e‖ + ((3λ+2μ)/(2μ)) tr ε α` of `F` (≤ 0 inside).
    fn cone(p: &SandParams<f64>, f: &Mat3<f64>, q: f64) -> f64 {
        let s = svd3(f).sigma;
        let eps = Vec3::new(s.x.ln(), s.y.ln(), s.z.ln());
        let tr = eps.x + eps.y + eps.z;
        let e = eps - Vec3::splat(tr / 3.0);
        e.norm() + (3.0 * p.lambda + 2.0 * p.mu) / (2.0 * p.mu) * tr * p.alpha(q)
    }

    #[test]
    fn sand_defaults_and_validation() {
        let p = SandParams::<f64>::default();
        let want = SandParams::<f64>::from_material(3.537e5, 0.3, 35.0, 9.0, 0.2, 10.0).unwrap();
        assert!((p.mu - want.mu).abs() < 1e-9 && (p.lambda - want.lambda).abs() < 1e-9);
        assert_eq!(p.friction_angle_deg(0.0), 25.0);
        assert!((p.friction_angle_deg(1e6) - 35.0).abs() < 1e-12);
        for (r, name) in [
            (
                SandParams::<f64>::from_material(-1.0, 0.3, 35.0, 9.0, 0.2, 10.0),
                "youngs_modulus",
            ),
            (
                SandParams::<f64>::from_material(1.0, 0.3, 95.0, 9.0, 0.2, 10.0),
                "h0",
            ),
            (
                SandParams::<f64>::from_material(1.0, 0.3, 35.0, -9.0, 0.2, 10.0),
                "h1",
            ),
            (
                SandParams::<f64>::from_material(1.0, 0.3, 35.0, 9.0, -0.2, 10.0),
                "h2",
            ),
            (
                SandParams::<f64>::from_material(1.0, 0.3, 35.0, 9.0, 0.2, 40.0),
                "h3",
            ),
        ] {
            let msg = r.unwrap_err().to_string();
            assert!(msg.contains(name), "{msg} should name {name}");
        }
    }

    #[test]
    fn sand_cases_match_klar() {
        let p = SandParams::<f64>::default();
        let mut g = rng(51);
        let (mut n1, mut n2, mut n3) = (0, 0, 0);
        for _ in 0..2000 {
            let (w1, w2) = (rotation(&mut g), rotation(&mut g));
            let s = Vec3::new(
                (0.15 * normal(&mut g)).exp(),
                (0.15 * normal(&mut g)).exp(),
                (0.15 * normal(&mut g) - 0.05).exp(),
            );
            let f = w1 * Mat3::from_diagonal(s) * w2.transpose();
            let q: f64 = if g.random::<f64>() < 0.5 {
                0.0
            } else {
                3.0 * g.random::<f64>()
            };
            let (fnew, qnew, case) = sand_return_map(&p, &f, q);
            assert!(qnew >= q, "q must not decrease");
            // Reference: Klár's formulas in the principal frame.
            let eps = Vec3::new(s.x.ln(), s.y.ln(), s.z.ln());
            let tr = eps.x + eps.y + eps.z;
            let e = eps - Vec3::splat(tr / 3.0);
            let dg = e.norm() + (3.0 * p.lambda + 2.0 * p.mu) / (2.0 * p.mu) * tr * p.alpha(q);
            let (h, dq, want) = if tr >= 0.0 {
                (Vec3::zero(), eps.norm(), DpCase::Expansion)
            } else if dg <= 0.0 {
                (eps, 0.0, DpCase::Elastic)
            } else {
                (eps - e * (dg / e.norm()), dg, DpCase::Projected)
            };
            assert_eq!(case, want);
            let expect =
                w1 * Mat3::from_diagonal(Vec3::new(h.x.exp(), h.y.exp(), h.z.exp())) * w2.transpose();
            assert!(
                (fnew - expect).max_abs() < 1e-13,
                "{case:?}: {fnew:?} vs {expect:?}"
            );
            assert!((qnew - q - dq).abs() < 1e-13);
            match case {
                DpCase::Elastic => {
                    n1 += 1;
                    assert_eq!(fnew, f);
                }
                DpCase::Expansion => {
                    n2 += 1;
                    // Σ = I: F^E becomes a rotation.
                    let sv = svd3(&fnew).sigma;
                    assert!((sv - Vec3::splat(1.0)).abs().max_element() < 1e-14);
                }
                DpCase::Projected => {
                    n3 += 1;
                    // On the cone, volume preserved, and a second application is elastic.
                    assert!(cone(&p, &fnew, q).abs() < 1e-12, "{}", cone(&p, &fnew, q));
                    assert!((fnew.determinant() - f.determinant()).abs() < 1e-13);
                }
            }
        }
        assert!(n1 > 100 && n2 > 100 && n3 > 100, "{n1} {n2} {n3}");
    }

    #[test]
    fn sand_inverted_and_degenerate_input() {
        let p = SandParams::<f64>::default();
        let f = Mat3::from_diagonal(Vec3::new(0.9, 0.95, -0.9));
        let (fnew, _, _) = sand_return_map(&p, &f, 0.0);
        assert!(fnew.is_finite() && fnew.determinant() > 0.0);
        let (fnew, qn, case) = sand_return_map(&p, &Mat3::zero(), 0.0);
        assert!(fnew.is_finite() && qn.is_finite(), "{case:?}");
        let p0 = SandParams {
            mu: 0.0,
            lambda: 0.0,
            ..p
        };
        let f = Mat3::from_diagonal(Vec3::new(0.5, 0.9, 0.95));
        assert_eq!(sand_return_map(&p0, &f, 0.0), (f, 0.0, DpCase::Elastic));
    }

    #[test]
    fn sand_f32_smoke() {
        let p = SandParams::<f64>::default();
        let p32 = p.cast::<f32>();
        let mut g = rng(52);
        for _ in 0..200 {
            let f = round_to::<f32>(&near_identity(&mut g, 0.1));
            let (a, qa, ca) = sand_return_map(&p, &f, 0.5);
            let (b, qb, cb) = sand_return_map(&p32, &f.cast::<f32>(), 0.5f32);
            assert!(b.is_finite() && qb.is_finite());
            if ca == cb {
                assert!(rel_err(&b.cast(), &a, 1.0) < 1e-5 && (qb as f64 - qa).abs() < 1e-5);
            }
        }
    }
}
