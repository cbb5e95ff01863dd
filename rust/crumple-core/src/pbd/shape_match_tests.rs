//! Tests of `shape_match.rs`: the spec's U1–U6 (shape_matching §12).

use super::*;
use crate::math::Quat;
use crate::test_util::Rng;

/// A random cluster: rest positions centred with weights, and weights.
fn cluster(rng: &mut Rng, n: usize) -> (Vec<Vec3<f32>>, Vec<f32>) {
    let mut q: Vec<Vec3<f32>> = (0..n).map(|_| rng.vec(1.0).cast::<f32>()).collect();
    let mu: Vec<f32> = (0..n).map(|_| rng.uniform(0.5, 2.0) as f32).collect();
    let m: f32 = mu.iter().sum();
    let s = q.iter().zip(&mu).fold(Vec3::zero(), |a, (q, w)| a + *q * *w) * (1.0 / m);
    for v in &mut q {
        *v -= s;
    }
    (q, mu)
}

fn qsum(q: &[Vec3<f32>], mu: &[f32]) -> Mat3<f32> {
    q.iter()
        .zip(mu)
        .fold(Mat3::zero(), |a, (q, w)| a + Mat3::outer(*q * *w, *q))
}

fn fit_of(x: &[Vec3<f32>], q: &[Vec3<f32>], mu: &[f32], fp: &Mat3<f32>) -> ClusterFit {
    ClusterFit::compute(x, (0..x.len()).map(|i| (i, q[i], mu[i])), fp)
}

fn rotation(fit: RotationFit, f: &ClusterFit, fp: &Mat3<f32>, qs: &Mat3<f32>) -> Mat3<f32> {
    let a_qq = aqq(fp, qs);
    let a = rotation_source(fit, &f.apq, &a_qq, false);
    let mut q = Quat::identity();
    extract_rotation(&a, &mut q, 100);
    q.to_mat3()
}

fn spd(rng: &mut Rng) -> Mat3<f32> {
    let a = Mat3::identity() + rng.mat(0.2);
    ((a + a.transpose()) * 0.5).cast::<f32>()
}

/// U1, U2: an undeformed or rigidly moved cluster (x − c = Q F_P q) has goals
/// at its particles and R = Q, in both fits.
#[test]
fn u1_u2_undeformed_and_rigidly_moved_clusters_are_their_own_goals() {
    let mut rng = Rng::new(1);
    for case in 0..20 {
        let (q, mu) = cluster(&mut rng, 30);
        let fp = if case % 2 == 0 {
            spd(&mut rng)
        } else {
            (Mat3::identity() + rng.mat(0.2)).cast::<f32>()
        };
        let rot = if case < 4 {
            Mat3::identity()
        } else {
            rng.rotation().cast::<f32>()
        };
        let t = rng.vec(3.0).cast::<f32>();
        let x: Vec<Vec3<f32>> = q.iter().map(|qi| rot * (fp * *qi) + t).collect();
        let qs = qsum(&q, &mu);
        for mode in [RotationFit::Rigid, RotationFit::Linear] {
            let f = fit_of(&x, &q, &mu, &fp);
            let r = rotation(mode, &f, &fp, &qs);
            let tm = r * fp;
            let err = x
                .iter()
                .zip(&q)
                .map(|(xi, qi)| (tm * *qi + f.c.cast::<f32>() - *xi).norm())
                .fold(0.0f32, f32::max);
            // Rigid mode recovers Q only when F_P is symmetric (the polar factor of Q F_P Qsum F_Pᵀ).
            if mode == RotationFit::Linear || case % 2 == 0 {
                assert!(err < 2e-5, "{mode:?} case {case}: goal error {err}");
                assert!((r - rot).max_abs() < 2e-5, "{mode:?} case {case}: R differs");
            }
        }
    }
}

