//! Spec eol_cloth §10 tests 1–4, 6 and 7 on random elements.

use nalgebra::{DMatrix, DVector, SymmetricEigen};

use super::*;
use crate::test_util::Rng;

/// A random non-degenerate triangle: world corners around the origin and
/// material corners of a stretched, rotated reference triangle.
fn triangle(g: &mut Rng) -> ([Vec3<f64>; 3], [Mat2d; 3]) {
    let x = [g.vec(1.0), g.vec(1.0), g.vec(1.0)];
    let mut u = [[0.0; 2]; 3];
    loop {
        for p in &mut u {
            *p = [g.uniform(-1.0, 1.0), g.uniform(-1.0, 1.0)];
        }
        if material_inverse(&u).is_some_and(|(_, a)| a > 0.05) {
            return (x, u);
        }
    }
}

fn grad(x: &[Vec3<f64>; 3], u: &[Mat2d; 3]) -> Grad {
    deformation_gradient(x, u).unwrap().0
}

/// The element's generalized matrix in per-node order `(ẋ_0, Ẋ_0, ẋ_1, …)`,
/// keeping the material rows of the nodes in `eol`, from node-pair blocks.
fn element_matrix(blocks: impl Fn(usize, usize) -> Block5, eol: [bool; 3]) -> DMatrix<f64> {
    let dofs: Vec<(usize, usize)> = (0..3)
        .flat_map(|i| (0..if eol[i] { 5 } else { 3 }).map(move |k| (i, k)))
        .collect();
    DMatrix::from_fn(dofs.len(), dofs.len(), |r, c| {
        let ((i, a), (j, b)) = (dofs[r], dofs[c]);
        blocks(i, j)[a][b]
    })
}

/// `J(w)` (3 × dofs) in the same order as [`element_matrix`].
fn jacobian(w: [f64; 3], f: &Grad, eol: [bool; 3]) -> DMatrix<f64> {
    let n: usize = eol.iter().map(|e| if *e { 5 } else { 3 }).sum();
    let mut j = DMatrix::zeros(3, n);
    let mut col = 0;
    for k in 0..3 {
        for r in 0..3 {
            j[(r, col + r)] = w[k];
        }
        col += 3;
        if eol[k] {
            for a in 0..2 {
                for r in 0..3 {
                    j[(r, col + a)] = -w[k] * f.0[a][r];
                }
            }
            col += 2;
        }
    }
    j
}

/// The 3-point edge-midpoint rule (exact for quadratics on a triangle).
const MIDPOINTS: [[f64; 3]; 3] = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]];

fn mass_matrix(f: &Grad, rho_area: f64, eol: [bool; 3]) -> DMatrix<f64> {
    element_matrix(
        |i, j| pair_block(&(Mat3::identity() * (rho_area * MASS_WEIGHTS[i][j])), f, f),
        eol,
    )
}

/// Test 1: J q̇ is the time derivative of a fixed material point's world
/// position, the barycentrics following the moving material corners.
#[test]
fn t1_jacobian_matches_finite_differences() {
    let mut g = Rng::new(1);
    for _ in 0..50 {
        let (x, u) = triangle(&mut g);
        let xd = [g.vec(1.0), g.vec(1.0), g.vec(1.0)];
        let ud = [[g.sym(), g.sym()], [g.sym(), g.sym()], [g.sym(), g.sym()]];
        let w0 = [g.uniform(0.1, 0.8), 0.0, 0.0];
        let w0 = [w0[0], (1.0 - w0[0]) * g.uniform(0.1, 0.9), 0.0];
        let w0 = [w0[0], w0[1], 1.0 - w0[0] - w0[1]];
        let p = [
            w0[0] * u[0][0] + w0[1] * u[1][0] + w0[2] * u[2][0],
            w0[0] * u[0][1] + w0[1] * u[1][1] + w0[2] * u[2][1],
        ];
        let at = |e: f64| {
            let xs = [x[0] + xd[0] * e, x[1] + xd[1] * e, x[2] + xd[2] * e];
            let us = [0, 1, 2].map(|k| [u[k][0] + ud[k][0] * e, u[k][1] + ud[k][1] * e]);
            world_point(&xs, barycentric(&us, p).unwrap())
        };
        let eps = 1e-6;
        let fd = (at(eps) - at(-eps)) * (0.5 / eps);
        let j = material_velocity(w0, &grad(&x, &u), &xd, &ud);
        let err = (fd - j).norm() / j.norm().max(1e-12);
        assert!(err < 1e-7, "relative error {err:e}: fd {fd:?} vs J q̇ {j:?}");
    }
}

/// Tests 2 and 4: the element mass is ρ∫JᵀJ dA (edge-midpoint rule, exact
/// here), so ½q̇ᵀMq̇ is the kinetic energy of the material under Eq. 2.
#[test]
fn t2_t4_element_mass_is_the_quadrature_of_jt_j() {
    let mut g = Rng::new(2);
    for case in 0..40 {
        let (x, u) = triangle(&mut g);
        let (f, area) = deformation_gradient(&x, &u).unwrap();
        let rho = g.uniform(0.01, 1.0);
        let eol = [case % 2 == 0, case % 3 == 0, case % 5 == 0];
        let m = mass_matrix(&f, rho * area, eol);
        let mut quad = DMatrix::zeros(m.nrows(), m.ncols());
        for w in MIDPOINTS {
            let j = jacobian(w, &f, eol);
            quad += j.transpose() * &j * (rho * area / 3.0);
        }
        let err = (&m - &quad).abs().max();
        assert!(err < 1e-12 * m.abs().max().max(1.0), "case {case}: {err:e}");
        // Kinetic energy of a random q̇.
        let v = DVector::from_fn(m.nrows(), |_, _| g.sym());
        let ke = 0.5 * (v.transpose() * &m * &v)[(0, 0)];
        let mut ke_quad = 0.0;
        for w in MIDPOINTS {
            let vel = jacobian(w, &f, eol) * &v;
            ke_quad += 0.5 * rho * area / 3.0 * vel.norm_squared();
        }
        assert!(
            (ke - ke_quad).abs() < 1e-12 * ke.abs().max(1e-6),
            "{ke} vs {ke_quad}"
        );
    }
}

