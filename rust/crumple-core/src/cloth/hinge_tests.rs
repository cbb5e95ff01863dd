//! Tests of `hinge.rs` (kept out of the source file).

use super::*;
use crate::test_util::{Rng, max_abs, max_diff};
use nalgebra::DMatrix;

const FD_STEP: f64 = 1e-6;

fn v(x: f64, y: f64, z: f64) -> Vec3<f64> {
    Vec3::new(x, y, z)
}

/// A flat-ish hinge (unit edge, wings of height ~0.9) with every coordinate perturbed
/// by up to `amp` (§9: 0.3-amplitude perturbations).
fn random_hinge(r: &mut Rng, amp: f64) -> [Vec3<f64>; 4] {
    let base = [
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.4, 0.9, 0.0),
        v(0.6, -0.8, 0.0),
    ];
    base.map(|p| p + r.vec(amp))
}

/// §3.1's sign-test configuration.
fn sign_hinge(phi: f64) -> [Vec3<f64>; 4] {
    [
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.5, phi.cos(), phi.sin()),
        v(0.5, -1.0, 0.0),
    ]
}

/// Central difference of a scalar function of the 12 hinge coordinates.
fn fd_grad(x: &[Vec3<f64>; 4], f: impl Fn(&[Vec3<f64>; 4]) -> f64) -> [Vec3<f64>; 4] {
    let mut g = [Vec3::zero(); 4];
    for k in 0..4 {
        for c in 0..3 {
            let mut xp = *x;
            let mut xm = *x;
            xp[k][c] += FD_STEP;
            xm[k][c] -= FD_STEP;
            g[k][c] = (f(&xp) - f(&xm)) / (2.0 * FD_STEP);
        }
    }
    g
}

fn net_force_and_torque(x: &[Vec3<f64>; 4], f: &[Vec3<f64>; 4]) -> (Vec3<f64>, Vec3<f64>) {
    let mut sf = Vec3::zero();
    let mut st = Vec3::zero();
    for k in 0..4 {
        sf += f[k];
        st += x[k].cross(f[k]);
    }
    (sf, st)
}

/// The 12×12 GN element matrix assembled from the blocks.
fn element_matrix(g: &[Vec3<f64>; 4], coef: f64) -> DMatrix<f64> {
    DMatrix::from_fn(12, 12, |i, j| {
        hinge_jacobian_block(g, coef, i / 3, j / 3).m[i % 3][j % 3]
    })
}

#[test]
fn t1_gradient_matches_finite_differences() {
    let mut r = Rng::new(11);
    let mut worst = 0.0f64;
    for _ in 0..500 {
        let x = random_hinge(&mut r, 0.3);
        let (theta, g) = dihedral_angle_and_gradient(&x);
        assert_eq!(theta, dihedral_angle(&x));
        let fd = fd_grad(&x, dihedral_angle);
        worst = worst.max(max_diff(&g, &fd));
    }
    assert!(worst < 1e-7, "max |FD − analytic| = {worst:e}");
}

#[test]
fn t1_sign_convention() {
    for phi in [0.3, -0.3, 1.2, -2.5, 3.0] {
        let theta = dihedral_angle(&sign_hinge(phi));
        assert!((theta - phi).abs() < 1e-14, "φ = {phi}: θ = {theta}");
    }
    // Flat consistently-oriented pair → exactly 0.
    assert_eq!(dihedral_angle(&sign_hinge(0.0)), 0.0);
}

#[test]
fn t2_forces_are_minus_energy_gradient() {
    let mut r = Rng::new(12);
    let (s, kb, kf) = (1.7, 0.9, 2.3);
    let mut worst = 0.0f64;
    for _ in 0..200 {
        let x = random_hinge(&mut r, 0.3);
        // Frozen internal state: plastic rest angle θ_p and friction anchor θ_a, both ≠ 0.
        let theta_p = 0.4 * r.sym();
        let theta_a = 0.4 * r.sym();
        let (theta, g) = dihedral_angle_and_gradient(&x);
        let moment = s * (kb * (theta - theta_p) + kf * (theta - theta_a));
        let f = hinge_forces(&g, moment);
        let fd = fd_grad(&x, |y| {
            hinge_energy(y, s, kb, theta_p) + hinge_energy(y, s, kf, theta_a)
        });
        let minus_fd = fd.map(|p| -p);
        worst = worst.max(max_diff(&f, &minus_fd) / max_abs(&f));
    }
    assert!(worst < 1e-6, "relative error {worst:e}");
}

#[test]
fn t2_exact_force_of_sign_configuration() {
    let phi: f64 = 0.3;
    let (theta, g) = dihedral_angle_and_gradient(&sign_hinge(phi));
    let f = hinge_forces(&g, 1.0 * 1.0 * (theta - 0.0));
    let expect = v(0.0, -phi.sin(), phi.cos()) * -0.3;
    assert!(
        (f[2] - expect).abs().max_element() < 1e-14,
        "{:?} vs {expect:?}",
        f[2]
    );
}

