//! Tests of `membrane.rs` (kept out of the source file).

use super::*;
use crate::test_util::{Rng, max_abs, max_diff};
use nalgebra::DMatrix;

const FD_STEP: f64 = 1e-6;

const K: MembraneStiffness = MembraneStiffness {
    k11: 3.0,
    k22: 2.0,
    k12: 0.4,
    k33: 1.2,
};
const K_FRIC: [f64; 3] = [1.5, 2.5, 0.8];

type Forces = [Vec3<f64>; 3];
type Jac = [[Mat3<f64>; 3]; 3];

fn v(x: f64, y: f64, z: f64) -> Vec3<f64> {
    Vec3::new(x, y, z)
}

/// A random rest triangle (a base triangle with 0.3-amplitude UV perturbations) and a
/// random deformed copy: the rest shape laid in the plane z = 0, perturbed by 0.3 in 3-D.
fn random_triangle(r: &mut Rng) -> ([[f64; 2]; 3], TriangleRest, [Vec3<f64>; 3]) {
    let base = [[0.0, 0.0], [1.0, 0.0], [0.3, 0.9]];
    loop {
        let u = base.map(|p| [p[0] + 0.3 * r.sym(), p[1] + 0.3 * r.sym()]);
        // Keep reasonably shaped rest triangles (base area 0.45) so error scales stay O(1).
        if let Ok(rest) = TriangleRest::from_uv(u)
            && rest.area > 0.15
        {
            let y = u.map(|p| v(p[0], p[1], 0.0) + r.vec(0.3));
            return (u, rest, y);
        }
    }
}

fn sub3(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn membrane_at(rest: &TriangleRest, y: &[Vec3<f64>; 3], eps_p: &[f64; 3]) -> (Forces, Jac) {
    let s = green_strain(rest, y);
    let mut f = [Vec3::zero(); 3];
    let mut j = [[Mat3::zero(); 3]; 3];
    add_membrane(rest, &s, &K, &sub3(&s.e, eps_p), &mut f, &mut j);
    (f, j)
}

fn friction_at(rest: &TriangleRest, y: &[Vec3<f64>; 3], anchor: &[f64; 3]) -> (Forces, Jac) {
    let s = green_strain(rest, y);
    let mut f = [Vec3::zero(); 3];
    let mut j = [[Mat3::zero(); 3]; 3];
    add_tensile_friction(rest, &s, &K_FRIC, &sub3(&s.e, anchor), &mut f, &mut j);
    (f, j)
}

fn membrane_energy(rest: &TriangleRest, y: &[Vec3<f64>; 3], eps_p: &[f64; 3]) -> f64 {
    rest.area * membrane_energy_density(&K, &sub3(&green_strain(rest, y).e, eps_p))
}

fn friction_energy(rest: &TriangleRest, y: &[Vec3<f64>; 3], anchor: &[f64; 3]) -> f64 {
    let d = sub3(&green_strain(rest, y).e, anchor);
    rest.area * (0.5 * K_FRIC[0] * d[0] * d[0] + 0.5 * K_FRIC[1] * d[1] * d[1] + K_FRIC[2] * d[2] * d[2])
}

fn fd_grad(y: &[Vec3<f64>; 3], f: impl Fn(&[Vec3<f64>; 3]) -> f64) -> Forces {
    let mut g = [Vec3::zero(); 3];
    for k in 0..3 {
        for c in 0..3 {
            let (mut yp, mut ym) = (*y, *y);
            yp[k][c] += FD_STEP;
            ym[k][c] -= FD_STEP;
            g[k][c] = (f(&yp) - f(&ym)) / (2.0 * FD_STEP);
        }
    }
    g
}

/// `∂f_i/∂y_j` by central differences of a force function, as a 9×9 matrix.
fn fd_jacobian(y: &[Vec3<f64>; 3], forces: impl Fn(&[Vec3<f64>; 3]) -> Forces) -> DMatrix<f64> {
    let mut m = DMatrix::zeros(9, 9);
    for j in 0..9 {
        let (mut yp, mut ym) = (*y, *y);
        yp[j / 3][j % 3] += FD_STEP;
        ym[j / 3][j % 3] -= FD_STEP;
        let (fp, fm) = (forces(&yp), forces(&ym));
        for i in 0..9 {
            m[(i, j)] = (fp[i / 3][i % 3] - fm[i / 3][i % 3]) / (2.0 * FD_STEP);
        }
    }
    m
}

fn to_matrix(j: &Jac) -> DMatrix<f64> {
    DMatrix::from_fn(9, 9, |r, c| j[r / 3][c / 3].m[r % 3][c % 3])
}

/// `J_ab = J_baᵀ` bitwise.
fn assert_symmetric(j: &Jac) {
    for (a, row) in j.iter().enumerate() {
        for (b, blk) in row.iter().enumerate() {
            assert_eq!(*blk, j[b][a].transpose(), "blocks ({a}, {b})");
        }
    }
}

#[test]
fn rest_data_from_uv() {
    let r = TriangleRest::from_uv([[0.0, 0.0], [2.0, 0.0], [0.0, 1.0]]).unwrap();
    assert_eq!(r.dm_inv, [[0.5, 0.0], [0.0, 1.0]]);
    assert_eq!(r.area, 1.0);
    // Clockwise winding: the same area, and still zero strain at rest.
    let u = [[0.0, 0.0], [0.0, 1.0], [2.0, 0.0]];
    let r = TriangleRest::from_uv(u).unwrap();
    assert_eq!(r.area, 1.0);
    let s = green_strain(&r, &u.map(|p| v(p[0], p[1], 0.0)));
    assert!(s.e.iter().all(|e| e.abs() < 1e-15), "{:?}", s.e);
    // Degenerate or non-finite rest shapes are rejected, not panicked on.
    for bad in [
        [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]],
        [[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]],
        [[0.0, 0.0], [1e-8, 0.0], [0.0, 1e-8]],
        [[0.0, 0.0], [f64::NAN, 0.0], [0.0, 1.0]],
        [[0.0, 0.0], [f64::INFINITY, 0.0], [0.0, 1.0]],
    ] {
        match TriangleRest::from_uv(bad) {
            Err(crate::Error::InvalidInput(msg)) => assert!(msg.contains("rest area"), "{msg}"),
            other => panic!("{bad:?} gave {other:?}"),
        }
    }
}

