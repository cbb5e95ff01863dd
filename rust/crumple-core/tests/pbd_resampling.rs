//! Re-sampling experiments of spec shape_matching §11: X7 (a taffy bar pulled
//! to five times its length stays whole, its clusters' F_P bounded and its
//! volume kept) and X8 (the same pull without re-sampling tears), through
//! the Rust API; X7 again with surface level 1 (spec §8.6: the surface is
//! remeshed every step, so its edges stay at most MaxE while the strand
//! grows five-fold, and it stays closed).

use crumple_core::geometry::box_mesh;
use crumple_core::math::Vec3;
use crumple_core::pbd::skin::volume_and_area;
use crumple_core::pbd::state::Surface;
use crumple_core::pbd::{Material, Simulation, StepParams};
use crumple_core::test_util::closed_and_oriented;

const R: f64 = 0.1;

/// What a pull run measured.
#[derive(Debug)]
struct Pull {
    /// N(t)/N(0), smallest and largest over the run.
    count_ratio: (f64, f64),
    /// (N r³/V)(t) over its initial value, smallest and largest.
    density_ratio: (f64, f64),
    /// Mesh volume over the initial, smallest and largest.
    volume_ratio: (f64, f64),
    /// Largest ‖F_P‖_F seen after any step.
    max_fp: f32,
    /// Length of the strand's particles along x at the end over the ends' separation.
    length_ratio: f64,
    /// Particles seeded over the run.
    seeded: u64,
    /// Largest nearest-neighbour distance of a free particle at the end, in r.
    max_gap: f64,
    /// Distance from an end cap to the nearest free particle at the end, in
    /// r, the larger of the two ends: large when the strand tore off a cap.
    cap_gap: f64,
    /// Longest surface edge after any step, in MaxE.
    longest_edge: f64,
    /// The surface was closed and consistently oriented after every step.
    always_closed: bool,
    /// Surface vertices at the end over the start.
    vertex_ratio: f64,
}

/// The longest edge of the surface, m.
fn longest_edge(s: &Surface) -> f64 {
    s.faces
        .iter()
        .flat_map(|t| (0..3).map(move |k| (t[k], t[(k + 1) % 3])))
        .map(|(a, b)| f64::from((s.y[a as usize] - s.y[b as usize]).norm()))
        .fold(0.0, f64::max)
}

fn minmax(a: (f64, f64), v: f64) -> (f64, f64) {
    (a.0.min(v), a.1.max(v))
}

