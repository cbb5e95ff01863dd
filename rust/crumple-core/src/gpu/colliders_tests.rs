//! Tests of `colliders.rs` (kept out of the source file).

use std::sync::{Arc, OnceLock};

use super::*;
use crate::collide::{BoxShape, Capsule, Cylinder, MeshSdf, Motion, Plane, Sphere, boundary_response};
use crate::geometry::{box_mesh, uv_sphere};
use crate::gpu::wgsl::{COLLIDE_WGSL, concat, shared_prelude};
use crate::gpu::{GpuBuffer, GpuContext};
use crate::math::{Mat3, Vec3};
use crate::test_util::Rng;

/// Test entry point: point `i` (xyz, w = collider index, or −1 for all
/// colliders in order as `grid_update` applies them) with velocity `i`.
const TEST_ENTRY: &str = r"
@group(0) @binding(0) var<storage, read> co_test_points: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> co_test_velocities: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> co_test_colliders: array<PackedCollider>;
@group(0) @binding(3) var<storage, read> collider_sdf: array<f32>;
@group(0) @binding(4) var<storage, read_write> co_test_out: array<vec4<f32>>;

@compute @workgroup_size(64)
fn co_test_main(@builtin(global_invocation_id) gid: vec3<u32>) {
let i = gid.x;
if (i >= arrayLength(&co_test_points)) {
    return;
}
let p = co_test_points[i];
var v = co_test_velocities[i].xyz;
if (p.w >= 0.0) {
    v = collider_response(co_test_colliders[u32(p.w)], p.xyz, v);
} else {
    let n = arrayLength(&co_test_colliders);
    for (var k = 0u; k < n; k = k + 1u) {
        v = collider_response(co_test_colliders[k], p.xyz, v);
    }
}
co_test_out[i] = vec4<f32>(v, 0.0);
}
";

/// The collide library after its generated prelude.
fn library() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| concat(&shared_prelude(), &COLLIDE_WGSL))
}

fn test_shader() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| format!("{}\n{TEST_ENTRY}", library()))
}

// ---------------------------------------------------------------- helpers

/// A rotation about a uniform axis by 0.3–3 rad (never near the identity).
fn rotation(rng: &mut Rng) -> Mat3<f64> {
    let axis = rng.unit();
    Mat3::from_axis_angle(axis, rng.uniform(0.3, 3.0))
}

fn round32(v: Vec3<f64>) -> Vec3<f64> {
    Vec3::new(v.x as f32 as f64, v.y as f32 as f64, v.z as f32 as f64)
}
fn to4(v: Vec3<f64>, w: f32) -> [f32; 4] {
    [v.x as f32, v.y as f32, v.z as f32, w]
}
fn from4(v: [f32; 4]) -> Vec3<f64> {
    Vec3::new(f64::from(v[0]), f64::from(v[1]), f64::from(v[2]))
}

/// What the CPU grid update does for one collider.
fn cpu_response(c: &Collider, x: Vec3<f64>, v: Vec3<f64>) -> Vec3<f64> {
    match c.query(x) {
        Some(ct) => boundary_response(v, ct.velocity, ct.normal, c.mode(), c.friction()),
        None => v,
    }
}

const MODES: [(BoundaryMode, f64); 4] = [
    (BoundaryMode::Sticky, 0.0),
    (BoundaryMode::Slip, 0.0),
    (BoundaryMode::Separate, 0.0),
    (BoundaryMode::Separate, 0.4),
];

/// `shape` at a pose with a dyadic translation and identity rotation
/// (so special local points stay exact in f32) and at a random rotated
/// pose, each in every mode.
fn posed(shape: impl Into<Shape>, seed: u64) -> Vec<Collider> {
    let shape = shape.into();
    let mut rng = Rng::new(seed);
    let poses = [
        (Vec3::new(0.5, -0.25, 0.125), Mat3::identity()),
        (Vec3::new(-0.3, 0.7, 0.2), rotation(&mut rng)),
    ];
    let mut out = Vec::new();
    for (t, r) in poses {
        for (mode, mu) in MODES {
            let c = Collider::new(shape.clone(), t, r)
                .unwrap()
                .with_mode(mode)
                .with_friction(mu)
                .unwrap();
            out.push(c);
        }
    }
    out
}