#[test]
fn strain_gradients_match_finite_differences() {
    let mut r = Rng::new(21);
    for _ in 0..200 {
        let (_, rest, y) = random_triangle(&mut r);
        let g = strain_gradients(&green_strain(&rest, &y));
        for (i, gi) in g.iter().enumerate() {
            let fd = fd_grad(&y, |q| green_strain(&rest, q).e[i]);
            assert!(max_diff(gi, &fd) < 1e-8, "E{i}");
        }
    }
}

#[test]
fn t2_membrane_forces_are_minus_energy_gradient() {
    let mut r = Rng::new(22);
    let mut worst = 0.0f64;
    for _ in 0..200 {
        let (_, rest, y) = random_triangle(&mut r);
        let eps_p = [0.05 * r.sym(), 0.05 * r.sym(), 0.05 * r.sym()];
        let (f, _) = membrane_at(&rest, &y, &eps_p);
        let fd = fd_grad(&y, |q| membrane_energy(&rest, q, &eps_p)).map(|p| -p);
        worst = worst.max(max_diff(&f, &fd) / max_abs(&f));
    }
    assert!(worst < 1e-6, "relative error {worst:e}");
}

#[test]
fn t2_friction_forces_are_minus_energy_gradient() {
    let mut r = Rng::new(23);
    let mut worst = 0.0f64;
    for _ in 0..200 {
        let (_, rest, y) = random_triangle(&mut r);
        let anchor = [0.1 * r.sym(), 0.1 * r.sym(), 0.1 * r.sym()];
        let (f, _) = friction_at(&rest, &y, &anchor);
        let fd = fd_grad(&y, |q| friction_energy(&rest, q, &anchor)).map(|p| -p);
        worst = worst.max(max_diff(&f, &fd) / max_abs(&f));
    }
    assert!(worst < 1e-6, "relative error {worst:e}");
}

