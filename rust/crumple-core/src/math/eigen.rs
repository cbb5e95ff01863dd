//! Symmetric 3×3 eigen-decomposition by cyclic Jacobi rotations, and the Jacobi rotation shared with
//! [`svd3`](super::svd3).
//!
//! Jacobi is chosen over closed-form cubic roots because it is accurate for repeated and clustered
//! eigenvalues (the closed form loses the eigenvectors there) and it is a fixed, branch-light loop
//! that ports to WGSL unchanged (spec `mpm_anisotropic.md` §10.3).

use super::{Mat3, Real, Vec3};

/// Upper bound on cyclic sweeps over the pairs (0,1), (0,2), (1,2). Jacobi converges quadratically:
/// over millions of test matrices (random, near-singular, repeated, rank-deficient) both solvers
/// stopped after at most 6 sweeps including the final check, in f32 and f64, so this bound is only
/// a safety net.
pub(crate) const MAX_SWEEPS: usize = 16;

/// Beyond this `|ζ|` (1/ε) [`jacobi_rotation`] uses `t = 1/(2ζ)`, so `ζ²` cannot overflow.
#[inline]
pub(crate) fn jacobi_big<T: Real>() -> T {
    T::ONE / T::EPSILON
}

/// Cosine and sine of the Jacobi rotation that zeroes the off-diagonal `g` of the symmetric 2×2
/// `[[a, g], [g, b]]` (the smaller of the two angles, |θ| ≤ π/4).
///
/// Applied as `J = [[c, s], [−s, c]]` on the right: new column p = `c·xp − s·xq`, new column q =
/// `s·xp + c·xq`; `t = s/c` solves `t² + 2ζt − 1 = 0`, `ζ = (b − a)/(2g)`. Very large `ζ` uses
/// `t = 1/(2ζ)` instead of `sqrt(1 + ζ²)` so nothing overflows (and no `hypot` is needed in WGSL).
/// Returns `(c, s, t)`. `g` must be non-zero.
#[inline]
pub(super) fn jacobi_rotation<T: Real>(a: T, b: T, g: T) -> (T, T, T) {
    let zeta = (b - a) / (T::TWO * g);
    let big = jacobi_big::<T>();
    let t = if zeta.abs() > big {
        T::HALF / zeta
    } else {
        let sgn = if zeta >= T::ZERO { T::ONE } else { -T::ONE };
        sgn / (zeta.abs() + (T::ONE + zeta * zeta).sqrt())
    };
    let c = T::ONE / (T::ONE + t * t).sqrt();
    (c, c * t, t)
}

/// Rotates columns `p` and `q` of `m` by `(c, s)` as in [`jacobi_rotation`].
#[inline]
pub(super) fn rotate_cols<T: Real>(m: &mut Mat3<T>, p: usize, q: usize, c: T, s: T) {
    for row in m.m.iter_mut() {
        let (xp, xq) = (row[p], row[q]);
        row[p] = c * xp - s * xq;
        row[q] = s * xp + c * xq;
    }
}

/// Swaps columns `i` and `j` of `m` and negates the new column `j`: a proper rotation of the columns,
/// so the determinant of `m` is unchanged (used to sort without leaving SO(3)).
#[inline]
pub(super) fn swap_cols_proper<T: Real>(m: &mut Mat3<T>, i: usize, j: usize) {
    for row in m.m.iter_mut() {
        let xi = row[i];
        row[i] = row[j];
        row[j] = -xi;
    }
}

/// `a = q · diag(λ) · qᵀ` for a symmetric `a`, from [`sym_eigen3`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SymEigen3<T> {
    /// Eigenvalues in ascending order `λ1 ≤ λ2 ≤ λ3`.
    pub eigenvalues: Vec3<T>,
    /// Unit eigenvectors as the columns (column `i` belongs to `eigenvalues[i]`); a proper rotation
    /// (`det = +1`), so it can be used directly as a change of frame.
    pub eigenvectors: Mat3<T>,
}

impl<T: Real> SymEigen3<T> {
    /// `q · diag(λ) · qᵀ`, the symmetric matrix the decomposition describes.
    pub fn to_mat(&self) -> Mat3<T> {
        sym_from_frame(&self.eigenvectors, self.eigenvalues)
    }
}

/// `q · diag(d) · qᵀ`, computed on the upper triangle and mirrored so the result is exactly symmetric.
pub(super) fn sym_from_frame<T: Real>(q: &Mat3<T>, d: Vec3<T>) -> Mat3<T> {
    let mut out = Mat3::zero();
    for i in 0..3 {
        for j in i..3 {
            let mut s = T::ZERO;
            for k in 0..3 {
                s += q.m[i][k] * d[k] * q.m[j][k];
            }
            out.m[i][j] = s;
            out.m[j][i] = s;
        }
    }
    out
}

