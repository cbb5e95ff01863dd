//! The MPM GPU backend (`mpm::gpu`) against the CPU solver, whole steps at a
//! time (spec `mpm_anisotropic.md` U9): every particle type, both kernels,
//! both transfers, colliders and pins; bitwise-reproducible device runs; the
//! sparse grid growing on the device; the CPU's errors.
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one
//! each test prints SKIPPED and returns, unless `CRUMPLE_REQUIRE_GPU=1`.

mod common;

use std::io::Write;
use std::sync::Arc;

use common::gpu;

use crumple_core::collide::{BoundaryMode, Collider, Sphere};
use crumple_core::geometry::{Region, grid_mesh, grid_roots, sample_lattice, straight_curves};
use crumple_core::gpu::GpuContext;
use crumple_core::math::Vec3;
use crumple_core::mpm::constitutive::{CurveParams, SandParams, SurfaceParams};
use crumple_core::mpm::{
    CodimMaterial, EnergyWeight, Kernel, Simulation, SolverParams, Transfer, VolumeMaterial,
};

type V = Vec3<f64>;
type Sim = Simulation<f32>;
const H: f64 = 1.0 / 48.0;

/// Cloth, strands, an elastic block and a sand block over a sphere, one
/// vertex pinned: every particle type and every stage.
fn every_kind(kernel: Kernel, transfer: Transfer) -> Sim {
    let params = SolverParams {
        lower: V::splat(-0.4),
        upper: V::splat(0.4),
        dx: H,
        kernel,
        transfer,
        ..SolverParams::default()
    };
    let mut sim = Sim::new(params).unwrap();
    let cloth = grid_mesh((0.3, 0.3), (16, 16), V::new(0.0, 0.1, 0.0), 1).unwrap();
    let surf = SurfaceParams::<f64>::from_material(200.0, 0.3, 20.0, 100.0, 20.0)
        .unwrap()
        .cast();
    let c = sim
        .add_surface(
            &cloth,
            CodimMaterial::Surface(surf),
            2.0,
            H / 4.0,
            V::zero(),
            0.7,
            EnergyWeight::Split,
        )
        .unwrap();
    let block = |lo: V| {
        sample_lattice(
            &Region::Box {
                lower: lo,
                upper: lo + V::splat(0.06),
            },
            H / 2.0,
        )
        .unwrap()
    };
    let roots = grid_roots(V::new(-0.1, 0.25, 0.0), V::new(0.0, 1.0, 0.0), (3, 3), 0.02).unwrap();
    let hair = straight_curves(&roots, V::new(1.0, 0.0, 0.0), 0.15, 12).unwrap();
    let curve = CurveParams::<f64>::from_material(500.0, 0.3, 100.0, 500.0, 10.0)
        .unwrap()
        .cast();
    sim.add_curves(
        &hair,
        CodimMaterial::Curve(curve),
        4.0,
        H / 4.0,
        V::new(0.0, -0.5, 0.0),
        0.3,
        EnergyWeight::Split,
    )
    .unwrap();

    let (mu, lambda) = (2e4 / 2.6, 2e4 * 0.3 / (1.3 * 0.4));
    sim.add_volume(
        &block(V::new(0.05, 0.15, -0.03)),
        VolumeMaterial::Elastic { mu, lambda },
        500.0,
        (H / 2.0).powi(3),
        V::new(0.0, -1.0, 0.0),
        0.0,
    )
    .unwrap();
    let sand = SandParams::<f64>::from_material(3.537e5, 0.3, 35.0, 9.0, 0.2, 10.0)
        .unwrap()
        .cast();
    sim.add_volume(
        &block(V::new(-0.12, 0.15, -0.03)),
        VolumeMaterial::Sand(sand),
        2200.0,
        (H / 2.0).powi(3),
        V::zero(),
        0.0,
    )
    .unwrap();
    let ball = Collider::new(
        Sphere::new(0.08).unwrap(),
        V::new(0.0, -0.05, 0.0),
        crumple_core::math::Mat3::identity(),
    )
    .unwrap()
    .with_mode(BoundaryMode::Separate)
    .with_friction(0.4)
    .unwrap();
    sim.add_collider(ball).unwrap();
    sim.pin(c, &[0]).unwrap();
    sim
}

