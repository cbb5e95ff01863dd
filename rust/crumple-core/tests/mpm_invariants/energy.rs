//! U8 energy of a freely oscillating fibre, and U2's affine reproduction and RPIC damping.

use super::*;

// ---------------------------------------------------------------------------------------------
// U8: energy of a freely oscillating fibre
// ---------------------------------------------------------------------------------------------

/// A single straight yarn strand, 0.6 m and 48 segments along x, released without gravity from
/// its first free-free axial mode: vertex displacement `u(s) = −a cos(π s / L)`, a stretch that is
/// 10% in the middle and vanishes at the free ends (a smooth mode; a uniform stretch would start
/// a wave front at each end, whose sub-cell content the transfers dissipate). Returns `E_kin + Φ`
/// and `E_kin` at t = 0 and after every step.
fn oscillating_fibre(damping: f64, steps: usize, dt: f64) -> (Vec<f64>, Vec<f64>) {
    let mut sim = new_sim(NO_GRAVITY);
    let (length, segments) = (0.6, 48);
    let x_start = -length / 2.0;
    let curves = straight_curves(
        &[V::new(x_start, 0.0, 0.01)],
        V::new(1.0, 0.0, 0.0),
        length,
        segments,
    )
    .unwrap();
    sim.add_curves(
        &curves,
        curve_material(),
        4.0,
        H / 2.0,
        V::zero(),
        damping,
        EnergyWeight::Split,
    )
    .unwrap();
    let a = 0.1 * length / std::f64::consts::PI; // peak strain a π / L = 10%
    for p in sim.model.vert.clone() {
        let s = sim.state.x[p].x - x_start;
        sim.state.x[p].x -= a * (std::f64::consts::PI * s / length).cos();
    }
    enslave_elements(&mut sim);
    let (mut total, mut kinetic) = (Vec::with_capacity(steps + 1), Vec::with_capacity(steps + 1));
    for k in 0..=steps {
        if k > 0 {
            sim.step(dt).unwrap();
        }
        let ke = sim.kinetic_energy();
        total.push(ke + sim.elastic_energy());
        kinetic.push(ke);
    }
    assert_finite(&sim);
    (total, kinetic)
}

/// The fibre really oscillates: its kinetic energy rises above a third of `e0` and later falls
/// back below a tenth of it (elastic → kinetic → elastic).
fn assert_oscillates(kinetic: &[f64], e0: f64, what: &str) {
    let peak = (0..kinetic.len())
        .max_by(|&a, &b| kinetic[a].total_cmp(&kinetic[b]))
        .unwrap();
    assert!(
        kinetic[peak] > e0 / 3.0,
        "{what}: E_kin never exceeds E0/3 (max {:e} of E0 {e0:e})",
        kinetic[peak]
    );
    assert!(
        kinetic[peak..].iter().any(|&k| k < e0 / 10.0),
        "{what}: E_kin never falls back below E0/10 after its peak"
    );
}

/// U8 (energy): a stretched fibre oscillating freely with ν_d = 0 and a small step (1e-4 s, a
/// tenth of the scene's `dt_max`) keeps `E_kin + Φ` within 2% of its initial value over 1000
/// steps; with ν_d > 0 the total energy never rises by more than 1e-6 of the initial energy from
/// one step to the next. Every run must really oscillate.
#[test]
fn u8_free_fibre_conserves_energy_and_damping_only_dissipates() {
    let dt = 1e-4;
    let (e, ke) = oscillating_fibre(0.0, 1000, dt);
    let e0 = e[0];
    assert!(e0 > 0.0, "the stretched fibre carries no energy");
    assert_oscillates(&ke, e0, "ν_d = 0");
    let drift = e.iter().map(|x| (x - e0).abs()).fold(0.0, f64::max) / e0;
    println!("U8 energy, ν_d = 0: E0 = {e0:.4e} J, max |E − E0| / E0 = {drift:.3e}");
    assert!(drift < 0.02, "ν_d = 0: energy drifts by {drift:e} of E0 (≥ 2%)");
    for nu in [0.5, 1.0] {
        let (e, ke) = oscillating_fibre(nu, 1000, dt);
        assert_oscillates(&ke, e0, &format!("ν_d = {nu}"));
        let rise = e.windows(2).map(|w| w[1] - w[0]).fold(f64::MIN, f64::max) / e0;
        let lost = 1.0 - e[e.len() - 1] / e0;
        println!("U8 energy, ν_d = {nu}: largest one-step change {rise:.2e} E0, lost {lost:.3} of E0");
        assert!(
            rise <= 1e-6,
            "ν_d = {nu}: energy rose by {rise:e} of E0 in one step (> 1e-6)"
        );
    }
}

