//! St.Venant–Kirchhoff energy on the Hencky (logarithmic) strain, the elastic response of sand
//! (Klár et al. 2016; spec `mpm_anisotropic.md` §4.6) and of our goo model ([`goo`](super::goo)):
//!
//! ```text
//! F = U Σ Vᵀ (signed SVD),  ε = ln Σ,  ψ = μ tr(ε²) + (λ/2)(tr ε)²
//! P = U (2μ Σ⁻¹ ε + λ tr(ε) Σ⁻¹) Vᵀ
//! ```
//!
//! Guard (spec §5.4, §5.5): `ε_i = ln max(|σ_i|, 1e-4)`, as the sand return map uses. `P` divides by
//! `sign(σ_i) max(|σ_i|, 1e-4)`, which makes it the exact gradient of `ψ` wherever `|σ_i| ≥ 1e-4`
//! (inverted `F` included: `ψ` depends on `|σ_i|`) and keeps it bounded below that. Sand and goo
//! particles leave their return maps with positive singular values, so an inverted `F^E` only lives
//! within one step.

use super::LOG_CLAMP;
use crate::math::{Mat3, Real, Svd3, Vec3, svd3};

/// Clamped Hencky strain `ε_i = ln max(|σ_i|, 1e-4)` of a signed SVD, and the signed clamped
/// singular values `sign(σ_i) max(|σ_i|, 1e-4)` (spec §5.4).
#[inline]
pub(crate) fn hencky_strain<T: Real>(d: &Svd3<T>) -> (Vec3<T>, Vec3<T>) {
    let c = T::from_f64(LOG_CLAMP);
    let mut eps = Vec3::zero();
    let mut sbar = Vec3::zero();
    for i in 0..3 {
        let s = d.sigma[i].abs().max(c);
        eps[i] = s.ln();
        sbar[i] = if d.sigma[i] < T::ZERO { -s } else { s };
    }
    (eps, sbar)
}

/// Energy density from the principal Hencky strains: `μ Σ ε_i² + (λ/2)(Σ ε_i)²`.
#[inline]
pub(crate) fn hencky_energy_eps<T: Real>(eps: Vec3<T>, mu: T, lambda: T) -> T {
    let tr = eps.x + eps.y + eps.z;
    mu * eps.norm_squared() + T::HALF * lambda * tr * tr
}

/// Hencky StVK energy density `ψ(F) = μ tr(ε²) + (λ/2)(tr ε)²`, `ε = ln max(|Σ|, 1e-4)` (spec §4.6).
#[inline]
pub fn hencky_energy<T: Real>(f: &Mat3<T>, mu: T, lambda: T) -> T {
    let (eps, _) = hencky_strain(&svd3(f));
    hencky_energy_eps(eps, mu, lambda)
}

/// First Piola–Kirchhoff stress of [`hencky_energy`]: `P = U diag((2μ ε_i + λ tr ε)/σ̄_i) Vᵀ`
/// (spec §4.6), `σ̄_i` the signed clamped singular values (module docs).
#[inline]
pub fn hencky_piola<T: Real>(f: &Mat3<T>, mu: T, lambda: T) -> Mat3<T> {
    let d = svd3(f);
    let (eps, sbar) = hencky_strain(&d);
    let tr = eps.x + eps.y + eps.z;
    let mut s = Vec3::zero();
    for i in 0..3 {
        s[i] = (T::TWO * mu * eps[i] + lambda * tr) / sbar[i];
    }
    d.recompose(s)
}

#[cfg(test)]
mod tests {
    use super::super::kirchhoff;
    use super::super::test_util::*;
    use super::*;

    const MU: f64 = 1.36e5;
    const LAMBDA: f64 = 2.04e5;

    #[test]
    fn hencky_rest_rotations_fd_and_invariance() {
        assert_eq!(hencky_energy(&Mat3::identity(), MU, LAMBDA), 0.0);
        assert_eq!(hencky_piola(&Mat3::identity(), MU, LAMBDA), Mat3::zero());
        let mut g = rng(41);
        for _ in 0..200 {
            let w = rotation(&mut g);
            assert!(hencky_energy(&w, MU, LAMBDA).abs() < 1e-18);
            assert!(hencky_piola(&w, MU, LAMBDA).max_abs() < 1e-8);
        }
        for _ in 0..300 {
            let f = near_identity(&mut g, 0.3);
            let psi = hencky_energy(&f, MU, LAMBDA);
            assert!(psi >= 0.0);
            let p = hencky_piola(&f, MU, LAMBDA);
            let fd = fd_gradient(|x| hencky_energy(x, MU, LAMBDA), &f, 1e-6);
            assert!(rel_err(&p, &fd, 1.0) < 1e-6, "{p:?} vs {fd:?}");
            let w = rotation(&mut g);
            assert!((hencky_energy(&(w * f), MU, LAMBDA) - psi).abs() < 1e-11 * psi.max(1.0));
            assert!(rel_err(&hencky_piola(&(w * f), MU, LAMBDA), &(w * p), 1.0) < 1e-10);
            assert!((hencky_energy(&(f * w), MU, LAMBDA) - psi).abs() < 1e-11 * psi.max(1.0));
            let tau = kirchhoff(&p, &f);
            assert!((tau - tau.transpose()).max_abs() < 1e-11 * tau.max_abs().max(1.0));
        }
    }

    #[test]
    fn hencky_inverted_gradient_and_f32() {
        // An inverted F: P is still the gradient of ψ (which depends on |σ|).
        let mut g = rng(42);
        for _ in 0..50 {
            let f = near_identity(&mut g, 0.3) * Mat3::from_diagonal(Vec3::new(1.0, 1.0, -1.0));
            let p = hencky_piola(&f, MU, LAMBDA);
            let fd = fd_gradient(|x| hencky_energy(x, MU, LAMBDA), &f, 1e-6);
            assert!(rel_err(&p, &fd, 1.0) < 1e-6);
        }
        assert!(hencky_piola(&Mat3::zero(), MU, LAMBDA).is_finite());
        for _ in 0..100 {
            let f = round_to::<f32>(&near_identity(&mut g, 0.3));
            let a = hencky_piola(&f, MU, LAMBDA);
            let b = hencky_piola(&f.cast::<f32>(), MU as f32, LAMBDA as f32);
            assert!(b.is_finite() && rel_err(&b.cast(), &a, 1.0) < 1e-4);
        }
    }
}