/// Local sampling box of a shape, a margin beyond its surface.
fn local_box(shape: &Shape) -> (Vec3<f64>, Vec3<f64>) {
    let m = 0.15;
    let half = |h: Vec3<f64>| (-h - Vec3::splat(m), h + Vec3::splat(m));
    match shape {
        Shape::Plane(p) => (p.point() - Vec3::splat(0.6), p.point() + Vec3::splat(0.6)),
        Shape::Sphere(s) => half(Vec3::splat(s.radius())),
        Shape::Box(b) => half(b.half_extents()),
        Shape::Capsule(c) => half(Vec3::new(c.radius(), c.half_height() + c.radius(), c.radius())),
        Shape::Cylinder(c) => half(Vec3::new(c.radius(), c.half_height(), c.radius())),
        Shape::Mesh(s) => (
            s.lower() - Vec3::splat(3.0 * s.dx()),
            s.upper() + Vec3::splat(3.0 * s.dx()),
        ),
    }
}

/// Local points where the CPU picks a side by convention (centres, axes,
/// medial planes, rims); compared strictly, without the kink excuse.
/// The test shapes have dyadic sizes so that these stay exact in f32
/// (asserted). Not for mesh grids: their centre gradient is a
/// cancellation of near-equal values, a kink of its own.
fn special_points(shape: &Shape) -> Vec<Vec3<f64>> {
    let mut out = vec![Vec3::zero()];
    match shape {
        Shape::Mesh(_) => return Vec::new(),
        Shape::Box(b) => {
            let h = b.half_extents();
            // Medial-plane ties inside (first of x, y, z wins), then
            // outside edge and corner regions.
            let m = h.min_element() * 0.5;
            out.extend([
                Vec3::new(h.x - m, h.y - m, 0.0),
                Vec3::new(-(h.x - m), h.y - m, -(h.z - m)),
                Vec3::new(0.0, -(h.y - m), h.z - m),
                Vec3::new(0.0, 0.0, h.z - m),
                Vec3::new(h.x + 0.0625, -h.y - 0.0625, 0.0),
                Vec3::new(-h.x - 0.0625, h.y + 0.0625, h.z + 0.0625),
            ]);
        }
        Shape::Capsule(c) => {
            let hh = c.half_height();
            out.extend([
                Vec3::new(0.0, hh, 0.0),
                Vec3::new(0.0, -hh, 0.0),
                Vec3::new(0.0, 0.5 * hh, 0.0),
                Vec3::new(0.0, hh + 0.5 * c.radius(), 0.0),
                Vec3::new(0.0, -hh - 0.5 * c.radius(), 0.0),
            ]);
        }
        Shape::Cylinder(c) => {
            // On the axis: radial is +x by convention; the centre is
            // nearer the side (radial), the ends nearer a cap (±y).
            // Side and cap equally near: the cap (powers of two keep
            // ρ = √(x²) exact).
            let (r, hh) = (c.radius(), c.half_height());
            out.extend([
                Vec3::new(0.125, hh - (r - 0.125), 0.0),
                Vec3::new(0.0, -(hh - (r - 0.125)), -0.125),
                Vec3::new(0.0, 0.75 * hh, 0.0),
                Vec3::new(0.0, -0.75 * hh, 0.0),
                Vec3::new(0.0, -hh - 0.0625, 0.0),
                Vec3::new(0.0, hh + 0.0625, 0.0),
                Vec3::new(r + 0.0625, hh + 0.0625, 0.0),
            ]);
        }
        _ => {}
    }
    out
}

/// One point to compare: world position and velocity (both already
/// rounded to f32), which collider (`None`: all, in order), and whether
/// it is a special point.
struct Probe {
    x: Vec3<f64>,
    v: Vec3<f64>,
    collider: Option<usize>,
    special: bool,
}

fn random_velocity(rng: &mut Rng) -> Vec3<f64> {
    round32(rng.point(Vec3::splat(-2.0), Vec3::splat(2.0)))
}