/// Test 3: symmetric, positive semidefinite, rank exactly 9 with k EOL
/// nodes, null space spanned by ẋ_i = F Ẋ_i for the EOL nodes.
#[test]
fn t3_mass_is_psd_with_rank_9_and_the_eol_null_space() {
    let mut g = Rng::new(3);
    for case in 0..8 {
        let (x, u) = triangle(&mut g);
        let (f, area) = deformation_gradient(&x, &u).unwrap();
        let eol = [case & 1 != 0, case & 2 != 0, case & 4 != 0];
        let k = eol.iter().filter(|e| **e).count();
        let m = mass_matrix(&f, 0.3 * area, eol);
        assert_eq!(m.nrows(), 9 + 2 * k);
        assert!(
            (&m - m.transpose()).abs().max() <= 1e-15 * m.abs().max(),
            "not symmetric"
        );
        let eig = SymmetricEigen::new(m.clone()).eigenvalues;
        let scale = m.abs().max();
        assert!(eig.iter().all(|&l| l >= -1e-12 * scale), "{eig:?}");
        let rank = eig.iter().filter(|&&l| l > 1e-10 * scale).count();
        assert_eq!(rank, 9, "case {case}: eigenvalues {eig:?}");
        // Moving a node and its texture together leaves the material still.
        for node in (0..3).filter(|&n| eol[n]) {
            let uvel = [g.sym(), g.sym()];
            let mut v = DVector::zeros(m.nrows());
            let start: usize = (0..node).map(|i| if eol[i] { 5 } else { 3 }).sum();
            let xv = f.apply(uvel);
            for r in 0..3 {
                v[start + r] = xv[r];
            }
            v[start + 3] = uvel[0];
            v[start + 4] = uvel[1];
            assert!(
                (&m * &v).norm() < 1e-12 * scale * v.norm(),
                "case {case} node {node}"
            );
        }
    }
}

/// Tests 6 and 7: mapped forces are Jᵀf (f[X_i] = −Fᵀ f[x_i], and their
/// virtual power is Σ f_i·(ẋ_i − F Ẋ_i)); the mapped stiffness is JᵀKJ and
/// symmetric for a symmetric K.
#[test]
fn t6_t7_forces_and_stiffness_are_mapped_by_j() {
    let mut g = Rng::new(6);
    for _ in 0..20 {
        let (x, u) = triangle(&mut g);
        let f = grad(&x, &u);
        let fi = g.vec(2.0);
        let genf = map_force(fi, &f);
        let t = f.apply_t(fi);
        assert_eq!([genf[3], genf[4]], [-t[0], -t[1]]);
        let (xd, ud) = (g.vec(1.0), [g.sym(), g.sym()]);
        let power = genf[0] * xd.x + genf[1] * xd.y + genf[2] * xd.z + genf[3] * ud[0] + genf[4] * ud[1];
        let world = fi.dot(xd - f.apply(ud));
        assert!((power - world).abs() < 1e-12 * world.abs().max(1.0));
        // A symmetric 9×9 world stiffness over the three nodes.
        let a = DMatrix::from_fn(9, 9, |_, _| g.sym());
        let kw = &a + a.transpose();
        let block = |i: usize, j: usize| {
            Mat3::from_rows(
                Vec3::new(kw[(3 * i, 3 * j)], kw[(3 * i, 3 * j + 1)], kw[(3 * i, 3 * j + 2)]),
                Vec3::new(
                    kw[(3 * i + 1, 3 * j)],
                    kw[(3 * i + 1, 3 * j + 1)],
                    kw[(3 * i + 1, 3 * j + 2)],
                ),
                Vec3::new(
                    kw[(3 * i + 2, 3 * j)],
                    kw[(3 * i + 2, 3 * j + 1)],
                    kw[(3 * i + 2, 3 * j + 2)],
                ),
            )
        };
        let eol = [true, false, true];
        let k = element_matrix(|i, j| pair_block(&block(i, j), &f, &f), eol);
        assert!((&k - k.transpose()).abs().max() < 1e-12 * k.abs().max());
        // JᵀKJ with the nodal Jacobian: block-diagonal J = diag([I, −F] or I).
        let n = k.nrows();
        let mut jn = DMatrix::zeros(9, n);
        let mut col = 0;
        for node in 0..3 {
            for r in 0..3 {
                jn[(3 * node + r, col + r)] = 1.0;
            }
            col += 3;
            if eol[node] {
                for a in 0..2 {
                    for r in 0..3 {
                        jn[(3 * node + r, col + a)] = -f.0[a][r];
                    }
                }
                col += 2;
            }
        }
        let want = jn.transpose() * &kw * &jn;
        assert!((&k - &want).abs().max() < 1e-12 * want.abs().max());
    }
}
