//! Whole-solver invariants of the MPM solver (spec `mpm_anisotropic.md` §8 U2, U8, U9 and the
//! experiments E1 and E10 of §7), through the public API in f64.
//!
//! Tolerances are the spec's: "exact" means 1e-12 relative. Every relative check names its scale
//! (the sum of magnitudes that roundoff is proportional to), so that cancellation in a sum that is
//! nominally zero cannot make a check vacuous or impossible. Every scene asserts that its state
//! moved (where motion is expected) and stayed finite.

use crumple_core::Error;
use crumple_core::collide::{BoundaryMode, Collider, Sphere};
use crumple_core::geometry::{
    Curves, Region, TriMesh, grid_mesh, grid_roots, sample_lattice, straight_curves,
};
use crumple_core::math::{Mat3, Vec3};
use crumple_core::mpm::constitutive::{CurveParams, SandParams, SurfaceParams};
use crumple_core::mpm::grid::{BLOCK_NODES, block_key, local_index};
use crumple_core::mpm::kernel::Stencil;
use crumple_core::mpm::material::{codim_energy, codim_return_map, volume_energy};
use crumple_core::mpm::solver::element_f;
use crumple_core::mpm::{CodimMaterial, EnergyWeight, Kernel, Simulation, SolverParams, VolumeMaterial};
use crumple_core::test_util::{Rng, in_pool as run_in_pool};
use std::collections::HashMap;

mod bad_input;
mod determinism;
mod energy;
mod experiments;
mod force_split;
mod transfers;
mod whole_step;

type V = Vec3<f64>;
type M = Mat3<f64>;
type Sim = Simulation<f64>;

const H: f64 = 1.0 / 64.0;
const NO_GRAVITY: V = V::new(0.0, 0.0, 0.0);
const GRAVITY: V = V::new(0.0, -9.81, 0.0);
/// The spec's "exact": 1e-12 relative.
const EXACT: f64 = 1e-12;

// ---------------------------------------------------------------------------------------------
// Scene building
// ---------------------------------------------------------------------------------------------

/// A 1 m domain centred on the origin (so that moments about the origin do not cancel large
/// lever arms), grid spacing `H`, 3-cell slip walls.
fn params(gravity: V, kernel: Kernel) -> SolverParams {
    SolverParams {
        lower: V::splat(-0.5),
        upper: V::splat(0.5),
        dx: H,
        gravity,
        dt_max: 1e-3,
        kernel,
        ..SolverParams::default()
    }
}

fn new_sim(gravity: V) -> Sim {
    Sim::new(params(gravity, Kernel::Quadratic)).unwrap()
}

/// Cloth after the paper's Table 1 (Cloth Curtain), with shear stiffness and friction so the
/// normal columns carry stress and the return map has work to do.
fn cloth_material(gamma: f64, k: f64, friction_deg: f64) -> CodimMaterial<f64> {
    CodimMaterial::Surface(SurfaceParams::from_material(400.0, 0.3, gamma, k, friction_deg).unwrap())
}

/// Yarn after Table 1 (Knit Sweater).
fn curve_material() -> CodimMaterial<f64> {
    CodimMaterial::Curve(CurveParams::from_material(500.0, 0.3, 100.0, 500.0, 10.0).unwrap())
}

/// A fixed-corotated elastic solid with Young's modulus `e` and Poisson ratio 0.3.
fn jelly(e: f64) -> VolumeMaterial<f64> {
    let nu = 0.3;
    VolumeMaterial::Elastic {
        mu: e / (2.0 * (1.0 + nu)),
        lambda: e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
    }
}

/// A material that never produces stress (both Lamé parameters zero): transfers only.
fn stressless() -> VolumeMaterial<f64> {
    VolumeMaterial::Elastic { mu: 0.0, lambda: 0.0 }
}

/// Flat square cloth in the xz plane (normal +y) of `n × n` quads and side `size`.
fn flat_cloth(center: V, size: f64, n: usize) -> TriMesh {
    grid_mesh((size, size), (n, n), center, 1).unwrap()
}

/// `nx × nz` straight strands of `segments` segments hanging from a grid of roots around `center`,
/// pointing along `dir`.
fn strands(center: V, counts: (usize, usize), spacing: f64, dir: V, length: f64, segments: usize) -> Curves {
    let roots = grid_roots(center, V::new(0.0, 1.0, 0.0), counts, spacing).unwrap();
    straight_curves(&roots, dir, length, segments).unwrap()
}

/// Cell-centred lattice points in the box `[lo, hi]` with `spacing` (volume per point = spacing³).
fn lattice(lo: V, hi: V, spacing: f64) -> Vec<V> {
    sample_lattice(&Region::Box { lower: lo, upper: hi }, spacing).unwrap()
}