/// Spec X7/X8: a bar 40r × 4r × 4r, both end caps (the outermost particle
/// layers) kinematic and pulled apart to `factor` × the length over
/// `seconds`, K = 0.99, ε_γ = 1e-4, ν = 0.99, no gravity; `distances` are
/// the deletion and seeding distances (in r); `level` the surface level.
fn pull(resampling: bool, factor: f64, seconds: f64, distances: (f64, f64), level: u32) -> Pull {
    let mut sim = Simulation::new(StepParams {
        gravity: Vec3::zero(),
        resampling,
        surface_level: level,
        deletion_distance: distances.0,
        seed_distance: distances.1,
        ..StepParams::default()
    })
    .unwrap();
    let half = Vec3::new(20.0 * R, 2.0 * R, 2.0 * R);
    let bar = box_mesh(Vec3::zero(), half, [20, 2, 2]).unwrap();
    let taffy = Material {
        stiffness: 0.99,
        yield_strain: 1e-4,
        flow_rate: 0.99,
        ..Material::preset("taffy").unwrap()
    };
    sim.add_body(&bar, taffy, Vec3::zero()).unwrap();
    let x0: Vec<Vec3<f64>> = sim.state.particles.x.iter().map(|x| x.cast::<f64>()).collect();
    let xmin = x0.iter().map(|p| p.x).fold(f64::INFINITY, f64::min);
    let xmax = x0.iter().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max);
    let ends: Vec<u32> = (0..x0.len() as u32)
        .filter(|&i| x0[i as usize].x == xmin || x0[i as usize].x == xmax)
        .collect();
    let starts: Vec<Vec3<f64>> = ends.iter().map(|&i| x0[i as usize]).collect();
    sim.pin(0, &ends, None).unwrap();
    let n0 = sim.state.particles.len() as f64;
    let (v0, _) = volume_and_area(&sim.state.surfaces[0]);
    let density0 = n0 * R * R * R / v0;
    let nv0 = sim.state.surfaces[0].y.len() as f64;
    let max_edge = sim.model.params.max_edge * R;
    let steps = (seconds * 60.0).round() as usize;
    let mut out = Pull {
        count_ratio: (1.0, 1.0),
        density_ratio: (1.0, 1.0),
        volume_ratio: (1.0, 1.0),
        max_fp: 0.0,
        length_ratio: 0.0,
        seeded: 0,
        max_gap: 0.0,
        cap_gap: 0.0,
        longest_edge: 0.0,
        always_closed: true,
        vertex_ratio: 1.0,
    };
    for step in 1..=steps {
        let s = (factor - 1.0) * step as f64 / steps as f64;
        // Each cap moves outward by half the added length.
        let targets: Vec<Vec3<f64>> = starts
            .iter()
            .map(|p| *p + Vec3::new(p.x.signum() * 0.5 * s * (xmax - xmin), 0.0, 0.0))
            .collect();
        let pinned = sim.pinned(0);
        assert_eq!(pinned.len(), ends.len(), "pinned particles were lost");
        sim.set_pin_targets(0, &pinned, &targets).unwrap();
        let stats = sim.step_dt(None).unwrap();
        out.seeded += u64::from(stats.resample.seeded);
        let pt = &sim.state.particles;
        assert!(
            pt.x.iter().all(|x| x.is_finite()),
            "step {step}: non-finite position"
        );
        let n = pt.len() as f64;
        let (v, _) = volume_and_area(&sim.state.surfaces[0]);
        out.count_ratio = minmax(out.count_ratio, n / n0);
        out.density_ratio = minmax(out.density_ratio, n * R * R * R / v / density0);
        out.volume_ratio = minmax(out.volume_ratio, v / v0);
        let surface = &sim.state.surfaces[0];
        out.longest_edge = out.longest_edge.max(longest_edge(surface) / max_edge);
        out.always_closed &= closed_and_oriented(&surface.faces);
        out.vertex_ratio = surface.y.len() as f64 / nv0;
        out.max_fp = sim
            .state
            .clusters
            .fp
            .iter()
            .map(|f| f.norm())
            .fold(out.max_fp, f32::max);
    }
    let pt = &sim.state.particles;
    let free_x: Vec<f64> = (0..pt.len())
        .filter(|&i| !sim.pinned(0).contains(&(i as u32)))
        .map(|i| f64::from(pt.x[i].x))
        .collect();
    let span = free_x.iter().fold(f64::NEG_INFINITY, |a, b| a.max(*b))
        - free_x.iter().fold(f64::INFINITY, |a, b| a.min(*b));
    out.length_ratio = span / (factor * (xmax - xmin));
    let pinned = sim.pinned(0);
    for i in (0..pt.len()).filter(|i| !pinned.contains(&(*i as u32))) {
        let d = (0..pt.len())
            .filter(|&j| j != i)
            .map(|j| f64::from((pt.x[i] - pt.x[j]).norm()))
            .fold(f64::INFINITY, f64::min);
        out.max_gap = out.max_gap.max(d / R);
    }
    let ids = sim.body_particles(0);
    for side in [-1.0f32, 1.0] {
        let d = pinned
            .iter()
            .map(|&k| ids[k as usize])
            .filter(|&c| pt.x[c].x * side > 0.0)
            .flat_map(|c| {
                (0..pt.len())
                    .filter(|j| !pinned.contains(&(*j as u32)))
                    .map(move |j| f64::from((pt.x[c] - pt.x[j]).norm()))
            })
            .fold(f64::INFINITY, f64::min);
        out.cap_gap = out.cap_gap.max(d / R);
    }
    out
}

/// The paper's deletion and seeding distances, η = 0.1 and r.
const PAPER: (f64, f64) = (0.1, 1.0);
/// The pair `pbd_taffy` uses (`StepParams::seed_distance` says why).
const EVEN: (f64, f64) = (0.5, 1.35);