/// Eigen-decomposition of a symmetric 3×3 matrix by cyclic Jacobi: eigenvalues ascending,
/// eigenvectors as the columns of a proper rotation (`det = +1`), `a = Q Λ Qᵀ`.
///
/// Only the symmetric part `(a + aᵀ)/2` is used. The matrix is scaled by its largest entry first, so
/// tiny and huge inputs behave alike; a pair is rotated while `|a_pq| > ε·sqrt(|a_pp a_qq|)` and
/// `|a_pq| > ε²·max|a|`, which gives eigenvalues to `O(ε)·max|a|` and eigenvectors as accurate as the
/// eigenvalue gaps allow (any orthonormal basis of a repeated eigenspace is returned as is). Sorting
/// swaps columns with a sign flip so the frame stays proper. The zero matrix gives `Q = I`, `Λ = 0`;
/// non-finite input gives non-finite eigenvalues.
pub fn sym_eigen3<T: Real>(a: &Mat3<T>) -> SymEigen3<T> {
    let sym = a.symmetric_part();
    let mut q = Mat3::identity();
    if !sym.is_finite() {
        return SymEigen3 {
            eigenvalues: Vec3::splat(T::NAN),
            eigenvectors: q,
        };
    }
    let scale = sym.max_abs();
    if scale <= T::ZERO {
        return SymEigen3 {
            eigenvalues: Vec3::zero(),
            eigenvectors: q,
        };
    }
    let mut m = Mat3::zero();
    for i in 0..3 {
        for j in 0..3 {
            m.m[i][j] = sym.m[i][j] / scale;
        }
    }
    let floor = T::EPSILON * T::EPSILON;
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for (p, r) in [(0usize, 1usize), (0, 2), (1, 2)] {
            let (app, arr, apr) = (m.m[p][p], m.m[r][r], m.m[p][r]);
            if apr.abs() <= T::EPSILON * (app.abs() * arr.abs()).sqrt() || apr.abs() <= floor {
                continue;
            }
            rotated = true;
            let (c, s, t) = jacobi_rotation(app, arr, apr);
            let k = 3 - p - r;
            let (akp, akr) = (m.m[k][p], m.m[k][r]);
            let (nkp, nkr) = (c * akp - s * akr, s * akp + c * akr);
            m.m[k][p] = nkp;
            m.m[p][k] = nkp;
            m.m[k][r] = nkr;
            m.m[r][k] = nkr;
            m.m[p][p] = app - t * apr;
            m.m[r][r] = arr + t * apr;
            m.m[p][r] = T::ZERO;
            m.m[r][p] = T::ZERO;
            rotate_cols(&mut q, p, r, c, s);
        }
        if !rotated {
            break;
        }
    }
    let mut d = m.diagonal();
    // Three-element sorting network, ascending.
    for (i, j) in [(0usize, 1usize), (1, 2), (0, 1)] {
        if d[j] < d[i] {
            let di = d[i];
            d[i] = d[j];
            d[j] = di;
            swap_cols_proper(&mut q, i, j);
        }
    }
    SymEigen3 {
        eigenvalues: d * scale,
        eigenvectors: q,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sym_eigen3_known_spectrum() {
        // Q diag(−2, 1, 3) Qᵀ with a known rotation.
        let rot = Mat3::<f64>::from_axis_angle(Vec3::new(2.0, -1.0, 2.0) * (1.0 / 3.0), 0.9);
        let a = sym_from_frame(&rot, Vec3::new(3.0, -2.0, 1.0));
        let e = sym_eigen3(&a);
        assert!((e.eigenvalues - Vec3::new(-2.0, 1.0, 3.0)).abs().max_element() < 1e-14);
        assert!((e.eigenvectors.determinant() - 1.0).abs() < 1e-14);
        assert!((e.to_mat() - a).max_abs() < 1e-14);
        // Eigenvector of 3 is ±rot's first column.
        let v = e.eigenvectors.col(2);
        assert!((v.dot(rot.col(0)).abs() - 1.0).abs() < 1e-14);

        let e32 = sym_eigen3(&a.cast::<f32>());
        let got = e32.eigenvalues.cast::<f64>();
        assert!(
            (got - Vec3::new(-2.0, 1.0, 3.0)).abs().max_element() < 3.0 * 4e-6,
            "{got:?}"
        );
    }

    #[test]
    fn sym_eigen3_zero_and_non_finite() {
        let e = sym_eigen3(&Mat3::<f32>::zero());
        assert_eq!(e.eigenvalues, Vec3::zero());
        assert_eq!(e.eigenvectors, Mat3::identity());
        let mut a = Mat3::<f64>::identity();
        a.m[0][2] = f64::INFINITY;
        let e = sym_eigen3(&a);
        assert!(!e.eigenvalues.is_finite());
        assert!(e.eigenvectors.is_finite());
    }

    #[test]
    fn jacobi_rotation_zeroes_off_diagonal() {
        for &(a, b, g) in &[
            (1.0f64, 2.0, 0.5),
            (3.0, 3.0, -1.0),
            (1.0, 1e20, 1e-3),
            (0.0, 0.0, 1.0),
        ] {
            let (c, s, _) = jacobi_rotation(a, b, g);
            // Off-diagonal of Jᵀ [[a,g],[g,b]] J.
            let off = c * s * (a - b) + (c * c - s * s) * g;
            assert!(
                off.abs() <= 1e-15 * (a.abs() + b.abs() + g.abs()),
                "{a} {b} {g}: {off}"
            );
            assert!((c * c + s * s - 1.0).abs() < 1e-15);
        }
    }
}