/// Moves every element particle to the barycentre of its vertices (what the solver maintains).
fn enslave_elements(sim: &mut Sim) {
    let vs = sim.model.vert.start;
    for (e, el) in sim.model.elements.iter().enumerate() {
        let k = el.dim as usize + 1;
        let mut c = V::zero();
        for a in 0..k {
            c += sim.state.x[vs + el.vertices[a] as usize];
        }
        sim.state.x[sim.model.elem.start + e] = c * (1.0 / k as f64);
    }
}

/// Geometry and perturbation of a [`stressed`] scene.
struct Stressed {
    /// Elastic block: lattice box (lower, upper) at spacing h/2.
    block: (V, V),
    /// Cloth: centre, side, quads per side.
    cloth: (V, f64, usize),
    /// Strands: centre, counts, spacing, length, segments.
    strands: (V, (usize, usize), f64, f64, usize),
    curve_weight: EnergyWeight,
    /// `F^E = I + f_noise · N`.
    f_noise: f64,
    /// Normal columns `d ← shrink · d + noise · N`.
    d_shrink: f64,
    d_noise: f64,
    /// Random velocities and affine fields (otherwise the scene starts at rest).
    moving: bool,
}

/// The scene of the momentum and transfer tests: every particle type, no collider, everything
/// at least 8 cells from the walls; random velocities and affine fields on all particles.
const MOVING: Stressed = Stressed {
    block: (V::new(-0.3, -0.1, -0.1), V::new(-0.16, 0.04, 0.04)),
    cloth: (V::new(0.12, 0.1, 0.0), 0.2, 12),
    strands: (V::new(0.1, -0.15, 0.0), (3, 3), 0.04, 0.15, 10),
    curve_weight: EnergyWeight::Split,
    f_noise: 0.05,
    d_shrink: 1.0,
    d_noise: 0.1,
    moving: true,
};

/// The U4 scene: a 3×3×3 elastic block, a 3×3-quad cloth and four 4-segment yarn strands (full
/// energy weight, so both weights are exercised), at rest, so that one step's grid velocity is
/// `v̂_i = Δt f_i / m_i`; the normal columns are tilted and compressed (the surface normal stretch
/// r33 < 1 carries the contact energy).
const AT_REST: Stressed = Stressed {
    block: (
        V::new(-0.2, -0.1, -0.1),
        V::new(-0.2 + 1.5 * H, -0.1 + 1.5 * H, -0.1 + 1.5 * H),
    ),
    cloth: (V::new(0.1, 0.1, 0.0), 3.0 * H, 3),
    strands: (V::new(0.0, -0.1, 0.1), (2, 2), 2.0 * H, 4.0 * H, 4),
    curve_weight: EnergyWeight::Full,
    f_noise: 0.1,
    d_shrink: 0.9,
    d_noise: 0.15,
    moving: false,
};

/// A scene with every particle type and non-zero stress everywhere: an elastic block with a
/// randomly perturbed `F^E`, a cloth and yarn strands with randomly displaced vertices and tilted
/// normal columns, laid out by `g`. No colliders.
fn stressed(g: &Stressed, gravity: V, damping: f64, seed: u64) -> Sim {
    let mut sim = new_sim(gravity);
    let pts = lattice(g.block.0, g.block.1, H / 2.0);
    sim.add_volume(&pts, jelly(2000.0), 1000.0, (H / 2.0).powi(3), V::zero(), damping)
        .unwrap();
    let mesh = flat_cloth(g.cloth.0, g.cloth.1, g.cloth.2);
    sim.add_surface(
        &mesh,
        cloth_material(100.0, 800.0, 20.0),
        2.0,
        H,
        V::zero(),
        damping,
        EnergyWeight::Split,
    )
    .unwrap();
    let (centre, counts, spacing, length, segments) = g.strands;
    let curves = strands(centre, counts, spacing, V::new(1.0, 0.2, 0.3), length, segments);
    sim.add_curves(
        &curves,
        curve_material(),
        4.0,
        H / 2.0,
        V::zero(),
        damping,
        g.curve_weight,
    )
    .unwrap();
    let mut rng = Rng::new(seed);
    for p in 0..sim.model.vert.end {
        sim.state.x[p] += rng.vec(0.15 * H);
    }
    enslave_elements(&mut sim);
    if g.moving {
        for p in 0..sim.model.num_particles() {
            sim.state.v[p] = rng.vec(0.3);
            sim.state.c[p] = rng.mat(3.0);
        }
    }
    for f in &mut sim.state.f {
        *f = M::identity() + rng.mat(g.f_noise);
    }
    for (d, el) in sim.state.d.iter_mut().zip(&sim.model.elements) {
        for col in d.iter_mut().take(3 - el.dim as usize) {
            *col = *col * g.d_shrink + rng.vec(g.d_noise);
        }
    }
    sim
}

