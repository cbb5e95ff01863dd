//! Tests of re-sampling: the spec's R1–R8 and S1 (shape_matching §12).

use super::clusters::{interpolate, overlap_volume, w_of};
use super::particles::{Fate, deletion_marks};
use super::*;
use crate::geometry::box_mesh;
use crate::math::{Mat3, Quat, polar3};
use crate::pbd::shape_match::weight;
use crate::pbd::state::Particles;
use crate::pbd::{Material, Simulation, StepParams};
use crate::test_util::Rng;

const R: f32 = 0.1;

/// R7: the overlap volume of two radius-r^C spheres.
#[test]
fn r7_overlap_volume() {
    let rc = 4.0;
    let ball = 4.0 / 3.0 * std::f64::consts::PI * rc * rc * rc;
    assert!((overlap_volume(0.0, rc) - ball).abs() < 1e-12 * ball);
    assert_eq!(overlap_volume(2.0 * rc, rc), 0.0);
    for (d, want) in [(2.0, 169.646), (4.0, 83.776), (6.0, 23.038)] {
        assert!(
            (overlap_volume(d, rc) - want).abs() < 1e-3,
            "ω({d}) = {}",
            overlap_volume(d, rc)
        );
    }
}

/// R7: no snapshot cluster nearby, no interpolation (the caller uses W = I, ε_γ0).
#[test]
fn r7_nothing_to_interpolate() {
    let snap = Snapshot {
        c: vec![Vec3::new(10.0, 0.0, 0.0)],
        a: vec![Mat3::identity() * 2.0],
        yield_strain: vec![0.5],
        body: vec![0],
    };
    assert!(interpolate(&snap, 0, Vec3::zero(), 0.4).is_none());
    // A near cluster of another body does not count either.
    let other = Snapshot {
        c: vec![Vec3::zero()],
        body: vec![1],
        ..snap
    };
    assert!(interpolate(&other, 0, Vec3::zero(), 0.4).is_none());
}

/// R6: one old cluster with elastic map A = R₀ S₀ gives W = (A Aᵀ)^{-1/2},
/// and the new rest shape W (x − c) = W A F_P q is F_P q up to a rotation.
#[test]
fn r6_interpolation_removes_the_elastic_stretch() {
    let mut rng = Rng::new(6);
    for _ in 0..20 {
        let r0 = rng.rotation();
        let u = rng.rotation();
        let s0 =
            u * Mat3::from_diagonal(Vec3::new(
                rng.uniform(0.5, 2.0),
                rng.uniform(0.5, 2.0),
                rng.uniform(0.5, 2.0),
            )) * u.transpose();
        let a = r0 * s0;
        let snap = Snapshot {
            c: vec![Vec3::new(0.01, 0.0, 0.0)],
            a: vec![a.cast::<f32>()],
            yield_strain: vec![0.25],
            body: vec![0],
        };
        let (w, ys) = interpolate(&snap, 0, Vec3::zero(), 0.4).unwrap();
        assert_eq!(ys, 0.25);
        let want = r0 * s0.try_inverse(1e-300).unwrap() * r0.transpose();
        let err = (w.cast::<f64>() - want).norm() / want.norm();
        assert!(err < 1e-5, "W error {err}");
        // W A is a rotation: the new rest shape is congruent to F_P q.
        let wa = w.cast::<f64>() * a;
        let (rot, _) = polar3(&wa);
        assert!((wa - rot).norm() < 1e-5, "W A is not a rotation: {wa:?}");
    }
}

/// R5: members at a rigid-plus-plastic pose x − c = R₀ F_P q give
/// W = F_P⁻¹ R₀ᵀ, so a new particle's rest position sends it nowhere.
#[test]
fn r5_update_maps_new_particles_back_through_the_plastic_state() {
    let mut rng = Rng::new(5);
    for _ in 0..20 {
        let n = 12;
        let q: Vec<Vec3<f32>> = (0..n).map(|_| rng.vec(1.0).cast::<f32>()).collect();
        let mu: Vec<f32> = (0..n).map(|_| rng.uniform(0.5, 2.0) as f32).collect();
        let r0 = rng.rotation().cast::<f32>();
        let fp = (Mat3::identity() + rng.mat(0.3)).cast::<f32>();
        let qsum = q
            .iter()
            .zip(&mu)
            .fold(Mat3::zero(), |s, (q, m)| s + Mat3::outer(*q * *m, *q));
        let b = q
            .iter()
            .zip(&mu)
            .fold(Mat3::zero(), |s, (q, m)| s + Mat3::outer(r0 * fp * *q * *m, *q));
        let w = w_of(&b, &qsum, &fp, &r0, false);
        let want = fp.try_inverse(f32::MIN_POSITIVE).unwrap() * r0.transpose();
        assert!((w - want).norm() < 1e-4 * want.norm(), "{w:?} vs {want:?}");
        // The degenerate fallback is the same map from F_P and R.
        let fallback = w_of(&Mat3::zero(), &qsum, &fp, &r0, true);
        assert!((fallback - want).norm() < 1e-4 * want.norm());
    }
}

