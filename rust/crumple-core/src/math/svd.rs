//! 3×3 signed SVD and polar decomposition.
//!
//! The MPM sand model (spec `mpm_anisotropic.md` §4.6, §5.4, Klár et al. 2016) and the volumetric
//! fixed-corotated solid need `F = U Σ Vᵀ` with `U, V ∈ SO(3)` so that an inverted `F` (det < 0) shows
//! up as a negative last singular value instead of as a reflection hidden in `U` or `V`. This is the
//! convention of Irving et al. 2004 and McAdams et al. 2011 ("signed" or "rotation-variant" SVD).

use super::eigen::{MAX_SWEEPS, jacobi_rotation, rotate_cols, swap_cols_proper, sym_from_frame};
use super::{Mat3, Real, Vec3, qr3};

/// `a = u · diag(sigma) · vᵀ` from [`svd3`].
///
/// `u` and `v` are proper rotations (`det = +1`). `sigma` is ordered `σ1 ≥ σ2 ≥ |σ3|`, `σ1, σ2 ≥ 0`,
/// and `σ3 < 0` exactly when `det a < 0` (an inverted element), so `det a = σ1 σ2 σ3`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Svd3<T> {
    /// Left rotation (columns: left singular vectors).
    pub u: Mat3<T>,
    /// Signed singular values `σ1 ≥ σ2 ≥ |σ3|`; only `σ3` may be negative.
    pub sigma: Vec3<T>,
    /// Right rotation (columns: right singular vectors).
    pub v: Mat3<T>,
}

impl<T: Real> Svd3<T> {
    /// `u · diag(sigma) · vᵀ`, the matrix that was decomposed (to rounding).
    pub fn to_mat(&self) -> Mat3<T> {
        self.recompose(self.sigma)
    }

    /// Converts between `f32` and `f64` (e.g. to check an f32 result in f64).
    pub fn cast<U: Real>(&self) -> Svd3<U> {
        Svd3 {
            u: self.u.cast(),
            sigma: self.sigma.cast(),
            v: self.v.cast(),
        }
    }

    /// `u · diag(s) · vᵀ` with other singular values, as return mappings do (spec §5.4:
    /// `F^E ← U exp(H) Vᵀ`).
    pub fn recompose(&self, s: Vec3<T>) -> Mat3<T> {
        let mut us = self.u;
        for row in us.m.iter_mut() {
            for (k, x) in row.iter_mut().enumerate() {
                *x *= s[k];
            }
        }
        us * self.v.transpose()
    }
}

/// `(tol, floor)` of the one-sided Jacobi sweeps of [`svd3`] (and of its WGSL twin, through the
/// generated prelude): a pair counts as orthogonal at |γ| ≤ 2ε|b_p||b_q| (the rounding error of the
/// dot product itself is about ε|b_p||b_q|; a tolerance of exactly ε could rotate on noise until
/// the sweep limit). Columns whose squared length is below ε⁴ (length below ε²·max|a|) are left
/// alone: their squares approach the underflow threshold in f32 and they are a factor ε below the
/// accuracy promised here.
#[inline]
pub(crate) fn svd_tolerances<T: Real>() -> (T, T) {
    (
        T::TWO * T::EPSILON,
        T::EPSILON * T::EPSILON * T::EPSILON * T::EPSILON,
    )
}

