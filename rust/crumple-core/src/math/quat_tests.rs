//! Tests of `quat.rs`: the spec's P1–P4 (shape_matching §12) for the rotation extraction.

use super::*;
use crate::math::polar3;
use crate::test_util::Rng;

fn rot_err(r: &Mat3<f64>) -> f64 {
    (r.transpose() * *r - Mat3::identity()).max_abs()
}

#[test]
fn quaternion_matrix_and_product_agree_with_mat3() {
    let mut rng = Rng::new(3);
    for _ in 0..50 {
        let a = rng.unit();
        let b = rng.unit();
        let (ta, tb) = (3.0 * rng.sym(), 3.0 * rng.sym());
        let qa = Quat::from_axis_angle(a, ta);
        let qb = Quat::from_axis_angle(b, tb);
        assert!((qa.to_mat3() - Mat3::from_axis_angle(a, ta)).max_abs() < 1e-12);
        assert!(((qa * qb).to_mat3() - qa.to_mat3() * qb.to_mat3()).max_abs() < 1e-12);
        assert!((qa.norm() - 1.0).abs() < 1e-14);
    }
    assert_eq!(Quat::<f64>::new(0.0, 0.0, 0.0, 0.0).normalize(), Quat::identity());
}

/// P1: random A with det > 0 gives the SVD polar factor; P4: a warm start at
/// the answer changes by < 1e-6.
#[test]
fn p1_p4_extraction_matches_the_polar_factor_and_warm_starts() {
    let mut rng = Rng::new(11);
    for _ in 0..200 {
        let a = rng.rotation() * (Mat3::identity() + rng.mat(0.4));
        if a.determinant() <= 0.05 {
            continue;
        }
        let mut q = Quat::identity();
        extract_rotation(&a, &mut q, 200);
        let r = q.to_mat3();
        let (r_svd, _) = polar3(&a);
        assert!(rot_err(&r) < 1e-10 && (r.determinant() - 1.0).abs() < 1e-10);
        // Converged to the f32 tolerance of 1e-6 rad (spec §3.3), in f64 as well.
        assert!((r - r_svd).max_abs() < 1e-5, "{:?} vs {:?}", r, r_svd);
        let s = r.transpose() * a;
        assert!(
            (s - s.transpose()).max_abs() < 1e-5 * a.max_abs(),
            "RᵀA must be symmetric"
        );
        let before = q;
        extract_rotation(&a, &mut q, 1);
        assert!((before * Quat::new(q.w, -q.x, -q.y, -q.z)).w.abs() > 1.0 - 1e-12);
    }
}

/// P2, P3: reflections, zero and rank-deficient input give proper rotations
/// and finite output; a zero matrix leaves the warm start unchanged.
#[test]
fn p2_p3_degenerate_and_inverted_input_stay_proper() {
    let mut rng = Rng::new(12);
    let start = Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 0.7);
    let mut q = start;
    assert_eq!(extract_rotation(&Mat3::zero(), &mut q, 20), 0);
    assert_eq!(q, start);
    let u = rng.vec(1.0);
    let v = rng.vec(1.0);
    let cases = [
        Mat3::from_diagonal(Vec3::new(1.0, 1.0, -1.0)),
        Mat3::outer(u, v),
        Mat3::outer(u, v) + Mat3::outer(v, u) * 0.5,
        rng.rotation() * Mat3::from_diagonal(Vec3::new(2.0, -0.5, 1.0)),
    ];
    for a in cases {
        let mut q = Quat::identity();
        extract_rotation(&a, &mut q, 50);
        assert!(q.is_finite());
        let r = q.to_mat3();
        assert!(rot_err(&r) < 1e-10 && (r.determinant() - 1.0).abs() < 1e-10);
    }
    let mut q = Quat::identity();
    let nan = Mat3::from_diagonal(Vec3::new(f64::NAN, 1.0, 1.0));
    extract_rotation(&nan, &mut q, 10);
    assert_eq!(q, Quat::identity());
}