fn run(mut sim: Sim, gpu: Option<&Arc<GpuContext>>, steps: usize) -> Sim {
    if let Some(ctx) = gpu {
        sim.use_gpu(ctx).unwrap();
    }
    for _ in 0..steps {
        let backend = if gpu.is_some() { "gpu" } else { "cpu" };
        sim.step(5e-4).unwrap_or_else(|e| panic!("{backend}: {e}"));
    }
    sim.sync_host().unwrap();
    sim
}

/// Largest position difference over the extent of the particle cloud.
fn rel_diff(a: &Sim, b: &Sim) -> f64 {
    let (mut lo, mut hi) = (V::splat(f64::MAX), V::splat(f64::MIN));
    let mut diff = 0.0f64;
    for (x, y) in a.state.x.iter().zip(&b.state.x) {
        let (x, y): (V, V) = (x.cast(), y.cast());
        assert!(y.is_finite());
        for k in 0..3 {
            lo[k] = lo[k].min(x[k]);
            hi[k] = hi[k].max(x[k]);
        }
        diff = diff.max((x - y).norm());
    }
    let extent = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
    diff / extent
}

#[test]
fn every_particle_type_kernel_and_transfer_matches_the_cpu() {
    let Some(ctx) = gpu() else { return };
    for (kernel, transfer) in [
        (Kernel::Quadratic, Transfer::Apic),
        (Kernel::Cubic, Transfer::Apic),
        (Kernel::Quadratic, Transfer::MlsMpm),
    ] {
        let steps = 40;
        let start = every_kind(kernel, transfer);
        let cpu = run(every_kind(kernel, transfer), None, steps);
        let dev = run(every_kind(kernel, transfer), Some(&ctx), steps);
        let moved = start
            .state
            .x
            .iter()
            .zip(&cpu.state.x)
            .map(|(a, b)| (a.cast::<f64>() - b.cast::<f64>()).norm())
            .fold(0.0, f64::max);
        assert!(moved > 5e-4, "nothing moved ({moved} m)");
        let rel = rel_diff(&cpu, &dev);
        let _ = writeln!(
            std::io::stderr(),
            "{kernel:?} {transfer:?}: GPU vs CPU positions after {steps} steps: {rel:.2e} of the extent"
        );
        assert!(rel < 1e-4, "{kernel:?} {transfer:?}: {rel}");
        let (kc, kg) = (cpu.kinetic_energy(), dev.kinetic_energy());
        assert!((kc - kg).abs() <= 1e-3 * kc, "kinetic energy {kc} vs {kg}");
        assert_eq!(cpu.state.step, dev.state.step);
    }
}

#[test]
fn two_device_runs_are_bitwise_identical() {
    let Some(ctx) = gpu() else { return };
    let a = run(every_kind(Kernel::Quadratic, Transfer::Apic), Some(&ctx), 30);
    let b = run(every_kind(Kernel::Quadratic, Transfer::Apic), Some(&ctx), 30);
    assert_eq!(a.state.x, b.state.x);
    assert_eq!(a.state.v, b.state.v);
    assert_eq!(a.state.c, b.state.c);
    assert_eq!(a.state.f, b.state.f);
    assert_eq!(a.state.d, b.state.d);
}

