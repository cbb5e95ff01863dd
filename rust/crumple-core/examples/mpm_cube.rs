//! Profiling driver: an elastic cube of fixed-corotated particles falling in
//! a 64³ grid (the peer-comparison scene of `benches/mpm_vs_peers.py`).
//! `cargo run --release --example mpm_cube -- [particles] [steps]`.

use crumple_core::geometry::{Region, sample_lattice};
use crumple_core::math::Vec3;
use crumple_core::mpm::{Simulation, SolverParams, Transfer, VolumeMaterial};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000.0);
    let steps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50);
    let dx = 1.0 / 64.0;
    let side = (n / 8.0).cbrt() * dx;
    let lower = Vec3::new(0.5 - side / 2.0, 0.3, 0.5 - side / 2.0);
    let pts = sample_lattice(
        &Region::Box {
            lower,
            upper: lower + Vec3::splat(side),
        },
        dx / 2.0,
    )
    .expect("sampling");
    let transfer = if std::env::var("MLS").is_ok() {
        Transfer::MlsMpm
    } else {
        Transfer::Apic
    };
    let params = SolverParams {
        dx,
        dt_max: 2.5e-4,
        transfer,
        ..SolverParams::default()
    };
    let mut sim = Simulation::<f32>::new(params).expect("params");
    let (mu, lambda) = crumple_core::mpm::constitutive::lame_parameters(5e4, 0.25).expect("lame");
    let mat = VolumeMaterial::Elastic {
        mu: mu as f32,
        lambda: lambda as f32,
    };
    sim.add_volume(
        &pts,
        mat,
        1000.0,
        (dx / 2.0).powi(3),
        Vec3::new(0.0, -1.0, 0.0),
        0.0,
    )
    .expect("add");
    let t0 = std::time::Instant::now();
    for _ in 0..steps {
        sim.step(2.5e-4).expect("step");
    }
    let secs = t0.elapsed().as_secs_f64();
    let np = sim.model.num_particles();
    println!(
        "{np} particles, {steps} steps, {:.3} M particle-steps/s",
        (np * steps) as f64 / secs / 1e6
    );
    println!("{:?}", sim.solver.times);
}
