//! Closed forms for 2×2 matrices (spec `mpm_anisotropic.md` Appendix A, §4.1 in 2-D).
//!
//! The codimensional MPM model works on 2×2 blocks of `R̃`: the in-plane block of a surface (polar
//! rotation for the corotated energy, §4.3) and the cross-section block of a curve (signed SVD for the
//! Hencky energy and the Drucker–Prager projection, §4.4, §5.2). These closed forms have no loops
//! and no branches beyond `atan2`, and are written the same way in WGSL (§10.3).
//!
//! Matrices are plain row-major arrays `m[row][col]`, like [`Mat3`](super::Mat3).

use super::Real;

/// A 2×2 matrix, row-major: `m[row][col]`.
pub type Mat2<T> = [[T; 2]; 2];

/// The rotation by `angle` radians, `[[cos, −sin], [sin, cos]]`.
#[inline]
pub fn rot2<T: Real>(angle: T) -> Mat2<T> {
    let (s, c) = (angle.sin(), angle.cos());
    [[c, -s], [s, c]]
}

/// The 2×2 product `a · b`.
#[inline]
pub fn mat2_mul<T: Real>(a: &Mat2<T>, b: &Mat2<T>) -> Mat2<T> {
    [
        [
            a[0][0] * b[0][0] + a[0][1] * b[1][0],
            a[0][0] * b[0][1] + a[0][1] * b[1][1],
        ],
        [
            a[1][0] * b[0][0] + a[1][1] * b[1][0],
            a[1][0] * b[0][1] + a[1][1] * b[1][1],
        ],
    ]
}

/// Angle `θ` of the rotation factor of the 2×2 polar decomposition `m = rot(θ) S` (spec Appendix A.1):
/// for `m = [[a, b], [c, d]]`, `θ = atan2(c − b, a + d)`.
///
/// `rot(θ)` maximises `tr(rot(θ)ᵀ m)`, i.e. it is the rotation closest to `m` in the Frobenius norm,
/// and it is always a proper rotation (an inverted `m` yields an indefinite `S`). For the
/// upper-triangular in-plane block of a surface (`c = 0`) this is `atan2(−r12, r11 + r22)` (§4.3).
/// When `a + d = c − b = 0` (e.g. `m = 0`, or a reflection) every rotation is equally close; the
/// angle is then `0`.
#[inline]
pub fn polar2_angle<T: Real>(m: &Mat2<T>) -> T {
    (m[1][0] - m[0][1]).atan2(m[0][0] + m[1][1])
}

/// The signed 2×2 SVD `m = rot(φ) · diag(σ1, σ2) · rot(θ)` from [`svd2_signed`] (spec Appendix A.2).
///
/// `U = rot(φ)` and `Vᵀ = rot(θ)` are proper rotations; `σ1 ≥ |σ2|`, `σ1 ≥ 0`, and `σ2 < 0` exactly
/// when `det m < 0` (an inverted curve cross-section, §4.4, §5.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Svd2<T> {
    /// Angle of `U = rot(φ)`.
    pub phi: T,
    /// Largest singular value, `σ1 ≥ |σ2|`.
    pub sigma1: T,
    /// Signed second singular value, negative iff `det m < 0`.
    pub sigma2: T,
    /// Angle of `Vᵀ = rot(θ)` (so `V = rot(−θ)`).
    pub theta: T,
}

impl<T: Real> Svd2<T> {
    /// `U = rot(φ)`.
    #[inline]
    pub fn u(&self) -> Mat2<T> {
        rot2(self.phi)
    }
    /// `Vᵀ = rot(θ)`.
    #[inline]
    pub fn vt(&self) -> Mat2<T> {
        rot2(self.theta)
    }
    /// `rot(φ) · diag(s1, s2) · rot(θ)`: the decomposed matrix with other singular values, as the
    /// curve return map rebuilds `R_3 = U diag(exp ε) Vᵀ` (spec §5.2).
    pub fn recompose(&self, s1: T, s2: T) -> Mat2<T> {
        let u = self.u();
        let us = [[u[0][0] * s1, u[0][1] * s2], [u[1][0] * s1, u[1][1] * s2]];
        mat2_mul(&us, &self.vt())
    }
    /// `rot(φ) · diag(σ1, σ2) · rot(θ)`, the decomposed matrix (to rounding).
    pub fn to_mat(&self) -> Mat2<T> {
        self.recompose(self.sigma1, self.sigma2)
    }
}