/// U3: one projection conserves Σ μ (g − x) = 0, and in the rigid fit also
/// its torque about c; the linear fit's torque is not zero (documented).
#[test]
fn u3_projection_momentum_and_rigid_torque() {
    let mut rng = Rng::new(2);
    let (q, mu) = cluster(&mut rng, 40);
    let fp = spd(&mut rng);
    let a = (Mat3::identity() + rng.mat(0.3)).cast::<f32>();
    let x: Vec<Vec3<f32>> = q.iter().map(|qi| a * *qi + Vec3::new(1.0, 2.0, 3.0)).collect();
    let qs = qsum(&q, &mu);
    let mut torques = Vec::new();
    for mode in [RotationFit::Rigid, RotationFit::Linear] {
        let f = fit_of(&x, &q, &mu, &fp);
        let tm = rotation(mode, &f, &fp, &qs) * fp;
        let mut lin = Vec3::<f64>::zero();
        let mut ang = Vec3::<f64>::zero();
        let mut scale = 0.0f64;
        for i in 0..x.len() {
            let d = ((tm * q[i]).cast::<f64>() + f.c - x[i].cast::<f64>()) * f64::from(mu[i]);
            lin += d;
            ang += (x[i].cast::<f64>() - f.c).cross(d);
            scale += d.norm() * (x[i].cast::<f64>() - f.c).norm();
        }
        assert!(lin.norm() < 1e-4, "{mode:?}: Σ μ (g − x) = {lin:?}");
        torques.push(ang.norm() / scale);
    }
    assert!(torques[0] < 1e-4, "rigid fit torque {}", torques[0]);
    assert!(torques[1] > 1e-3, "the linear fit is expected to exert a torque");
}

/// U4: a Jacobi pass in split mode over overlapping clusters with uneven
/// n_i conserves linear momentum Σ m Δx/n and, in the rigid fit, angular momentum.
#[test]
fn u4_split_jacobi_pass_conserves_momentum() {
    use crate::pbd::clusters::refresh_all;
    use crate::pbd::state::{Clusters, Memberships, Particles};
    let mut rng = Rng::new(4);
    let mut pt = Particles::default();
    for _ in 0..60 {
        let m = rng.uniform(0.5, 2.0) as f32;
        pt.push(
            rng.vec(1.0).cast::<f32>(),
            Vec3::zero(),
            m,
            0,
            0,
            Quat::identity(),
            0,
        );
    }
    let mut cl = Clusters::default();
    for k in 0..7 {
        let members: Vec<u32> = (0..60u32)
            .filter(|&i| (i as usize * 7 + k * 13) % 5 < 2 + (k % 3))
            .collect();
        let c =
            members.iter().fold(Vec3::zero(), |a, &i| a + pt.x[i as usize]) * (1.0 / members.len() as f32);
        let rest = members.iter().map(|&i| pt.x[i as usize] - c).collect();
        crate::pbd::clusters::push_cluster(
            &mut cl,
            &pt,
            crate::pbd::clusters::NewCluster {
                members,
                rest,
                yield_strain: 0.1,
                body: 0,
                component: 0,
            },
            10,
        );
    }
    let mut ms = Memberships::default();
    refresh_all(&mut cl, &pt, &mut ms, Weights::Split);
    // Deform the positions, then one pass.
    let a = (Mat3::identity() + rng.mat(0.3)).cast::<f32>();
    let xs0: Vec<Vec3<f32>> =
        pt.x.iter()
            .map(|x| a * *x + rng.vec(0.05).cast::<f32>())
            .collect();
    let mut xs = xs0.clone();
    let stiffness = vec![0.7f32; cl.len()];
    let params = ClusterParams {
        stiffness: &stiffness,
        fit: RotationFit::Rigid,
        rotation_iterations: 50,
        weights: Weights::Split,
    };
    let mut scratch = ClusterScratch::default();
    scratch.prepare(&pt, &cl, &ms, params.weights);
    fit_clusters(&xs0, &mut cl, &params, &mut scratch);
    apply_goals(&mut xs, &pt, &ms, 1.0, &scratch);
    let mut lin = Vec3::<f64>::zero();
    let mut ang = Vec3::<f64>::zero();
    let mut scale = 0.0;
    for i in 0..xs.len() {
        if ms.count(i) == 0 {
            continue;
        }
        let d = (xs[i] - xs0[i]).cast::<f64>() * f64::from(pt.m[i]);
        lin += d;
        ang += xs0[i].cast::<f64>().cross(d);
        scale += d.norm();
    }
    assert!(scale > 1e-3, "nothing moved");
    assert!(
        lin.norm() < 1e-5 * scale,
        "linear momentum change {lin:?} (scale {scale})"
    );
    assert!(ang.norm() < 1e-4 * scale, "angular momentum change {ang:?}");
}