#[test]
fn t3_jacobians_symmetric_nsd() {
    let mut r = Rng::new(24);
    for _ in 0..100 {
        // Random states include compression, shear and negative deviations, where the
        // clamps and the dropped shear term matter.
        let (_, rest, y) = random_triangle(&mut r);
        let eps_p = [0.1 * r.sym(), 0.1 * r.sym(), 0.1 * r.sym()];
        let anchor = [0.1 * r.sym(), 0.1 * r.sym(), 0.1 * r.sym()];
        for (_, j) in [membrane_at(&rest, &y, &eps_p), friction_at(&rest, &y, &anchor)] {
            assert_symmetric(&j);
            let m = to_matrix(&j);
            let scale = m.norm();
            let top = m.symmetric_eigen().eigenvalues.max();
            assert!(top <= 1e-12 * scale, "eigenvalue {top:e} (scale {scale:e})");
        }
    }
}

#[test]
fn t3_membrane_gn_equals_fd_where_dropped_terms_vanish() {
    // The GN Jacobian differs from the exact one by 2K33 e2 ∇²E12 (dropped) and by the
    // clamp of negative e0, e1; both vanish when e0, e1 ≥ 0 and e2 = 0 (elastic strain).
    let mut r = Rng::new(25);
    let mut cases = Vec::new();
    // (a) Uniaxial/biaxial stretch without shear, rotated and translated in 3-D, no plasticity:
    //     x_u ⊥ x_v with |x_u|, |x_v| ≥ 1.
    for (l1, l2) in [(1.1, 1.05), (1.0, 1.3), (1.2, 1.2)] {
        let (u, rest, _) = random_triangle(&mut r);
        let rot = r.rotation();
        let t = r.vec(1.0);
        let y = u.map(|p| rot * v(l1 * p[0], l2 * p[1], 0.0) + t);
        cases.push((rest, y, [0.0; 3]));
    }
    // (b) Arbitrary (sheared, partly compressed) configurations whose frozen plastic strain
    //     leaves the elastic strain (0.02.., 0.02.., 0).
    for _ in 0..20 {
        let (_, rest, y) = random_triangle(&mut r);
        let e = green_strain(&rest, &y).e;
        let target = [0.02 + 0.1 * r.unit_f64(), 0.02 + 0.1 * r.unit_f64(), 0.0];
        cases.push((rest, y, sub3(&e, &target)));
    }
    for (rest, y, eps_p) in cases {
        let e_el = sub3(&green_strain(&rest, &y).e, &eps_p);
        assert!(
            e_el[0] >= 0.0 && e_el[1] >= 0.0 && e_el[2].abs() < 1e-14,
            "{e_el:?}"
        );
        let gn = to_matrix(&membrane_at(&rest, &y, &eps_p).1);
        let fd = fd_jacobian(&y, |q| membrane_at(&rest, q, &eps_p).0);
        let err = (&gn - &fd).abs().max() / gn.abs().max();
        assert!(err < 1e-5, "relative error {err:e}");
    }
}

#[test]
fn t3_friction_gn_equals_fd_where_dropped_terms_vanish() {
    // Exact where the [R] clamp is inactive (Δ11, Δ22 ≥ 0) and the dropped shear term
    // 2k12 Δ12 ∇²E12 vanishes (Δ12 = 0); the anchors are frozen.
    let mut r = Rng::new(26);
    for _ in 0..20 {
        let (_, rest, y) = random_triangle(&mut r);
        let e = green_strain(&rest, &y).e;
        let delta = [0.02 + 0.1 * r.unit_f64(), 0.02 + 0.1 * r.unit_f64(), 0.0];
        let anchor = sub3(&e, &delta);
        let gn = to_matrix(&friction_at(&rest, &y, &anchor).1);
        let fd = fd_jacobian(&y, |q| friction_at(&rest, q, &anchor).0);
        let err = (&gn - &fd).abs().max() / gn.abs().max();
        assert!(err < 1e-5, "relative error {err:e}");
    }
}