/// About `n` random points per collider, most within 0.1 m of the
/// surface (inside and outside), a tenth anywhere in the sampling box,
/// plus the special points (for the unrotated poses).
fn probes(colliders: &[Collider], n: usize, seed: u64) -> Vec<Probe> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for (i, c) in colliders.iter().enumerate() {
        let (lo, hi) = local_box(c.shape());
        let mut count = 0;
        let mut tries = 0;
        while count < n {
            tries += 1;
            assert!(
                tries < 200 * n,
                "sampling {} found too few points",
                c.shape().name()
            );
            let x = round32(c.to_world(rng.point(lo, hi)));
            if c.phi(x).abs() > 0.1 && rng.uniform(0.0, 1.0) > 0.1 {
                continue;
            }
            out.push(Probe {
                x,
                v: random_velocity(&mut rng),
                collider: Some(i),
                special: false,
            });
            count += 1;
        }
        if c.rotation() == Mat3::identity() {
            for p in special_points(c.shape()) {
                let x = c.to_world(p);
                assert_eq!(round32(x), x, "special point not exact in f32");
                out.push(Probe {
                    x,
                    v: random_velocity(&mut rng),
                    collider: Some(i),
                    special: true,
                });
            }
        }
    }
    out
}

/// Runs the test entry point on the GPU.
fn run_gpu(ctx: &Arc<GpuContext>, colliders: &[Collider], probes: &[Probe]) -> Vec<Vec3<f64>> {
    let mut records = Vec::new();
    let mut sdf = Vec::new();
    for c in colliders {
        records.extend_from_slice(&pack_collider(c, sdf.len() as u32).unwrap());
        sdf.extend(collider_sdf_words(c));
    }
    if sdf.is_empty() {
        sdf.push(0.0);
    }
    let points: Vec<[f32; 4]> = probes
        .iter()
        .map(|p| to4(p.x, p.collider.map_or(-1.0, |i| i as f32)))
        .collect();
    let vels: Vec<[f32; 4]> = probes.iter().map(|p| to4(p.v, 0.0)).collect();
    let pipeline = ctx
        .pipeline("colliders_test", test_shader(), "co_test_main")
        .unwrap();
    let points = GpuBuffer::from_slice(ctx, &points, "collider test points").unwrap();
    let vels = GpuBuffer::from_slice(ctx, &vels, "collider test velocities").unwrap();
    let records = GpuBuffer::from_slice(ctx, &records, "collider test records").unwrap();
    let sdf = GpuBuffer::from_slice(ctx, &sdf, "collider test sdf").unwrap();
    let out = GpuBuffer::<[f32; 4]>::zeroed(ctx, probes.len(), "collider test out").unwrap();
    let bindings = vec![
        points.binding(),
        vels.binding(),
        records.binding(),
        sdf.binding(),
        out.binding(),
    ];
    crate::gpu::run_test_entry(ctx, "colliders_test", &pipeline, bindings, probes.len());
    out.read().unwrap().into_iter().map(from4).collect()
}

/// Distance below which inside/outside may differ between f64 and f32.
const SURFACE_BAND: f64 = 1e-5;

#[derive(Default, Debug)]
struct Stats {
    compared: usize,
    inside: usize,
    outside: usize,
    near_surface: usize,
    at_kink: usize,
    max_abs: f64,
    max_rel: f64,
}

/// Whether the CPU normal of some collider jumps within `SURFACE_BAND`
/// of `x` (medial planes, centres, grid faces): there f32 rounding may
/// legitimately pick the other side.
fn near_kink(colliders: &[&Collider], x: Vec3<f64>) -> bool {
    colliders.iter().any(|c| {
        let n0 = c.normal(x);
        (0..6).any(|k| {
            let step = if k % 2 == 0 { 2.0 } else { -2.0 } * SURFACE_BAND;
            let n = c.normal(x + Vec3::unit(k / 2) * step);
            (n - n0).norm() > 1e-3
        })
    })
}