#[test]
fn t3_gauss_newton_is_symmetric_nsd_rank_one() {
    let mut r = Rng::new(13);
    for _ in 0..50 {
        let x = random_hinge(&mut r, 0.3);
        let (_, g) = dihedral_angle_and_gradient(&x);
        let coef = 1.3 * (0.5 + r.unit_f64());
        for a in 0..4 {
            for b in 0..4 {
                let jab = hinge_jacobian_block(&g, coef, a, b);
                let jba = hinge_jacobian_block(&g, coef, b, a);
                assert_eq!(jab, jba.transpose());
            }
        }
        let scale = coef * g.iter().map(|p| p.norm_squared()).sum::<f64>();
        let mut ev: Vec<f64> = element_matrix(&g, coef)
            .symmetric_eigen()
            .eigenvalues
            .iter()
            .copied()
            .collect();
        ev.sort_by(f64::total_cmp);
        assert!(ev[11] <= 1e-12 * scale, "positive eigenvalue {:e}", ev[11]);
        // Rank 1: one eigenvalue −coef|g|², the other eleven are zero.
        assert!((ev[0] + scale).abs() <= 1e-12 * scale, "{} vs {}", ev[0], -scale);
        assert!(ev[1].abs() <= 1e-12 * scale, "second eigenvalue {:e}", ev[1]);
    }
}

#[test]
fn t3_gauss_newton_equals_fd_jacobian_at_rest_angle() {
    let mut r = Rng::new(14);
    let (s, kb, kf) = (1.4, 0.8, 1.9);
    for _ in 0..50 {
        let x0 = random_hinge(&mut r, 0.3);
        // θ_rest = θ_a = θ(x0): the dropped terms ∝ (θ − θ_rest) and Δ vanish (§9 T3).
        let theta_rest = dihedral_angle(&x0);
        let forces = |y: &[Vec3<f64>; 4]| {
            let (th, g) = dihedral_angle_and_gradient(y);
            hinge_forces(&g, s * (kb * (th - theta_rest) + kf * (th - theta_rest)))
        };
        let (_, g) = dihedral_angle_and_gradient(&x0);
        let coef = s * (kb + kf);
        let gn = element_matrix(&g, coef);
        let mut fd = DMatrix::zeros(12, 12);
        for j in 0..12 {
            let mut xp = x0;
            let mut xm = x0;
            xp[j / 3][j % 3] += FD_STEP;
            xm[j / 3][j % 3] -= FD_STEP;
            let (fp, fm) = (forces(&xp), forces(&xm));
            for i in 0..12 {
                fd[(i, j)] = (fp[i / 3][i % 3] - fm[i / 3][i % 3]) / (2.0 * FD_STEP);
            }
        }
        let err = (&gn - &fd).abs().max() / gn.abs().max();
        assert!(err < 1e-5, "relative error {err:e}");
    }
}

#[test]
fn t4_zero_force_when_flat_or_at_rest_angle() {
    let flat = [
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.3, 0.7, 0.0),
        v(0.8, -0.5, 0.0),
    ];
    let (theta, g) = dihedral_angle_and_gradient(&flat);
    assert_eq!(theta, 0.0);
    assert!(max_abs(&hinge_forces(&g, 2.0 * (theta - 0.0))) <= 1e-14);
    // A rotated and translated flat hinge: θ is 0 up to rounding, so forces ≈ 0.
    let mut r = Rng::new(15);
    let rot = r.rotation();
    let t = r.vec(1.0);
    let moved = flat.map(|p| rot * p + t);
    let (theta, g) = dihedral_angle_and_gradient(&moved);
    assert!(theta.abs() < 1e-14, "{theta:e}");
    assert!(max_abs(&hinge_forces(&g, 2.0 * theta)) <= 1e-14);
    // A curved hinge with rest angle θ̄ = θ_a = θ(X) (init_rest_from_mesh): exactly 0.
    let curved = random_hinge(&mut r, 0.3);
    let (theta, g) = dihedral_angle_and_gradient(&curved);
    let rest = dihedral_angle(&curved);
    assert_eq!(
        max_abs(&hinge_forces(&g, 3.0 * (theta - rest) + 1.0 * (theta - rest))),
        0.0
    );
}

