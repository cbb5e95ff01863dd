//! Profiling driver: a cloth dropped on a sphere (the `cloth_on_sphere`
//! setting at a chosen resolution). `cargo run --release --example mpm_cloth -- [quads] [steps]`.

use crumple_core::collide::{BoundaryMode, Collider, Plane, Sphere};
use crumple_core::geometry::grid_mesh;
use crumple_core::math::{Mat3, Vec3};
use crumple_core::mpm::constitutive::SurfaceParams;
use crumple_core::mpm::{CodimMaterial, EnergyWeight, Simulation, SolverParams};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(160);
    let steps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let dx = 1.0 / n as f64;
    let params = SolverParams {
        lower: Vec3::splat(-0.1),
        upper: Vec3::splat(1.1),
        dx,
        dt_max: 2e-4,
        ..SolverParams::default()
    };
    let mut sim = Simulation::<f32>::new(params).expect("params");
    let mesh = grid_mesh((1.0, 1.0), (n, n), Vec3::new(0.5, 0.85, 0.5), 1).expect("mesh");
    let mat = SurfaceParams::<f64>::from_material(200.0, 0.3, 0.0, 100.0, 0.0)
        .expect("material")
        .cast();
    sim.add_surface(
        &mesh,
        CodimMaterial::Surface(mat),
        2.0,
        dx,
        Vec3::zero(),
        0.7,
        EnergyWeight::Split,
    )
    .expect("cloth");
    let ball = Collider::new(
        Sphere::new(0.25).expect("r"),
        Vec3::new(0.5, 0.3, 0.5),
        Mat3::identity(),
    )
    .expect("ball")
    .with_mode(BoundaryMode::Sticky);
    sim.add_collider(ball).expect("add");
    let ground = Collider::new(
        Plane::new(Vec3::zero(), Vec3::new(0.0, 1.0, 0.0)).expect("plane"),
        Vec3::zero(),
        Mat3::identity(),
    )
    .expect("ground");
    sim.add_collider(ground).expect("add");
    sim.advance(0.3).expect("warm up");
    sim.solver.times = Default::default();
    let t0 = std::time::Instant::now();
    for _ in 0..steps {
        sim.step(2e-4).expect("step");
    }
    let secs = t0.elapsed().as_secs_f64();
    let np = sim.model.num_particles();
    println!(
        "{np} particles, {steps} steps, {:.3} M particle-steps/s",
        (np * steps) as f64 / secs / 1e6
    );
    println!("{:?}", sim.solver.times);
}