// ---------------------------------------------------------------------------------------------
// Measurements
// ---------------------------------------------------------------------------------------------

/// `ℓ(M) = (M32 − M23, M13 − M31, M21 − M12)` (spec U2).
fn ell(m: &M) -> V {
    V::new(
        m.m[2][1] - m.m[1][2],
        m.m[0][2] - m.m[2][0],
        m.m[1][0] - m.m[0][1],
    )
}

/// APIC `𝔇_p` (a multiple of the identity): `h²/4` quadratic, `h²/3` cubic (spec §3.1).
fn apic_d(sim: &Sim) -> f64 {
    let h = sim.params.dx;
    match sim.params.kernel {
        Kernel::Quadratic => h * h / 4.0,
        Kernel::Cubic => h * h / 3.0,
    }
}

/// `Σ_p m_p (x_p × v_p + ℓ(C_p 𝔇))` with the given positions, and its roundoff scale
/// `Σ_p m_p (|x_p||v_p| + |ℓ(C_p 𝔇)|)`.
fn particle_angular_momentum(sim: &Sim, x: &[V]) -> (V, f64) {
    let d = apic_d(sim);
    let (mut l, mut scale) = (V::zero(), 0.0);
    let (mass, state) = (&sim.model.mass, &sim.state);
    for (((&m, xp), &v), c) in mass.iter().zip(x).zip(&state.v).zip(&state.c) {
        let lc = ell(c) * d;
        l += (xp.cross(v) + lc) * m;
        scale += m * (xp.norm() * v.norm() + lc.norm());
    }
    (l, scale)
}

fn particle_momentum(sim: &Sim) -> (V, f64) {
    let (mut p, mut scale) = (V::zero(), 0.0);
    for i in 0..sim.model.num_particles() {
        p += sim.state.v[i] * sim.model.mass[i];
        scale += sim.model.mass[i] * sim.state.v[i].norm();
    }
    (p, scale)
}

/// Active grid nodes after a step: (position, mass, updated velocity `v̂`).
fn grid_nodes(sim: &Sim) -> Vec<(V, f64, V)> {
    let g = &sim.solver.grid;
    let mut out = Vec::new();
    for b in 0..g.num_blocks() {
        for l in 0..BLOCK_NODES {
            let n = g.nodes[b * BLOCK_NODES + l];
            if n.mass > 0.0 {
                out.push((
                    g.node_position(b, l, sim.params.lower, sim.params.dx),
                    n.mass,
                    n.mv,
                ));
            }
        }
    }
    out
}

/// `(Σ_i m_i v̂_i, Σ_i x_i × m_i v̂_i)` over the grid of the last step, with roundoff scales.
fn grid_momenta(sim: &Sim) -> ((V, f64), (V, f64)) {
    let (mut p, mut ps, mut l, mut ls) = (V::zero(), 0.0, V::zero(), 0.0);
    for (x, m, v) in grid_nodes(sim) {
        p += v * m;
        ps += m * v.norm();
        l += x.cross(v) * m;
        ls += m * x.norm() * v.norm();
    }
    ((p, ps), (l, ls))
}

/// Asserts `|a − b| ≤ tol · scale` with a message showing the relative error.
#[track_caller]
fn assert_vec_close(a: V, b: V, tol: f64, scale: f64, what: &str) {
    assert!(
        a.is_finite() && b.is_finite(),
        "{what}: not finite: {a:?} vs {b:?}"
    );
    let err = (a - b).norm();
    assert!(
        err <= tol * scale,
        "{what}: |{a:?} − {b:?}| = {err:.3e} exceeds {tol:.0e} × scale {scale:.3e} (relative {:.3e})",
        err / scale
    );
}

fn max_abs_diff(a: &M, b: &M) -> f64 {
    (*a - *b).max_abs()
}

fn assert_finite(sim: &Sim) {
    let s = &sim.state;
    assert!(s.x.iter().all(|x| x.is_finite()), "non-finite position");
    assert!(s.v.iter().all(|v| v.is_finite()), "non-finite velocity");
    assert!(s.c.iter().all(|c| c.is_finite()), "non-finite affine matrix C");
    assert!(s.f.iter().all(|f| f.is_finite()), "non-finite F^E");
    assert!(
        s.d.iter().all(|d| d[0].is_finite() && d[1].is_finite()),
        "non-finite normal column"
    );
}

fn max_displacement(a: &[V], b: &[V]) -> f64 {
    a.iter().zip(b).map(|(p, q)| (*p - *q).norm()).fold(0.0, f64::max)
}
