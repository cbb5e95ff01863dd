//! Tests of `sim.rs` (kept out of the source file).

use super::*;
use crate::cloth::solver::LinearSolver;
use crate::collide::{BoundaryMode, Plane};
use crate::geometry::grid_mesh;
use crate::math::Mat3;

fn sheet(n: usize) -> TriMesh {
    grid_mesh((0.2, 0.2), (n, n), Vec3::new(0.0, 0.5, 0.0), 1).unwrap()
}

fn sim(mesh: &TriMesh, w: Wrinkles, solver: LinearSolver, gravity: f64) -> Simulation {
    let p = StepParams {
        gravity: Vec3::new(0.0, gravity, 0.0),
        linear_solver: solver,
        ..StepParams::default()
    };
    Simulation::new(
        mesh,
        Material::preset("cotton").unwrap(),
        w,
        &MaterialFrame::Principal,
        false,
        p,
    )
    .unwrap()
}

/// Pins one edge and twists the opposite edge: a scene that exercises
/// bending, friction and plasticity.
fn twisted(mesh: &TriMesh, w: Wrinkles, solver: LinearSolver) -> Simulation {
    let mut s = sim(mesh, w, solver, -9.81);
    let x = s.state().x.clone();
    let zmin = x.iter().map(|p| p.z).fold(f64::INFINITY, f64::min);
    let zmax = x.iter().map(|p| p.z).fold(f64::NEG_INFINITY, f64::max);
    let a: Vec<u32> = (0..x.len() as u32).filter(|&i| x[i as usize].z == zmin).collect();
    let b: Vec<u32> = (0..x.len() as u32).filter(|&i| x[i as usize].z == zmax).collect();
    s.pin(&a, None, None).unwrap();
    let motion = Motion::Constant {
        linear_velocity: Vec3::new(0.0, 0.0, -0.2),
        angular_velocity: Vec3::new(0.0, 0.0, 8.0),
    };
    s.add_handle(&b, Vec3::new(0.0, 0.5, zmax), motion, None).unwrap();
    s
}

#[test]
fn t13_free_fall_has_no_events_and_matches_elastic_run() {
    let mesh = sheet(12);
    let mut on = sim(&mesh, Wrinkles::default(), LinearSolver::Cholesky, -9.81);
    let mut off = sim(&mesh, Wrinkles::off(), LinearSolver::Cholesky, -9.81);
    let x0 = on.state().x.clone();
    for _ in 0..200 {
        let s = on.step().unwrap();
        assert_eq!((s.hinge_slips, s.hinge_yields), (0, 0));
        off.step().unwrap();
    }
    let max_theta = on.hinge_angles().iter().fold(0.0f64, |m, t| m.max(t.abs()));
    assert!(max_theta < 1e-10, "flat sheet bent by {max_theta}");
    let st = on.state();
    assert!(
        st.hinge_plastic
            .iter()
            .all(|p| p.theta_p == 0.0 && p.eps_hp == 0.0)
    );
    assert!(
        st.hinge_friction
            .iter()
            .all(|f| f.anchor == 0.0 && (f.t_stick - 0.2).abs() < 1e-9)
    );
    let diff =
        st.x.iter()
            .zip(&off.state().x)
            .map(|(a, b)| (*a - *b).norm())
            .fold(0.0, f64::max);
    assert!(diff < 1e-12, "models changed a free fall by {diff} m");
    // Implicit Euler with a constant force: v = g t exactly, x moved.
    let v = st.v[0];
    assert!((v.y + 9.81 * 0.2).abs() < 1e-9, "v = {v:?}");
    assert!((st.x[0].y - x0[0].y) < -0.1);
    assert!(st.x.iter().all(|p| p.is_finite()));
}

#[test]
fn zero_force_at_rest_without_gravity() {
    let mesh = sheet(10);
    let mut s = sim(&mesh, Wrinkles::default(), LinearSolver::LaggedCholesky, 0.0);
    let x0 = s.state().x.clone();
    s.advance(0.05).unwrap();
    let d = s
        .state()
        .x
        .iter()
        .zip(&x0)
        .map(|(a, b)| (*a - *b).norm())
        .fold(0.0, f64::max);
    assert!(d < 1e-14, "rest state drifted by {d}");
}

