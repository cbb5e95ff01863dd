//! Rotation of the polar decomposition by scaled Newton iteration.
//!
//! The fixed-corotated stress needs only `R` of `F = R S`. For the common
//! case of a well-conditioned, non-inverted `F` the scaled Newton iteration
//! `X ← ½(γX + (γX)^{-T})`, `γ = |det X|^{-1/3}` (Higham 1986; determinant
//! scaling of Byers & Xu 2008) converges quadratically in a handful of
//! iterations and costs a fraction of a full SVD. Inverted, nearly singular
//! or slowly converging matrices fall back to the SVD-based [`polar3`],
//! which also defines the answer for inverted `F` (a proper rotation with
//! the sign on the last singular value).

use super::{Mat3, Real, polar3};

/// Largest number of Newton iterations before falling back to the SVD.
pub(crate) const MAX_ITERS: usize = 12;

/// Newton stops at a change of at most 16ε (max-abs of the update).
#[inline]
pub(crate) fn tolerance<T: Real>() -> T {
    T::EPSILON * T::from_f64(16.0)
}

/// Inverted or nearly singular input (det ≤ 1e-3·max|a|³) goes to the SVD path.
#[inline]
pub(crate) fn det_floor<T: Real>() -> T {
    T::from_f64(1e-3)
}

/// The exponent of γ = |det X|^(−1/3), rounded once to `T`.
#[inline]
pub(crate) fn minus_third<T: Real>() -> T {
    T::from_f64(-1.0 / 3.0)
}

/// `R` of the polar decomposition `a = R S` with `R ∈ SO(3)`; equal to
/// `polar3(a).0` up to rounding. Deterministic (a pure function of `a`).
#[inline]
pub fn polar_rotation<T: Real>(a: &Mat3<T>) -> Mat3<T> {
    let scale = a.max_abs();
    if !scale.is_finite() || scale <= T::ZERO {
        return polar3(a).0;
    }
    let det = a.determinant();
    // Inverted or nearly singular (relative to the entry scale): the SVD
    // path handles the sign convention and the conditioning.
    if !det.is_finite() || det <= det_floor::<T>() * scale * scale * scale {
        return polar3(a).0;
    }
    let tol = tolerance::<T>();
    let mut x = *a;
    let mut d = det;
    for _ in 0..MAX_ITERS {
        let gamma = (d.abs().ln() * minus_third::<T>()).exp();
        // (γX)^{-T} = cof(X) / (γ det X)
        let next = (x * gamma + x.cofactor() * (T::ONE / (gamma * d))) * T::HALF;
        let change = (next - x).max_abs();
        x = next;
        if change <= tol {
            return x;
        }
        d = x.determinant();
        if !d.is_finite() || d <= T::ZERO {
            break;
        }
    }
    polar3(a).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*state >> 11) as f64) / ((1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn random(state: &mut u64, spread: f64) -> Mat3<f64> {
        let mut m = Mat3::identity();
        for r in 0..3 {
            for c in 0..3 {
                m.m[r][c] += spread * lcg(state);
            }
        }
        m
    }

    #[test]
    fn matches_svd_polar_f64_and_f32() {
        let mut s = 7u64;
        for spread in [0.05, 0.3, 0.8, 2.0] {
            for _ in 0..500 {
                let a = random(&mut s, spread);
                let r_ref = polar3(&a).0;
                let r = polar_rotation(&a);
                assert!((r - r_ref).max_abs() < 1e-10 * (1.0 + a.max_abs()), "{a:?}");
                assert!((r.determinant() - 1.0).abs() < 1e-12);
                let rf = polar_rotation(&a.cast::<f32>());
                assert!((rf.cast::<f64>() - r_ref).max_abs() < 2e-4, "{a:?}");
                assert!((rf.transpose() * rf - Mat3::identity()).max_abs() < 1e-5);
            }
        }
    }

    #[test]
    fn inverted_and_degenerate_fall_back_to_svd() {
        let inv = Mat3::from_diagonal(crate::math::Vec3::new(1.0, 0.8, -0.5));
        assert_eq!(polar_rotation(&inv), polar3(&inv).0);
        let flat = Mat3::from_diagonal(crate::math::Vec3::new(1.0, 1.0, 0.0));
        assert_eq!(polar_rotation(&flat), polar3(&flat).0);
        let zero = Mat3::<f64>::zero();
        assert!(polar_rotation(&zero).is_finite());
        let rot = Mat3::from_axis_angle(crate::math::Vec3::new(0.0, 0.6, 0.8), 1.1);
        assert!((polar_rotation(&rot) - rot).max_abs() < 1e-14);
    }
}
