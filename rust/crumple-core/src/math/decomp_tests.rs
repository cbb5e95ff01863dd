//! Property tests of the 3×3 decompositions against nalgebra (f64 reference), for f32 and f64.
//!
//! Every matrix is generated in f64, rounded to the type under test, and the reference is computed
//! in f64 from that rounded matrix, so the tolerances measure only the decomposition's own error.
//! Tolerances are multiples of the tested type's machine epsilon times `‖A‖_F` (spec §8 asks for
//! 1e-5 relative in f32; these are tighter).

use super::*;
use nalgebra::Matrix3;
use proptest::prelude::*;

/// Multiple of machine epsilon (times `‖A‖_F` where it applies) allowed for a decomposition's own
/// properties: orthogonality, determinant, reconstruction. Stress runs of 50 000 cases per test saw
/// at most ≈10 ε (rounding accumulated over ~15 Jacobi rotations).
const K: f64 = 24.0;

/// Multiple of machine epsilon allowed where a nalgebra f64 result is the reference or where two
/// factors are multiplied again (`R·S`): nalgebra's own error reaches ~10 ε‖A‖ (e.g. an eigenvalue
/// 1 + 10ε of the symmetric part of a rotation, which is exactly 1).
const K_REF: f64 = 32.0;

fn eps<T: Real>() -> f64 {
    T::EPSILON.to_f64()
}

fn na(a: &Mat3<f64>) -> Matrix3<f64> {
    Matrix3::from_fn(|i, j| a.m[i][j])
}

/// Singular values of `a` in f64 by nalgebra, descending: the positive eigenvalues of the symmetric
/// Jordan–Wielandt matrix `[[0, A], [Aᵀ, 0]]` (eigenvalues `±σi`), whose absolute error is
/// `O(ε)·‖A‖`. nalgebra's own 3×3 `svd` was not used as the reference because on graded matrices it
/// was off by up to ~500 ε‖A‖ (e.g. 9.999994e-8 for an exact 1e-7 next to 0.5, and 8.6e-9 for 1e-8
/// with its default tolerance), while its symmetric eigensolver and the transposed SVD agreed with
/// the exact values.
fn ref_singular_values(a: &Mat3<f64>) -> [f64; 3] {
    let mut j = nalgebra::Matrix6::<f64>::zeros();
    for r in 0..3 {
        for c in 0..3 {
            j[(r, 3 + c)] = a.m[r][c];
            j[(3 + c, r)] = a.m[r][c];
        }
    }
    let mut s: Vec<f64> = j.symmetric_eigen().eigenvalues.iter().copied().collect();
    s.sort_by(|x, y| y.partial_cmp(x).unwrap());
    [s[0], s[1], s[2].max(0.0)]
}

fn rotation_from_quat(q: [f64; 4]) -> Mat3<f64> {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let [w, x, y, z] = if n > 1e-3 {
        q.map(|c| c / n)
    } else {
        [1.0, 0.0, 0.0, 0.0]
    };
    Mat3::from_rows_array([
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ])
}

fn is_rotation(m: &Mat3<f64>, tol: f64) -> Result<(), String> {
    let e = (m.transpose() * *m - Mat3::identity()).max_abs();
    let d = m.determinant() - 1.0;
    if e <= tol && d.abs() <= tol {
        Ok(())
    } else {
        Err(format!("not a rotation: |MᵀM−I| = {e}, det−1 = {d}"))
    }
}

/// All properties of a signed SVD of `a64` rounded to `T`. Returns the f64 copy of the result.
fn check_svd<T: Real>(a64: &Mat3<f64>) -> Result<Svd3<f64>, String> {
    let a_t: Mat3<T> = a64.cast();
    let a = a_t.cast::<f64>();
    let d = svd3(&a_t);
    let (s1, s2, s3) = (d.sigma.x, d.sigma.y, d.sigma.z);
    if !(s1 >= s2 && s2 >= s3.abs()) {
        return Err(format!("order violated: {:?}", d.sigma));
    }
    let d = d.cast::<f64>();
    let tol = K * eps::<T>();
    is_rotation(&d.u, tol).map_err(|e| format!("U {e}"))?;
    is_rotation(&d.v, tol).map_err(|e| format!("V {e}"))?;
    let norm = a.norm();
    let rec = (d.to_mat() - a).norm();
    if rec > tol * norm {
        return Err(format!("‖UΣVᵀ − A‖ = {rec:e} > {:e}", tol * norm));
    }
    let r = ref_singular_values(&a);
    let tol_ref = K_REF * eps::<T>();
    for (i, (&got, &want)) in d.sigma.to_array().iter().zip(&r).enumerate() {
        let err = (got.abs() - want).abs();
        if err > tol_ref * norm {
            return Err(format!("σ{} = {got} vs nalgebra {want} (err {err:e})", i + 1));
        }
    }
    // The sign of σ3 is the sign of det A wherever both are resolved above rounding (the f64
    // cofactor determinant has an absolute error of a few ε‖A‖³).
    let det = a.determinant();
    let det_resolved = det.abs() > 8.0 * f64::EPSILON * norm.powi(3);
    if r[2] > tol_ref * norm && det_resolved && (d.sigma.z < 0.0) != (det < 0.0) {
        return Err(format!(
            "sign of σ3 = {} disagrees with det A = {}",
            d.sigma.z,
            a.determinant()
        ));
    }
    Ok(d)
}