/// Compares GPU and CPU for every probe; panics with the first few
/// mismatches. Points within `SURFACE_BAND` of a surface are excluded;
/// mismatches next to a normal discontinuity are tolerated (and
/// counted) for random points, never for special ones.
fn compare(label: &str, colliders: &[Collider], probes: &[Probe]) -> Option<Stats> {
    let ctx = crate::gpu::test_context()?;
    let got = run_gpu(&ctx, colliders, probes);
    let mut s = Stats::default();
    let mut failures = Vec::new();
    for (p, &g) in probes.iter().zip(&got) {
        let used: Vec<&Collider> = match p.collider {
            Some(i) => vec![&colliders[i]],
            None => colliders.iter().collect(),
        };
        let phis: Vec<f64> = used.iter().map(|c| c.phi(p.x)).collect();
        if phis.iter().any(|d| d.abs() < SURFACE_BAND) {
            s.near_surface += 1;
            continue;
        }
        let expect = used.iter().fold(p.v, |v, c| cpu_response(c, p.x, v));
        let err = (g - expect).norm();
        let tol = 1e-5 + 1e-4 * expect.norm();
        if err > tol {
            if !p.special && near_kink(&used, p.x) {
                s.at_kink += 1;
                continue;
            }
            failures.push(format!(
                "x = {:?} (collider {:?}, phi {phis:?}), v = {:?}: gpu {g:?}, cpu {expect:?}, |err| = {err:e}",
                p.x, p.collider, p.v
            ));
            continue;
        }
        s.compared += 1;
        if phis.iter().any(|&d| d <= 0.0) {
            s.inside += 1;
        } else {
            s.outside += 1;
        }
        s.max_abs = s.max_abs.max(err);
        if expect.norm() > 1e-3 {
            s.max_rel = s.max_rel.max(err / expect.norm());
        }
    }
    println!(
        "{label} [{}]: {} probes, compared {} ({} inside, {} outside), excluded {} within {SURFACE_BAND:e} m \
         of a surface, {} at normal kinks; max |err| {:.3e} m/s, max rel {:.3e}",
        ctx.adapter_info().name,
        probes.len(),
        s.compared,
        s.inside,
        s.outside,
        s.near_surface,
        s.at_kink,
        s.max_abs,
        s.max_rel
    );
    assert!(
        failures.is_empty(),
        "{label}: {} of {} GPU velocities differ from the CPU:\n{}",
        failures.len(),
        probes.len(),
        failures[..failures.len().min(8)].join("\n")
    );
    assert!(
        s.at_kink * 200 <= probes.len(),
        "{label}: {} mismatches at normal kinks",
        s.at_kink
    );
    assert!(
        s.near_surface * 50 <= probes.len(),
        "{label}: too many points on the surface"
    );
    Some(s)
}

/// Per-collider comparison with a floor on inside and outside counts.
fn check_shape(label: &str, colliders: &[Collider], seed: u64) {
    let probes = probes(colliders, 400, seed);
    if let Some(s) = compare(label, colliders, &probes) {
        let per = probes.len() / 5;
        assert!(
            s.inside >= per && s.outside >= per,
            "{label}: too one-sided a sample: {s:?}"
        );
    }
}

// ------------------------------------------------------------ CPU-only

#[test]
fn wgsl_library_validates_and_keeps_its_namespace() {
    // Alone plus the required declaration, it is a valid module without
    // bindings or entry points of its own.
    assert!(!library().contains("@group") && !library().contains("@compute"));
    for source in [
        format!(
            "{}\n@group(0) @binding(0) var<storage, read> collider_sdf: array<f32>;\n",
            library()
        ),
        test_shader().to_owned(),
    ] {
        let module =
            naga::front::wgsl::parse_str(&source).unwrap_or_else(|e| panic!("{}", e.emit_to_string(&source)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::default(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&source)));
    }
    // Every name it defines besides the public four is co_/CO_-prefixed.
    // Constants come only from the generated prelude.
    for line in COLLIDE_WGSL.iter().flat_map(|f| f.lines()) {
        assert!(
            !line.starts_with("const "),
            "constant declared in a library file: {line}"
        );
        for kw in ["fn ", "const ", "struct ", "var<private> ", "alias "] {
            if let Some(rest) = line.strip_prefix(kw) {
                let name: String = rest
                    .chars()
                    .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
                    .collect();
                assert!(
                    name == "collider_response"
                        || name == "collider_contact"
                        || name == "collider_velocity"
                        || name == "PackedCollider"
                        || name.starts_with("co_")
                        || name.starts_with("CO_"),
                    "unprefixed name {name}"
                );
            }
        }
    }
}

