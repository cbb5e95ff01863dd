//! U8: whole-step invariants (rest, translation, momentum with gravity and boundaries, thickness, grid mass, tangent columns).

use super::*;
use crate::force_split::stencil_of;

// ---------------------------------------------------------------------------------------------
// U8: whole-step invariants
// ---------------------------------------------------------------------------------------------

/// Every material in its rest configuration (a cloth, strands, sand and an elastic block), with an
/// optional uniform velocity.
fn rest_scene(gravity: V, velocity: V) -> Sim {
    let mut sim = new_sim(gravity);
    let sand = lattice(V::new(-0.3, -0.2, -0.1), V::new(-0.18, -0.08, 0.02), H / 2.0);
    let vol = (H / 2.0).powi(3);
    sim.add_volume(
        &sand,
        VolumeMaterial::Sand(SandParams::default()),
        2200.0,
        vol,
        velocity,
        0.0,
    )
    .unwrap();
    let block = lattice(V::new(-0.3, 0.0, -0.1), V::new(-0.18, 0.12, 0.02), H / 2.0);
    sim.add_volume(&block, jelly(2000.0), 1000.0, vol, velocity, 0.3)
        .unwrap();
    let mesh = flat_cloth(V::new(0.1, 0.1, 0.0), 0.25, 16);
    sim.add_surface(
        &mesh,
        cloth_material(100.0, 800.0, 20.0),
        2.0,
        H,
        velocity,
        0.5,
        EnergyWeight::Split,
    )
    .unwrap();
    let curves = strands(
        V::new(0.05, -0.15, -0.05),
        (3, 3),
        0.04,
        V::new(1.0, 0.2, 0.3),
        0.18,
        12,
    );
    sim.add_curves(
        &curves,
        curve_material(),
        4.0,
        H / 2.0,
        velocity,
        0.0,
        EnergyWeight::Split,
    )
    .unwrap();
    sim
}

/// U8: rest configuration, zero gravity ⇒ nothing moves (|v| ≤ 1e-12), for every material.
#[test]
fn u8_rest_without_gravity_stays_at_rest() {
    let mut sim = rest_scene(NO_GRAVITY, V::zero());
    let x0 = sim.state.x.clone();
    for _ in 0..20 {
        sim.step(5e-4).unwrap();
        assert_finite(&sim);
        let vmax = sim.state.v.iter().map(|v| v.norm()).fold(0.0, f64::max);
        assert!(vmax <= 1e-12, "a particle at rest reached {vmax:e} m/s");
    }
    assert!(
        max_displacement(&sim.state.x, &x0) <= 1e-14,
        "a particle at rest moved"
    );
    // the same scene under gravity does move: the check above is not vacuous
    let mut falling = rest_scene(GRAVITY, V::zero());
    falling.step(5e-4).unwrap();
    assert!(falling.state.v.iter().all(|v| v.y < -1e-3), "gravity did not act");
}

/// U8: uniform translation, no gravity, no colliders ⇒ exact translation, no deformation
/// (element R̃ = I, volumetric F^E = I), C stays zero.
#[test]
fn u8_uniform_translation_is_exact() {
    let v0 = V::new(0.4, -0.3, 0.2);
    let mut sim = rest_scene(NO_GRAVITY, v0);
    let x0 = sim.state.x.clone();
    let dt = 1e-3;
    let steps = 40;
    for _ in 0..steps {
        sim.step(dt).unwrap();
        assert_finite(&sim);
    }
    let t = sim.state.time;
    assert!((t - steps as f64 * dt).abs() < 1e-15);
    for (p, x_start) in x0.iter().enumerate() {
        let dv = (sim.state.v[p] - v0).norm();
        assert!(dv <= EXACT * v0.norm(), "particle {p}: velocity off by {dv:e}");
        let dx = (sim.state.x[p] - (*x_start + v0 * t)).norm();
        assert!(
            dx <= EXACT * (v0 * t).norm(),
            "particle {p}: position off the translation by {dx:e}"
        );
        assert!(
            sim.state.c[p].max_abs() <= 1e-10,
            "particle {p}: C = {:?}",
            sim.state.c[p]
        );
    }
    for (e, r) in sim.element_r().iter().enumerate() {
        let dev = max_abs_diff(r, &M::identity());
        assert!(dev <= 1e-12, "element {e}: |R̃ − I| = {dev:e}");
    }
    for (i, f) in sim.state.f.iter().enumerate() {
        let dev = max_abs_diff(f, &M::identity());
        assert!(dev <= 1e-12, "volumetric particle {i}: |F^E − I| = {dev:e}");
    }
    assert!(max_displacement(&sim.state.x, &x0) > 0.01, "nothing moved");
}