/// Polar decomposition properties. `R ∈ SO(3)`, `S = Sᵀ` exactly, `RS = A`, and the eigenvalues of
/// `S` (by nalgebra) are the signed singular values (checked against nalgebra in [`check_svd`]): `S`
/// positive semidefinite when det A > 0, one negative eigenvalue `σ3` when det A < 0. Together these
/// determine the proper polar factor uniquely for `σ2 + σ3 > 0`.
fn check_polar<T: Real>(a64: &Mat3<f64>) -> Result<(), String> {
    let a_t: Mat3<T> = a64.cast();
    let a = a_t.cast::<f64>();
    let (r_t, s_t) = polar3(&a_t);
    if s_t != s_t.transpose() {
        return Err("S not exactly symmetric".into());
    }
    let (r, s) = (r_t.cast::<f64>(), s_t.cast::<f64>());
    let tol = K * eps::<T>();
    is_rotation(&r, tol).map_err(|e| format!("R {e}"))?;
    let norm = a.norm();
    let tol_ref = K_REF * eps::<T>();
    let rec = (r * s - a).norm();
    if rec > tol_ref * norm {
        return Err(format!("‖RS − A‖ = {rec:e}"));
    }
    // Signed σ are already descending by value (σ1 ≥ σ2 ≥ |σ3| ≥ σ3); sort S's eigenvalues alike.
    let sigma = svd3(&a_t).sigma.cast::<f64>();
    let mut ev: Vec<f64> = na(&s).symmetric_eigen().eigenvalues.iter().copied().collect();
    ev.sort_by(|x, y| y.partial_cmp(x).unwrap());
    for i in 0..3 {
        if (ev[i] - sigma[i]).abs() > tol_ref * norm {
            return Err(format!(
                "eigenvalues of S {ev:?} vs signed singular values {sigma:?}"
            ));
        }
    }
    Ok(())
}

fn check_sym_eigen<T: Real>(a64: &Mat3<f64>) -> Result<(), String> {
    let a_t: Mat3<T> = a64.symmetric_part().cast();
    let a = a_t.cast::<f64>();
    let e = sym_eigen3(&a_t);
    let (l, q) = (e.eigenvalues.cast::<f64>(), e.eigenvectors.cast::<f64>());
    if !(l.x <= l.y && l.y <= l.z) {
        return Err(format!("not ascending: {l:?}"));
    }
    let tol = K * eps::<T>();
    is_rotation(&q, tol).map_err(|e| format!("Q {e}"))?;
    let norm = a.norm();
    let rec = (SymEigen3 {
        eigenvalues: l,
        eigenvectors: q,
    }
    .to_mat()
        - a)
        .norm();
    if rec > tol * norm {
        return Err(format!("‖QΛQᵀ − A‖ = {rec:e}"));
    }
    let mut r: Vec<f64> = na(&a).symmetric_eigen().eigenvalues.iter().copied().collect();
    r.sort_by(|x, y| x.partial_cmp(y).unwrap());
    for i in 0..3 {
        if (l[i] - r[i]).abs() > K_REF * eps::<T>() * norm {
            return Err(format!("λ{} = {} vs nalgebra {}", i + 1, l[i], r[i]));
        }
    }
    Ok(())
}