#[test]
fn t5_rigid_motion_invariance_and_balance() {
    let mut r = Rng::new(16);
    let (s, kb, kf) = (1.2, 1.1, 0.7);
    let mut hinges: Vec<[Vec3<f64>; 4]> = (0..100).map(|_| random_hinge(&mut r, 0.3)).collect();
    // Irregular hinge: wing 0 has height 1e-2·|e| (short, but above the 1e-3·|e| guard).
    hinges.push([
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(1.7, 0.01, 0.003),
        v(0.4, -0.9, 0.2),
    ]);
    for x in hinges {
        let (theta, g) = dihedral_angle_and_gradient(&x);
        let moment = s * (kb * (theta - 0.1) + kf * (theta + 0.05));
        let f = hinge_forces(&g, moment);
        let coef = s * (kb + kf);
        let rot = r.rotation();
        let t = r.vec(2.0);
        let y = x.map(|p| rot * p + t);
        let (theta_y, gy) = dihedral_angle_and_gradient(&y);
        let fy = hinge_forces(&gy, s * (kb * (theta_y - 0.1) + kf * (theta_y + 0.05)));
        let fscale = max_abs(&f);
        assert!((theta - theta_y).abs() < 1e-12, "θ {theta} vs {theta_y}");
        let rf = f.map(|p| rot * p);
        assert!(max_diff(&fy, &rf) <= 1e-12 * fscale, "f → R f");
        let jscale = coef * max_abs(&g).powi(2);
        for a in 0..4 {
            for b in 0..4 {
                let rj = rot * hinge_jacobian_block(&g, coef, a, b) * rot.transpose();
                let d = (hinge_jacobian_block(&gy, coef, a, b) - rj).max_abs();
                assert!(d <= 1e-12 * jscale, "J → R J Rᵀ: {d:e}");
            }
        }
        // Balance in the moved frame (the translation makes the torque origin-sensitive).
        let (sf, st) = net_force_and_torque(&y, &fy);
        let xscale = max_abs(&y);
        assert!(sf.abs().max_element() <= 1e-12 * fscale, "Σf = {sf:?}");
        assert!(st.abs().max_element() <= 1e-12 * fscale * xscale, "Σx×f = {st:?}");
    }
}

#[test]
fn t5_short_wing_is_exact_but_reference_clamp_breaks_torque() {
    let x = [
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.3, 0.02, 0.01),
        v(0.6, -0.8, 0.1),
    ];
    // Our guard (1e-3·|e|) is inactive: the gradient is exact (FD) and torque-free.
    let (_, g) = dihedral_angle_and_gradient(&x);
    let fd = fd_grad(&x, dihedral_angle);
    assert!(max_diff(&g, &fd) <= 1e-6 * max_abs(&g));
    let (sf, st) = net_force_and_torque(&x, &g);
    assert!(sf.abs().max_element() <= 1e-12 * max_abs(&g));
    assert!(st.abs().max_element() <= 1e-12 * max_abs(&g));
    // The reference code's max(h, |e|) (§10 A7) leaves an O(1) torque: this test would catch it.
    let (_, g_ref) = angle_and_gradient_guarded(&x, 1.0);
    let (_, st_ref) = net_force_and_torque(&x, &g_ref);
    assert!(st_ref.norm() > 0.5, "reference clamp torque {st_ref:?}");
}

#[test]
fn degenerate_hinges_are_finite_and_flat() {
    let p = v(0.2, -0.1, 0.3);
    let cases = [
        // Zero-length edge.
        [p, p, v(1.0, 1.0, 0.0), v(0.0, -1.0, 0.5)],
        // Wing 0 on the edge line (zero-area face 0).
        [
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(2.0, 0.0, 0.0),
            v(0.5, -1.0, 0.0),
        ],
        // Wing 1 tip on x0.
        [
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(0.5, 1.0, 0.0),
            v(0.0, 0.0, 0.0),
        ],
        // Everything at one point.
        [p; 4],
        // Edge far below the wing scale.
        [p, p + v(1e-15, 0.0, 0.0), v(1.0, 1.0, 0.0), v(0.0, -1.0, 0.5)],
    ];
    for x in cases {
        let (theta, g) = dihedral_angle_and_gradient(&x);
        assert_eq!(theta, 0.0);
        assert_eq!(dihedral_angle(&x), 0.0);
        assert!(g.iter().all(|q| *q == Vec3::zero()));
        assert_eq!(hinge_energy(&x, 1.0, 1.0, 0.3), 0.5 * 0.09);
    }
    // Nearly degenerate wing (height 1e-9·|e|): guard active, output finite, Σg = 0.
    let x = [
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.5, 1e-9, 0.0),
        v(0.5, -1.0, 0.0),
    ];
    let (theta, g) = dihedral_angle_and_gradient(&x);
    assert!(theta.is_finite() && g.iter().all(|q| q.is_finite()));
    assert!(max_abs(&g) <= 2.0 / HEIGHT_GUARD);
    let (sf, _) = net_force_and_torque(&x, &g);
    assert!(sf.abs().max_element() <= 1e-12 * max_abs(&g));
    assert_eq!(shape_factor(1.0, 0.0, 0.0), 0.0);
    assert_eq!(shape_factor(2.0, 1.0, 3.0), 1.0);
}