#[test]
fn the_device_grid_grows_when_particles_spread() {
    let Some(ctx) = gpu() else { return };
    // 64 particles, each alone in its block and flying apart: hundreds of
    // active blocks against a first allocation of 64.
    let build = || {
        let mut sim = Sim::new(SolverParams {
            lower: V::splat(0.0),
            upper: V::splat(1.0),
            dx: 1.0 / 64.0,
            gravity: V::zero(),
            ..SolverParams::default()
        })
        .unwrap();
        for i in 0..4 {
            for j in 0..4 {
                for k in 0..4 {
                    let x = V::new(0.35, 0.35, 0.35) + V::new(i as f64, j as f64, k as f64) * 0.1;
                    let v = (x - V::splat(0.5)) * 2.0;
                    sim.add_volume(
                        &[x],
                        VolumeMaterial::Elastic { mu: 0.0, lambda: 0.0 },
                        1000.0,
                        1e-6,
                        v,
                        0.0,
                    )
                    .unwrap();
                }
            }
        }
        sim
    };
    let cpu = run(build(), None, 20);
    let dev = run(build(), Some(&ctx), 20);
    assert!(dev.active_blocks() > 64, "{} blocks", dev.active_blocks());
    assert_eq!(dev.active_blocks(), cpu.active_blocks());
    assert_eq!(cpu.state.x, dev.state.x);
}

#[test]
fn device_errors_match_the_cpu() {
    let Some(ctx) = gpu() else { return };
    // a pinned vertex dragged out of the box: the same InvalidInput as the CPU
    let build = || {
        let mut sim = Sim::new(SolverParams {
            lower: V::splat(0.0),
            upper: V::splat(0.5),
            dx: 1.0 / 32.0,
            ..SolverParams::default()
        })
        .unwrap();
        let mesh = grid_mesh((0.1, 0.1), (4, 4), V::splat(0.25), 1).unwrap();
        let surf = SurfaceParams::<f64>::from_material(200.0, 0.3, 0.0, 100.0, 0.0)
            .unwrap()
            .cast();
        let c = sim
            .add_surface(
                &mesh,
                CodimMaterial::Surface(surf),
                2.0,
                1e-3,
                V::zero(),
                0.5,
                EnergyWeight::Split,
            )
            .unwrap();
        sim.pin(c, &[0]).unwrap();
        let x0: V = sim.state.x[sim.model.vert.start].cast();
        sim.set_pin_targets(c, &[0], &[x0], &[V::new(0.0, 20.0, 0.0)])
            .unwrap();
        sim
    };
    let mut errors = Vec::new();
    for dev in [None, Some(&ctx)] {
        let mut sim = build();
        if let Some(ctx) = dev {
            sim.use_gpu(ctx).unwrap();
        }
        let err = (0..100).find_map(|_| sim.step(1e-3).err()).expect("no error");
        errors.push(err.to_string());
    }
    assert!(
        errors[0].contains("outside the simulation domain"),
        "{}",
        errors[0]
    );
    assert_eq!(errors[0], errors[1]);
    // f64 has no device path
    let mut f64_sim = Simulation::<f64>::new(SolverParams::default()).unwrap();
    assert!(f64_sim.use_gpu(&ctx).is_err());
}

/// A particle within rounding of the cubic kernel's outer zero on two axes
/// gives its far nodes a subnormal mass (w·m ≈ 1e-43 kg in f32); inverting it
/// overflowed to inf and made the particle NaN. Both backends must treat
/// such nodes as empty.
#[test]
fn subnormal_node_masses_do_not_make_nans() {
    let gpu = gpu();
    for eps in [1e-6, 3e-6] {
        for dev in [None, gpu.as_ref()] {
            let h = 1.0 / 48.0;
            let mut sim = Sim::new(SolverParams {
                lower: V::splat(0.0),
                upper: V::splat(1.0),
                dx: h,
                kernel: Kernel::Cubic,
                ..SolverParams::default()
            })
            .unwrap();
            let x = V::new(12.0 - eps, 24.0, 12.0 - eps) * h;
            sim.add_volume(
                &[x],
                VolumeMaterial::Elastic {
                    mu: 10.0,
                    lambda: 10.0,
                },
                2.0,
                1e-6,
                V::zero(),
                0.0,
            )
            .unwrap();
            let sim = run(sim, dev, 3);
            assert!(
                sim.state.x[0].is_finite() && sim.state.v[0].is_finite(),
                "eps {eps}, gpu {}",
                dev.is_some()
            );
            assert!(sim.state.v[0].y < 0.0, "the particle falls");
        }
    }
}