/// Spec §8 U3, plus agreement with nalgebra's Householder QR up to the row signs of R.
fn check_qr<T: Real>(a64: &Mat3<f64>) -> Result<(), String> {
    let a_t: Mat3<T> = a64.cast();
    let a = a_t.cast::<f64>();
    let f = qr3(&a_t);
    let (q, r) = (f.q.cast::<f64>(), f.r.cast::<f64>());
    let tol = K * eps::<T>();
    is_rotation(&q, tol).map_err(|e| format!("Q {e}"))?;
    if r.m[1][0] != 0.0 || r.m[2][0] != 0.0 || r.m[2][1] != 0.0 {
        return Err(format!("R not upper triangular: {r:?}"));
    }
    if r.m[0][0] < 0.0 || r.m[1][1] < 0.0 {
        return Err(format!("r11 or r22 negative: {r:?}"));
    }
    let norm = a.norm();
    let rec = (q * r - a).norm();
    if rec > tol * norm {
        return Err(format!("‖QR − A‖ = {rec:e}"));
    }
    let sv = ref_singular_values(&a);
    let det = a.determinant();
    let det_resolved = det.abs() > 8.0 * f64::EPSILON * norm.powi(3);
    if sv[2] > tol * norm * 4.0 && det_resolved && (r.m[2][2] < 0.0) != (det < 0.0) {
        return Err(format!("sign r33 = {} vs det A = {}", r.m[2][2], a.determinant()));
    }
    // Full-rank, well-conditioned: R is unique up to row signs.
    if sv[2] > 0.05 * sv[0] {
        let rn = na(&a).qr().r();
        let bound = K_REF * eps::<T>() * norm * sv[0] / sv[2];
        for i in 0..3 {
            let sign = if (rn[(i, i)] < 0.0) == (r.m[i][i] < 0.0) {
                1.0
            } else {
                -1.0
            };
            for j in i..3 {
                if (r.m[i][j] - sign * rn[(i, j)]).abs() > bound {
                    return Err(format!(
                        "r{}{} = {} vs nalgebra ±{}",
                        i + 1,
                        j + 1,
                        r.m[i][j],
                        rn[(i, j)]
                    ));
                }
            }
        }
    }
    Ok(())
}

fn all_checks(a: &Mat3<f64>) -> Result<(), String> {
    check_svd::<f64>(a).map_err(|e| format!("f64 svd: {e}"))?;
    check_svd::<f32>(a).map_err(|e| format!("f32 svd: {e}"))?;
    check_polar::<f64>(a).map_err(|e| format!("f64 polar: {e}"))?;
    check_polar::<f32>(a).map_err(|e| format!("f32 polar: {e}"))?;
    check_sym_eigen::<f64>(a).map_err(|e| format!("f64 eigen: {e}"))?;
    check_sym_eigen::<f32>(a).map_err(|e| format!("f32 eigen: {e}"))?;
    check_qr::<f64>(a).map_err(|e| format!("f64 qr: {e}"))?;
    check_qr::<f32>(a).map_err(|e| format!("f32 qr: {e}"))?;
    Ok(())
}

fn entries() -> impl Strategy<Value = [f64; 9]> {
    prop::array::uniform9(-1.0f64..1.0)
}

fn quat() -> impl Strategy<Value = [f64; 4]> {
    prop::array::uniform4(-1.0f64..1.0)
}

fn from_entries(e: [f64; 9], scale: f64) -> Mat3<f64> {
    Mat3::from_rows_array([[e[0], e[1], e[2]], [e[3], e[4], e[5]], [e[6], e[7], e[8]]]) * scale
}

/// `U diag(s) Vᵀ` with random rotations.
fn with_singular_values(qu: [f64; 4], qv: [f64; 4], s: Vec3<f64>) -> Mat3<f64> {
    let (u, v) = (rotation_from_quat(qu), rotation_from_quat(qv));
    u * Mat3::from_diagonal(s) * v.transpose()
}