/// U5: in the linear fit, x − c = R₀ S₀ F_P q gives S = S₀ and R = R₀; in the
/// rigid fit the same when A_qq ∝ I (a cubic lattice cluster).
#[test]
fn u5_elastic_stretch_recovers_the_stretch() {
    let mut rng = Rng::new(5);
    for cubic in [false, true] {
        let (q, mu) = if cubic {
            let mut q = Vec::new();
            for i in -2..=2 {
                for j in -2..=2 {
                    for k in -2..=2 {
                        q.push(Vec3::new(i as f32, j as f32, k as f32) * 0.1);
                    }
                }
            }
            let n = q.len();
            (q, vec![1.0f32; n])
        } else {
            cluster(&mut rng, 50)
        };
        let fp = if cubic { Mat3::identity() } else { spd(&mut rng) };
        let r0 = rng.rotation().cast::<f32>();
        let s0 = spd(&mut rng);
        let x: Vec<Vec3<f32>> = q.iter().map(|qi| r0 * (s0 * (fp * *qi))).collect();
        let qs = qsum(&q, &mu);
        let mode = if cubic {
            RotationFit::Rigid
        } else {
            RotationFit::Linear
        };
        let f = fit_of(&x, &q, &mu, &fp);
        let r = rotation(mode, &f, &fp, &qs);
        let s = elastic_stretch(&r, &f.apq, &aqq(&fp, &qs));
        assert!((r - r0).max_abs() < 1e-4, "cubic={cubic}: R");
        assert!((s - s0).max_abs() < 1e-4, "cubic={cubic}: S {s:?} vs {s0:?}");
    }
}

/// U6: `W = Qsum B⁻¹` equals `F_P⁻¹ A_qq A_pq⁻¹`.
#[test]
fn u6_w_two_ways() {
    let mut rng = Rng::new(6);
    let (q, mu) = cluster(&mut rng, 40);
    let fp = (Mat3::identity() + rng.mat(0.2)).cast::<f32>();
    let a = (Mat3::identity() + rng.mat(0.3)).cast::<f32>();
    let x: Vec<Vec3<f32>> = q.iter().map(|qi| a * *qi).collect();
    let qs = qsum(&q, &mu);
    let f = fit_of(&x, &q, &mu, &fp);
    let w1 = qs * f.b.try_inverse(0.0).unwrap();
    let w2 = fp.try_inverse(0.0).unwrap() * aqq(&fp, &qs) * f.apq.try_inverse(0.0).unwrap();
    assert!((w1 - w2).max_abs() < 1e-4 * w1.max_abs(), "{w1:?} vs {w2:?}");
}

#[test]
fn degenerate_clusters_are_flagged() {
    assert!(is_degenerate(3, &Mat3::identity()));
    assert!(!is_degenerate(10, &Mat3::identity()));
    let flat = Mat3::from_diagonal(Vec3::new(1.0, 1.0, 1e-9));
    assert!(is_degenerate(10, &flat));
}

/// The solver's and the end-of-step fit's `fit_sums` (f32 moments over
/// packed entries) against the f64 `ClusterFit::compute`: the centre to
/// 1e-9 m, B to 1e-5 of its size, for deformed clusters of 1 to 300 members
/// placed up to 100 m from the origin.
#[test]
fn fit_sums_match_the_f64_fit() {
    let mut rng = Rng::new(12);
    for (case, n) in [1usize, 2, 3, 7, 30, 231, 300].into_iter().enumerate() {
        let (q, mu) = cluster(&mut rng, n);
        let a = (Mat3::identity() + rng.mat(0.4)).cast::<f32>();
        let t = rng.vec(if case % 2 == 0 { 1.0 } else { 100.0 }).cast::<f32>();
        let x: Vec<Vec3<f32>> = q
            .iter()
            .map(|qi| a * *qi + t + rng.vec(0.01).cast::<f32>())
            .collect();
        let fp = spd(&mut rng);
        let reference = fit_of(&x, &q, &mu, &fp);
        let member: Vec<u32> = (0..n as u32).collect();
        let weighted: Vec<F4> = q.iter().zip(&mu).map(|(&qi, &w)| f4(qi * w, w)).collect();
        let sums = q.iter().zip(&mu).fold((0.0, Vec3::zero()), |(m, s), (qi, w)| {
            (m + f64::from(*w), s + qi.cast::<f64>() * f64::from(*w))
        });
        let (c, b) = fit_sums(&x, &member, &weighted, sums);
        let extent = x
            .iter()
            .map(|xi| (xi.cast::<f64>() - reference.c).norm())
            .fold(0.0, f64::max);
        assert!(
            (c - reference.c).norm() <= 1e-6 * extent,
            "n={n}: centre {c:?} vs {:?} (extent {extent})",
            reference.c
        );
        let scale = reference.b.max_abs().max(1e-12);
        assert!(
            (b - reference.b).max_abs() < 1e-5 * scale,
            "n={n}: B {b:?} vs {:?}",
            reference.b
        );
    }
}
