//! Golden determinism (rapier's parity-path style): a small scene of each
//! solver and backend is stepped a fixed number of times and a fingerprint
//! of every bit of its state is compared with the one stored in
//! `tests/golden_hashes.txt`. A change that alters a single bit of a result
//! fails here; if the change is meant to alter results, re-mint the hashes
//! with `CRUMPLE_GOLDEN_UPDATE=1 cargo test --release --test golden` and say
//! why in the commit message. Refactors must leave them unchanged.
//!
//! CPU results do not depend on the thread count (tested elsewhere), so the
//! hashes hold for any pool size. GPU hashes are stored per adapter name (a
//! different driver rounds differently); an adapter without a stored hash is
//! reported and not compared.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crumple_core::cloth::material::{Material, Wrinkles};
use crumple_core::cloth::model::{Garment, MaterialFrame};
use crumple_core::cloth::sim::Simulation as Cloth;
use crumple_core::cloth::solver::StepParams;
use crumple_core::collide::{BoundaryMode, Collider, Motion, Sphere};
use crumple_core::geometry::{Region, grid_mesh, grid_roots, sample_lattice, straight_curves};
use crumple_core::math::{Mat3, Real, Vec3};
use crumple_core::mpm::constitutive::{CurveParams, GooParams, SandParams, SurfaceParams};
use crumple_core::mpm::{CodimMaterial, EnergyWeight, Kernel, Simulation, SolverParams, VolumeMaterial};

type V = Vec3<f64>;

/// FNV-1a, 64 bit, over the bytes fed to it. Written here because a
/// fingerprint for equality needs no cryptographic hash (and no new
/// dependency): any change of any bit changes it with overwhelming odds.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn f64(&mut self, x: f64) {
        self.bytes(&x.to_bits().to_le_bytes());
    }
    fn real<T: Real>(&mut self, x: T) {
        // f32 states hash their f32 bits, f64 states their f64 bits.
        if std::mem::size_of::<T>() == 4 {
            self.bytes(&(x.to_f64() as f32).to_bits().to_le_bytes());
        } else {
            self.f64(x.to_f64());
        }
    }
    fn vec<T: Real>(&mut self, v: &Vec3<T>) {
        for k in 0..3 {
            self.real(v[k]);
        }
    }
    fn mat<T: Real>(&mut self, m: &Mat3<T>) {
        for i in 0..3 {
            self.vec(&m.row(i));
        }
    }
}

fn golden_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden_hashes.txt")
}

