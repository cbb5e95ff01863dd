//! E1 (free-falling cloth) and E10 (spinning disc, damping).

use super::*;

// ---------------------------------------------------------------------------------------------
// E1: free-falling flat cloth
// ---------------------------------------------------------------------------------------------

/// E1: a flat 32×32-vertex cloth with no contact falls under gravity for 200 steps: every
/// particle's velocity is `v0 + g t` (1e-9 relative), `‖R̃ − I‖_max < 1e-8`, shape unchanged.
#[test]
fn e1_free_falling_cloth_stays_rigid() {
    let mut sim = new_sim(GRAVITY);
    let v0 = V::new(0.1, 0.3, -0.08);
    let mesh = flat_cloth(V::new(0.0, 0.25, 0.0), 31.0 * H, 31);
    assert_eq!(mesh.num_vertices(), 32 * 32);
    sim.add_surface(
        &mesh,
        CodimMaterial::Surface(SurfaceParams::from_material(400.0, 0.3, 0.0, 800.0, 0.0).unwrap()),
        2.0,
        H,
        v0,
        0.8,
        EnergyWeight::Split,
    )
    .unwrap();
    let x0 = sim.state.x.clone();
    let verts = sim.model.vert.clone();
    let dt = 1e-3;
    for _ in 0..200 {
        sim.step(dt).unwrap();
    }
    assert_finite(&sim);
    let t = sim.state.time;
    assert!((t - 0.2).abs() < 1e-12);
    let expect = v0 + GRAVITY * t;
    for (p, v) in sim.state.v.iter().enumerate() {
        let err = (*v - expect).norm();
        assert!(
            err <= 1e-9 * expect.norm(),
            "particle {p}: v = {v:?}, expected {expect:?}"
        );
    }
    let r_dev = sim
        .element_r()
        .iter()
        .map(|r| max_abs_diff(r, &M::identity()))
        .fold(0.0, f64::max);
    assert!(r_dev < 1e-8, "‖R̃ − I‖_max = {r_dev:e}");
    // shape unchanged: every vertex keeps its offset from vertex 0; the whole moved by v0 t + g t²/2
    let (o_new, o_old) = (sim.state.x[verts.start], x0[verts.start]);
    for p in verts.clone() {
        let err = ((sim.state.x[p] - o_new) - (x0[p] - o_old)).norm();
        assert!(err <= 1e-9 * 31.0 * H, "vertex {p}: shape changed by {err:e}");
    }
    // symplectic Euler: x_n = x_0 + v0 t + g Δt² n(n+1)/2
    let drop = o_new - o_old;
    let n = 200.0;
    let expect_drop = v0 * t + GRAVITY * (dt * dt * n * (n + 1.0) / 2.0);
    assert!(
        (drop - expect_drop).norm() <= 1e-9 * expect_drop.norm(),
        "drop {drop:?} vs {expect_drop:?}"
    );
    assert!(drop.norm() > 0.1, "the cloth did not fall");
}

// ---------------------------------------------------------------------------------------------
// E10: spinning disc, damping
// ---------------------------------------------------------------------------------------------

/// A flat disc of radius `r` (normal +y) cut from a grid mesh with edges ≈ h.
fn disc(center: V, r: f64) -> TriMesh {
    let n = (2.0 * r / H).ceil() as usize + 2;
    let grid = flat_cloth(center, n as f64 * H, n);
    let (verts, faces) = grid.into_parts();
    let keep: Vec<[u32; 3]> = faces
        .into_iter()
        .filter(|f| {
            let c = (verts[f[0] as usize] + verts[f[1] as usize] + verts[f[2] as usize]) * (1.0 / 3.0);
            (c - center).norm() <= r
        })
        .collect();
    let mut map = vec![u32::MAX; verts.len()];
    let mut new_verts = Vec::new();
    let faces: Vec<[u32; 3]> = keep
        .iter()
        .map(|f| {
            f.map(|v| {
                if map[v as usize] == u32::MAX {
                    map[v as usize] = new_verts.len() as u32;
                    new_verts.push(verts[v as usize]);
                }
                map[v as usize]
            })
        })
        .collect();
    TriMesh::from_u32_faces(new_verts, faces).unwrap()
}

struct DiscRun {
    /// Relative linear-momentum error, max over the run.
    momentum_err: f64,
    /// Relative angular-momentum drift, max over the run.
    angular_drift: f64,
    /// Peak-to-peak of the mean vertex radius over the first and the last quarter of the run, m.
    breathing_early: f64,
    breathing_late: f64,
    /// Rotation angle of a rim vertex over the run, rad (proves it spun).
    turned: f64,
}

