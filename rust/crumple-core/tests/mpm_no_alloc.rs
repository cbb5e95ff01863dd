//! The MPM step loop allocates nothing once warmed up (issue: "no allocation
//! in the step loop"). A counting global allocator wraps the system one; after
//! a few warm-up steps (buffers reach their size), further steps of a scene
//! with cloth, sand, a moving collider and pins must not allocate.
//!
//! Runs on one thread: rayon's worker threads allocate their own job queues,
//! which is the pool's business, not the step's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use crumple_core::collide::{BoundaryMode, Collider, Motion, Sphere};
use crumple_core::geometry::{Region, grid_mesh, sample_lattice};
use crumple_core::math::{Mat3, Vec3};
use crumple_core::mpm::constitutive::{SandParams, SurfaceParams};
use crumple_core::mpm::{CodimMaterial, EnergyWeight, Simulation, SolverParams, VolumeMaterial};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn step_loop_does_not_allocate_after_warm_up() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    pool.install(|| {
        let params = SolverParams {
            dx: 1.0 / 32.0,
            ..SolverParams::default()
        };
        let mut sim = Simulation::<f32>::new(params).unwrap();
        let mesh = grid_mesh((0.5, 0.5), (12, 12), Vec3::new(0.5, 0.6, 0.5), 1).unwrap();
        let cloth = SurfaceParams::<f64>::from_material(400.0, 0.3, 0.0, 800.0, 0.0)
            .unwrap()
            .cast();
        let obj = sim
            .add_surface(
                &mesh,
                CodimMaterial::Surface(cloth),
                2.0,
                1.0 / 32.0,
                Vec3::zero(),
                0.8,
                EnergyWeight::Split,
            )
            .unwrap();
        let sand_pts = sample_lattice(
            &Region::Box {
                lower: Vec3::new(0.45, 0.7, 0.45),
                upper: Vec3::new(0.55, 0.8, 0.55),
            },
            1.0 / 64.0,
        )
        .unwrap();
        sim.add_volume(
            &sand_pts,
            VolumeMaterial::Sand(SandParams::default()),
            2200.0,
            1.0 / 64f64.powi(3),
            Vec3::zero(),
            0.0,
        )
        .unwrap();
        let ball = Collider::new(
            Sphere::new(0.1).unwrap(),
            Vec3::new(0.5, 0.3, 0.5),
            Mat3::identity(),
        )
        .unwrap()
        .with_mode(BoundaryMode::Separate)
        .with_motion(Motion::Constant {
            linear_velocity: Vec3::new(0.0, 0.1, 0.0),
            angular_velocity: Vec3::zero(),
        })
        .unwrap();
        sim.add_collider(ball).unwrap();
        sim.pin(obj, &[0, 12]).unwrap();
        for _ in 0..5 {
            sim.step(1e-3).unwrap();
        }
        let x_before = sim.state.x.clone();
        let before = ALLOCS.load(Ordering::Relaxed);
        for _ in 0..20 {
            sim.step(1e-3).unwrap();
        }
        let allocs = ALLOCS.load(Ordering::Relaxed) - before;
        assert_eq!(allocs, 0, "the step loop allocated {allocs} times after warm-up");
        let moved = sim
            .state
            .x
            .iter()
            .zip(&x_before)
            .map(|(a, b)| (*a - *b).norm())
            .fold(0.0f32, f32::max);
        assert!(moved > 1e-3 && sim.state.x.iter().all(|x| x.is_finite()));
    });
}