fn stored() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(golden_file()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.rsplit_once(' ')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// Compares `hash` with the stored value of `name` (or stores it when
/// `CRUMPLE_GOLDEN_UPDATE=1`).
fn check(name: &str, hash: u64) {
    let got = format!("{hash:016x}");
    let mut all = stored();
    if std::env::var("CRUMPLE_GOLDEN_UPDATE").as_deref() == Ok("1") {
        all.insert(name.to_string(), got.clone());
        let mut text = String::from(
            "# Golden state fingerprints of rust/crumple-core/tests/golden.rs (name, FNV-1a 64).\n\
             # Re-minted only with a reason stated in the commit message.\n",
        );
        for (k, v) in &all {
            text.push_str(&format!("{k} {v}\n"));
        }
        std::fs::write(golden_file(), text).unwrap();
        println!("{name}: stored {got}");
        return;
    }
    match all.get(name) {
        Some(want) => assert_eq!(
            &got, want,
            "{name}: the state after the golden run changed ({want} -> {got}). If the change is meant to alter \
             results, re-mint with CRUMPLE_GOLDEN_UPDATE=1 and give the reason in the commit message"
        ),
        None => panic!("{name}: no stored hash; run with CRUMPLE_GOLDEN_UPDATE=1 to store {got}"),
    }
}

/// Cloth, strands, an elastic, a sand and a goo block over a moving sphere;
/// one cloth vertex pinned and two moved by a keyframed handle: every
/// particle type, stage and the pin/handle path.
fn mpm_scene<T: Real>(kernel: Kernel) -> Simulation<T> {
    let h = 1.0 / 40.0;
    let params = SolverParams {
        lower: V::splat(-0.4),
        upper: V::splat(0.4),
        dx: h,
        kernel,
        ..SolverParams::default()
    };
    let mut sim = Simulation::<T>::new(params).unwrap();
    let cloth = grid_mesh((0.3, 0.3), (12, 12), V::new(0.0, 0.1, 0.0), 1).unwrap();
    let surf = SurfaceParams::<f64>::from_material(200.0, 0.3, 20.0, 100.0, 20.0)
        .unwrap()
        .cast();
    let c = sim
        .add_surface(
            &cloth,
            CodimMaterial::Surface(surf),
            2.0,
            h / 4.0,
            V::zero(),
            0.7,
            EnergyWeight::Split,
        )
        .unwrap();
    let roots = grid_roots(V::new(-0.1, 0.25, 0.0), V::new(0.0, 1.0, 0.0), (3, 3), 0.02).unwrap();
    let hair = straight_curves(&roots, V::new(1.0, 0.0, 0.0), 0.15, 10).unwrap();
    let curve = CurveParams::<f64>::from_material(500.0, 0.3, 100.0, 500.0, 10.0)
        .unwrap()
        .cast();
    sim.add_curves(
        &hair,
        CodimMaterial::Curve(curve),
        4.0,
        h / 4.0,
        V::new(0.0, -0.5, 0.0),
        0.3,
        EnergyWeight::Full,
    )
    .unwrap();
    let block = |lo: V| {
        sample_lattice(
            &Region::Box {
                lower: lo,
                upper: lo + V::splat(0.05),
            },
            h / 2.0,
        )
        .unwrap()
    };
    let (mu, lambda) = (2e4 / 2.6, 2e4 * 0.3 / (1.3 * 0.4));
    let vol = (h / 2.0).powi(3);
    sim.add_volume(
        &block(V::new(0.05, 0.15, -0.03)),
        VolumeMaterial::Elastic {
            mu: T::from_f64(mu),
            lambda: T::from_f64(lambda),
        },
        500.0,
        vol,
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
        vol,
        V::zero(),
        0.0,
    )
    .unwrap();
    let goo = GooParams::<f64>::from_material(2000.0, 0.3, 50.0, 10.0)
        .unwrap()
        .cast();
    sim.add_volume(
        &block(V::new(-0.03, 0.22, 0.08)),
        VolumeMaterial::Goo(goo),
        1000.0,
        vol,
        V::new(0.0, -0.5, 0.0),
        0.1,
    )
    .unwrap();
    let ball = Collider::new(
        Sphere::new(0.08).unwrap(),
        V::new(0.0, -0.05, 0.0),
        Mat3::identity(),
    )
    .unwrap()
    .with_mode(BoundaryMode::Separate)
    .with_friction(0.4)
    .unwrap()
    .with_motion(Motion::Constant {
        linear_velocity: V::new(0.0, 0.2, 0.0),
        angular_velocity: V::new(0.0, 3.0, 0.0),
    })
    .unwrap();
    sim.add_collider(ball).unwrap();
    sim.pin(c, &[0]).unwrap();
    let path = Motion::Keyframes {
        times: vec![0.0, 0.02],
        translations: vec![V::zero(), V::new(0.02, 0.01, 0.0)],
        rotations: vec![Mat3::identity(), Mat3::identity()],
    };
    sim.add_handle(c, &[12, 168], V::new(0.0, 0.1, 0.0), path)
        .unwrap();
    sim
}

fn mpm_hash<T: Real>(sim: &Simulation<T>) -> u64 {
    let s = &sim.state;
    let mut h = Fnv::new();
    s.x.iter().chain(&s.v).for_each(|v| h.vec(v));
    s.c.iter().chain(&s.f).for_each(|m| h.mat(m));
    s.q.iter().for_each(|q| h.real(*q));
    s.d.iter().flatten().for_each(|v| h.vec(v));
    h.f64(s.time);
    h.bytes(&s.step.to_le_bytes());
    h.0
}

fn run_mpm<T: Real>(sim: &mut Simulation<T>) {
    for _ in 0..40 {
        sim.step(5e-4).unwrap();
    }
    sim.sync_host().unwrap();
}

#[test]
fn golden_mpm_cpu_f64() {
    let mut sim = mpm_scene::<f64>(Kernel::Quadratic);
    run_mpm(&mut sim);
    check("mpm_cpu_f64_quadratic", mpm_hash(&sim));
}

#[test]
fn golden_mpm_cpu_f32() {
    let mut sim = mpm_scene::<f32>(Kernel::Quadratic);
    run_mpm(&mut sim);
    check("mpm_cpu_f32_quadratic", mpm_hash(&sim));
    let mut sim = mpm_scene::<f32>(Kernel::Cubic);
    run_mpm(&mut sim);
    check("mpm_cpu_f32_cubic", mpm_hash(&sim));
}

#[test]
fn golden_mpm_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let adapter = ctx.adapter_info().name.clone();
    let mut sim = mpm_scene::<f32>(Kernel::Quadratic);
    sim.use_gpu(&ctx).unwrap();
    run_mpm(&mut sim);
    let name = format!("mpm_gpu_f32_quadratic[{adapter}]");
    let updating = std::env::var("CRUMPLE_GOLDEN_UPDATE").as_deref() == Ok("1");
    if !updating && !stored().contains_key(&name) {
        println!(
            "SKIPPED golden_mpm_gpu: no stored hash for adapter {adapter:?} (got {:016x})",
            mpm_hash(&sim)
        );
        return;
    }
    check(&name, mpm_hash(&sim));
}