#[test]
fn pack_layout() {
    let r = Mat3::from_axis_angle(Vec3::new(0.0, 0.0, 1.0), std::f64::consts::FRAC_PI_2);
    let c = Collider::new(Capsule::new(0.5, 0.25).unwrap(), Vec3::new(1.0, 2.0, 3.0), r)
        .unwrap()
        .with_mode(BoundaryMode::Slip)
        .with_friction(0.75)
        .unwrap()
        .with_motion(Motion::Constant {
            linear_velocity: Vec3::new(0.5, 0.0, 0.0),
            angular_velocity: Vec3::new(0.0, 0.0, 0.25),
        })
        .unwrap();
    let w = pack_collider(&c, 123).unwrap();
    assert_eq!(&w[0..4], &[1.0, 2.0, 3.0, 3.0]);
    // Rotation columns; mode 1 (slip); friction.
    for j in 0..3 {
        let col = r.col(j);
        for a in 0..3 {
            assert_eq!(w[4 + 4 * j + a], col[a] as f32);
        }
    }
    assert_eq!((w[7], w[11], w[15]), (1.0, 0.75, 0.0));
    assert_eq!(&w[16..24], &[0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.0]);
    assert_eq!(&w[24..32], &[0.5, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert!(collider_sdf_words(&c).is_empty());

    // Mesh: grid geometry, resolution and the split offset.
    let values: Vec<f64> = (0..24).map(|i| f64::from(i) - 10.0).collect();
    let m = MeshSdf::from_grid(Vec3::new(-1.0, -0.5, 0.25), 0.5, [2, 3, 4], values).unwrap();
    let c = Collider::new(m, Vec3::zero(), Mat3::identity()).unwrap();
    let offset = 5 * 65536 + 777;
    let w = pack_collider(&c, offset).unwrap();
    assert_eq!(w[3], 5.0);
    assert_eq!((w[19], w[23]), (5.0, 777.0));
    assert_eq!(&w[24..32], &[-1.0, -0.5, 0.25, 0.5, 2.0, 3.0, 4.0, 0.0]);
    assert_eq!(w[7], 2.0, "default mode is separate");
    let words = collider_sdf_words(&c);
    assert_eq!(words.len(), 24);
    assert_eq!((words[0], words[23]), (-10.0, 13.0));
    // The last node may sit at the very end of the u32 range, not past it.
    assert!(pack_collider(&c, u32::MAX - 23).is_ok());
    let e = pack_collider(&c, u32::MAX - 22).unwrap_err();
    assert!(
        matches!(e, Error::Backend(_)) && e.to_string().contains("u32"),
        "{e}"
    );

    // Kinds.
    let kinds: [(Shape, f32); 5] = [
        (
            Plane::new(Vec3::zero(), Vec3::new(0.0, 1.0, 0.0)).unwrap().into(),
            0.0,
        ),
        (Sphere::new(1.0).unwrap().into(), 1.0),
        (BoxShape::new(Vec3::splat(1.0)).unwrap().into(), 2.0),
        (Capsule::new(1.0, 1.0).unwrap().into(), 3.0),
        (Cylinder::new(1.0, 1.0).unwrap().into(), 4.0),
    ];
    for (shape, kind) in kinds {
        let c = Collider::new(shape, Vec3::zero(), Mat3::identity()).unwrap();
        assert_eq!(pack_collider(&c, 0).unwrap()[3], kind);
    }
}

#[test]
fn pack_refuses_what_f32_cannot_hold() {
    let far = Collider::new(
        Sphere::new(1.0).unwrap(),
        Vec3::new(0.0, 1e39, 0.0),
        Mat3::identity(),
    )
    .unwrap();
    let e = pack_collider(&far, 0).unwrap_err();
    assert!(matches!(e, Error::Backend(_)), "{e}");
    assert!(e.to_string().contains("translation.y"), "{e}");
    let tiny = Collider::new(Sphere::new(1e-50).unwrap(), Vec3::zero(), Mat3::identity()).unwrap();
    let e = pack_collider(&tiny, 0).unwrap_err();
    assert!(e.to_string().contains("sphere radius"), "{e}");
    let fast = Collider::new(
        BoxShape::new(Vec3::splat(1.0)).unwrap(),
        Vec3::zero(),
        Mat3::identity(),
    )
    .unwrap()
    .with_motion(Motion::Constant {
        linear_velocity: Vec3::zero(),
        angular_velocity: Vec3::new(0.0, 0.0, -1e40),
    })
    .unwrap();
    let e = pack_collider(&fast, 0).unwrap_err();
    assert!(e.to_string().contains("angular_velocity.z"), "{e}");
}

// ----------------------------------------------------------- GPU vs CPU

#[test]
fn gpu_plane_matches_cpu() {
    let plane = Plane::new(Vec3::new(0.1, 0.2, -0.1), Vec3::new(0.3, 1.0, -0.2)).unwrap();
    check_shape("plane", &posed(plane, 1), 101);
}

#[test]
fn gpu_sphere_matches_cpu() {
    check_shape("sphere", &posed(Sphere::new(0.375).unwrap(), 2), 102);
}

#[test]
fn gpu_box_matches_cpu() {
    let b = BoxShape::new(Vec3::new(0.375, 0.5, 0.25)).unwrap();
    check_shape("box", &posed(b, 3), 103);
}

#[test]
fn gpu_capsule_matches_cpu() {
    check_shape("capsule", &posed(Capsule::new(0.375, 0.125).unwrap(), 4), 104);
}

#[test]
fn gpu_cylinder_matches_cpu() {
    check_shape("cylinder", &posed(Cylinder::new(0.25, 0.375).unwrap(), 5), 105);
}

/// Mesh grids: sampled from a box mesh (sharp edges and corners) and a
/// UV sphere, and a grid cut through a sphere (probes outside the grid
/// box are inside the object there, exercising the offset branch).
#[test]
fn gpu_mesh_sdf_matches_cpu() {
    let bm = box_mesh(Vec3::new(0.05, 0.0, -0.05), Vec3::new(0.3, 0.2, 0.25), [2, 2, 2]).unwrap();
    let box_sdf = MeshSdf::from_mesh(bm.vertices(), bm.faces(), 0.04, 3).unwrap();
    let sm = uv_sphere(Vec3::zero(), 0.35, 24, 32).unwrap();
    let sphere_sdf = MeshSdf::from_mesh(sm.vertices(), sm.faces(), 0.05, 2).unwrap();
    let (n, dx) = (9usize, 0.075);
    let lower = Vec3::splat(-0.3);
    let mut values = Vec::with_capacity(n * n * n);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let p = lower + Vec3::new(i as f64, j as f64, k as f64) * dx;
                values.push(p.norm() - 0.45);
            }
        }
    }
    let cut = MeshSdf::from_grid(lower, dx, [n, n, n], values).unwrap();
    let mut colliders = posed(box_sdf, 6);
    colliders.extend(posed(sphere_sdf, 7));
    colliders.extend(posed(cut, 8));
    check_shape("mesh sdf", &colliders, 106);
}