/// Particles on a regular lattice inside a box, a cloth and strands, all stress-free, with the
/// velocity field `v = v0 + C x` and `C_p = C` on every particle.
fn affine_scene(kernel: Kernel, damping: f64, v0: V, c: M) -> Sim {
    let mut sim = Sim::new(params(NO_GRAVITY, kernel)).unwrap();
    let pts = lattice(V::new(-0.2, -0.1, -0.1), V::new(-0.05, 0.05, 0.05), H / 2.0);
    sim.add_volume(&pts, stressless(), 1000.0, (H / 2.0).powi(3), V::zero(), damping)
        .unwrap();
    let free_cloth = CodimMaterial::Surface(SurfaceParams::from_material(0.0, 0.3, 0.0, 0.0, 0.0).unwrap());
    let mesh = flat_cloth(V::new(0.1, 0.05, 0.0), 0.15, 9);
    sim.add_surface(&mesh, free_cloth, 2.0, H, V::zero(), damping, EnergyWeight::Split)
        .unwrap();
    let free_yarn = CodimMaterial::Curve(CurveParams::from_material(0.0, 0.3, 0.0, 0.0, 0.0).unwrap());
    let curves = strands(
        V::new(0.1, -0.12, 0.0),
        (2, 2),
        0.05,
        V::new(0.3, 0.1, 1.0),
        0.12,
        8,
    );
    sim.add_curves(
        &curves,
        free_yarn,
        4.0,
        H / 2.0,
        V::zero(),
        damping,
        EnergyWeight::Split,
    )
    .unwrap();
    for p in 0..sim.model.num_particles() {
        sim.state.v[p] = v0 + c * sim.state.x[p];
        sim.state.c[p] = c;
    }
    sim
}

/// U2 affine reproduction (ν_d = 0): if every particle carries the same affine field, P2G gives
/// `v_i = v0 + C x_i` on every active node and one step returns every particle's v and C
/// unchanged, for both kernels and all particle types.
#[test]
fn u2_affine_field_is_reproduced_without_damping() {
    let v0 = V::new(0.2, -0.1, 0.05);
    let c = M::from_cols(
        V::new(0.3, -0.7, 0.2),
        V::new(0.9, -0.1, 0.4),
        V::new(-0.5, 0.6, 0.25),
    );
    for kernel in [Kernel::Quadratic, Kernel::Cubic] {
        let mut sim = affine_scene(kernel, 0.0, v0, c);
        let x0 = sim.state.x.clone();
        let v_before = sim.state.v.clone();
        sim.step(1e-3).unwrap();
        assert_finite(&sim);
        let v_scale = v_before.iter().map(|v| v.norm()).fold(0.0, f64::max);
        // P2G reproduces the field on every active node: v_i = v0 + C x_i (no gravity, no stress)
        let nodes = grid_nodes(&sim);
        assert!(nodes.len() > 100, "{kernel:?}: only {} active nodes", nodes.len());
        for (x, _, v) in nodes {
            let want = v0 + c * x;
            let dv = (v - want).norm();
            assert!(
                dv <= EXACT * (v0.norm() + c.max_abs() * x.norm()),
                "{kernel:?}: node at {x:?} has v = {v:?}, the field gives {want:?}"
            );
        }
        for (p, (v, vb)) in sim.state.v.iter().zip(&v_before).enumerate() {
            let dv = (*v - *vb).norm();
            assert!(
                dv <= EXACT * v_scale,
                "{kernel:?}: particle {p} velocity changed by {dv:e}"
            );
            let dc = max_abs_diff(&sim.state.c[p], &c);
            assert!(
                dc <= EXACT * c.max_abs(),
                "{kernel:?}: particle {p} C changed by {dc:e}"
            );
        }
        // Types (i) and (ii) advected by Δt v.
        for p in 0..sim.model.vert.end {
            let expect = x0[p] + v_before[p] * 1e-3;
            assert!(
                (sim.state.x[p] - expect).norm() <= 1e-15,
                "{kernel:?}: particle {p} not advected by Δt v"
            );
        }
        assert!(
            max_displacement(&sim.state.x, &x0) > 1e-4,
            "{kernel:?}: nothing moved"
        );
    }
}

/// U2: with ν_d = 1 (RPIC) one G2P turns a pure-shear affine field's C into zero and keeps a rigid
/// rotation's C; ν_d = 1/2 halves the shear. Velocities are those of the affine field in each case.
#[test]
fn u2_rpic_damping_kills_shear_and_keeps_rotation() {
    let v0 = V::new(-0.1, 0.05, 0.15);
    let shear = M::from_rows(
        V::new(0.0, 0.8, -0.3),
        V::new(0.8, 0.2, 0.5),
        V::new(-0.3, 0.5, -0.2),
    );
    let rotation = M::skew(V::new(0.7, -1.1, 0.4));
    for (nu, c, expect) in [
        (1.0, shear, M::zero()),
        (0.5, shear, shear * 0.5),
        (1.0, rotation, rotation),
    ] {
        let mut sim = affine_scene(Kernel::Quadratic, nu, v0, c);
        let x0 = sim.state.x.clone();
        let v_before = sim.state.v.clone();
        sim.step(1e-3).unwrap();
        assert_finite(&sim);
        let v_scale = v_before.iter().map(|v| v.norm()).fold(0.0, f64::max);
        for (p, (v, vb)) in sim.state.v.iter().zip(&v_before).enumerate() {
            let dv = (*v - *vb).norm();
            assert!(
                dv <= EXACT * v_scale,
                "ν_d = {nu}: particle {p} velocity changed by {dv:e}"
            );
            let dc = max_abs_diff(&sim.state.c[p], &expect);
            assert!(
                dc <= EXACT * c.max_abs(),
                "ν_d = {nu}, C = {c:?}: particle {p} C off by {dc:e}"
            );
        }
        assert!(max_displacement(&sim.state.x, &x0) > 1e-4, "nothing moved");
    }
}