#[test]
fn solvers_agree_with_the_exact_cholesky() {
    let mesh = sheet(14);
    let mut runs: Vec<Simulation> = [
        LinearSolver::Cholesky,
        LinearSolver::LaggedCholesky,
        LinearSolver::Cg,
    ]
    .into_iter()
    .map(|ls| twisted(&mesh, Wrinkles::default(), ls))
    .collect();
    for r in runs.iter_mut() {
        r.advance(0.08).unwrap();
    }
    let moved = runs[0]
        .state()
        .x
        .iter()
        .zip(&runs[0].model().rest_positions)
        .map(|(a, b)| (*a - *b).norm())
        .fold(0.0, f64::max);
    assert!(moved > 0.01, "the twist moved the cloth by only {moved} m");
    for r in &runs[1..] {
        let d = r
            .state()
            .x
            .iter()
            .zip(&runs[0].state().x)
            .map(|(a, b)| (*a - *b).norm())
            .fold(0.0, f64::max);
        assert!(
            d < 1e-6,
            "{:?} differs from Cholesky by {d} m",
            r.params().linear_solver
        );
    }
    let yields: usize = runs[0]
        .state()
        .hinge_plastic
        .iter()
        .filter(|p| p.eps_hp > 0.0)
        .count();
    let anchors = runs[0]
        .state()
        .hinge_friction
        .iter()
        .filter(|f| f.anchor != 0.0)
        .count();
    assert!(anchors > 0, "no hinge slipped in the twist");
    let _ = yields;
}

#[test]
fn t14_bitwise_identical_for_one_and_two_threads() {
    let mesh = sheet(12);
    for ls in [
        LinearSolver::Cholesky,
        LinearSolver::LaggedCholesky,
        LinearSolver::Cg,
    ] {
        let x0 = twisted(&mesh, Wrinkles::default(), ls).state().x.clone();
        let (x, _) = crate::test_util::same_across_threads(|| {
            let mut s = twisted(&mesh, Wrinkles::default(), ls);
            s.advance(0.03).unwrap();
            (
                crate::test_util::bits(&s.state().x),
                s.state().hinge_friction.clone(),
            )
        });
        assert_ne!(x, crate::test_util::bits(&x0), "{ls:?}: nothing moved");
    }
}

#[test]
fn resting_on_a_plane_keeps_the_thickness() {
    let mesh = sheet(10);
    let mut s = sim(&mesh, Wrinkles::default(), LinearSolver::LaggedCholesky, -9.81);
    let plane = Collider::new(
        Plane::new(Vec3::new(0.0, 0.45, 0.0), Vec3::new(0.0, 1.0, 0.0)).unwrap(),
        Vec3::zero(),
        Mat3::identity(),
    )
    .unwrap()
    .with_mode(BoundaryMode::Separate)
    .with_friction(0.3)
    .unwrap();
    s.add_collider(plane);
    s.advance(0.4).unwrap();
    let ymin = s.state().x.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let n = s.state().v.len() as f64;
    let vmean = s.state().v.iter().map(|v| v.norm()).sum::<f64>() / n;
    let ymean = s.state().x.iter().map(|p| p.y).sum::<f64>() / n;
    assert!(
        ymin >= 0.45 + 0.001 - 1e-9,
        "cloth below the plane's thickness layer: {ymin}"
    );
    assert!(
        ymean < 0.45 + 0.006,
        "cloth did not come to lie on the plane: mean height {ymean}"
    );
    // It hit at ~1 m/s; with γ = 0 membrane waves ring on, but the sheet
    // as a whole has stopped.
    assert!(vmean < 0.02, "cloth still moving at {vmean} m/s on average");
}

#[test]
fn handles_follow_their_path_and_release() {
    let mesh = sheet(10);
    let mut s = twisted(&mesh, Wrinkles::off(), LinearSolver::LaggedCholesky);
    s.advance(0.1).unwrap();
    let f = s.pin_forces();
    let pinned: Vec<usize> = (0..f.len()).filter(|&i| s.pins().stiffness[i] > 0.0).collect();
    let err = pinned
        .iter()
        .map(|&i| (s.pins().target[i] - s.state().x[i]).norm())
        .fold(0.0, f64::max);
    assert!(err < 2e-3, "pinned vertices lag their targets by {err} m");
    s.release_handle(0).unwrap();
    assert!(s.release_handle(3).is_err());
    s.step().unwrap();
}