#[test]
fn t4_zero_force_at_rest_and_under_rotation() {
    let mut r = Rng::new(27);
    for _ in 0..50 {
        let (u, rest, _) = random_triangle(&mut r);
        let flat = u.map(|p| v(p[0], p[1], 0.0));
        let rot = r.rotation();
        let t = r.vec(1.0);
        let moved = flat.map(|p| rot * p + t);
        for y in [flat, moved] {
            let (f, _) = membrane_at(&rest, &y, &[0.0; 3]);
            assert!(max_abs(&f) <= 1e-14, "membrane {f:?}");
            let (f, _) = friction_at(&rest, &y, &[0.0; 3]);
            assert!(max_abs(&f) <= 1e-14, "friction {f:?}");
        }
        // ... and only then: a 5 % stretch of the rotated rest shape is not force-free.
        let stretched = u.map(|p| rot * v(1.05 * p[0], p[1], 0.0) + t);
        assert!(max_abs(&membrane_at(&rest, &stretched, &[0.0; 3]).0) > 1e-3);
    }
}

#[test]
fn t5_rigid_motion_invariance_and_balance() {
    let mut r = Rng::new(28);
    for _ in 0..100 {
        let (_, rest, y) = random_triangle(&mut r);
        let eps_p = [0.05 * r.sym(), 0.05 * r.sym(), 0.05 * r.sym()];
        let anchor = [0.05 * r.sym(), 0.05 * r.sym(), 0.05 * r.sym()];
        let rot = r.rotation();
        let t = r.vec(2.0);
        let ym = y.map(|p| rot * p + t);
        let (e, em) = (green_strain(&rest, &y).e, green_strain(&rest, &ym).e);
        assert!((0..3).all(|i| (e[i] - em[i]).abs() < 1e-12), "{e:?} vs {em:?}");
        for (f, j, fm, jm) in [
            {
                let ((f, j), (fm, jm)) = (membrane_at(&rest, &y, &eps_p), membrane_at(&rest, &ym, &eps_p));
                (f, j, fm, jm)
            },
            {
                let ((f, j), (fm, jm)) = (friction_at(&rest, &y, &anchor), friction_at(&rest, &ym, &anchor));
                (f, j, fm, jm)
            },
        ] {
            let fscale = max_abs(&f);
            assert!(max_diff(&fm, &f.map(|p| rot * p)) <= 1e-12 * fscale, "f → R f");
            let jscale = to_matrix(&j).abs().max();
            for a in 0..3 {
                for b in 0..3 {
                    let d = (jm[a][b] - rot * j[a][b] * rot.transpose()).max_abs();
                    assert!(d <= 1e-12 * jscale, "J → R J Rᵀ: {d:e}");
                }
            }
            let net: Vec3<f64> = fm.iter().fold(Vec3::zero(), |acc, p| acc + *p);
            let torque = (0..3).fold(Vec3::zero(), |acc, k| acc + ym[k].cross(fm[k]));
            assert!(net.abs().max_element() <= 1e-12 * fscale, "Σf = {net:?}");
            assert!(
                torque.abs().max_element() <= 1e-12 * fscale * max_abs(&ym),
                "Σy×f = {torque:?}"
            );
        }
    }
}

#[test]
fn degenerate_deformed_triangles_are_finite() {
    let rest = TriangleRest::from_uv([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]).unwrap();
    let p = v(0.3, -0.2, 0.1);
    for y in [
        [p; 3],                                                 // collapsed to a point
        [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], // collinear
        [v(0.0, 0.0, 0.0), v(0.0, 1.0, 0.0), v(1.0, 0.0, 0.0)], // inverted
    ] {
        let s = green_strain(&rest, &y);
        let mut f = [Vec3::zero(); 3];
        let mut j = [[Mat3::zero(); 3]; 3];
        add_membrane(&rest, &s, &K, &s.e, &mut f, &mut j);
        add_tensile_friction(&rest, &s, &K_FRIC, &s.e, &mut f, &mut j);
        assert!(s.e.iter().all(|e| e.is_finite()));
        assert!(f.iter().all(|q| q.is_finite()));
        assert!(j.iter().flatten().all(|m| m.is_finite()));
        let top = to_matrix(&j).symmetric_eigen().eigenvalues.max();
        assert!(top <= 1e-12 * to_matrix(&j).norm().max(1.0));
    }
}
