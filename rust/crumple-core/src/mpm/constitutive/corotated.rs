//! Fixed corotated elasticity for volumetric elastic solids (type i; spec `mpm_anisotropic.md` §4.6,
//! Stomakhin et al. 2012):
//!
//! ```text
//! ψ = μ‖F − R‖² + (λ/2)(J − 1)²,   P = 2μ(F − R) + λ(J − 1) J F^{-T}
//! ```
//!
//! `R` is the rotation of the polar decomposition ([`polar_rotation`]: scaled Newton iteration, with
//! the signed SVD for inverted or nearly singular `F`), so an inverted `F` keeps a proper rotation and
//! the energy pushes it back. `J F^{-T}` is evaluated as the cofactor
//! matrix, which is defined (and smooth) for every `F`, including `J → 0`.

use crate::math::{Mat3, Real, polar_rotation};

/// Fixed corotated energy density `ψ(F) = μ‖F − R‖_F² + (λ/2)(det F − 1)²` (spec §4.6).
#[inline]
pub fn corotated_energy<T: Real>(f: &Mat3<T>, mu: T, lambda: T) -> T {
    let r = polar_rotation(f);
    let j1 = f.determinant() - T::ONE;
    mu * (*f - r).norm_squared() + T::HALF * lambda * j1 * j1
}

/// First Piola–Kirchhoff stress of [`corotated_energy`]: `P = 2μ(F − R) + λ(J − 1) cof(F)` with
/// `cof(F) = J F^{-T}` (spec §4.6), finite for degenerate and inverted `F`.
#[inline]
pub fn corotated_piola<T: Real>(f: &Mat3<T>, mu: T, lambda: T) -> Mat3<T> {
    let r = polar_rotation(f);
    let j = f.determinant();
    (*f - r) * (T::TWO * mu) + f.cofactor() * (lambda * (j - T::ONE))
}

#[cfg(test)]
mod tests {
    use super::super::kirchhoff;
    use super::super::test_util::*;
    use super::*;

    const MU: f64 = 153.846;
    const LAMBDA: f64 = 230.769;

    #[test]
    fn corotated_rest_rotations_and_fd() {
        assert_eq!(corotated_energy(&Mat3::identity(), MU, LAMBDA), 0.0);
        let mut g = rng(31);
        for _ in 0..200 {
            let w = rotation(&mut g);
            assert!(corotated_energy(&w, MU, LAMBDA).abs() < 1e-24);
            assert!(corotated_piola(&w, MU, LAMBDA).max_abs() < 1e-11);
        }
        for _ in 0..300 {
            let f = near_identity(&mut g, 0.3);
            let psi = corotated_energy(&f, MU, LAMBDA);
            assert!(psi >= 0.0);
            let p = corotated_piola(&f, MU, LAMBDA);
            let fd = fd_gradient(|x| corotated_energy(x, MU, LAMBDA), &f, 1e-6);
            assert!(rel_err(&p, &fd, 1.0) < 1e-6, "{p:?} vs {fd:?}");
            let w = rotation(&mut g);
            assert!((corotated_energy(&(w * f), MU, LAMBDA) - psi).abs() < 1e-12 * psi.max(1.0));
            assert!(rel_err(&corotated_piola(&(w * f), MU, LAMBDA), &(w * p), 1.0) < 1e-11);
            // Isotropy: ψ(F W) = ψ(F).
            assert!((corotated_energy(&(f * w), MU, LAMBDA) - psi).abs() < 1e-12 * psi.max(1.0));
            let tau = kirchhoff(&p, &f);
            assert!((tau - tau.transpose()).max_abs() < 1e-12 * tau.max_abs().max(1.0));
        }
    }

    #[test]
    fn corotated_defined_at_zero_volume_and_f32() {
        // Flattened (J = 0) and inverted F: finite stress that resists the collapse.
        let f = Mat3::from_rows_array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]);
        let p = corotated_piola(&f, MU, LAMBDA);
        assert!(p.is_finite() && p.m[2][2] < 0.0, "{p:?}");
        let f = Mat3::from_rows_array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -0.2]]);
        assert!(corotated_piola(&f, MU, LAMBDA).m[2][2] < 0.0);
        let mut g = rng(32);
        for _ in 0..100 {
            let f = round_to::<f32>(&near_identity(&mut g, 0.3));
            let a = corotated_piola(&f, MU, LAMBDA);
            let b = corotated_piola(&f.cast::<f32>(), MU as f32, LAMBDA as f32);
            assert!(b.is_finite() && rel_err(&b.cast(), &a, 1.0) < 1e-4);
        }
    }
}
