//! U9: bit-identical results for any thread count.

use super::*;
use crate::whole_step::cloth_on_sphere;

// ---------------------------------------------------------------------------------------------
// U9: determinism across thread counts
// ---------------------------------------------------------------------------------------------

fn assert_bit_identical(a: &Sim, b: &Sim, what: &str) {
    let bits = |v: &V| v.to_array().map(f64::to_bits);
    for p in 0..a.model.num_particles() {
        assert_eq!(
            bits(&a.state.x[p]),
            bits(&b.state.x[p]),
            "{what}: position of particle {p} differs"
        );
        assert_eq!(
            bits(&a.state.v[p]),
            bits(&b.state.v[p]),
            "{what}: velocity of particle {p} differs"
        );
        assert_eq!(
            a.state.c[p].m.map(|r| r.map(f64::to_bits)),
            b.state.c[p].m.map(|r| r.map(f64::to_bits))
        );
    }
    for (fa, fb) in a.state.f.iter().zip(&b.state.f) {
        assert_eq!(
            fa.m.map(|r| r.map(f64::to_bits)),
            fb.m.map(|r| r.map(f64::to_bits)),
            "{what}: F^E differs"
        );
    }
    for (da, db) in a.state.d.iter().zip(&b.state.d) {
        assert_eq!(
            [bits(&da[0]), bits(&da[1])],
            [bits(&db[0]), bits(&db[1])],
            "{what}: normal columns differ"
        );
    }
    assert_eq!(a.counters(), b.counters(), "{what}: return-map counters differ");
}

fn check_determinism(what: &str, steps: usize, dt: f64, build: impl Fn() -> Sim + Sync) {
    let run = |threads: usize| {
        run_in_pool(threads, || {
            let mut sim = build();
            for _ in 0..steps {
                sim.step(dt).unwrap();
            }
            sim
        })
    };
    let one = run(1);
    assert_finite(&one);
    let start = build();
    assert!(
        max_displacement(&one.state.x, &start.state.x) > 0.005,
        "{what}: nothing moved"
    );
    for threads in [2, 3] {
        let many = run(threads);
        assert_bit_identical(&one, &many, &format!("{what}, 1 vs {threads} threads"));
    }
}

/// U9: a cloth (and strands) falling on a sphere is bit-identical in pools of 1, 2 and 3 threads.
#[test]
fn u9_cloth_on_sphere_is_deterministic_across_thread_counts() {
    check_determinism("cloth on sphere", 60, 5e-4, || cloth_on_sphere(H, H / 2.0, 20));
}

/// U9: a sand column falling on a sphere and the floor wall is bit-identical across pools.
#[test]
fn u9_sand_is_deterministic_across_thread_counts() {
    check_determinism("sand", 60, 5e-4, || {
        let mut sim = new_sim(GRAVITY);
        let sphere = Collider::new(Sphere::new(0.1).unwrap(), V::new(0.02, -0.3, 0.0), M::identity())
            .unwrap()
            .with_friction(0.3)
            .unwrap();
        sim.add_collider(sphere).unwrap();
        let pts = lattice(V::new(-0.08, -0.2, -0.08), V::new(0.08, -0.1, 0.08), H / 2.0);
        let sand = VolumeMaterial::Sand(SandParams::default());
        sim.add_volume(&pts, sand, 2200.0, (H / 2.0).powi(3), V::new(0.0, -1.5, 0.0), 0.0)
            .unwrap();
        sim
    });
}

/// U9: strands falling on a sphere are bit-identical across pools.
#[test]
fn u9_strands_are_deterministic_across_thread_counts() {
    check_determinism("strands", 60, 5e-4, || {
        let mut sim = new_sim(GRAVITY);
        let sphere = Collider::new(Sphere::new(0.1).unwrap(), V::new(0.0, -0.12, 0.0), M::identity())
            .unwrap()
            .with_friction(0.4)
            .unwrap();
        sim.add_collider(sphere).unwrap();
        let curves = strands(
            V::new(0.0, 0.0, 0.0),
            (6, 6),
            0.03,
            V::new(1.0, 0.05, 0.2),
            0.2,
            14,
        );
        sim.add_curves(
            &curves,
            curve_material(),
            4.0,
            H / 2.0,
            V::new(0.0, -1.0, 0.0),
            0.1,
            EnergyWeight::Split,
        )
        .unwrap();
        sim
    });
}