/// Closed-form signed 2×2 SVD (spec `mpm_anisotropic.md` Appendix A.2). For `m = [[a, b], [c, d]]`:
///
/// ```text
/// E = (a+d)/2, F = (a−d)/2, G = (c+b)/2, H = (c−b)/2
/// Q = hypot(E, H), R = hypot(F, G), σ1 = Q + R, σ2 = Q − R
/// a1 = atan2(G, F), a2 = atan2(H, E), θ = (a2 − a1)/2, φ = (a2 + a1)/2
/// ```
///
/// `m = rot(φ) diag(σ1, σ2) rot(θ)`. `σ1σ2 = Q² − R² = det m`, so `σ2 < 0` iff `det m < 0`. The
/// absolute error of `σ2` is `O(ε)·σ1` (the cancellation in `Q − R`), which is what the spec's
/// `max(σ, 1e-4)` clamp before the logarithm expects. For `m = 0`, all outputs are `0`.
pub fn svd2_signed<T: Real>(m: &Mat2<T>) -> Svd2<T> {
    let (a, b, c, d) = (m[0][0], m[0][1], m[1][0], m[1][1]);
    let e = (a + d) * T::HALF;
    let f = (a - d) * T::HALF;
    let g = (c + b) * T::HALF;
    let h = (c - b) * T::HALF;
    let q = e.hypot(h);
    let r = f.hypot(g);
    let a1 = g.atan2(f);
    let a2 = h.atan2(e);
    Svd2 {
        phi: (a2 + a1) * T::HALF,
        sigma1: q + r,
        sigma2: q - r,
        theta: (a2 - a1) * T::HALF,
    }
}