/// Spec X7 with the even pair: the strand stays whole, its particle count
/// and density inside the spec's bands (N/N0 ∈ [0.6, 2], density ±40 %),
/// ‖F_P‖ ≤ 2, volume within 2 %, no hole (gaps < 2.5 r), the strand reaches
/// the caps.
#[test]
fn x7_resampling_keeps_a_pulled_strand_whole_and_even() {
    let p = pull(true, 5.0, 5.0, EVEN, 0);
    eprintln!("X7 {p:?}");
    assert!(p.seeded > 0, "nothing was seeded: {p:?}");
    assert!(p.count_ratio.0 >= 0.6 && p.count_ratio.1 <= 2.0, "{p:?}");
    assert!(p.density_ratio.0 >= 0.6 && p.density_ratio.1 <= 1.4, "{p:?}");
    assert!(p.max_fp <= 2.0, "{p:?}");
    assert!(p.volume_ratio.0 >= 0.98 && p.volume_ratio.1 <= 1.02, "{p:?}");
    assert!(p.max_gap < 2.5 && p.cap_gap < 2.5, "the strand has a hole: {p:?}");
    assert!(p.length_ratio > 0.95, "the strand fell short of the caps: {p:?}");
    // Level 0 keeps the input's connectivity: its edges along the pull
    // stretch with the strand (the reason for level 1, below).
    assert!(p.always_closed && p.vertex_ratio == 1.0, "{p:?}");
    assert!(p.longest_edge > 3.0, "{p:?}");
}

/// Spec X7 with surface level 1 (§8.6): the same pull, the surface split
/// where it stretches, so after every step no edge is longer than MaxE and
/// the surface is closed; the strand's criteria of X7 still hold.
#[test]
fn x7_with_surface_level_1_the_surface_stays_fine_and_closed() {
    let p = pull(true, 5.0, 5.0, EVEN, 1);
    eprintln!("X7 level 1 {p:?}");
    assert!(p.always_closed, "{p:?}");
    assert!(p.longest_edge <= 1.0 + 1e-4, "{p:?}");
    assert!(p.vertex_ratio > 2.0, "the surface was not refined: {p:?}");
    assert!(p.density_ratio.0 >= 0.6 && p.density_ratio.1 <= 1.4, "{p:?}");
    assert!(p.max_fp <= 2.0, "{p:?}");
    assert!(p.volume_ratio.0 >= 0.98 && p.volume_ratio.1 <= 1.02, "{p:?}");
    assert!(
        p.max_gap < 2.5 && p.cap_gap < 2.5 && p.length_ratio > 0.95,
        "{p:?}"
    );
}

/// Spec X7 with the paper's distances: whole as well, but the density
/// doubles (measured 2.11×): the sideways spacing, shrunk to ~0.45 r by
/// the pull, stays far above η r = 0.01 m while seeding fills every gap
/// along the pull that clears r. This is why the distances are options.
#[test]
fn x7_with_the_papers_distances_the_density_doubles() {
    let p = pull(true, 5.0, 5.0, PAPER, 0);
    eprintln!("X7 paper {p:?}");
    assert!(
        p.max_fp <= 2.0 && p.max_gap < 2.5 && p.length_ratio > 0.95,
        "{p:?}"
    );
    assert!(p.density_ratio.1 > 1.6, "{p:?}");
}

/// Spec X8: without re-sampling (F_P capped at 2) the same pull tears the
/// strand off a cap. Measured: cap gap 11.5 r, length 0.885 of the
/// separation, no particle added.
#[test]
fn x8_without_resampling_the_strand_tears() {
    let p = pull(false, 5.0, 5.0, PAPER, 0);
    eprintln!("X8 {p:?}");
    assert_eq!(p.seeded, 0);
    assert_eq!(p.count_ratio, (1.0, 1.0));
    assert!(p.max_fp <= 2.0, "{p:?}");
    assert!(
        p.cap_gap > 5.0 && p.length_ratio < 0.95,
        "the strand followed the caps: {p:?}"
    );
}