fn loose(xs: &[Vec3<f32>]) -> State {
    let mut st = State::default();
    for x in xs {
        st.particles
            .push(*x, Vec3::zero(), 1.0, 0, 0, Quat::identity(), 0);
    }
    st
}

/// R2: of an isolated close pair, the lower index dies; a kinematic one never does.
#[test]
fn r2_deletion_keeps_one_of_a_close_pair() {
    let mut st = loose(&[
        Vec3::zero(),
        Vec3::new(0.05 * R, 0.0, 0.0),
        Vec3::new(5.0 * R, 0.0, 0.0),
    ]);
    let keep = deletion_marks(&mut Grid::default(), &st, &[None], R, 0.1);
    assert_eq!(keep, vec![Fate::Crowded, Fate::Keep, Fate::Keep]);
    st.particles.flags[0] = flag::KINEMATIC;
    let keep = deletion_marks(&mut Grid::default(), &st, &[None], R, 0.1);
    assert_eq!(keep, vec![Fate::Keep; 3]);
    // A pair of two bodies is not crowded.
    st.particles.flags[0] = 0;
    st.particles.body[1] = 1;
    let keep = deletion_marks(&mut Grid::default(), &st, &[None, None], R, 0.1);
    assert_eq!(keep, vec![Fate::Keep; 3]);
    // A pair 0.3 r apart is crowded at η = 0.5, not at the paper's 0.1.
    st.particles.body[1] = 0;
    st.particles.x[1] = Vec3::new(0.3 * R, 0.0, 0.0);
    let keep = deletion_marks(&mut Grid::default(), &st, &[None], R, 0.1);
    assert_eq!(keep, vec![Fate::Keep; 3]);
    let keep = deletion_marks(&mut Grid::default(), &st, &[None], R, 0.5);
    assert_eq!(keep, vec![Fate::Crowded, Fate::Keep, Fate::Keep]);
}

/// A ball after a few steps, then stretched by `stretch` along x (positions,
/// surface and every cluster's F_P), so re-sampling has work to do.
fn stretched_ball(conserve: bool) -> Simulation {
    let params = StepParams {
        gravity: Vec3::zero(),
        resampling: false,
        conserve_mass_momentum: conserve,
        ..StepParams::default()
    };
    let mut sim = Simulation::new(params).unwrap();
    let ball = box_mesh(Vec3::zero(), Vec3::new(0.45, 0.25, 0.25), [6, 4, 4]).unwrap();
    sim.add_body(
        &ball,
        Material::preset("taffy").unwrap(),
        Vec3::new(0.3, 0.0, 0.1),
    )
    .unwrap();
    for _ in 0..2 {
        sim.step_dt(None).unwrap();
    }
    let f = Mat3::from_diagonal(Vec3::new(1.6f32, 0.8, 0.8));
    let st = &mut sim.state;
    for x in &mut st.particles.x {
        *x = f * *x;
    }
    for fp in &mut st.clusters.fp {
        *fp = f;
    }
    for s in &mut st.surfaces {
        skin::skin_vertices(s, &st.particles);
        skin::normals(s);
    }
    sim.model.params.resampling = true;
    sim
}

fn momentum(pt: &Particles) -> (f64, Vec3<f64>) {
    let mut m = 0.0;
    let mut p = Vec3::zero();
    for i in 0..pt.len() {
        m += f64::from(pt.m[i]);
        p += pt.v[i].cast::<f64>() * f64::from(pt.m[i]);
    }
    (m, p)
}