/// U8: without boundaries, the total momentum changes per step by exactly `Δt Σ m g` (internal
/// forces sum to zero; enslaving touches no velocity), while the internal forces visibly act.
#[test]
fn u8_momentum_changes_by_the_gravity_impulse_only() {
    let mut sim = stressed(&MOVING, GRAVITY, 0.2, 7);
    let total_mass = sim.total_mass();
    let v_start = sim.state.v.clone();
    let dt = 5e-4;
    for step in 0..30 {
        let (p_before, scale) = particle_momentum(&sim);
        sim.step(dt).unwrap();
        assert_finite(&sim);
        let (p_after, _) = particle_momentum(&sim);
        let impulse = GRAVITY * (dt * total_mass);
        let scale = scale + impulse.norm();
        assert_vec_close(
            p_after,
            p_before + impulse,
            EXACT,
            scale,
            &format!("step {step}: momentum"),
        );
        let ((p_grid, _), _) = grid_momenta(&sim);
        assert_vec_close(
            p_grid,
            p_before + impulse,
            EXACT,
            scale,
            &format!("step {step}: grid momentum"),
        );
    }
    // Not free fall: internal forces and transfers changed velocities beyond g t.
    let t = sim.state.time;
    let dev = (0..sim.model.num_particles())
        .map(|p| (sim.state.v[p] - (v_start[p] + GRAVITY * t)).norm())
        .fold(0.0, f64::max);
    assert!(
        dev > 1e-2,
        "velocities follow free fall ({dev:e}): no internal force acted"
    );
}

/// U8 with a boundary: the total momentum changes per step by exactly `Δt Σ m g` plus the
/// collider's impulse on the grid, and that impulse is the spec's §3.6 "separate" response. The
/// same step is run without the collider: P2G and the forces do not depend on colliders, so the
/// two grids must be bitwise equal at every node outside the sphere, and at the nodes inside it
/// the response may only remove approaching normal velocity (`n·Δv ≥ 0`, `n·v̂ ≥ 0` after) and
/// take away at most `μ_b n·Δv` of the tangential velocity (Coulomb). The particles then carry
/// exactly the grid's momentum: `p_before + Δt Σ m g + Σ_i m_i Δv_i`.
#[test]
fn u8_momentum_changes_by_gravity_and_the_boundary_impulse() {
    let mut sim = cloth_on_sphere(H, H / 2.0, 16);
    let total_mass = sim.total_mass();
    let (mu, lower, inv_dx) = (sim.colliders[0].friction(), sim.params.lower, 1.0 / sim.params.dx);
    let key = |x: V| {
        let g = (x - lower) * inv_dx;
        [g.x.round() as i64, g.y.round() as i64, g.z.round() as i64]
    };
    let dt = 5e-4;
    let (mut largest_impulse, mut pushed) = (0.0f64, 0usize);
    for step in 0..60 {
        let (p_before, scale) = particle_momentum(&sim);
        let mut free = sim.clone();
        free.colliders.clear();
        free.step(dt).unwrap();
        sim.step(dt).unwrap();
        assert_finite(&sim);
        let free_nodes: HashMap<[i64; 3], V> = grid_nodes(&free)
            .into_iter()
            .map(|(x, _, v)| (key(x), v))
            .collect();
        let mut impulse = V::zero();
        for (x, m, v) in grid_nodes(&sim) {
            let v_free = free_nodes[&key(x)];
            let dv = v - v_free;
            match sim.colliders[0].query(x) {
                None => assert_eq!(
                    v, v_free,
                    "step {step}: node {x:?} outside the sphere was changed"
                ),
                Some(ct) => {
                    let vs = v_free.norm() + v.norm();
                    let dn = ct.normal.dot(dv);
                    let dt_norm = (dv - ct.normal * dn).norm();
                    assert!(
                        dn >= -1e-12 * vs,
                        "step {step}: the sphere pulled node {x:?} inward ({dn:e})"
                    );
                    assert!(
                        ct.normal.dot(v) >= -1e-12 * vs,
                        "step {step}: node {x:?} still approaches"
                    );
                    assert!(
                        dt_norm <= mu * dn + 1e-12 * vs,
                        "step {step}: friction beyond μ_b at {x:?}"
                    );
                    if dn > 0.0 {
                        pushed += 1;
                    }
                    impulse += dv * m;
                }
            }
        }
        largest_impulse = largest_impulse.max(impulse.norm());
        let gravity = GRAVITY * (dt * total_mass);
        let scale = scale + gravity.norm() + impulse.norm();
        let (p_after, _) = particle_momentum(&sim);
        assert_vec_close(
            p_after,
            p_before + gravity + impulse,
            EXACT,
            scale,
            &format!("step {step}: momentum"),
        );
    }
    println!(
        "U8 boundary impulse: largest {largest_impulse:.3e} N·s per step (gravity {:.3e}), {pushed} node pushes",
        9.81 * dt * total_mass
    );
    // the sphere did push: at least 1% of the gravity impulse of a step
    assert!(
        largest_impulse > 0.01 * 9.81 * dt * total_mass && pushed > 0,
        "the collider never acted (largest impulse {largest_impulse:e} N·s)"
    );
}