fn run(a: Mat3<f64>) -> Result<(), TestCaseError> {
    all_checks(&a).map_err(|e| TestCaseError::fail(format!("{e}\nA = {a:?}")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn decomp_random_matrices(e in entries(), k in -6i32..=6) {
        run(from_entries(e, 10f64.powi(k)))?;
    }

    #[test]
    fn decomp_near_singular_one_tiny(qu in quat(), qv in quat(), s1 in 0.5f64..2.0, s2 in 0.05f64..1.0,
                                     k in 3i32..14, neg in any::<bool>()) {
        let s3 = 10f64.powi(-k) * if neg { -1.0 } else { 1.0 };
        let a = with_singular_values(qu, qv, Vec3::new(s1, s2.min(s1), s3));
        run(a)?;
        // Where σ3 is far above rounding of the type, its sign is the generated one.
        if s3.abs() > 1e-12 {
            let d = check_svd::<f64>(&a).map_err(TestCaseError::fail)?;
            prop_assert_eq!(d.sigma.z < 0.0, neg, "σ = {:?}", d.sigma);
            prop_assert!((d.sigma.z - s3).abs() < 1e-13, "σ3 = {} vs {}", d.sigma.z, s3);
            prop_assert_eq!(qr3(&a).is_inverted(), neg);
        }
        if s3.abs() > 1e-4 {
            let d = check_svd::<f32>(&a).map_err(TestCaseError::fail)?;
            prop_assert_eq!(d.sigma.z < 0.0, neg, "σ = {:?}", d.sigma);
            prop_assert_eq!(qr3(&a.cast::<f32>()).is_inverted(), neg);
        }
    }

    #[test]
    fn decomp_near_singular_two_tiny(qu in quat(), qv in quat(), s1 in 0.5f64..2.0,
                                     k2 in 2i32..10, k3 in 0i32..6, neg in any::<bool>()) {
        let s2 = 10f64.powi(-k2);
        let s3 = s2 * 10f64.powi(-k3) * if neg { -1.0 } else { 1.0 };
        run(with_singular_values(qu, qv, Vec3::new(s1, s2, s3)))?;
    }

    #[test]
    fn decomp_inverted(qu in quat(), qv in quat(), s in prop::array::uniform3(0.1f64..3.0)) {
        let a = with_singular_values(qu, qv, Vec3::new(s[0], s[1], -s[2]));
        prop_assert!(a.determinant() < 0.0);
        run(a)?;
        let d = check_svd::<f32>(&a).map_err(TestCaseError::fail)?;
        prop_assert!(d.sigma.z < 0.0, "inverted input needs σ3 < 0: {:?}", d.sigma);
        let f = qr3(&a.cast::<f32>());
        prop_assert!(f.is_inverted());
    }

    #[test]
    fn decomp_rotation_only(q in quat()) {
        let r = rotation_from_quat(q);
        run(r)?;
        for d in [check_svd::<f64>(&r).map_err(TestCaseError::fail)?,
                  check_svd::<f32>(&r).map_err(TestCaseError::fail)?] {
            prop_assert!((d.sigma - Vec3::splat(1.0)).abs().max_element() < 1e-6, "{:?}", d.sigma);
        }
        let f = qr3(&r);
        prop_assert!((f.r - Mat3::identity()).max_abs() < 1e-14, "spec U3: QR of a rotation has R = I");
    }

    #[test]
    fn decomp_repeated_singular_values(qu in quat(), qv in quat(), s in 0.1f64..3.0, t in 0.1f64..3.0,
                                        which in 0usize..3, neg in any::<bool>()) {
        let sign = if neg { -1.0 } else { 1.0 };
        let sv = match which {
            0 => Vec3::new(s, s, s * sign),
            1 => Vec3::new(s.max(t), s.max(t), s.min(t) * sign),
            _ => Vec3::new(s.max(t), s.min(t), s.min(t) * sign),
        };
        run(with_singular_values(qu, qv, sv))?;
    }

    #[test]
    fn decomp_diagonal(d in prop::array::uniform3(-2.0f64..2.0), zero in 0usize..4) {
        let mut d = Vec3::from_array(d);
        if zero < 3 {
            d[zero] = 0.0;
        }
        let a = Mat3::from_diagonal(d);
        run(a)?;
        let s = check_svd::<f64>(&a).map_err(TestCaseError::fail)?;
        let mut abs = d.abs().to_array();
        abs.sort_by(|x, y| y.partial_cmp(x).unwrap());
        for (got, want) in s.sigma.to_array().iter().zip(abs) {
            prop_assert!((got.abs() - want).abs() < 1e-15, "{:?} vs {:?}", s.sigma, d);
        }
    }

    #[test]
    fn decomp_rank_one(x in prop::array::uniform3(-1.0f64..1.0), y in prop::array::uniform3(-1.0f64..1.0)) {
        run(Mat3::outer(Vec3::from_array(x), Vec3::from_array(y)))?;
    }

    #[test]
    fn decomp_polar_rotation_invariance(e in entries(), q in quat()) {
        // svd3(W A) has the same σ and W·U: the spec §8 U4 frame-indifference the stresses rely on.
        let a = from_entries(e, 1.0);
        let w = rotation_from_quat(q);
        let (r1, s1) = polar3(&a);
        let (r2, s2) = polar3(&(w * a));
        let sv = ref_singular_values(&a);
        let det_resolved = a.determinant().abs() > 1e-12 * a.norm().powi(3);
        if det_resolved {
            prop_assert!((s1 - s2).max_abs() < 1e-13 * a.norm() / (sv[1] + sv[2]), "S(WA) ≠ S(A)");
        }
        if sv[1] + sv[2] > 1e-3 * sv[0] {
            // The proper polar factor is unique and Lipschitz with constant 2/(σ2 + σ3).
            prop_assert!((w * r1 - r2).max_abs() < 1e-13 * a.norm() / (sv[1] + sv[2]), "R(WA) ≠ W R(A)");
        }
    }
}

#[test]
fn decomp_zero_matrix() {
    let a = Mat3::<f64>::zero();
    all_checks(&a).unwrap();
    for d in [svd3(&a), svd3(&a.cast::<f32>()).cast()] {
        assert_eq!(
            (d.u, d.sigma, d.v),
            (Mat3::identity(), Vec3::zero(), Mat3::identity())
        );
    }
    let (r, s) = polar3(&a.cast::<f32>());
    assert_eq!((r, s), (Mat3::identity(), Mat3::zero()));
    let f = qr3(&a.cast::<f32>());
    assert_eq!((f.q, f.r), (Mat3::identity(), Mat3::zero()));
    let e = sym_eigen3(&a);
    assert_eq!((e.eigenvalues, e.eigenvectors), (Vec3::zero(), Mat3::identity()));
}

#[test]
fn decomp_extreme_scales() {
    // Scale invariance near the bottom and top of each type's range: the inputs are scaled by their
    // largest entry first, so no square under- or overflows.
    let base = Mat3::<f64>::from_rows_array([[0.3, -0.8, 0.1], [0.5, 0.2, -0.6], [-0.4, 0.7, 0.9]]);
    let sv = ref_singular_values(&base);
    let sym = base.symmetric_part();
    let ev = sym_eigen3(&sym).eigenvalues;
    for k in [-30, -15, 15, 30] {
        let f = 10f64.powi(k);
        let d = svd3(&(base * f).cast::<f32>());
        for (got, want) in d.sigma.to_array().iter().zip(sv) {
            assert!(
                (*got as f64 / f - want).abs() < 1e-5,
                "k = {k}: σ = {:?}",
                d.sigma
            );
        }
        assert!(d.u.is_finite() && d.v.is_finite());
        let e = sym_eigen3(&(sym * f).cast::<f32>()).eigenvalues.cast::<f64>() * (1.0 / f);
        assert!((e - ev).abs().max_element() < 1e-5, "k = {k}: λ = {e:?}");
        let q = qr3(&(base * f).cast::<f32>());
        assert!((q.q.cast::<f64>() - qr3(&base).q).max_abs() < 1e-5, "k = {k}");
    }
    for k in [-300, -150, 150, 300] {
        let f = 10f64.powi(k);
        let d = svd3(&(base * f));
        for (got, want) in d.sigma.to_array().iter().zip(sv) {
            assert!((got / f - want).abs() < 1e-13, "k = {k}: σ = {:?}", d.sigma);
        }
        let e = sym_eigen3(&(sym * f)).eigenvalues * (1.0 / f);
        assert!((e - ev).abs().max_element() < 1e-13, "k = {k}: λ = {e:?}");
        let q = qr3(&(base * f));
        assert!((q.q - qr3(&base).q).max_abs() < 1e-13, "k = {k}");
        assert!((q.r * (1.0 / f) - qr3(&base).r).max_abs() < 1e-13, "k = {k}");
    }
}

#[test]
fn decomp_tiny_singular_value_keeps_relative_accuracy_f64() {
    // One-sided Jacobi never forms AᵀA: a singular value 1e-12·σ1 of a well-scaled matrix comes out
    // with small relative error, which a Jacobi on AᵀA (error ~ ε σ1²/σ3) cannot give.
    let a = Mat3::<f64>::from_diagonal(Vec3::new(1.0, 0.5, 1e-12))
        * Mat3::from_rows_array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]]);
    let d = svd3(&a);
    let exact = a.determinant() / (d.sigma.x * d.sigma.y);
    assert!(
        (d.sigma.z - exact).abs() < 1e-10 * exact,
        "σ3 = {:e}, det-based = {exact:e}",
        d.sigma.z
    );
}

#[test]
fn decomp_tiny_column_next_to_large_ones() {
    // Found by the property tests: after a few rotations one column of A·V was ~1e-24 in f32, whose
    // squared length underflows; the solver must stop rotating it and still meet every property.
    let a = Mat3::<f64>::from_rows_array([
        [-0.27183056, -0.34938216, 0.27379844],
        [0.4958173, 0.637271, -0.4994067],
        [-0.34754533, -0.44669792, 0.35006133],
    ]);
    all_checks(&a).unwrap();
    all_checks(&(a * 1e-20)).unwrap();
}