/// Constant, keyframed and scripted motion, packed after `advance_to`
/// at two times (the record must follow the current pose and velocity).
#[test]
fn gpu_moving_colliders_match_cpu() {
    let mut rng = Rng::new(9);
    let start = rotation(&mut rng);
    let r1 = rotation(&mut rng);
    let r2 = rotation(&mut rng);
    let mut colliders = Vec::new();
    for (i, (mode, mu)) in MODES.into_iter().enumerate() {
        let shape: Shape = match i {
            0 => BoxShape::new(Vec3::new(0.3, 0.2, 0.4)).unwrap().into(),
            1 => Capsule::new(0.3, 0.2).unwrap().into(),
            2 => Cylinder::new(0.25, 0.3).unwrap().into(),
            _ => Sphere::new(0.35).unwrap().into(),
        };
        let base = Collider::new(shape, Vec3::new(0.2, -0.1, 0.3), start)
            .unwrap()
            .with_mode(mode)
            .with_friction(mu)
            .unwrap();
        let constant = base
            .clone()
            .with_motion(Motion::Constant {
                linear_velocity: Vec3::new(0.4, -0.3, 0.8),
                angular_velocity: Vec3::new(1.5, -0.7, 2.0),
            })
            .unwrap();
        let keys = base
            .clone()
            .with_motion(Motion::Keyframes {
                times: vec![0.0, 0.5, 1.5],
                translations: vec![Vec3::zero(), Vec3::new(0.3, 0.1, -0.2), Vec3::new(-0.2, 0.4, 0.0)],
                rotations: vec![start, r1, r2],
            })
            .unwrap();
        let scripted = base.with_motion(Motion::Scripted).unwrap();
        colliders.extend([constant, keys, scripted]);
    }
    for (step, t) in [0.35, 0.9].into_iter().enumerate() {
        for c in &mut colliders {
            c.advance_to(t).unwrap();
            if matches!(c.motion(), Motion::Scripted) {
                let r = Mat3::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), t);
                c.set_pose(
                    Vec3::new(t, 0.1, -t),
                    r,
                    Vec3::new(-0.5, 0.25, 1.0),
                    Vec3::new(0.3, 2.5, -1.0),
                )
                .unwrap();
            }
            assert!(c.angular_velocity().norm() > 0.5 && c.linear_velocity().norm() > 0.1);
        }
        check_shape(&format!("moving, t = {t}"), &colliders, 107 + step as u64);
    }
}

