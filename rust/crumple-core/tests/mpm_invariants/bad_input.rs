//! Bad input gives errors, not panics.

use super::*;

// ---------------------------------------------------------------------------------------------
// Bad input: errors, not panics
// ---------------------------------------------------------------------------------------------

#[track_caller]
fn assert_invalid<T: std::fmt::Debug>(r: crumple_core::Result<T>, what: &str) {
    match r {
        Err(Error::InvalidInput(msg)) => assert!(!msg.is_empty(), "{what}: empty message"),
        other => panic!("{what}: expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn bad_input_returns_errors() {
    // grid spacing
    for dx in [0.0, -0.01, f64::NAN, f64::INFINITY] {
        let p = SolverParams {
            dx,
            ..params(GRAVITY, Kernel::Quadratic)
        };
        assert_invalid(Sim::new(p), &format!("dx = {dx}"));
    }
    let mut sim = new_sim(GRAVITY);
    let vol = (H / 2.0).powi(3);
    let inside = vec![V::new(0.0, 0.0, 0.0), V::new(0.01, 0.0, 0.0)];
    // particles outside the domain, or within its wall padding
    for bad in [
        V::new(0.7, 0.0, 0.0),
        V::new(0.0, -0.49, 0.0),
        V::new(0.0, 0.0, 0.5),
    ] {
        let pts = vec![inside[0], bad];
        assert_invalid(
            sim.add_volume(&pts, jelly(100.0), 1000.0, vol, V::zero(), 0.0),
            &format!("point {bad:?}"),
        );
    }
    let far_mesh = flat_cloth(V::new(0.45, 0.0, 0.0), 0.2, 4);
    assert_invalid(
        sim.add_surface(
            &far_mesh,
            cloth_material(0.0, 800.0, 0.0),
            2.0,
            H,
            V::zero(),
            0.0,
            EnergyWeight::Split,
        ),
        "cloth outside the domain",
    );
    // non-finite points and velocities
    for bad in [V::new(f64::NAN, 0.0, 0.0), V::new(0.0, f64::INFINITY, 0.0)] {
        let pts = vec![inside[0], bad];
        assert_invalid(
            sim.add_volume(&pts, jelly(100.0), 1000.0, vol, V::zero(), 0.0),
            "non-finite point",
        );
    }
    assert_invalid(
        sim.add_volume(
            &inside,
            jelly(100.0),
            1000.0,
            vol,
            V::new(f64::NAN, 0.0, 0.0),
            0.0,
        ),
        "NaN velocity",
    );
    assert_invalid(
        sim.add_volume(&[], jelly(100.0), 1000.0, vol, V::zero(), 0.0),
        "no points",
    );
    assert_invalid(
        sim.add_volume(&inside, jelly(100.0), -1.0, vol, V::zero(), 0.0),
        "negative density",
    );
    assert_invalid(
        sim.add_volume(&inside, jelly(100.0), 1000.0, 0.0, V::zero(), 0.0),
        "zero volume",
    );
    // damping outside [0, 1]
    let mesh = flat_cloth(V::new(0.0, 0.1, 0.0), 0.1, 4);
    let curves = strands(
        V::new(0.0, -0.1, 0.0),
        (1, 2),
        0.05,
        V::new(1.0, 0.0, 0.0),
        0.1,
        5,
    );
    for nu in [-0.1, 1.5, f64::NAN, f64::INFINITY] {
        assert_invalid(
            sim.add_volume(&inside, jelly(100.0), 1000.0, vol, V::zero(), nu),
            &format!("damping {nu}"),
        );
        assert_invalid(
            sim.add_surface(
                &mesh,
                cloth_material(0.0, 800.0, 0.0),
                2.0,
                H,
                V::zero(),
                nu,
                EnergyWeight::Split,
            ),
            "damping",
        );
        assert_invalid(
            sim.add_curves(
                &curves,
                curve_material(),
                4.0,
                H / 2.0,
                V::zero(),
                nu,
                EnergyWeight::Split,
            ),
            "damping",
        );
    }
    assert_invalid(
        sim.add_surface(
            &mesh,
            cloth_material(0.0, 800.0, 0.0),
            2.0,
            0.0,
            V::zero(),
            0.0,
            EnergyWeight::Split,
        ),
        "thickness 0",
    );
    assert_invalid(
        sim.add_surface(
            &mesh,
            curve_material(),
            2.0,
            H,
            V::zero(),
            0.0,
            EnergyWeight::Split,
        ),
        "yarn material on a mesh",
    );
    assert_invalid(
        sim.add_curves(
            &curves,
            cloth_material(0.0, 800.0, 0.0),
            4.0,
            H,
            V::zero(),
            0.0,
            EnergyWeight::Split,
        ),
        "cloth on strands",
    );
    // nothing was added by the failed calls
    assert_eq!(sim.model.num_particles(), 0);
    assert!(sim.objects.is_empty());
    assert_invalid(sim.step(1e-3), "step with no particles");

    // objects and pins
    let block = sim
        .add_volume(&inside, jelly(100.0), 1000.0, vol, V::zero(), 0.0)
        .unwrap();
    let cloth = sim
        .add_surface(
            &mesh,
            cloth_material(0.0, 800.0, 0.0),
            2.0,
            H,
            V::zero(),
            0.0,
            EnergyWeight::Split,
        )
        .unwrap();
    let yarn = sim
        .add_curves(
            &curves,
            curve_material(),
            4.0,
            H / 2.0,
            V::zero(),
            0.0,
            EnergyWeight::Split,
        )
        .unwrap();
    let n_cloth = mesh.num_vertices() as u32;
    for unknown in [3, 100] {
        assert_invalid(sim.pin(unknown, &[0]), "pin on an unknown object");
        assert_invalid(sim.object_range(unknown), "range of an unknown object");
        assert_invalid(sim.unpin(unknown), "unpin an unknown object");
        assert_invalid(
            sim.set_pin_targets(unknown, &[0], &[V::zero()], &[V::zero()]),
            "targets of an unknown object",
        );
    }
    assert_invalid(sim.pin(cloth, &[n_cloth]), "pin index = vertex count");
    assert_invalid(sim.pin(cloth, &[u32::MAX]), "pin index u32::MAX");
    assert_invalid(sim.pin(block, &[0]), "pin a volume");
    assert!(sim.pins.is_empty(), "a failed pin call left pins behind");
    sim.pin(yarn, &[0]).unwrap();
    sim.pin(cloth, &[0]).unwrap();
    let target = [V::new(0.0, 0.12, 0.0)];
    // vertex n_cloth of the cloth does not exist; it must not alias the yarn's pinned vertex 0
    assert_invalid(
        sim.set_pin_targets(cloth, &[n_cloth], &target, &[V::zero()]),
        "target index out of range",
    );
    assert_invalid(
        sim.set_pin_targets(cloth, &[u32::MAX], &target, &[V::zero()]),
        "target index u32::MAX",
    );
    assert_invalid(
        sim.set_pin_targets(cloth, &[1], &target, &[V::zero()]),
        "target of an unpinned vertex",
    );
    assert_invalid(sim.set_pin_targets(cloth, &[0], &target, &[]), "length mismatch");
    assert_invalid(
        sim.set_pin_targets(cloth, &[0], &[V::new(f64::NAN, 0.0, 0.0)], &[V::zero()]),
        "NaN target",
    );
    // a batch with one bad entry changes nothing
    let cloth_pin = *sim.pins.iter().find(|p| p.vertex == 0).unwrap();
    let two = [target[0], target[0]];
    assert_invalid(
        sim.set_pin_targets(cloth, &[0, n_cloth], &two, &[V::zero(); 2]),
        "batch with a bad index",
    );
    assert_invalid(sim.pin(cloth, &[1, n_cloth]), "pin batch with a bad index");
    assert_eq!(sim.pins.len(), 2, "a failed pin batch added pins");
    assert_eq!(
        *sim.pins.iter().find(|p| p.vertex == 0).unwrap(),
        cloth_pin,
        "a failed batch moved a pin"
    );
    let yarn_root = sim.state.x[sim.object_range(yarn).unwrap().start];
    assert!(
        sim.pins.iter().any(|p| p.x0 == yarn_root),
        "the yarn's pin was modified"
    );

    // step and advance arguments
    for dt in [0.0, -1e-3, f64::NAN] {
        assert_invalid(sim.step(dt), &format!("dt = {dt}"));
    }
    assert_invalid(sim.advance(-1.0), "negative duration");
    assert_invalid(sim.advance(f64::NAN), "NaN duration");
    sim.step(1e-3).unwrap();

    // a particle that leaves the domain, or turns NaN, stops the step with an error
    let mut out = sim.clone();
    out.state.x[0] = V::new(0.6, 0.0, 0.0);
    assert_invalid(out.step(1e-3), "particle outside the domain while stepping");
    let mut nan = sim.clone();
    nan.state.x[1] = V::new(f64::NAN, 0.0, 0.0);
    assert!(
        matches!(nan.step(1e-3), Err(Error::Diverged { .. })),
        "NaN position while stepping"
    );
    let mut nan_v = sim.clone();
    let e0 = nan_v.model.elem.start;
    nan_v.state.v[e0] = V::new(0.0, f64::NAN, 0.0);
    assert!(nan_v.step(1e-3).is_err(), "NaN velocity while stepping");
}