/// A cloth disc in free flight (no gravity, far from walls), spinning rigidly about its normal at
/// ω with a superposed in-plane breathing velocity, for `duration` seconds.
fn spin_disc(damping: f64, duration: f64, enslave: bool) -> DiscRun {
    let mut sim = new_sim(NO_GRAVITY);
    sim.params.enslave_elements = enslave;
    let centre = V::new(-0.05, 0.02, 0.01);
    let mesh = disc(centre, 0.15);
    let mat = CodimMaterial::Surface(SurfaceParams::from_material(400.0, 0.3, 0.0, 800.0, 0.0).unwrap());
    sim.add_surface(&mesh, mat, 2.0, H, V::zero(), damping, EnergyWeight::Split)
        .unwrap();
    let n = sim.model.num_particles();
    // centre of mass (the rigid motion is about it, so the momentum is v_c Σ m)
    let total = sim.total_mass();
    let com = (0..n).fold(V::zero(), |acc, p| acc + sim.state.x[p] * sim.model.mass[p]) * (1.0 / total);
    let omega = V::new(0.0, 5.0, 0.0);
    let v_c = V::new(0.04, 0.01, -0.03);
    let breathe = 1.0; // 1/s, in-plane dilation rate
    let in_plane = M::identity() - M::outer(V::new(0.0, 1.0, 0.0), V::new(0.0, 1.0, 0.0));
    let c = M::skew(omega) + in_plane * breathe;
    for p in 0..n {
        let r = sim.state.x[p] - com;
        sim.state.v[p] = v_c + c * r;
        sim.state.c[p] = c;
    }
    let (p0, p_scale) = particle_momentum(&sim);
    let am = |s: &Sim| {
        // about the moving centre of mass: Σ m (x − x_c) × v + ℓ(C 𝔇) (equals the origin moment
        // minus x_c × P, which is constant when P is)
        let xc = (0..n).fold(V::zero(), |acc, p| acc + s.state.x[p] * s.model.mass[p]) * (1.0 / total);
        let rel: Vec<V> = s.state.x.iter().map(|x| *x - xc).collect();
        particle_angular_momentum(s, &rel).0
    };
    let l0 = am(&sim);
    let rim = sim.model.vert.start
        + (0..sim.model.vert.len())
            .max_by(|&a, &b| {
                let ra = (sim.state.x[sim.model.vert.start + a] - com).norm();
                let rb = (sim.state.x[sim.model.vert.start + b] - com).norm();
                ra.total_cmp(&rb)
            })
            .unwrap();
    let rim0 = sim.state.x[rim] - com;
    let mean_radius = |s: &Sim| {
        let xc = (0..n).fold(V::zero(), |acc, p| acc + s.state.x[p] * s.model.mass[p]) * (1.0 / total);
        let vr = s.model.vert.clone();
        let (mut acc, mut m) = (0.0, 0.0);
        for p in vr {
            acc += s.model.mass[p] * (s.state.x[p] - xc).norm();
            m += s.model.mass[p];
        }
        acc / m
    };
    let dt = 5e-4;
    let steps = (duration / dt).round() as usize;
    let mut radii = Vec::with_capacity(steps);
    let (mut momentum_err, mut angular_drift) = (0.0f64, 0.0f64);
    let mut angle = 0.0;
    let mut prev = rim0;
    for _ in 0..steps {
        sim.step(dt).unwrap();
        let (p, _) = particle_momentum(&sim);
        momentum_err = momentum_err.max((p - p0).norm() / p_scale);
        angular_drift = angular_drift.max((am(&sim) - l0).norm() / l0.norm());
        radii.push(mean_radius(&sim));
        let xc = (0..n).fold(V::zero(), |acc, q| acc + sim.state.x[q] * sim.model.mass[q]) * (1.0 / total);
        let now = sim.state.x[rim] - xc;
        angle += prev.cross(now).y.atan2(prev.dot(now));
        prev = now;
    }
    assert_finite(&sim);
    let q = steps / 4;
    let p2p =
        |s: &[f64]| s.iter().cloned().fold(f64::MIN, f64::max) - s.iter().cloned().fold(f64::MAX, f64::min);
    DiscRun {
        momentum_err,
        angular_drift,
        breathing_early: p2p(&radii[..q]),
        breathing_late: p2p(&radii[steps - q..]),
        turned: angle.abs(),
    }
}

/// E10: a rigidly spinning cloth disc in free flight, for ν_d ∈ {0, 0.5, 1}: linear momentum is
/// exact, angular momentum drifts < 1e-3 relative over 1 s, and an in-plane breathing mode decays
/// faster for larger ν_d.
///
/// With element-position enslaving switched off (the spec's test option,
/// `SolverParams::enslave_elements`), angular momentum is conserved to 1e-10 relative for every
/// ν_d.
#[test]
fn e10_spinning_disc_conserves_momentum_and_damping_kills_breathing() {
    for nu in [0.0, 0.5, 1.0] {
        let free = spin_disc(nu, 1.0, false);
        assert!(free.turned > 4.0 && free.momentum_err <= EXACT);
        assert!(
            free.angular_drift < 1e-10,
            "ν_d = {nu}, no enslaving: angular momentum drift {:e}",
            free.angular_drift
        );
    }
    let runs: Vec<(f64, DiscRun)> = [0.0, 0.5, 1.0]
        .into_iter()
        .map(|nu| (nu, spin_disc(nu, 1.0, true)))
        .collect();
    for (nu, r) in &runs {
        assert!(
            r.momentum_err <= EXACT,
            "ν_d = {nu}: linear momentum error {:e}",
            r.momentum_err
        );
        assert!(
            r.angular_drift < 1e-3,
            "ν_d = {nu}: angular momentum drift {:e}",
            r.angular_drift
        );
        assert!(
            r.turned > 4.0,
            "ν_d = {nu}: the disc turned only {} rad",
            r.turned
        );
        assert!(
            r.breathing_early > 1e-4,
            "ν_d = {nu}: no breathing was excited ({:e} m)",
            r.breathing_early
        );
    }
    let late: Vec<f64> = runs.iter().map(|(_, r)| r.breathing_late).collect();
    let early: Vec<f64> = runs.iter().map(|(_, r)| r.breathing_early).collect();
    assert!(
        late[0] > late[1] && late[1] > late[2],
        "late breathing amplitude must fall with ν_d: {late:?} (early {early:?})"
    );
    let decay: Vec<f64> = late.iter().zip(&early).map(|(l, e)| l / e).collect();
    assert!(
        decay[0] > decay[1] && decay[1] > decay[2],
        "decay ratios late/early must fall with ν_d: {decay:?}"
    );
    assert!(decay[2] < 0.5, "RPIC did not damp the breathing mode: {decay:?}");
}