/// All colliders applied in order to each point, as `grid_update` does
/// (two meshes at different offsets of the shared array among them).
#[test]
fn gpu_colliders_in_sequence_match_cpu() {
    let sm = uv_sphere(Vec3::zero(), 0.3, 16, 24).unwrap();
    let bm = box_mesh(Vec3::zero(), Vec3::new(0.25, 0.15, 0.2), [1, 1, 1]).unwrap();
    let mut rng = Rng::new(10);
    let shapes: Vec<(Shape, Vec3<f64>)> = vec![
        (
            Plane::new(Vec3::new(0.0, -0.3, 0.0), Vec3::new(0.1, 1.0, 0.0))
                .unwrap()
                .into(),
            Vec3::zero(),
        ),
        (
            MeshSdf::from_mesh(sm.vertices(), sm.faces(), 0.05, 2)
                .unwrap()
                .into(),
            Vec3::new(0.2, 0.0, 0.1),
        ),
        (Sphere::new(0.3).unwrap().into(), Vec3::new(-0.2, 0.1, 0.0)),
        (
            MeshSdf::from_mesh(bm.vertices(), bm.faces(), 0.04, 2)
                .unwrap()
                .into(),
            Vec3::new(0.0, 0.2, -0.2),
        ),
        (
            BoxShape::new(Vec3::new(0.2, 0.3, 0.1)).unwrap().into(),
            Vec3::new(0.1, -0.2, 0.2),
        ),
        (Capsule::new(0.3, 0.1).unwrap().into(), Vec3::new(-0.1, 0.0, -0.1)),
        (Cylinder::new(0.2, 0.2).unwrap().into(), Vec3::new(0.0, 0.3, 0.3)),
    ];
    let colliders: Vec<Collider> = shapes
        .into_iter()
        .enumerate()
        .map(|(i, (shape, t))| {
            let (mode, mu) = MODES[i % MODES.len()];
            Collider::new(shape, t, rotation(&mut rng))
                .unwrap()
                .with_mode(mode)
                .with_friction(mu)
                .unwrap()
                .with_motion(Motion::Constant {
                    linear_velocity: rng.point(Vec3::splat(-1.0), Vec3::splat(1.0)),
                    angular_velocity: rng.point(Vec3::splat(-2.0), Vec3::splat(2.0)),
                })
                .unwrap()
        })
        .collect();
    let colliders: Vec<Collider> = colliders
        .into_iter()
        .map(|mut c| {
            c.advance_to(0.25).unwrap();
            c
        })
        .collect();
    let mut probes = Vec::new();
    for _ in 0..3000 {
        let x = round32(rng.point(Vec3::splat(-0.7), Vec3::splat(0.7)));
        let v = round32(rng.point(Vec3::splat(-2.0), Vec3::splat(2.0)));
        probes.push(Probe {
            x,
            v,
            collider: None,
            special: false,
        });
    }
    if let Some(s) = compare("all colliders in sequence", &colliders, &probes) {
        assert!(s.inside > 500 && s.outside > 300, "{s:?}");
    }
}