/// One pass on a stretched body: R1 (new particles ≥ r from all others),
/// R4 (clusters centred, Qsum current), R8 (maps agree, rules hold, every
/// particle covered or new), S1 (no jump of the surface), and in the
/// default mode |ΔM|/M < 5 %.
#[test]
fn r1_r4_r8_s1_one_pass_on_a_stretched_body() {
    let mut sim = stretched_ball(false);
    let n_before = sim.state.particles.len();
    let (m0, _) = momentum(&sim.state.particles);
    let snapshot = sim.snapshot().clone();
    let y_before = sim.state.surfaces[0].y.clone();
    let stats = Resampler::default().run(&mut sim.state, &sim.model, &[], &snapshot);
    assert!(stats.seeded > 0 && stats.sources > 0, "{stats:?}");
    let st = &sim.state;
    let pt = &st.particles;
    assert_eq!(
        pt.len(),
        n_before - stats.deleted as usize + stats.seeded as usize
    );
    // R1.
    for i in (0..pt.len()).filter(|&i| pt.flags[i] & flag::NEW != 0) {
        for j in 0..pt.len() {
            if j != i {
                let d = (pt.x[i] - pt.x[j]).norm();
                assert!(d >= R * (1.0 - 1e-5), "new particle {i} is {d} from {j}");
            }
        }
    }
    // R4 and R8.
    let cl = &st.clusters;
    let ms = &st.memberships;
    let w = sim.model.params.weights;
    for c in 0..cl.len() {
        let range = cl.entries(c);
        assert!(!range.is_empty());
        let size = range.len() as u32;
        assert!(
            2 * size >= cl.n0[c] && size <= 2 * cl.n0[c],
            "cluster {c}: {size} of {}",
            cl.n0[c]
        );
        assert!(cl.fp[c].norm() <= REMOVE_NORM);
        let mut sum = Vec3::<f64>::zero();
        let mut mass = 0.0f64;
        let mut qsum = Mat3::<f64>::zero();
        for e in range {
            let i = cl.member[e] as usize;
            let mu = f64::from(weight(w, pt.m[i], ms.count(i)));
            let q = cl.rest[e].cast::<f64>();
            sum += q * mu;
            mass += mu;
            qsum += Mat3::outer(q * mu, q);
            assert!((ms.entry[ms.offset[i] as usize..ms.offset[i + 1] as usize]).contains(&(e as u32)));
            assert_eq!(ms.entry_cluster[e] as usize, c);
        }
        assert!(
            sum.norm() <= 1e-5 * mass * f64::from(R),
            "cluster {c} not centred: {sum:?}"
        );
        let err = (qsum - cl.qsum[c].cast::<f64>()).norm();
        assert!(err <= 1e-4 * qsum.norm(), "cluster {c}: Qsum off by {err}");
    }
    for i in 0..pt.len() {
        assert!(
            ms.count(i) >= 1 || pt.flags[i] & flag::NEW != 0,
            "particle {i} is in no cluster"
        );
    }
    // S1: the rebound and refreshed skin reproduces the surface.
    let mut s = st.surfaces[0].clone();
    skin::skin_vertices(&mut s, pt);
    let jump =
        s.y.iter()
            .zip(&y_before)
            .map(|(a, b)| (*a - *b).norm())
            .fold(0.0f32, f32::max);
    assert!(jump < 1e-6, "the surface jumped by {jump} m");
    // Default mode: mass changes, but not by much.
    let (m1, _) = momentum(pt);
    assert!(((m1 - m0) / m0).abs() < 0.05, "mass {m0} -> {m1}");
}

/// R3: with `conserve_mass_momentum` the body's mass and momentum come through a pass.
#[test]
fn r3_conservation_fix_up() {
    let mut sim = stretched_ball(true);
    let (m0, p0) = momentum(&sim.state.particles);
    let snapshot = sim.snapshot().clone();
    let stats = Resampler::default().run(&mut sim.state, &sim.model, &[], &snapshot);
    assert!(stats.seeded > 0, "{stats:?}");
    let (m1, p1) = momentum(&sim.state.particles);
    assert!(
        ((m1 - sim.model.bodies[0].mass) / m1).abs() < 1e-6,
        "mass {m0} -> {m1}"
    );
    assert!((p1 - p0).norm() < 1e-6 * p0.norm(), "momentum {p0:?} -> {p1:?}");
    // And every particle's inverse mass follows its mass.
    let pt = &sim.state.particles;
    assert!((0..pt.len()).all(|i| (pt.w[i] * pt.m[i] - 1.0).abs() < 1e-6));
}

/// D1 for re-sampling: a stretched body re-samples to the same bits on 1 and 3 threads.
#[test]
fn resampling_does_not_depend_on_the_thread_count() {
    let run = || {
        let mut sim = stretched_ball(false);
        let snapshot = sim.snapshot().clone();
        Resampler::default().run(&mut sim.state, &sim.model, &[], &snapshot);
        sim.state
    };
    let one = crate::test_util::in_pool(1, run);
    assert!(crate::test_util::in_pool(3, run) == one);
}