/// A cloth dropped onto a frictional sphere, and strands dropped next to it onto the same sphere.
pub(crate) fn cloth_on_sphere(thickness: f64, radius: f64, cloth_n: usize) -> Sim {
    let mut sim = new_sim(GRAVITY);
    let sphere = Collider::new(Sphere::new(0.12).unwrap(), V::new(0.0, -0.1, 0.0), M::identity())
        .unwrap()
        .with_mode(BoundaryMode::Separate)
        .with_friction(0.5)
        .unwrap();
    sim.add_collider(sphere).unwrap();
    let mesh = flat_cloth(V::new(-0.02, 0.04, 0.03), 0.3, cloth_n);
    sim.add_surface(
        &mesh,
        cloth_material(200.0, 800.0, 25.0),
        2.0,
        thickness,
        V::new(0.0, -1.0, 0.0),
        0.3,
        EnergyWeight::Split,
    )
    .unwrap();
    let curves = strands(
        V::new(0.05, 0.1, -0.02),
        (3, 2),
        0.05,
        V::new(0.2, 0.1, 1.0),
        0.15,
        9,
    );
    sim.add_curves(
        &curves,
        curve_material(),
        4.0,
        radius,
        V::new(0.0, -1.0, 0.0),
        0.1,
        EnergyWeight::Split,
    )
    .unwrap();
    sim
}

/// U8 thickness invariance: scaling the cloth thickness (and the strand radius) changes no
/// trajectory, to 1e-10 relative, through contact with a collider. The scale factors are not
/// powers of two, so every mass and force is rounded differently.
#[test]
fn u8_thickness_does_not_change_trajectories() {
    let mut a = cloth_on_sphere(H, H / 2.0, 20);
    // Cloth volume ∝ τ, strand volume ∝ r²: both scale by 3, so every mass and force does.
    let mut b = cloth_on_sphere(3.0 * H, 3f64.sqrt() * H / 2.0, 20);
    assert!(
        (b.total_mass() / a.total_mass() - 3.0).abs() < 1e-12,
        "the masses did not scale by 3"
    );
    let x0 = a.state.x.clone();
    for step in 0..80 {
        a.step(5e-4).unwrap();
        b.step(5e-4).unwrap();
        assert_finite(&a);
        assert_finite(&b);
        let x_scale = a.state.x.iter().map(|x| x.norm()).fold(0.0, f64::max);
        let v_scale = a.state.v.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let dx = max_displacement(&a.state.x, &b.state.x);
        let dv = max_displacement(&a.state.v, &b.state.v);
        assert!(dx <= 1e-10 * x_scale, "step {step}: positions differ by {dx:e}");
        assert!(dv <= 1e-10 * v_scale, "step {step}: velocities differ by {dv:e}");
    }
    assert!(
        a.counters().slide + a.counters().tension > 0,
        "no contact happened"
    );
    assert!(max_displacement(&a.state.x, &x0) > 0.02, "nothing moved");
}

