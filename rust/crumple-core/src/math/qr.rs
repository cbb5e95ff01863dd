//! 3×3 QR decomposition with a proper-rotation `Q` (spec `mpm_anisotropic.md` §4.1, §9 A2).
//!
//! Codimensional MPM measures strain on the upper-triangular factor `R̃` of `F̃ = Q R̃`. The spec needs
//! `det Q = +1` so that the sign of `r33` reports a surface's normal column crossing to the other side
//! (inversion). Plain Gram–Schmidt would give `r33 ≥ 0` always and hide it, so the third column of `Q`
//! is `q1 × q2` instead of a normalised third residual.

use super::{Mat3, Real, Vec3};

/// The factors of `a = q · r` from [`qr3`].
///
/// `q` is a proper rotation (`qᵀq = I`, `det q = +1`) for every input, including zero and degenerate
/// ones. `r` is upper triangular with `r11 = |c1| ≥ 0` and `r22 ≥ 0`; `r33` carries the sign of
/// `det a` (spec §4.1, invariant U3). Entries below the diagonal of `r` are exactly zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Qr3<T> {
    /// Proper rotation, columns `q1, q2, q3 = q1 × q2`.
    pub q: Mat3<T>,
    /// Upper triangular, `r11, r22 ≥ 0`, `r33` signed.
    pub r: Mat3<T>,
}

impl<T: Real> Qr3<T> {
    /// The spec §4.1 / §5.5 guard: `true` when `r11 < eps` or `r22 < eps` (or either is not a finite
    /// number). Such an element has collapsed in its tangent directions; the solver skips its stress
    /// and return mapping for the step. The spec's `eps` is `1e-10·L` in f64 and `1e-6·L` in f32, with
    /// `L` the rest edge length; it is a caller's choice because it depends on that length scale.
    #[inline]
    pub fn is_degenerate(&self, eps: T) -> bool {
        !(self.r.m[0][0] >= eps && self.r.m[1][1] >= eps)
    }

    /// `true` when `r33 < 0`: the third column of `a` lies on the negative side of the plane spanned
    /// by the first two, i.e. `det a < 0` (spec §5.1, the "red" inverted-surface case).
    #[inline]
    pub fn is_inverted(&self) -> bool {
        self.r.m[2][2] < T::ZERO
    }
}

/// Extra Gram–Schmidt passes allowed for the second column of [`qr3`] (each runs only while the
/// previous projection cancelled more than half of the vector).
pub(crate) const REORTH_PASSES: usize = 3;

/// `|v|` without under- or overflow of the squares (0 for the zero vector).
#[inline]
fn robust_norm<T: Real>(v: Vec3<T>) -> T {
    let m = v.abs().max_element();
    if m > T::ZERO && m.is_finite() {
        Vec3::new(v.x / m, v.y / m, v.z / m).norm() * m
    } else {
        m
    }
}

/// `v / |v|` and `|v|`, or `None` when `v` is zero or not finite.
///
/// The vector is first divided by its largest component, so lengths far below `sqrt(MIN_POSITIVE)`
/// or above `sqrt(MAX)` neither underflow nor overflow and the result is a unit vector to rounding.
#[inline]
pub(super) fn unit_and_norm<T: Real>(v: Vec3<T>) -> Option<(Vec3<T>, T)> {
    if !v.is_finite() {
        return None;
    }
    let m = v.abs().max_element();
    if m <= T::ZERO {
        return None;
    }
    let u = Vec3::new(v.x / m, v.y / m, v.z / m);
    let n = u.norm();
    Some((u * (T::ONE / n), n * m))
}

/// A unit vector orthogonal to the unit vector `u`: the coordinate axis least aligned with `u` (the
/// lowest index on ties), with its `u` component removed. Axis-aligned `u` gives the next axis, so
/// for `u = e1` this is `e2` and a degenerate factorisation of a zero matrix has `q = I`.
#[inline]
pub(super) fn orthogonal_unit<T: Real>(u: Vec3<T>) -> Vec3<T> {
    let a = u.abs();
    let k = if a.x <= a.y && a.x <= a.z {
        0
    } else if a.y <= a.z {
        1
    } else {
        2
    };
    let e = Vec3::unit(k) - u * u[k];
    e * (T::ONE / e.norm())
}