/// Signed singular value decomposition `a = U diag(σ) Vᵀ`, `U, V ∈ SO(3)`, `σ1 ≥ σ2 ≥ |σ3|`, the sign
/// of `det a` carried by `σ3` (the convention of spec `mpm_anisotropic.md` §4.6/§5.4 and of
/// McAdams et al. 2011).
///
/// Method (no allocation, bounded loops, so the same steps port to WGSL):
/// 1. Scale `a` by its largest entry (so no square below under- or overflows).
/// 2. One-sided (Hestenes) Jacobi: rotate pairs of columns of `B = a V` until each pair is orthogonal
///    to `|b_p·b_q| ≤ ε |b_p| |b_q|`. This is cyclic Jacobi on `aᵀa` carried out on `a` itself; it
///    never forms `aᵀa`, so singular values far below `sqrt(ε)·σ1` keep their accuracy and the
///    reconstruction error stays at `O(ε)·‖a‖` even for near-singular input.
/// 3. Sort the columns by length, descending, swapping with a sign flip so `V` stays in SO(3).
/// 4. `B = U R` by [`qr3`] (Gram–Schmidt + cross product): `U` is a proper rotation even when `B` has
///    zero columns (rank-deficient `a`), `σ = diag(R)`, and `r33 = q3·b3` is negative iff
///    `det a < 0` because `det a = det B = r11 r22 r33`. The off-diagonal of `R` is `O(ε)` relative
///    to its column by step 2 and is dropped.
/// 5. Rounding-level fix-ups enforce `σ2 ≤ σ1` and `|σ3| ≤ σ2` exactly (ties can round either way).
///
/// Special cases: the zero matrix gives `U = V = I`, `σ = 0`; a rotation gives `σ = (1, 1, 1)` to
/// rounding; non-finite input gives non-finite `σ` (and finite `U`, `V`), so callers can detect it.
pub fn svd3<T: Real>(a: &Mat3<T>) -> Svd3<T> {
    let mut v = Mat3::identity();
    if !a.is_finite() {
        return Svd3 {
            u: Mat3::identity(),
            sigma: Vec3::splat(T::NAN),
            v,
        };
    }
    let scale = a.max_abs();
    if scale <= T::ZERO {
        return Svd3 {
            u: Mat3::identity(),
            sigma: Vec3::zero(),
            v,
        };
    }
    let mut b = Mat3::zero();
    for i in 0..3 {
        for j in 0..3 {
            b.m[i][j] = a.m[i][j] / scale;
        }
    }

    let (tol, floor) = svd_tolerances::<T>();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for (p, q) in [(0usize, 1usize), (0, 2), (1, 2)] {
            let (bp, bq) = (b.col(p), b.col(q));
            let (alpha, beta, gamma) = (bp.norm_squared(), bq.norm_squared(), bp.dot(bq));
            if gamma.abs() <= tol * alpha.sqrt() * beta.sqrt() || alpha.min(beta) <= floor {
                continue;
            }
            rotated = true;
            let (c, s, _) = jacobi_rotation(alpha, beta, gamma);
            rotate_cols(&mut b, p, q, c, s);
            rotate_cols(&mut v, p, q, c, s);
        }
        if !rotated {
            break;
        }
    }

    let mut len2 = Vec3::new(
        b.col(0).norm_squared(),
        b.col(1).norm_squared(),
        b.col(2).norm_squared(),
    );
    // Three-element sorting network, descending.
    for (i, j) in [(0usize, 1usize), (1, 2), (0, 1)] {
        if len2[j] > len2[i] {
            let li = len2[i];
            len2[i] = len2[j];
            len2[j] = li;
            swap_cols_proper(&mut b, i, j);
            swap_cols_proper(&mut v, i, j);
        }
    }

    let f = qr3(&b);
    let s1 = f.r.m[0][0];
    let s2 = f.r.m[1][1].min(s1);
    let s3 = f.r.m[2][2].clamp_to(-s2, s2);
    Svd3 {
        u: f.q,
        sigma: Vec3::new(s1, s2, s3) * scale,
        v,
    }
}

/// Polar decomposition `a = R S` with `R = U Vᵀ ∈ SO(3)` and `S = V diag(σ) Vᵀ` symmetric, from the
/// signed [`svd3`]. Returns `(R, S)`.
///
/// Because `R` is always a proper rotation, an inverted `a` (det < 0) gives an indefinite `S` with one
/// negative eigenvalue `σ3` instead of a reflection in `R`; this is the rotation the fixed-corotated
/// energy `μ‖F − R‖²` (spec §4.6) needs. `S` is exactly symmetric (built on its upper triangle). For
/// rank-deficient `a` the rotation is not unique; one valid choice is returned.
pub fn polar3<T: Real>(a: &Mat3<T>) -> (Mat3<T>, Mat3<T>) {
    let d = svd3(a);
    (d.u * d.v.transpose(), sym_from_frame(&d.v, d.sigma))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svd3_diagonal_with_negative_entry() {
        let a = Mat3::<f64>::from_diagonal(Vec3::new(0.5, -3.0, 2.0));
        let d = svd3(&a);
        assert!(
            (d.sigma - Vec3::new(3.0, 2.0, -0.5)).abs().max_element() < 1e-15,
            "{:?}",
            d.sigma
        );
        assert!((d.to_mat() - a).max_abs() < 1e-15);
        assert!((d.u.determinant() - 1.0).abs() < 1e-15 && (d.v.determinant() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn svd3_zero_and_non_finite() {
        let d = svd3(&Mat3::<f32>::zero());
        assert_eq!(d.sigma, Vec3::zero());
        assert_eq!((d.u, d.v), (Mat3::identity(), Mat3::identity()));
        let mut a = Mat3::<f32>::identity();
        a.m[2][1] = f32::NAN;
        let d = svd3(&a);
        assert!(!d.sigma.is_finite() && d.u.is_finite() && d.v.is_finite());
    }

    #[test]
    fn svd3_recompose_changes_only_sigma() {
        let a = Mat3::<f64>::from_rows_array([[1.2, 0.3, -0.4], [0.1, 0.8, 0.2], [-0.3, 0.5, 1.1]]);
        let d = svd3(&a);
        let b = d.recompose(Vec3::new(1.0, 1.0, 1.0));
        // U Vᵀ is the polar rotation of a.
        let (r, s) = polar3(&a);
        assert!((b - r).max_abs() < 1e-15);
        assert!((r * s - a).max_abs() < 1e-14);
        assert_eq!(s, s.transpose());
    }
}