#[test]
fn bad_input_is_rejected_and_divergence_reported() {
    let mesh = sheet(4);
    let p = StepParams {
        dt: 0.0,
        ..StepParams::default()
    };
    let e = Simulation::new(
        &mesh,
        Material::preset("cotton").unwrap(),
        Wrinkles::default(),
        &MaterialFrame::Principal,
        false,
        p,
    );
    assert!(matches!(e, Err(crate::Error::InvalidInput(_))));
    let mut m = Material::preset("denim").unwrap();
    m.membrane.k11 = -1.0;
    let e = Simulation::new(
        &mesh,
        m,
        Wrinkles::default(),
        &MaterialFrame::Principal,
        false,
        StepParams::default(),
    );
    assert!(matches!(e, Err(crate::Error::InvalidInput(ref s)) if s.contains("k11")));
    let mut s = sim(&mesh, Wrinkles::default(), LinearSolver::LaggedCholesky, -9.81);
    assert!(s.pin(&[10_000], None, None).is_err());
    assert!(s.advance(-1.0).is_err());
    s.state_mut().v[0] = Vec3::new(5e3, 0.0, 0.0);
    let before = s.state().clone();
    match s.step() {
        Err(crate::Error::Diverged { step, time, what }) => {
            // Rolled back to the start of the failing step.
            assert_eq!((step, time), (0, 0.0));
            assert!(what.contains("reduce dt"), "{what}");
        }
        other => panic!("expected Diverged, got {other:?}"),
    }
    assert_eq!(
        s.state(),
        &before,
        "a diverged step must leave the state as it was"
    );
    // Continue after fixing the cause: the run goes on, finite.
    s.state_mut().v[0] = Vec3::zero();
    s.advance(0.01).unwrap();
    assert!(s.state().x.iter().all(|x| x.is_finite()));
    assert!((s.state().time - 0.01).abs() < 1e-15);
}

/// Two sheets, the upper one thrown through the lower (pinned) one: with
/// self-collision the fail-safe leaves no crossing after any step; without
/// it the sheets pass through each other.
#[test]
fn self_collision_keeps_stacked_sheets_apart() {
    let a = grid_mesh((0.2, 0.2), (12, 12), Vec3::new(0.0, 0.5, 0.0), 1).unwrap();
    let b = grid_mesh((0.12, 0.12), (8, 8), Vec3::new(0.01, 0.51, 0.005), 1).unwrap();
    let (mut v, mut f) = a.into_parts();
    let off = v.len() as u32;
    let (vb, fb) = b.into_parts();
    v.extend(vb);
    f.extend(fb.iter().map(|t| [t[0] + off, t[1] + off, t[2] + off]));
    let mesh = TriMesh::from_u32_faces(v, f).unwrap();
    let run = |self_collision: bool| {
        let p = StepParams {
            self_collision,
            ..StepParams::default()
        };
        let mut s = Simulation::new(
            &mesh,
            Material::preset("cotton").unwrap(),
            Wrinkles::default(),
            &MaterialFrame::Principal,
            false,
            p,
        )
        .unwrap();
        let x = s.state().x.clone();
        let lower: Vec<u32> = (0..off)
            .filter(|&i| {
                let q = x[i as usize];
                q.x.abs() > 0.099 || q.z.abs() > 0.099
            })
            .collect();
        s.pin(&lower, None, None).unwrap();
        for i in off as usize..x.len() {
            s.state_mut().v[i] = Vec3::new(0.0, -3.0, 0.0);
        }
        let mut worst = 0;
        let mut stats = StepStats::default();
        for _ in 0..40 {
            let st = s.step().unwrap();
            stats.collisions += st.collisions;
            stats.proximity_pairs = stats.proximity_pairs.max(st.proximity_pairs);
            worst = worst.max(s.count_self_intersections());
        }
        let ymin_upper = s.state().x[off as usize..]
            .iter()
            .map(|q| q.y)
            .fold(f64::INFINITY, f64::min);
        (worst, stats, ymin_upper)
    };
    let (with, st, _) = run(true);
    let (without, _, ymin_free) = run(false);
    assert_eq!(with, 0, "cloth–cloth crossings with self-collision on");
    assert!(st.proximity_pairs > 0, "no repulsion pairs were found");
    assert!(
        without > 0 || ymin_free < 0.45,
        "without self-collision the sheets should pass through"
    );
}

/// `checkpoint` → `restore` into a fresh simulation of the same garment
/// continues bit-identically, and a refused checkpoint changes nothing.
#[test]
fn checkpoint_restores_bit_identically_and_refusals_change_nothing() {
    let mesh = sheet(8);
    let mut a = twisted(&mesh, Wrinkles::default(), LinearSolver::Cg);
    for _ in 0..15 {
        a.step().unwrap();
    }
    let saved = a.checkpoint();
    let mut b = twisted(&mesh, Wrinkles::default(), LinearSolver::Cg);
    b.restore(&saved).unwrap();
    assert_eq!(b.checkpoint(), saved);
    for _ in 0..10 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert_eq!(a.state(), b.state());

    let before = b.checkpoint();
    let mut bad = saved.clone();
    let mut hp = bad.get("hinge_plastic").unwrap().clone();
    if let crate::checkpoint::Data::F64(v) = &mut hp.data {
        v[3] = 0.5; // a direction that is not -1, 0 or 1
    }
    bad.insert("hinge_plastic", hp);
    let err = b.restore(&bad).unwrap_err().to_string();
    assert!(
        err.contains("hinge_plastic") && err.contains("direction"),
        "{err}"
    );
    assert_eq!(b.checkpoint(), before);
}