/// Two garments (a cotton sheet with the tensile models on, a denim strip
/// with the defaults) that fall onto each other and a sphere with
/// self-collision on, the strip's end turned by a handle.
fn cloth_scene() -> Cloth {
    let sheet = grid_mesh((0.2, 0.2), (10, 10), V::new(0.0, 0.12, 0.0), 1).unwrap();
    let strip = grid_mesh((0.06, 0.16), (4, 10), V::new(0.01, 0.124, 0.0), 1).unwrap();
    let tensile = Wrinkles {
        tensile_friction: true,
        tensile_plasticity: true,
        ..Wrinkles::default()
    };
    let garments = vec![
        Garment {
            mesh: sheet,
            material: Material::preset("cotton").unwrap(),
            wrinkles: tensile,
            frame: MaterialFrame::Principal,
            init_rest_from_mesh: false,
        },
        Garment {
            mesh: strip,
            material: Material::preset("denim").unwrap(),
            wrinkles: Wrinkles::default(),
            frame: MaterialFrame::Direction(V::new(1.0, 0.0, 0.0)),
            init_rest_from_mesh: false,
        },
    ];
    let params = StepParams {
        dt: 2e-3,
        self_collision: true,
        ..StepParams::default()
    };
    let mut sim = Cloth::from_garments(garments, params).unwrap();
    let ball = Collider::new(
        Sphere::new(0.06).unwrap(),
        V::new(0.0, 0.04, 0.0),
        Mat3::identity(),
    )
    .unwrap()
    .with_mode(BoundaryMode::Separate)
    .with_friction(0.3)
    .unwrap();
    sim.add_collider(ball);
    let n0 = 121u32; // the strip's vertices come after the sheet's
    let turn = Motion::Constant {
        linear_velocity: V::zero(),
        angular_velocity: V::new(0.0, 2.0, 0.0),
    };
    sim.add_handle(
        &[n0, n0 + 1, n0 + 2, n0 + 3, n0 + 4],
        V::new(0.01, 0.128, -0.08),
        turn,
        None,
    )
    .unwrap();
    sim
}

#[test]
fn golden_cloth_two_garments_self_collision() {
    let mut sim = cloth_scene();
    let mut pairs = 0;
    for _ in 0..40 {
        sim.step().unwrap();
        pairs = pairs.max(sim.last_stats().proximity_pairs);
    }
    let s = sim.state();
    let mut h = Fnv::new();
    s.x.iter().chain(&s.v).for_each(|v| h.vec(v));
    s.hinge_angle.iter().chain(&s.hinge_dahl).for_each(|&a| h.f64(a));
    let friction = s.hinge_friction.iter().chain(s.tri_friction.iter().flatten());
    friction.for_each(|f| {
        h.f64(f.anchor);
        h.f64(f.t_stick);
    });
    let plastic = s.hinge_plastic.iter().chain(s.tri_plastic.iter().flatten());
    plastic.for_each(|p| {
        h.f64(p.theta_p);
        h.f64(p.eps_hp);
        h.f64(p.eps_y);
        h.bytes(&p.dir.to_le_bytes());
        h.f64(p.t_plastic);
    });
    h.f64(s.time);
    assert!(s.x.iter().all(|x| x.is_finite()));
    assert!(
        sim.last_stats().proximity_pairs > 0,
        "the golden cloth run must exercise self-collision"
    );
    check("cloth_two_garments_self_collision", h.0);
}