/// `m = q · r` for a 2×2 matrix as spec §4.1 defines it in 2-D: `q1 = c1/|c1|`, `q2 = rot90(q1)`,
/// `r12 = q1·c2`, `r22 = q2·c2` (signed; negative iff `det m < 0`, the inverted 2-D curve, §5.3).
/// `q` is a proper rotation; `r = [[r11, r12], [0, r22]]` with `r11 = |c1| ≥ 0`. If `c1 = 0` then
/// `q = I` and `r11 = 0` (degenerate; see the guard of §4.1).
pub fn qr2<T: Real>(m: &Mat2<T>) -> (Mat2<T>, Mat2<T>) {
    let (c1x, c1y) = (m[0][0], m[1][0]);
    let (c2x, c2y) = (m[0][1], m[1][1]);
    let r11 = c1x.hypot(c1y);
    let (q1x, q1y) = if r11 > T::ZERO && r11.is_finite() {
        (c1x / r11, c1y / r11)
    } else {
        (T::ONE, T::ZERO)
    };
    let (q2x, q2y) = (-q1y, q1x);
    let r12 = q1x * c2x + q1y * c2y;
    let r22 = q2x * c2x + q2y * c2y;
    ([[q1x, q2x], [q1y, q2y]], [[r11, r12], [T::ZERO, r22]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max_diff(a: &Mat2<f64>, b: &Mat2<f64>) -> f64 {
        let mut e = 0.0f64;
        for i in 0..2 {
            for j in 0..2 {
                e = e.max((a[i][j] - b[i][j]).abs());
            }
        }
        e
    }

    fn cast(m: &Mat2<f32>) -> Mat2<f64> {
        [[m[0][0] as f64, m[0][1] as f64], [m[1][0] as f64, m[1][1] as f64]]
    }

    #[test]
    fn svd2_signed_reconstructs_and_orders() {
        let cases: [Mat2<f64>; 6] = [
            [[1.3, 0.4], [-0.2, 0.7]],
            [[1.3, 0.4], [0.2, -0.7]], // det < 0
            [[0.0, 0.0], [0.0, 0.0]],
            [[2.0, 0.0], [0.0, 2.0]],  // repeated
            [[0.0, -1.0], [1.0, 0.0]], // rotation by π/2
            [[1.0, 2.0], [2.0, 4.0]],  // rank 1
        ];
        for m in &cases {
            let s = svd2_signed(m);
            let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
            assert!(max_diff(&s.to_mat(), m) < 1e-14, "{m:?}: {s:?}");
            assert!(s.sigma1 >= s.sigma2.abs() && s.sigma1 >= 0.0, "{s:?}");
            assert!((s.sigma1 * s.sigma2 - det).abs() < 1e-14);
            assert!(det >= 0.0 || s.sigma2 < 0.0);
            // f32 agrees with f64 to f32 rounding relative to σ1.
            let m32 = [[m[0][0] as f32, m[0][1] as f32], [m[1][0] as f32, m[1][1] as f32]];
            let s32 = svd2_signed(&m32);
            let tol = 4e-7 * (1.0 + s.sigma1);
            assert!(max_diff(&cast(&s32.to_mat()), m) < 2.0 * tol);
            assert!((s32.sigma1 as f64 - s.sigma1).abs() < tol && (s32.sigma2 as f64 - s.sigma2).abs() < tol);
        }
    }

    #[test]
    fn polar2_angle_matches_known_rotation() {
        // m = rot(0.6) · S with S symmetric positive definite.
        let s: Mat2<f64> = [[1.5, 0.3], [0.3, 0.8]];
        let m = mat2_mul(&rot2(0.6), &s);
        assert!((polar2_angle(&m) - 0.6).abs() < 1e-14);
        // Agrees with U Vᵀ of the SVD for det > 0, and with the surface formula for triangular input.
        let d = svd2_signed(&m);
        assert!((polar2_angle(&m) - (d.phi + d.theta)).abs() < 1e-14);
        let r: Mat2<f64> = [[1.1, -0.4], [0.0, 0.9]];
        assert!((polar2_angle(&r) - (0.4f64).atan2(2.0)).abs() < 1e-15);
        assert_eq!(polar2_angle(&[[0.0f32; 2]; 2]), 0.0);
    }

    #[test]
    fn qr2_signed_r22() {
        let m: Mat2<f64> = [[0.6, 0.5], [0.8, -0.2]];
        let (q, r) = qr2(&m);
        assert!(max_diff(&mat2_mul(&q, &r), &m) < 1e-15);
        assert!((q[0][0] * q[1][1] - q[0][1] * q[1][0] - 1.0).abs() < 1e-15);
        assert!((r[0][0] - 1.0).abs() < 1e-15 && r[1][0] == 0.0);
        assert!(r[1][1] < 0.0, "det m < 0 must give r22 < 0: {r:?}");
        let (q, r) = qr2(&[[0.0f32, 1.0], [0.0, 2.0]]);
        assert_eq!(q, [[1.0, 0.0], [0.0, 1.0]]);
        assert_eq!(r, [[0.0, 1.0], [0.0, 2.0]]);
    }

    fn wrap_angle(x: f64) -> f64 {
        let two_pi = 2.0 * std::f64::consts::PI;
        x - two_pi * (x / two_pi).round()
    }

    /// All closed forms on one matrix rounded to `T`, checked in f64 against nalgebra.
    fn check2<T: Real>(m64: &Mat2<f64>) -> Result<(), String> {
        let m_t: Mat2<T> = [
            [T::from_f64(m64[0][0]), T::from_f64(m64[0][1])],
            [T::from_f64(m64[1][0]), T::from_f64(m64[1][1])],
        ];
        let m = m_t.map(|r| r.map(|x| x.to_f64()));
        let na = nalgebra::Matrix2::new(m[0][0], m[0][1], m[1][0], m[1][1]);
        let norm = na.norm();
        let det = na.determinant();
        let tol = 16.0 * T::EPSILON.to_f64() * norm.max(f64::MIN_POSITIVE);
        let d = svd2_signed(&m_t);
        let (s1, s2) = (d.sigma1.to_f64(), d.sigma2.to_f64());
        let rec = d.to_mat().map(|r| r.map(|x| x.to_f64()));
        if max_diff(&rec, &m) > tol {
            return Err(format!("svd2 reconstruction {:e}", max_diff(&rec, &m)));
        }
        if s1 < s2.abs() || !s1.is_finite() || !s2.is_finite() {
            return Err(format!("σ1 = {s1} < |σ2| = {s2}"));
        }
        let mut sv: Vec<f64> = na.svd(false, false).singular_values.iter().copied().collect();
        sv.sort_by(|x, y| y.partial_cmp(x).unwrap());
        if (s1 - sv[0]).abs() > tol || (s2.abs() - sv[1]).abs() > tol {
            return Err(format!("σ = ({s1}, {s2}) vs nalgebra {sv:?}"));
        }
        if det.abs() > 4.0 * f64::EPSILON * norm * norm && sv[1] > tol && (s2 < 0.0) != (det < 0.0) {
            return Err(format!("sign of σ2 = {s2} vs det = {det}"));
        }
        // The polar angle is the angle of U Vᵀ = rot(φ + θ) (closest proper rotation), where that
        // rotation is well defined (σ1 + σ2 not tiny).
        if s1 + s2 > 1e-3 * norm {
            let a = polar2_angle(&m_t).to_f64();
            let e = wrap_angle(a - (d.phi + d.theta).to_f64()).abs();
            if e > 64.0 * T::EPSILON.to_f64() * norm / (s1 + s2) {
                return Err(format!(
                    "polar angle {a} vs φ + θ = {}",
                    (d.phi + d.theta).to_f64()
                ));
            }
        }
        let (q, r) = qr2(&m_t);
        let (q, r) = (q.map(|x| x.map(|y| y.to_f64())), r.map(|x| x.map(|y| y.to_f64())));
        if max_diff(&mat2_mul(&q, &r), &m) > tol || r[1][0] != 0.0 || r[0][0] < 0.0 {
            return Err(format!("qr2: q = {q:?}, r = {r:?}"));
        }
        if (q[0][0] * q[1][1] - q[0][1] * q[1][0] - 1.0).abs() > 4.0 * T::EPSILON.to_f64() {
            return Err(format!("qr2: det q ≠ 1: {q:?}"));
        }
        // r22 = det/r11 is resolved in T where |det| is well above T's rounding of ‖m‖².
        if det.abs() > tol * norm && (r[1][1] < 0.0) != (det < 0.0) {
            return Err(format!("qr2: sign of r22 = {} vs det = {det}", r[1][1]));
        }
        Ok(())
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn mat2_closed_forms_random(e in prop::array::uniform4(-1.0f64..1.0), k in -4i32..=4) {
            let f = 10f64.powi(k);
            let m = [[e[0] * f, e[1] * f], [e[2] * f, e[3] * f]];
            check2::<f64>(&m).map_err(|s| TestCaseError::fail(format!("f64 {s}: {m:?}")))?;
            check2::<f32>(&m).map_err(|s| TestCaseError::fail(format!("f32 {s}: {m:?}")))?;
        }

        #[test]
        fn mat2_closed_forms_constructed(phi in -3.2f64..3.2, theta in -3.2f64..3.2, s1 in 0.1f64..2.0,
                                         ratio in -1.0f64..1.0, tiny in 0u32..3) {
            // Near-singular (σ2 → 0), inverted (σ2 < 0) and repeated (|ratio| = 1) cases by design.
            let s2 = s1 * ratio * [1.0, 1e-6, 0.0][tiny as usize];
            let d = Svd2 { phi, sigma1: s1, sigma2: s2, theta };
            let m = d.to_mat();
            check2::<f64>(&m).map_err(|s| TestCaseError::fail(format!("f64 {s}: {m:?}")))?;
            check2::<f32>(&m).map_err(|s| TestCaseError::fail(format!("f32 {s}: {m:?}")))?;
            let got = svd2_signed(&m);
            prop_assert!((got.sigma1 - s1).abs() < 1e-14 && (got.sigma2 - s2).abs() < 1e-14, "{got:?} vs {s1}, {s2}");
        }
    }
}
