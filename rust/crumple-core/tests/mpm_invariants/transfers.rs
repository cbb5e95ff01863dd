//! U2: APIC transfers conserve mass, momentum and angular momentum (spec mpm_anisotropic §8).

use super::*;

// ---------------------------------------------------------------------------------------------
// U2: APIC transfers
// ---------------------------------------------------------------------------------------------

/// Type (i) particles that never carry stress, at random positions with random velocities and
/// random affine matrices, well inside the domain.
fn random_transfer_scene(kernel: Kernel, damping: f64, seed: u64) -> Sim {
    let mut sim = Sim::new(params(NO_GRAVITY, kernel)).unwrap();
    let mut rng = Rng::new(seed);
    let centre = V::new(0.07, -0.03, 0.05);
    let pts: Vec<V> = (0..3000).map(|_| centre + rng.vec(0.15)).collect();
    sim.add_volume(&pts, stressless(), 1000.0, (H / 2.0).powi(3), V::zero(), damping)
        .unwrap();
    for p in 0..pts.len() {
        sim.state.v[p] = rng.vec(0.5);
        sim.state.c[p] = rng.mat(5.0);
    }
    sim
}

/// U2: P2G conserves mass, momentum and angular momentum; G2P plus the position update conserve
/// angular momentum for every damping `ν_d` (damping only scales the symmetric part of C, which
/// `ℓ` does not see). Zero stress, no gravity, nothing near a wall, so the grid velocity after the
/// grid update equals the P2G velocity and all three invariants can be read off the grid.
#[test]
fn u2_transfers_conserve_mass_momentum_and_angular_momentum() {
    for kernel in [Kernel::Quadratic, Kernel::Cubic] {
        // Same particles for every ν_d: P2G does not see ν_d, so every run has the same grid and
        // the same undamped C̃, and C must be skew(C̃) + (1 − ν_d) sym(C̃) (paper Eq. 2).
        let mut undamped: Option<Vec<M>> = None;
        for nu in [0.0, 0.3, 0.7, 1.0] {
            let mut sim = random_transfer_scene(kernel, nu, 11);
            let x0 = sim.state.x.clone();
            let v0 = sim.state.v.clone();
            let (p_before, p_scale) = particle_momentum(&sim);
            let (l_before, l_scale) = particle_angular_momentum(&sim, &x0);
            sim.step(1e-3).unwrap();
            assert_finite(&sim);
            let what = format!("{kernel:?}, ν_d = {nu}");

            // P2G
            let m_p = sim.total_mass();
            let m_g = sim.solver.grid.total_mass();
            assert!(
                (m_g - m_p).abs() <= EXACT * m_p,
                "{what}: grid mass {m_g} vs particle mass {m_p}"
            );
            let ((p_grid, _), (l_grid, _)) = grid_momenta(&sim);
            assert_vec_close(p_grid, p_before, EXACT, p_scale, &format!("{what}: P2G momentum"));
            assert_vec_close(
                l_grid,
                l_before,
                EXACT,
                l_scale,
                &format!("{what}: P2G angular momentum"),
            );

            // G2P + position update x += Δt v
            let (p_after, _) = particle_momentum(&sim);
            let (l_after, _) = particle_angular_momentum(&sim, &sim.state.x);
            assert_vec_close(p_after, p_grid, EXACT, p_scale, &format!("{what}: G2P momentum"));
            assert_vec_close(
                l_after,
                l_grid,
                EXACT,
                l_scale,
                &format!("{what}: G2P angular momentum"),
            );

            // The state did change: positions advanced and the random field was filtered.
            assert!(
                max_displacement(&sim.state.x, &x0) > 1e-5,
                "{what}: nothing moved"
            );
            assert!(
                max_displacement(&sim.state.v, &v0) > 1e-2,
                "{what}: the transfer did not filter v"
            );

            // Damping scales exactly the symmetric part of C.
            let Some(c_undamped) = &undamped else {
                undamped = Some(sim.state.c.clone());
                continue;
            };
            let skew = |c: &M| (*c - c.transpose()) * 0.5;
            let mut sym_left = 0.0;
            for (p, (c, c0)) in sim.state.c.iter().zip(c_undamped).enumerate() {
                let scale = c0.max_abs();
                let e_skew = max_abs_diff(&skew(c), &skew(c0));
                let e_sym = max_abs_diff(&c.symmetric_part(), &(c0.symmetric_part() * (1.0 - nu)));
                assert!(
                    e_skew <= EXACT * scale,
                    "{what}: particle {p}: skew(C) changed by {e_skew:e}"
                );
                assert!(
                    e_sym <= EXACT * scale,
                    "{what}: particle {p}: sym(C) off by {e_sym:e}"
                );
                sym_left += c.symmetric_part().max_abs();
            }
            assert!(
                (nu == 1.0) == (sym_left == 0.0),
                "{what}: symmetric part left: {sym_left:e}"
            );
        }
    }
}

/// U2 with stress on every particle type: the grid forces of all three kinds (type (i) τ, element
/// tangent forces through the vertices, element normal columns through ∇w) sum to zero force and
/// zero torque (spec §3.3), so one step maps the particles' momentum and angular momentum exactly
/// onto the grid, and G2P plus the position update map them back. Element particles are measured
/// at their pre-step positions: their position is enslaved to the vertex barycentre rather than
/// advected (spec §3.8, A14), which is the one deliberate non-conservation (checked in E10).
#[test]
fn u2_stressed_step_conserves_momentum_and_angular_momentum_on_every_particle_type() {
    for (i, nu) in [0.0, 0.5, 1.0].into_iter().enumerate() {
        let mut sim = stressed(&MOVING, NO_GRAVITY, nu, 100 + i as u64);
        let max_r_dev = sim
            .element_r()
            .iter()
            .map(|r| max_abs_diff(r, &M::identity()))
            .fold(0.0, f64::max);
        assert!(
            max_r_dev > 1e-2,
            "the elements are not deformed (max |R̃ − I| = {max_r_dev:e})"
        );
        let start = sim.state.x.clone();
        for step in 0..10 {
            let x_old = sim.state.x.clone();
            let (p_before, p_scale) = particle_momentum(&sim);
            let (l_before, l_scale) = particle_angular_momentum(&sim, &x_old);
            sim.step(5e-4).unwrap();
            assert_finite(&sim);
            let what = format!("ν_d = {nu}, step {step}");
            let ((p_grid, _), (l_grid, _)) = grid_momenta(&sim);
            assert_vec_close(
                p_grid,
                p_before,
                EXACT,
                p_scale,
                &format!("{what}: P2G + forces, momentum"),
            );
            assert_vec_close(
                l_grid,
                l_before,
                EXACT,
                l_scale,
                &format!("{what}: P2G + forces, angular momentum"),
            );
            let mut x_measure = sim.state.x.clone();
            let elem = sim.model.elem.clone();
            x_measure[elem.clone()].copy_from_slice(&x_old[elem]);
            let (p_after, _) = particle_momentum(&sim);
            let (l_after, _) = particle_angular_momentum(&sim, &x_measure);
            assert_vec_close(p_after, p_grid, EXACT, p_scale, &format!("{what}: G2P momentum"));
            assert_vec_close(
                l_after,
                l_grid,
                EXACT,
                l_scale,
                &format!("{what}: G2P angular momentum"),
            );
        }
        assert!(
            max_displacement(&sim.state.x, &start) > 5e-4,
            "ν_d = {nu}: nothing moved"
        );
    }
}