/// `a = q r` with `q ∈ SO(3)` and `r` upper triangular: Gram–Schmidt on the first two columns, then
/// `q3 = q1 × q2` (spec `mpm_anisotropic.md` §4.1 and §9 A2).
///
/// ```text
/// r11 = |c1|;  q1 = c1/r11
/// r12 = q1·c2; w = c2 − r12 q1; r22 = |w|; q2 = w/r22
/// q3  = q1 × q2
/// r13 = q1·c3; r23 = q2·c3; r33 = q3·c3        (r33 < 0 iff det a < 0)
/// ```
///
/// Differences from the textbook recurrence, all of which keep the formulas above:
/// * `w` is orthogonalised against `q1` again while a projection cancels more than half of it
///   (Kahan–Parlett "twice is enough", at most 3 extra passes), so `q2 ⟂ q1` to rounding even when
///   `c2` is nearly parallel to `c1`; the corrections are added to `r12`. If `w` is only rounding
///   noise of `c2` along `q1`, it is treated as zero.
/// * Degenerate columns never produce NaN. If `c1 = 0`, `q1` is any unit vector orthogonal to `c2`
///   (or `e1` when `c2 = 0` too) and `r11 = 0`; if `w = 0`, `q2` is any unit vector orthogonal to `q1`
///   and `r22 = 0`. `q` stays a proper rotation and `q r = a` still holds. Use
///   [`Qr3::is_degenerate`] for the spec's guard.
/// * For non-finite input `q` is still a finite rotation but `r` contains the non-finite values, so
///   callers detect it on `r`.
pub fn qr3<T: Real>(a: &Mat3<T>) -> Qr3<T> {
    let (c1, c2, c3) = (a.col(0), a.col(1), a.col(2));

    let (q1, r11) = match unit_and_norm(c1) {
        Some(x) => x,
        None => {
            let q1 = match unit_and_norm(c2) {
                Some((u2, _)) => orthogonal_unit(u2),
                None => Vec3::unit(0),
            };
            (q1, c1.norm())
        }
    };

    // Gram–Schmidt with re-orthogonalisation (Kahan–Parlett "twice is enough"): a projection that
    // does not shrink the vector by more than half leaves it orthogonal to q1 to rounding; one that
    // does (c2 nearly parallel to c1) is repeated on its own result.
    let mut r12 = q1.dot(c2);
    let mut w = c2 - q1 * r12;
    let mut prev = robust_norm(c2);
    let mut clean = false;
    for _ in 0..REORTH_PASSES {
        let n = robust_norm(w);
        if n + n >= prev {
            clean = true;
            break;
        }
        let corr = q1.dot(w);
        r12 += corr;
        w -= q1 * corr;
        prev = n;
    }
    let (q2, r22) = match unit_and_norm(w) {
        Some(x) if clean => x,
        // w is zero, or rounding noise of c2 along q1 (then |w| ≤ O(ε)|c2| and dropping it is exact
        // to rounding): complete the basis with any unit vector orthogonal to q1.
        _ if w.is_finite() => (orthogonal_unit(q1), T::ZERO),
        _ => (orthogonal_unit(q1), w.norm()),
    };

    let q3 = q1.cross(q2);
    let z = T::ZERO;
    Qr3 {
        q: Mat3::from_cols(q1, q2, q3),
        r: Mat3::from_rows_array([[r11, r12, q1.dot(c3)], [z, r22, q2.dot(c3)], [z, z, q3.dot(c3)]]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: Real>(a: &Mat3<T>, tol: f64) -> Qr3<T> {
        let f = qr3(a);
        let q = f.q.cast::<f64>();
        let r = f.r.cast::<f64>();
        let scale = a.cast::<f64>().norm().max(1e-300);
        assert!(
            (q.transpose() * q - Mat3::identity()).max_abs() < tol,
            "QᵀQ ≠ I for {a:?}"
        );
        assert!((q.determinant() - 1.0).abs() < tol, "det Q ≠ 1 for {a:?}");
        assert_eq!((r.m[1][0], r.m[2][0], r.m[2][1]), (0.0, 0.0, 0.0));
        assert!(r.m[0][0] >= 0.0 && r.m[1][1] >= 0.0, "r11, r22 < 0: {r:?}");
        let e = (q * r - a.cast::<f64>()).norm() / scale;
        assert!(e < tol, "QR ≠ A ({e}) for {a:?}");
        f
    }

    #[test]
    fn qr3_general_and_inverted() {
        let a = Mat3::<f64>::from_rows_array([[1.0, 0.4, -0.2], [0.3, 0.9, 0.5], [-0.1, 0.2, 1.2]]);
        let f = check(&a, 1e-14);
        assert!(f.r.m[2][2] > 0.0 && !f.is_inverted());
        let mut b = a;
        b.set_col(2, -a.col(2));
        let g = check(&b, 1e-14);
        assert!(g.r.m[2][2] < 0.0 && g.is_inverted());
        // Flipping c3 leaves q1, q2 and r11..r22 alone and flips the whole third column of r.
        assert!((g.q - f.q).max_abs() < 1e-15);
        assert!((g.r.col(2) + f.r.col(2)).abs().max_element() < 1e-15);
        // f32 with the same input.
        let h = check(&a.cast::<f32>(), 2e-6);
        assert!((h.r.cast::<f64>() - f.r).max_abs() < 2e-6);
    }

    #[test]
    fn qr3_rotation_gives_identity_r() {
        let rot = Mat3::<f64>::from_axis_angle(Vec3::new(0.6, -0.48, 0.64), 2.1);
        let f = check(&rot, 1e-14);
        assert!((f.r - Mat3::identity()).max_abs() < 1e-14, "{:?}", f.r);
        assert!((f.q - rot).max_abs() < 1e-14);
        let f32r = check(&rot.cast::<f32>(), 1e-6);
        assert!((f32r.r.cast::<f64>() - Mat3::identity()).max_abs() < 1e-6);
    }

    #[test]
    fn qr3_degenerate_columns_stay_finite() {
        let z = Mat3::<f64>::zero();
        let f = check(&z, 1e-15);
        assert_eq!(f.q, Mat3::identity());
        assert_eq!(f.r, Mat3::zero());
        assert!(f.is_degenerate(1e-10));

        // c1 = 0, c2 ≠ 0: q1 ⟂ c2, q2 along c2.
        let a = Mat3::from_cols(Vec3::zero(), Vec3::new(0.0, 2.0, 1.0), Vec3::new(1.0, 1.0, 1.0));
        let f = check(&a, 1e-14);
        assert_eq!(f.r.m[0][0], 0.0);
        assert!((f.r.m[1][1] - 5f64.sqrt()).abs() < 1e-14);
        assert!(f.is_degenerate(1e-10));

        // c2 parallel to c1: w = 0 up to rounding.
        let c1 = Vec3::new(0.3, -0.7, 0.2);
        let a = Mat3::from_cols(c1, c1 * 3.0, Vec3::new(0.0, 0.0, 1.0));
        let f = check(&a, 1e-14);
        assert!(f.r.m[1][1] < 1e-15 && f.is_degenerate(1e-10));
        let f = check(&a.cast::<f32>(), 1e-6);
        assert!(f.r.m[1][1] < 1e-6 && f.is_degenerate(1e-5));

        // Nearly parallel: re-orthogonalisation keeps Q orthonormal and the tiny r22 accurate.
        let a = Mat3::from_cols(c1, c1 * 3.0 + Vec3::new(1e-9, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.0));
        let f = check(&a, 1e-14);
        let exact = 1e-9 * (1.0 - (c1.x / c1.norm()).powi(2)).sqrt();
        assert!((f.r.m[1][1] - exact).abs() < 1e-15, "{} vs {exact}", f.r.m[1][1]);
        assert!(!f.is_degenerate(1e-10) && f.is_degenerate(1e-8));

        // Tiny but non-zero columns normalise without underflow.
        let s = 1e-30f32;
        let a = Mat3::<f32>::from_rows_array([[s, 0.0, 0.0], [0.0, s, 0.0], [0.0, 0.0, -s]]);
        let f = check(&a, 1e-6);
        assert!((f.q.cast::<f64>() - Mat3::identity()).max_abs() < 1e-6);
        assert!(f.is_inverted());
    }

    #[test]
    fn qr3_non_finite_keeps_rotation() {
        let mut a = Mat3::<f32>::identity();
        a.m[1][0] = f32::NAN;
        let f = qr3(&a);
        assert!(f.q.is_finite());
        assert!((f.q.determinant() - 1.0).abs() < 1e-6);
        assert!(!f.r.is_finite());
        assert!(f.is_degenerate(1e-6));
    }
}