/// U8 mass conservation: grid total mass equals particle total mass after every step, in a scene
/// with every particle type, gravity and a collider.
#[test]
fn u8_grid_mass_equals_particle_mass_every_step() {
    let mut sim = cloth_on_sphere(H, H / 2.0, 16);
    let sand = lattice(V::new(-0.25, -0.1, -0.1), V::new(-0.15, 0.0, 0.0), H / 2.0);
    sim.add_volume(
        &sand,
        VolumeMaterial::Sand(SandParams::default()),
        2200.0,
        (H / 2.0).powi(3),
        V::zero(),
        0.0,
    )
    .unwrap();
    let m_p = sim.total_mass();
    let x0 = sim.state.x.clone();
    for step in 0..40 {
        sim.step(5e-4).unwrap();
        assert_finite(&sim);
        assert_eq!(sim.total_mass(), m_p, "particle mass changed");
        let m_g = sim.solver.grid.total_mass();
        assert!(
            (m_g - m_p).abs() <= EXACT * m_p,
            "step {step}: grid mass {m_g} vs particle mass {m_p}"
        );
    }
    assert!(max_displacement(&sim.state.x, &x0) > 0.01, "nothing moved");
}

/// `∇v̂ = Σ_i v̂_i ∇w_ipᵀ` at `x` from the grid of the last step (quadratic kernel, spec §3.7).
fn grid_velocity_gradient(sim: &Sim, x: V) -> M {
    let g = &sim.solver.grid;
    let mut gv = M::zero();
    for (node, _, gw) in stencil_of(sim, x) {
        let n = node.map(|i| i as u32);
        let blk = g
            .find(block_key([n[0] >> 2, n[1] >> 2, n[2] >> 2]))
            .expect("stencil node not active");
        let l = local_index((n[0] & 3) as usize, (n[1] & 3) as usize, (n[2] & 3) as usize);
        gv += M::outer(g.nodes[blk as usize * BLOCK_NODES + l].mv, gw);
    }
    gv
}

/// U8: the return map never changes the tangent columns. This solver stores only the normal
/// columns `d` and rebuilds the tangent ones from the vertices, so the check rebuilds each
/// element's trial `F̃ = [Ds(x^{n+1}) Dm⁻¹ | (I + Δt ∇v̂(x_p^n)) d^n]` from the step's grid
/// (spec §3.9), runs the return map on it, and asserts that (a) the projected `Q R̃` has the trial's
/// tangent columns and (b) the solver stored exactly the projected normal columns. The scene makes
/// the return map slide, separate and stick (cloth and yarn hitting a frictional sphere).
#[test]
fn u8_return_map_never_changes_tangent_columns() {
    let mut sim = cloth_on_sphere(H, H / 2.0, 16);
    let dt = 5e-4;
    let mut projected = 0usize;
    for step in 0..70 {
        let x_old = sim.state.x.clone();
        let d_old = sim.state.d.clone();
        sim.step(dt).unwrap();
        assert_finite(&sim);
        let (vs, es) = (sim.model.vert.start, sim.model.elem.start);
        for (e, el) in sim.model.elements.iter().enumerate() {
            let gv = grid_velocity_gradient(&sim, x_old[es + e]);
            let g = M::identity() + gv * dt;
            let d_trial = [g * d_old[e][0], g * d_old[e][1]];
            let xs = |k: usize| sim.state.x[vs + el.vertices[k] as usize];
            let trial = element_f(el, xs(0), xs(1), xs(2), &d_trial);
            let (fnew, _) = codim_return_map(&sim.model.codim_materials[el.material as usize], &trial);
            let m = el.dim as usize;
            for j in 0..m {
                let (a, b) = (fnew.col(j), trial.col(j));
                let err = (a - b).norm();
                assert!(
                    err <= 1e-14 * b.norm(),
                    "step {step}, element {e}: tangent column {j} moved by {err:e}"
                );
            }
            for j in m..3 {
                let stored = sim.state.d[e][j - m];
                let err = (stored - fnew.col(j)).norm();
                assert!(
                    err <= 1e-12 * fnew.col(j).norm().max(1.0),
                    "step {step}, element {e}: stored normal column {j} differs from the return map by {err:e}"
                );
                if (fnew.col(j) - trial.col(j)).norm() > 1e-9 {
                    projected += 1;
                }
            }
        }
    }
    let c = sim.counters();

    assert!(
        c.slide > 0 && c.tension > 0,
        "the return map was not exercised: {c:?}"
    );
    assert!(projected > 100, "only {projected} normal columns were projected");
}
