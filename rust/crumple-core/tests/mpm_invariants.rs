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

// ---------------------------------------------------------------------------------------------
// U2: APIC transfers
// ---------------------------------------------------------------------------------------------

/// Type (i) particles that never carry stress, at random positions with random velocities and
/// random affine matrices, well inside the domain.
fn random_transfer_scene(kernel: Kernel, damping: f64, seed: u64) -> Sim {
    let mut sim = Sim::new(params(NO_GRAVITY, kernel)).unwrap();
    let mut rng = Rng::new(seed);
    let centre = V::new(0.07, -0.03, 0.05);
    let pts: Vec<V> = (0..3000).map(|_| centre + rng.vec(0.15)).collect();
    sim.add_volume(&pts, stressless(), 1000.0, (H / 2.0).powi(3), V::zero(), damping)
        .unwrap();
    for p in 0..pts.len() {
        sim.state.v[p] = rng.vec(0.5);
        sim.state.c[p] = rng.mat(5.0);
    }
    sim
}

/// U2: P2G conserves mass, momentum and angular momentum; G2P plus the position update conserve
/// angular momentum for every damping `ν_d` (damping only scales the symmetric part of C, which
/// `ℓ` does not see). Zero stress, no gravity, nothing near a wall, so the grid velocity after the
/// grid update equals the P2G velocity and all three invariants can be read off the grid.
#[test]
fn u2_transfers_conserve_mass_momentum_and_angular_momentum() {
    for kernel in [Kernel::Quadratic, Kernel::Cubic] {
        // Same particles for every ν_d: P2G does not see ν_d, so every run has the same grid and
        // the same undamped C̃, and C must be skew(C̃) + (1 − ν_d) sym(C̃) (paper Eq. 2).
        let mut undamped: Option<Vec<M>> = None;
        for nu in [0.0, 0.3, 0.7, 1.0] {
            let mut sim = random_transfer_scene(kernel, nu, 11);
            let x0 = sim.state.x.clone();
            let v0 = sim.state.v.clone();
            let (p_before, p_scale) = particle_momentum(&sim);
            let (l_before, l_scale) = particle_angular_momentum(&sim, &x0);
            sim.step(1e-3).unwrap();
            assert_finite(&sim);
            let what = format!("{kernel:?}, ν_d = {nu}");

            // P2G
            let m_p = sim.total_mass();
            let m_g = sim.solver.grid.total_mass();
            assert!(
                (m_g - m_p).abs() <= EXACT * m_p,
                "{what}: grid mass {m_g} vs particle mass {m_p}"
            );
            let ((p_grid, _), (l_grid, _)) = grid_momenta(&sim);
            assert_vec_close(p_grid, p_before, EXACT, p_scale, &format!("{what}: P2G momentum"));
            assert_vec_close(
                l_grid,
                l_before,
                EXACT,
                l_scale,
                &format!("{what}: P2G angular momentum"),
            );

            // G2P + position update x += Δt v
            let (p_after, _) = particle_momentum(&sim);
            let (l_after, _) = particle_angular_momentum(&sim, &sim.state.x);
            assert_vec_close(p_after, p_grid, EXACT, p_scale, &format!("{what}: G2P momentum"));
            assert_vec_close(
                l_after,
                l_grid,
                EXACT,
                l_scale,
                &format!("{what}: G2P angular momentum"),
            );

            // The state did change: positions advanced and the random field was filtered.
            assert!(
                max_displacement(&sim.state.x, &x0) > 1e-5,
                "{what}: nothing moved"
            );
            assert!(
                max_displacement(&sim.state.v, &v0) > 1e-2,
                "{what}: the transfer did not filter v"
            );

            // Damping scales exactly the symmetric part of C.
            let Some(c_undamped) = &undamped else {
                undamped = Some(sim.state.c.clone());
                continue;
            };
            let skew = |c: &M| (*c - c.transpose()) * 0.5;
            let mut sym_left = 0.0;
            for (p, (c, c0)) in sim.state.c.iter().zip(c_undamped).enumerate() {
                let scale = c0.max_abs();
                let e_skew = max_abs_diff(&skew(c), &skew(c0));
                let e_sym = max_abs_diff(&c.symmetric_part(), &(c0.symmetric_part() * (1.0 - nu)));
                assert!(
                    e_skew <= EXACT * scale,
                    "{what}: particle {p}: skew(C) changed by {e_skew:e}"
                );
                assert!(
                    e_sym <= EXACT * scale,
                    "{what}: particle {p}: sym(C) off by {e_sym:e}"
                );
                sym_left += c.symmetric_part().max_abs();
            }
            assert!(
                (nu == 1.0) == (sym_left == 0.0),
                "{what}: symmetric part left: {sym_left:e}"
            );
        }
    }
}

/// U2 with stress on every particle type: the grid forces of all three kinds (type (i) τ, element
/// tangent forces through the vertices, element normal columns through ∇w) sum to zero force and
/// zero torque (spec §3.3), so one step maps the particles' momentum and angular momentum exactly
/// onto the grid, and G2P plus the position update map them back. Element particles are measured
/// at their pre-step positions: their position is enslaved to the vertex barycentre rather than
/// advected (spec §3.8, A14), which is the one deliberate non-conservation (checked in E10).
#[test]
fn u2_stressed_step_conserves_momentum_and_angular_momentum_on_every_particle_type() {
    for (i, nu) in [0.0, 0.5, 1.0].into_iter().enumerate() {
        let mut sim = stressed(&MOVING, NO_GRAVITY, nu, 100 + i as u64);
        let max_r_dev = sim
            .element_r()
            .iter()
            .map(|r| max_abs_diff(r, &M::identity()))
            .fold(0.0, f64::max);
        assert!(
            max_r_dev > 1e-2,
            "the elements are not deformed (max |R̃ − I| = {max_r_dev:e})"
        );
        let start = sim.state.x.clone();
        for step in 0..10 {
            let x_old = sim.state.x.clone();
            let (p_before, p_scale) = particle_momentum(&sim);
            let (l_before, l_scale) = particle_angular_momentum(&sim, &x_old);
            sim.step(5e-4).unwrap();
            assert_finite(&sim);
            let what = format!("ν_d = {nu}, step {step}");
            let ((p_grid, _), (l_grid, _)) = grid_momenta(&sim);
            assert_vec_close(
                p_grid,
                p_before,
                EXACT,
                p_scale,
                &format!("{what}: P2G + forces, momentum"),
            );
            assert_vec_close(
                l_grid,
                l_before,
                EXACT,
                l_scale,
                &format!("{what}: P2G + forces, angular momentum"),
            );
            let mut x_measure = sim.state.x.clone();
            let elem = sim.model.elem.clone();
            x_measure[elem.clone()].copy_from_slice(&x_old[elem]);
            let (p_after, _) = particle_momentum(&sim);
            let (l_after, _) = particle_angular_momentum(&sim, &x_measure);
            assert_vec_close(p_after, p_grid, EXACT, p_scale, &format!("{what}: G2P momentum"));
            assert_vec_close(
                l_after,
                l_grid,
                EXACT,
                l_scale,
                &format!("{what}: G2P angular momentum"),
            );
        }
        assert!(
            max_displacement(&sim.state.x, &start) > 5e-4,
            "ν_d = {nu}: nothing moved"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// U4: the force split is the gradient of the potential
// ---------------------------------------------------------------------------------------------

/// A grid node's integer coordinates.
type Node = [i32; 3];

/// The 27 quadratic-kernel nodes of a particle at `x`: (node, `w_ip`, `∇w_ip`).
fn stencil_of(sim: &Sim, x: V) -> Vec<(Node, f64, V)> {
    let inv_dx = 1.0 / sim.params.dx;
    let st = Stencil::<f64, 3>::quadratic((x - sim.params.lower) * inv_dx, inv_dx);
    let mut out = Vec::with_capacity(27);
    for a in 0..3 {
        for b in 0..3 {
            for c in 0..3 {
                let (w, gw) = st.weight_and_gradient(a, b, c);
                out.push((st.node(a, b, c), w, gw));
            }
        }
    }
    out
}

/// Spec §3.3: `Φ(x̂) = Σ_(i) V⁰ ψ(F^E(x̂)) + Σ_(iii) V⁰ ψ(F̃(x̂))` with grid node `node` moved by
/// `u` and every other node in place (`q = 0`, the state at t^n). Written out from the spec, not
/// through the solver: `F̂^E = (I + u ∇w_ipᵀ) F^E`; element tangent columns from the vertices moved
/// with the grid, `x̂_q = x_q + w_iq u`; normal columns `d̂ = (I + u ∇w_ipᵀ) d`.
fn moved_potential(sim: &Sim, stencils: &[Vec<(Node, f64, V)>], node: Node, u: V) -> f64 {
    let (m, st) = (&sim.model, &sim.state);
    let at = |p: usize| stencils[p].iter().find(|s| s.0 == node).map(|s| (s.1, s.2));
    let deform = |p: usize| at(p).map_or(M::identity(), |(_, gw)| M::identity() + M::outer(u, gw));
    let mut phi = 0.0;
    for (i, f) in st.f.iter().enumerate() {
        let p = m.vol.start + i;
        let mat = &m.volume_materials[m.vol_material[i] as usize];
        phi += m.volume[p] * volume_energy(mat, &(deform(p) * *f));
    }
    let moved_vertex = |k: u32| {
        let q = m.vert.start + k as usize;
        st.x[q] + at(q).map_or(V::zero(), |(w, _)| u * w)
    };
    for (e, el) in m.elements.iter().enumerate() {
        let p = m.elem.start + e;
        let g = deform(p);
        let d = [g * st.d[e][0], g * st.d[e][1]];
        let [a, b, c] = el.vertices;
        let x2 = if el.dim == 2 { moved_vertex(c) } else { V::zero() };
        let ft = element_f(el, moved_vertex(a), moved_vertex(b), x2, &d);
        phi += m.volume[p] * codim_energy(&m.codim_materials[el.material as usize], &ft);
    }
    phi
}

/// U4 (force split, spec §3.3): the solver's three-part grid force (volumetric stress through
/// `∇w`, the in-manifold columns of `P̃` through the mesh vertices, the normal columns through
/// `∇w`) equals `−∂Φ/∂x̂_i` by central differences of the potential written out from the spec
/// ([`moved_potential`]) at every active node, to 1e-6 of the largest force; and the forces sum
/// to zero force and zero torque (exact, 1e-12 of the sums' magnitudes) without gravity or
/// boundaries. The solver's force is read from one step from rest: `f_i = m_i v̂_i / Δt`.
#[test]
fn u4_grid_force_is_minus_the_gradient_of_the_potential() {
    for seed in [11, 12] {
        let mut sim = stressed(&AT_REST, NO_GRAVITY, 0.0, seed);
        let before = stressed(&AT_REST, NO_GRAVITY, 0.0, seed);
        let phi0 = before.elastic_energy();
        assert!(phi0 > 0.0, "the scene carries no elastic energy");
        let n = before.model.num_particles();
        let stencils: Vec<_> = (0..n).map(|p| stencil_of(&before, before.state.x[p])).collect();
        let dt = 1e-4;
        sim.step(dt).unwrap();
        assert_finite(&sim);
        let lower = sim.params.lower;
        let inv_dx = 1.0 / sim.params.dx;
        let forces: HashMap<Node, (V, V)> = grid_nodes(&sim)
            .into_iter()
            .map(|(x, m, v)| {
                let g = (x - lower) * inv_dx;
                (
                    [g.x.round() as i32, g.y.round() as i32, g.z.round() as i32],
                    (x, v * (m / dt)),
                )
            })
            .collect();
        let fmax = forces.values().map(|(_, f)| f.norm()).fold(0.0, f64::max);
        assert!(fmax > 0.0, "no force on the grid");
        let (mut sum, mut sum_scale, mut torque, mut torque_scale) = (V::zero(), 0.0, V::zero(), 0.0);
        for (x, f) in forces.values() {
            sum += *f;
            sum_scale += f.norm();
            torque += x.cross(*f);
            torque_scale += x.norm() * f.norm();
        }
        assert_vec_close(sum, V::zero(), EXACT, sum_scale, "Σ_i f_i");
        assert_vec_close(torque, V::zero(), EXACT, torque_scale, "Σ_i x_i × f_i");
        let mut nodes: Vec<Node> = stencils.iter().flatten().map(|s| s.0).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let eps = 1e-7;
        let mut worst = 0.0_f64;
        for node in &nodes {
            let mut fd = V::zero();
            for k in 0..3 {
                let mut u = V::zero();
                u[k] = eps;
                let plus = moved_potential(&before, &stencils, *node, u);
                let minus = moved_potential(&before, &stencils, *node, -u);
                fd[k] = -(plus - minus) / (2.0 * eps);
            }
            let solver = forces.get(node).map_or(V::zero(), |(_, f)| *f);
            worst = worst.max((solver - fd).norm() / fmax);
        }
        println!(
            "U4 force split, seed {seed}: {} nodes, max |f − f_fd| / max|f| = {worst:.2e}",
            nodes.len()
        );
        assert!(
            worst < 1e-6,
            "seed {seed}: grid force vs −∂Φ/∂x̂: relative error {worst:e} ≥ 1e-6"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// U8: energy of a freely oscillating fibre
// ---------------------------------------------------------------------------------------------

/// A single straight yarn strand, 0.6 m and 48 segments along x, released without gravity from
/// its first free-free axial mode: vertex displacement `u(s) = −a cos(π s / L)`, a stretch that is
/// 10% in the middle and vanishes at the free ends (a smooth mode; a uniform stretch would start
/// a wave front at each end, whose sub-cell content the transfers dissipate). Returns `E_kin + Φ`
/// and `E_kin` at t = 0 and after every step.
fn oscillating_fibre(damping: f64, steps: usize, dt: f64) -> (Vec<f64>, Vec<f64>) {
    let mut sim = new_sim(NO_GRAVITY);
    let (length, segments) = (0.6, 48);
    let x_start = -length / 2.0;
    let curves = straight_curves(
        &[V::new(x_start, 0.0, 0.01)],
        V::new(1.0, 0.0, 0.0),
        length,
        segments,
    )
    .unwrap();
    sim.add_curves(
        &curves,
        curve_material(),
        4.0,
        H / 2.0,
        V::zero(),
        damping,
        EnergyWeight::Split,
    )
    .unwrap();
    let a = 0.1 * length / std::f64::consts::PI; // peak strain a π / L = 10%
    for p in sim.model.vert.clone() {
        let s = sim.state.x[p].x - x_start;
        sim.state.x[p].x -= a * (std::f64::consts::PI * s / length).cos();
    }
    enslave_elements(&mut sim);
    let (mut total, mut kinetic) = (Vec::with_capacity(steps + 1), Vec::with_capacity(steps + 1));
    for k in 0..=steps {
        if k > 0 {
            sim.step(dt).unwrap();
        }
        let ke = sim.kinetic_energy();
        total.push(ke + sim.elastic_energy());
        kinetic.push(ke);
    }
    assert_finite(&sim);
    (total, kinetic)
}

/// The fibre really oscillates: its kinetic energy rises above a third of `e0` and later falls
/// back below a tenth of it (elastic → kinetic → elastic).
fn assert_oscillates(kinetic: &[f64], e0: f64, what: &str) {
    let peak = (0..kinetic.len())
        .max_by(|&a, &b| kinetic[a].total_cmp(&kinetic[b]))
        .unwrap();
    assert!(
        kinetic[peak] > e0 / 3.0,
        "{what}: E_kin never exceeds E0/3 (max {:e} of E0 {e0:e})",
        kinetic[peak]
    );
    assert!(
        kinetic[peak..].iter().any(|&k| k < e0 / 10.0),
        "{what}: E_kin never falls back below E0/10 after its peak"
    );
}

/// U8 (energy): a stretched fibre oscillating freely with ν_d = 0 and a small step (1e-4 s, a
/// tenth of the scene's `dt_max`) keeps `E_kin + Φ` within 2% of its initial value over 1000
/// steps; with ν_d > 0 the total energy never rises by more than 1e-6 of the initial energy from
/// one step to the next. Every run must really oscillate.
#[test]
fn u8_free_fibre_conserves_energy_and_damping_only_dissipates() {
    let dt = 1e-4;
    let (e, ke) = oscillating_fibre(0.0, 1000, dt);
    let e0 = e[0];
    assert!(e0 > 0.0, "the stretched fibre carries no energy");
    assert_oscillates(&ke, e0, "ν_d = 0");
    let drift = e.iter().map(|x| (x - e0).abs()).fold(0.0, f64::max) / e0;
    println!("U8 energy, ν_d = 0: E0 = {e0:.4e} J, max |E − E0| / E0 = {drift:.3e}");
    assert!(drift < 0.02, "ν_d = 0: energy drifts by {drift:e} of E0 (≥ 2%)");
    for nu in [0.5, 1.0] {
        let (e, ke) = oscillating_fibre(nu, 1000, dt);
        assert_oscillates(&ke, e0, &format!("ν_d = {nu}"));
        let rise = e.windows(2).map(|w| w[1] - w[0]).fold(f64::MIN, f64::max) / e0;
        let lost = 1.0 - e[e.len() - 1] / e0;
        println!("U8 energy, ν_d = {nu}: largest one-step change {rise:.2e} E0, lost {lost:.3} of E0");
        assert!(
            rise <= 1e-6,
            "ν_d = {nu}: energy rose by {rise:e} of E0 in one step (> 1e-6)"
        );
    }
}

/// Particles on a regular lattice inside a box, a cloth and strands, all stress-free, with the
/// velocity field `v = v0 + C x` and `C_p = C` on every particle.
fn affine_scene(kernel: Kernel, damping: f64, v0: V, c: M) -> Sim {
    let mut sim = Sim::new(params(NO_GRAVITY, kernel)).unwrap();
    let pts = lattice(V::new(-0.2, -0.1, -0.1), V::new(-0.05, 0.05, 0.05), H / 2.0);
    sim.add_volume(&pts, stressless(), 1000.0, (H / 2.0).powi(3), V::zero(), damping)
        .unwrap();
    let free_cloth = CodimMaterial::Surface(SurfaceParams::from_material(0.0, 0.3, 0.0, 0.0, 0.0).unwrap());
    let mesh = flat_cloth(V::new(0.1, 0.05, 0.0), 0.15, 9);
    sim.add_surface(&mesh, free_cloth, 2.0, H, V::zero(), damping, EnergyWeight::Split)
        .unwrap();
    let free_yarn = CodimMaterial::Curve(CurveParams::from_material(0.0, 0.3, 0.0, 0.0, 0.0).unwrap());
    let curves = strands(
        V::new(0.1, -0.12, 0.0),
        (2, 2),
        0.05,
        V::new(0.3, 0.1, 1.0),
        0.12,
        8,
    );
    sim.add_curves(
        &curves,
        free_yarn,
        4.0,
        H / 2.0,
        V::zero(),
        damping,
        EnergyWeight::Split,
    )
    .unwrap();
    for p in 0..sim.model.num_particles() {
        sim.state.v[p] = v0 + c * sim.state.x[p];
        sim.state.c[p] = c;
    }
    sim
}

/// U2 affine reproduction (ν_d = 0): if every particle carries the same affine field, P2G gives
/// `v_i = v0 + C x_i` on every active node and one step returns every particle's v and C
/// unchanged, for both kernels and all particle types.
#[test]
fn u2_affine_field_is_reproduced_without_damping() {
    let v0 = V::new(0.2, -0.1, 0.05);
    let c = M::from_cols(
        V::new(0.3, -0.7, 0.2),
        V::new(0.9, -0.1, 0.4),
        V::new(-0.5, 0.6, 0.25),
    );
    for kernel in [Kernel::Quadratic, Kernel::Cubic] {
        let mut sim = affine_scene(kernel, 0.0, v0, c);
        let x0 = sim.state.x.clone();
        let v_before = sim.state.v.clone();
        sim.step(1e-3).unwrap();
        assert_finite(&sim);
        let v_scale = v_before.iter().map(|v| v.norm()).fold(0.0, f64::max);
        // P2G reproduces the field on every active node: v_i = v0 + C x_i (no gravity, no stress)
        let nodes = grid_nodes(&sim);
        assert!(nodes.len() > 100, "{kernel:?}: only {} active nodes", nodes.len());
        for (x, _, v) in nodes {
            let want = v0 + c * x;
            let dv = (v - want).norm();
            assert!(
                dv <= EXACT * (v0.norm() + c.max_abs() * x.norm()),
                "{kernel:?}: node at {x:?} has v = {v:?}, the field gives {want:?}"
            );
        }
        for (p, (v, vb)) in sim.state.v.iter().zip(&v_before).enumerate() {
            let dv = (*v - *vb).norm();
            assert!(
                dv <= EXACT * v_scale,
                "{kernel:?}: particle {p} velocity changed by {dv:e}"
            );
            let dc = max_abs_diff(&sim.state.c[p], &c);
            assert!(
                dc <= EXACT * c.max_abs(),
                "{kernel:?}: particle {p} C changed by {dc:e}"
            );
        }
        // Types (i) and (ii) advected by Δt v.
        for p in 0..sim.model.vert.end {
            let expect = x0[p] + v_before[p] * 1e-3;
            assert!(
                (sim.state.x[p] - expect).norm() <= 1e-15,
                "{kernel:?}: particle {p} not advected by Δt v"
            );
        }
        assert!(
            max_displacement(&sim.state.x, &x0) > 1e-4,
            "{kernel:?}: nothing moved"
        );
    }
}

/// U2: with ν_d = 1 (RPIC) one G2P turns a pure-shear affine field's C into zero and keeps a rigid
/// rotation's C; ν_d = 1/2 halves the shear. Velocities are those of the affine field in each case.
#[test]
fn u2_rpic_damping_kills_shear_and_keeps_rotation() {
    let v0 = V::new(-0.1, 0.05, 0.15);
    let shear = M::from_rows(
        V::new(0.0, 0.8, -0.3),
        V::new(0.8, 0.2, 0.5),
        V::new(-0.3, 0.5, -0.2),
    );
    let rotation = M::skew(V::new(0.7, -1.1, 0.4));
    for (nu, c, expect) in [
        (1.0, shear, M::zero()),
        (0.5, shear, shear * 0.5),
        (1.0, rotation, rotation),
    ] {
        let mut sim = affine_scene(Kernel::Quadratic, nu, v0, c);
        let x0 = sim.state.x.clone();
        let v_before = sim.state.v.clone();
        sim.step(1e-3).unwrap();
        assert_finite(&sim);
        let v_scale = v_before.iter().map(|v| v.norm()).fold(0.0, f64::max);
        for (p, (v, vb)) in sim.state.v.iter().zip(&v_before).enumerate() {
            let dv = (*v - *vb).norm();
            assert!(
                dv <= EXACT * v_scale,
                "ν_d = {nu}: particle {p} velocity changed by {dv:e}"
            );
            let dc = max_abs_diff(&sim.state.c[p], &expect);
            assert!(
                dc <= EXACT * c.max_abs(),
                "ν_d = {nu}, C = {c:?}: particle {p} C off by {dc:e}"
            );
        }
        assert!(max_displacement(&sim.state.x, &x0) > 1e-4, "nothing moved");
    }
}

// ---------------------------------------------------------------------------------------------
// U8: whole-step invariants
// ---------------------------------------------------------------------------------------------

/// Every material in its rest configuration (a cloth, strands, sand and an elastic block), with an
/// optional uniform velocity.
fn rest_scene(gravity: V, velocity: V) -> Sim {
    let mut sim = new_sim(gravity);
    let sand = lattice(V::new(-0.3, -0.2, -0.1), V::new(-0.18, -0.08, 0.02), H / 2.0);
    let vol = (H / 2.0).powi(3);
    sim.add_volume(
        &sand,
        VolumeMaterial::Sand(SandParams::default()),
        2200.0,
        vol,
        velocity,
        0.0,
    )
    .unwrap();
    let block = lattice(V::new(-0.3, 0.0, -0.1), V::new(-0.18, 0.12, 0.02), H / 2.0);
    sim.add_volume(&block, jelly(2000.0), 1000.0, vol, velocity, 0.3)
        .unwrap();
    let mesh = flat_cloth(V::new(0.1, 0.1, 0.0), 0.25, 16);
    sim.add_surface(
        &mesh,
        cloth_material(100.0, 800.0, 20.0),
        2.0,
        H,
        velocity,
        0.5,
        EnergyWeight::Split,
    )
    .unwrap();
    let curves = strands(
        V::new(0.05, -0.15, -0.05),
        (3, 3),
        0.04,
        V::new(1.0, 0.2, 0.3),
        0.18,
        12,
    );
    sim.add_curves(
        &curves,
        curve_material(),
        4.0,
        H / 2.0,
        velocity,
        0.0,
        EnergyWeight::Split,
    )
    .unwrap();
    sim
}

/// U8: rest configuration, zero gravity ⇒ nothing moves (|v| ≤ 1e-12), for every material.
#[test]
fn u8_rest_without_gravity_stays_at_rest() {
    let mut sim = rest_scene(NO_GRAVITY, V::zero());
    let x0 = sim.state.x.clone();
    for _ in 0..20 {
        sim.step(5e-4).unwrap();
        assert_finite(&sim);
        let vmax = sim.state.v.iter().map(|v| v.norm()).fold(0.0, f64::max);
        assert!(vmax <= 1e-12, "a particle at rest reached {vmax:e} m/s");
    }
    assert!(
        max_displacement(&sim.state.x, &x0) <= 1e-14,
        "a particle at rest moved"
    );
    // the same scene under gravity does move: the check above is not vacuous
    let mut falling = rest_scene(GRAVITY, V::zero());
    falling.step(5e-4).unwrap();
    assert!(falling.state.v.iter().all(|v| v.y < -1e-3), "gravity did not act");
}

/// U8: uniform translation, no gravity, no colliders ⇒ exact translation, no deformation
/// (element R̃ = I, volumetric F^E = I), C stays zero.
#[test]
fn u8_uniform_translation_is_exact() {
    let v0 = V::new(0.4, -0.3, 0.2);
    let mut sim = rest_scene(NO_GRAVITY, v0);
    let x0 = sim.state.x.clone();
    let dt = 1e-3;
    let steps = 40;
    for _ in 0..steps {
        sim.step(dt).unwrap();
        assert_finite(&sim);
    }
    let t = sim.state.time;
    assert!((t - steps as f64 * dt).abs() < 1e-15);
    for (p, x_start) in x0.iter().enumerate() {
        let dv = (sim.state.v[p] - v0).norm();
        assert!(dv <= EXACT * v0.norm(), "particle {p}: velocity off by {dv:e}");
        let dx = (sim.state.x[p] - (*x_start + v0 * t)).norm();
        assert!(
            dx <= EXACT * (v0 * t).norm(),
            "particle {p}: position off the translation by {dx:e}"
        );
        assert!(
            sim.state.c[p].max_abs() <= 1e-10,
            "particle {p}: C = {:?}",
            sim.state.c[p]
        );
    }
    for (e, r) in sim.element_r().iter().enumerate() {
        let dev = max_abs_diff(r, &M::identity());
        assert!(dev <= 1e-12, "element {e}: |R̃ − I| = {dev:e}");
    }
    for (i, f) in sim.state.f.iter().enumerate() {
        let dev = max_abs_diff(f, &M::identity());
        assert!(dev <= 1e-12, "volumetric particle {i}: |F^E − I| = {dev:e}");
    }
    assert!(max_displacement(&sim.state.x, &x0) > 0.01, "nothing moved");
}

/// U8: without boundaries, the total momentum changes per step by exactly `Δt Σ m g` (internal
/// forces sum to zero; enslaving touches no velocity), while the internal forces visibly act.
#[test]
fn u8_momentum_changes_by_the_gravity_impulse_only() {
    let mut sim = stressed(&MOVING, GRAVITY, 0.2, 7);
    let total_mass = sim.total_mass();
    let v_start = sim.state.v.clone();
    let dt = 5e-4;
    for step in 0..30 {
        let (p_before, scale) = particle_momentum(&sim);
        sim.step(dt).unwrap();
        assert_finite(&sim);
        let (p_after, _) = particle_momentum(&sim);
        let impulse = GRAVITY * (dt * total_mass);
        let scale = scale + impulse.norm();
        assert_vec_close(
            p_after,
            p_before + impulse,
            EXACT,
            scale,
            &format!("step {step}: momentum"),
        );
        let ((p_grid, _), _) = grid_momenta(&sim);
        assert_vec_close(
            p_grid,
            p_before + impulse,
            EXACT,
            scale,
            &format!("step {step}: grid momentum"),
        );
    }
    // Not free fall: internal forces and transfers changed velocities beyond g t.
    let t = sim.state.time;
    let dev = (0..sim.model.num_particles())
        .map(|p| (sim.state.v[p] - (v_start[p] + GRAVITY * t)).norm())
        .fold(0.0, f64::max);
    assert!(
        dev > 1e-2,
        "velocities follow free fall ({dev:e}): no internal force acted"
    );
}

/// U8 with a boundary: the total momentum changes per step by exactly `Δt Σ m g` plus the
/// collider's impulse on the grid, and that impulse is the spec's §3.6 "separate" response. The
/// same step is run without the collider: P2G and the forces do not depend on colliders, so the
/// two grids must be bitwise equal at every node outside the sphere, and at the nodes inside it
/// the response may only remove approaching normal velocity (`n·Δv ≥ 0`, `n·v̂ ≥ 0` after) and
/// take away at most `μ_b n·Δv` of the tangential velocity (Coulomb). The particles then carry
/// exactly the grid's momentum: `p_before + Δt Σ m g + Σ_i m_i Δv_i`.
#[test]
fn u8_momentum_changes_by_gravity_and_the_boundary_impulse() {
    let mut sim = cloth_on_sphere(H, H / 2.0, 16);
    let total_mass = sim.total_mass();
    let (mu, lower, inv_dx) = (sim.colliders[0].friction(), sim.params.lower, 1.0 / sim.params.dx);
    let key = |x: V| {
        let g = (x - lower) * inv_dx;
        [g.x.round() as i64, g.y.round() as i64, g.z.round() as i64]
    };
    let dt = 5e-4;
    let (mut largest_impulse, mut pushed) = (0.0f64, 0usize);
    for step in 0..60 {
        let (p_before, scale) = particle_momentum(&sim);
        let mut free = sim.clone();
        free.colliders.clear();
        free.step(dt).unwrap();
        sim.step(dt).unwrap();
        assert_finite(&sim);
        let free_nodes: HashMap<[i64; 3], V> = grid_nodes(&free)
            .into_iter()
            .map(|(x, _, v)| (key(x), v))
            .collect();
        let mut impulse = V::zero();
        for (x, m, v) in grid_nodes(&sim) {
            let v_free = free_nodes[&key(x)];
            let dv = v - v_free;
            match sim.colliders[0].query(x) {
                None => assert_eq!(
                    v, v_free,
                    "step {step}: node {x:?} outside the sphere was changed"
                ),
                Some(ct) => {
                    let vs = v_free.norm() + v.norm();
                    let dn = ct.normal.dot(dv);
                    let dt_norm = (dv - ct.normal * dn).norm();
                    assert!(
                        dn >= -1e-12 * vs,
                        "step {step}: the sphere pulled node {x:?} inward ({dn:e})"
                    );
                    assert!(
                        ct.normal.dot(v) >= -1e-12 * vs,
                        "step {step}: node {x:?} still approaches"
                    );
                    assert!(
                        dt_norm <= mu * dn + 1e-12 * vs,
                        "step {step}: friction beyond μ_b at {x:?}"
                    );
                    if dn > 0.0 {
                        pushed += 1;
                    }
                    impulse += dv * m;
                }
            }
        }
        largest_impulse = largest_impulse.max(impulse.norm());
        let gravity = GRAVITY * (dt * total_mass);
        let scale = scale + gravity.norm() + impulse.norm();
        let (p_after, _) = particle_momentum(&sim);
        assert_vec_close(
            p_after,
            p_before + gravity + impulse,
            EXACT,
            scale,
            &format!("step {step}: momentum"),
        );
    }
    println!(
        "U8 boundary impulse: largest {largest_impulse:.3e} N·s per step (gravity {:.3e}), {pushed} node pushes",
        9.81 * dt * total_mass
    );
    // the sphere did push: at least 1% of the gravity impulse of a step
    assert!(
        largest_impulse > 0.01 * 9.81 * dt * total_mass && pushed > 0,
        "the collider never acted (largest impulse {largest_impulse:e} N·s)"
    );
}

/// A cloth dropped onto a frictional sphere, and strands dropped next to it onto the same sphere.
fn cloth_on_sphere(thickness: f64, radius: f64, cloth_n: usize) -> Sim {
    let mut sim = new_sim(GRAVITY);
    let sphere = Collider::new(Sphere::new(0.12).unwrap(), V::new(0.0, -0.1, 0.0), M::identity())
        .unwrap()
        .with_mode(BoundaryMode::Separate)
        .with_friction(0.5)
        .unwrap();
    sim.add_collider(sphere).unwrap();
    let mesh = flat_cloth(V::new(-0.02, 0.04, 0.03), 0.3, cloth_n);
    sim.add_surface(
        &mesh,
        cloth_material(200.0, 800.0, 25.0),
        2.0,
        thickness,
        V::new(0.0, -1.0, 0.0),
        0.3,
        EnergyWeight::Split,
    )
    .unwrap();
    let curves = strands(
        V::new(0.05, 0.1, -0.02),
        (3, 2),
        0.05,
        V::new(0.2, 0.1, 1.0),
        0.15,
        9,
    );
    sim.add_curves(
        &curves,
        curve_material(),
        4.0,
        radius,
        V::new(0.0, -1.0, 0.0),
        0.1,
        EnergyWeight::Split,
    )
    .unwrap();
    sim
}

/// U8 thickness invariance: scaling the cloth thickness (and the strand radius) changes no
/// trajectory, to 1e-10 relative, through contact with a collider. The scale factors are not
/// powers of two, so every mass and force is rounded differently.
#[test]
fn u8_thickness_does_not_change_trajectories() {
    let mut a = cloth_on_sphere(H, H / 2.0, 20);
    // Cloth volume ∝ τ, strand volume ∝ r²: both scale by 3, so every mass and force does.
    let mut b = cloth_on_sphere(3.0 * H, 3f64.sqrt() * H / 2.0, 20);
    assert!(
        (b.total_mass() / a.total_mass() - 3.0).abs() < 1e-12,
        "the masses did not scale by 3"
    );
    let x0 = a.state.x.clone();
    for step in 0..80 {
        a.step(5e-4).unwrap();
        b.step(5e-4).unwrap();
        assert_finite(&a);
        assert_finite(&b);
        let x_scale = a.state.x.iter().map(|x| x.norm()).fold(0.0, f64::max);
        let v_scale = a.state.v.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let dx = max_displacement(&a.state.x, &b.state.x);
        let dv = max_displacement(&a.state.v, &b.state.v);
        assert!(dx <= 1e-10 * x_scale, "step {step}: positions differ by {dx:e}");
        assert!(dv <= 1e-10 * v_scale, "step {step}: velocities differ by {dv:e}");
    }
    assert!(
        a.counters().slide + a.counters().tension > 0,
        "no contact happened"
    );
    assert!(max_displacement(&a.state.x, &x0) > 0.02, "nothing moved");
}

/// U8 mass conservation: grid total mass equals particle total mass after every step, in a scene
/// with every particle type, gravity and a collider.
#[test]
fn u8_grid_mass_equals_particle_mass_every_step() {
    let mut sim = cloth_on_sphere(H, H / 2.0, 16);
    let sand = lattice(V::new(-0.25, -0.1, -0.1), V::new(-0.15, 0.0, 0.0), H / 2.0);
    sim.add_volume(
        &sand,
        VolumeMaterial::Sand(SandParams::default()),
        2200.0,
        (H / 2.0).powi(3),
        V::zero(),
        0.0,
    )
    .unwrap();
    let m_p = sim.total_mass();
    let x0 = sim.state.x.clone();
    for step in 0..40 {
        sim.step(5e-4).unwrap();
        assert_finite(&sim);
        assert_eq!(sim.total_mass(), m_p, "particle mass changed");
        let m_g = sim.solver.grid.total_mass();
        assert!(
            (m_g - m_p).abs() <= EXACT * m_p,
            "step {step}: grid mass {m_g} vs particle mass {m_p}"
        );
    }
    assert!(max_displacement(&sim.state.x, &x0) > 0.01, "nothing moved");
}

/// `∇v̂ = Σ_i v̂_i ∇w_ipᵀ` at `x` from the grid of the last step (quadratic kernel, spec §3.7).
fn grid_velocity_gradient(sim: &Sim, x: V) -> M {
    let g = &sim.solver.grid;
    let mut gv = M::zero();
    for (node, _, gw) in stencil_of(sim, x) {
        let n = node.map(|i| i as u32);
        let blk = g
            .find(block_key([n[0] >> 2, n[1] >> 2, n[2] >> 2]))
            .expect("stencil node not active");
        let l = local_index((n[0] & 3) as usize, (n[1] & 3) as usize, (n[2] & 3) as usize);
        gv += M::outer(g.nodes[blk as usize * BLOCK_NODES + l].mv, gw);
    }
    gv
}

/// U8: the return map never changes the tangent columns. This solver stores only the normal
/// columns `d` and rebuilds the tangent ones from the vertices, so the check rebuilds each
/// element's trial `F̃ = [Ds(x^{n+1}) Dm⁻¹ | (I + Δt ∇v̂(x_p^n)) d^n]` from the step's grid
/// (spec §3.9), runs the return map on it, and asserts that (a) the projected `Q R̃` has the trial's
/// tangent columns and (b) the solver stored exactly the projected normal columns. The scene makes
/// the return map slide, separate and stick (cloth and yarn hitting a frictional sphere).
#[test]
fn u8_return_map_never_changes_tangent_columns() {
    let mut sim = cloth_on_sphere(H, H / 2.0, 16);
    let dt = 5e-4;
    let mut projected = 0usize;
    for step in 0..70 {
        let x_old = sim.state.x.clone();
        let d_old = sim.state.d.clone();
        sim.step(dt).unwrap();
        assert_finite(&sim);
        let (vs, es) = (sim.model.vert.start, sim.model.elem.start);
        for (e, el) in sim.model.elements.iter().enumerate() {
            let gv = grid_velocity_gradient(&sim, x_old[es + e]);
            let g = M::identity() + gv * dt;
            let d_trial = [g * d_old[e][0], g * d_old[e][1]];
            let xs = |k: usize| sim.state.x[vs + el.vertices[k] as usize];
            let trial = element_f(el, xs(0), xs(1), xs(2), &d_trial);
            let (fnew, _) = codim_return_map(&sim.model.codim_materials[el.material as usize], &trial);
            let m = el.dim as usize;
            for j in 0..m {
                let (a, b) = (fnew.col(j), trial.col(j));
                let err = (a - b).norm();
                assert!(
                    err <= 1e-14 * b.norm(),
                    "step {step}, element {e}: tangent column {j} moved by {err:e}"
                );
            }
            for j in m..3 {
                let stored = sim.state.d[e][j - m];
                let err = (stored - fnew.col(j)).norm();
                assert!(
                    err <= 1e-12 * fnew.col(j).norm().max(1.0),
                    "step {step}, element {e}: stored normal column {j} differs from the return map by {err:e}"
                );
                if (fnew.col(j) - trial.col(j)).norm() > 1e-9 {
                    projected += 1;
                }
            }
        }
    }
    let c = sim.counters();

    assert!(
        c.slide > 0 && c.tension > 0,
        "the return map was not exercised: {c:?}"
    );
    assert!(projected > 100, "only {projected} normal columns were projected");
}

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

// ---------------------------------------------------------------------------------------------
// E1: free-falling flat cloth
// ---------------------------------------------------------------------------------------------

/// E1: a flat 32×32-vertex cloth with no contact falls under gravity for 200 steps: every
/// particle's velocity is `v0 + g t` (1e-9 relative), `‖R̃ − I‖_max < 1e-8`, shape unchanged.
#[test]
fn e1_free_falling_cloth_stays_rigid() {
    let mut sim = new_sim(GRAVITY);
    let v0 = V::new(0.1, 0.3, -0.08);
    let mesh = flat_cloth(V::new(0.0, 0.25, 0.0), 31.0 * H, 31);
    assert_eq!(mesh.num_vertices(), 32 * 32);
    sim.add_surface(
        &mesh,
        CodimMaterial::Surface(SurfaceParams::from_material(400.0, 0.3, 0.0, 800.0, 0.0).unwrap()),
        2.0,
        H,
        v0,
        0.8,
        EnergyWeight::Split,
    )
    .unwrap();
    let x0 = sim.state.x.clone();
    let verts = sim.model.vert.clone();
    let dt = 1e-3;
    for _ in 0..200 {
        sim.step(dt).unwrap();
    }
    assert_finite(&sim);
    let t = sim.state.time;
    assert!((t - 0.2).abs() < 1e-12);
    let expect = v0 + GRAVITY * t;
    for (p, v) in sim.state.v.iter().enumerate() {
        let err = (*v - expect).norm();
        assert!(
            err <= 1e-9 * expect.norm(),
            "particle {p}: v = {v:?}, expected {expect:?}"
        );
    }
    let r_dev = sim
        .element_r()
        .iter()
        .map(|r| max_abs_diff(r, &M::identity()))
        .fold(0.0, f64::max);
    assert!(r_dev < 1e-8, "‖R̃ − I‖_max = {r_dev:e}");
    // shape unchanged: every vertex keeps its offset from vertex 0; the whole moved by v0 t + g t²/2
    let (o_new, o_old) = (sim.state.x[verts.start], x0[verts.start]);
    for p in verts.clone() {
        let err = ((sim.state.x[p] - o_new) - (x0[p] - o_old)).norm();
        assert!(err <= 1e-9 * 31.0 * H, "vertex {p}: shape changed by {err:e}");
    }
    // symplectic Euler: x_n = x_0 + v0 t + g Δt² n(n+1)/2
    let drop = o_new - o_old;
    let n = 200.0;
    let expect_drop = v0 * t + GRAVITY * (dt * dt * n * (n + 1.0) / 2.0);
    assert!(
        (drop - expect_drop).norm() <= 1e-9 * expect_drop.norm(),
        "drop {drop:?} vs {expect_drop:?}"
    );
    assert!(drop.norm() > 0.1, "the cloth did not fall");
}

// ---------------------------------------------------------------------------------------------
// E10: spinning disc, damping
// ---------------------------------------------------------------------------------------------

/// A flat disc of radius `r` (normal +y) cut from a grid mesh with edges ≈ h.
fn disc(center: V, r: f64) -> TriMesh {
    let n = (2.0 * r / H).ceil() as usize + 2;
    let grid = flat_cloth(center, n as f64 * H, n);
    let (verts, faces) = grid.into_parts();
    let keep: Vec<[u32; 3]> = faces
        .into_iter()
        .filter(|f| {
            let c = (verts[f[0] as usize] + verts[f[1] as usize] + verts[f[2] as usize]) * (1.0 / 3.0);
            (c - center).norm() <= r
        })
        .collect();
    let mut map = vec![u32::MAX; verts.len()];
    let mut new_verts = Vec::new();
    let faces: Vec<[u32; 3]> = keep
        .iter()
        .map(|f| {
            f.map(|v| {
                if map[v as usize] == u32::MAX {
                    map[v as usize] = new_verts.len() as u32;
                    new_verts.push(verts[v as usize]);
                }
                map[v as usize]
            })
        })
        .collect();
    TriMesh::from_u32_faces(new_verts, faces).unwrap()
}

struct DiscRun {
    /// Relative linear-momentum error, max over the run.
    momentum_err: f64,
    /// Relative angular-momentum drift, max over the run.
    angular_drift: f64,
    /// Peak-to-peak of the mean vertex radius over the first and the last quarter of the run, m.
    breathing_early: f64,
    breathing_late: f64,
    /// Rotation angle of a rim vertex over the run, rad (proves it spun).
    turned: f64,
}

/// A cloth disc in free flight (no gravity, far from walls), spinning rigidly about its normal at
/// ω with a superposed in-plane breathing velocity, for `duration` seconds.
fn spin_disc(damping: f64, duration: f64, enslave: bool) -> DiscRun {
    let mut sim = new_sim(NO_GRAVITY);
    sim.params.enslave_elements = enslave;
    let centre = V::new(-0.05, 0.02, 0.01);
    let mesh = disc(centre, 0.15);
    let mat = CodimMaterial::Surface(SurfaceParams::from_material(400.0, 0.3, 0.0, 800.0, 0.0).unwrap());
    sim.add_surface(&mesh, mat, 2.0, H, V::zero(), damping, EnergyWeight::Split)
        .unwrap();
    let n = sim.model.num_particles();
    // centre of mass (the rigid motion is about it, so the momentum is v_c Σ m)
    let total = sim.total_mass();
    let com = (0..n).fold(V::zero(), |acc, p| acc + sim.state.x[p] * sim.model.mass[p]) * (1.0 / total);
    let omega = V::new(0.0, 5.0, 0.0);
    let v_c = V::new(0.04, 0.01, -0.03);
    let breathe = 1.0; // 1/s, in-plane dilation rate
    let in_plane = M::identity() - M::outer(V::new(0.0, 1.0, 0.0), V::new(0.0, 1.0, 0.0));
    let c = M::skew(omega) + in_plane * breathe;
    for p in 0..n {
        let r = sim.state.x[p] - com;
        sim.state.v[p] = v_c + c * r;
        sim.state.c[p] = c;
    }
    let (p0, p_scale) = particle_momentum(&sim);
    let am = |s: &Sim| {
        // about the moving centre of mass: Σ m (x − x_c) × v + ℓ(C 𝔇) (equals the origin moment
        // minus x_c × P, which is constant when P is)
        let xc = (0..n).fold(V::zero(), |acc, p| acc + s.state.x[p] * s.model.mass[p]) * (1.0 / total);
        let rel: Vec<V> = s.state.x.iter().map(|x| *x - xc).collect();
        particle_angular_momentum(s, &rel).0
    };
    let l0 = am(&sim);
    let rim = sim.model.vert.start
        + (0..sim.model.vert.len())
            .max_by(|&a, &b| {
                let ra = (sim.state.x[sim.model.vert.start + a] - com).norm();
                let rb = (sim.state.x[sim.model.vert.start + b] - com).norm();
                ra.total_cmp(&rb)
            })
            .unwrap();
    let rim0 = sim.state.x[rim] - com;
    let mean_radius = |s: &Sim| {
        let xc = (0..n).fold(V::zero(), |acc, p| acc + s.state.x[p] * s.model.mass[p]) * (1.0 / total);
        let vr = s.model.vert.clone();
        let (mut acc, mut m) = (0.0, 0.0);
        for p in vr {
            acc += s.model.mass[p] * (s.state.x[p] - xc).norm();
            m += s.model.mass[p];
        }
        acc / m
    };
    let dt = 5e-4;
    let steps = (duration / dt).round() as usize;
    let mut radii = Vec::with_capacity(steps);
    let (mut momentum_err, mut angular_drift) = (0.0f64, 0.0f64);
    let mut angle = 0.0;
    let mut prev = rim0;
    for _ in 0..steps {
        sim.step(dt).unwrap();
        let (p, _) = particle_momentum(&sim);
        momentum_err = momentum_err.max((p - p0).norm() / p_scale);
        angular_drift = angular_drift.max((am(&sim) - l0).norm() / l0.norm());
        radii.push(mean_radius(&sim));
        let xc = (0..n).fold(V::zero(), |acc, q| acc + sim.state.x[q] * sim.model.mass[q]) * (1.0 / total);
        let now = sim.state.x[rim] - xc;
        angle += prev.cross(now).y.atan2(prev.dot(now));
        prev = now;
    }
    assert_finite(&sim);
    let q = steps / 4;
    let p2p =
        |s: &[f64]| s.iter().cloned().fold(f64::MIN, f64::max) - s.iter().cloned().fold(f64::MAX, f64::min);
    DiscRun {
        momentum_err,
        angular_drift,
        breathing_early: p2p(&radii[..q]),
        breathing_late: p2p(&radii[steps - q..]),
        turned: angle.abs(),
    }
}

/// E10: a rigidly spinning cloth disc in free flight, for ν_d ∈ {0, 0.5, 1}: linear momentum is
/// exact, angular momentum drifts < 1e-3 relative over 1 s, and an in-plane breathing mode decays
/// faster for larger ν_d.
///
/// With element-position enslaving switched off (the spec's test option,
/// `SolverParams::enslave_elements`), angular momentum is conserved to 1e-10 relative for every
/// ν_d.
#[test]
fn e10_spinning_disc_conserves_momentum_and_damping_kills_breathing() {
    for nu in [0.0, 0.5, 1.0] {
        let free = spin_disc(nu, 1.0, false);
        assert!(free.turned > 4.0 && free.momentum_err <= EXACT);
        assert!(
            free.angular_drift < 1e-10,
            "ν_d = {nu}, no enslaving: angular momentum drift {:e}",
            free.angular_drift
        );
    }
    let runs: Vec<(f64, DiscRun)> = [0.0, 0.5, 1.0]
        .into_iter()
        .map(|nu| (nu, spin_disc(nu, 1.0, true)))
        .collect();
    for (nu, r) in &runs {
        assert!(
            r.momentum_err <= EXACT,
            "ν_d = {nu}: linear momentum error {:e}",
            r.momentum_err
        );
        assert!(
            r.angular_drift < 1e-3,
            "ν_d = {nu}: angular momentum drift {:e}",
            r.angular_drift
        );
        assert!(
            r.turned > 4.0,
            "ν_d = {nu}: the disc turned only {} rad",
            r.turned
        );
        assert!(
            r.breathing_early > 1e-4,
            "ν_d = {nu}: no breathing was excited ({:e} m)",
            r.breathing_early
        );
    }
    let late: Vec<f64> = runs.iter().map(|(_, r)| r.breathing_late).collect();
    let early: Vec<f64> = runs.iter().map(|(_, r)| r.breathing_early).collect();
    assert!(
        late[0] > late[1] && late[1] > late[2],
        "late breathing amplitude must fall with ν_d: {late:?} (early {early:?})"
    );
    let decay: Vec<f64> = late.iter().zip(&early).map(|(l, e)| l / e).collect();
    assert!(
        decay[0] > decay[1] && decay[1] > decay[2],
        "decay ratios late/early must fall with ν_d: {decay:?}"
    );
    assert!(decay[2] < 0.5, "RPIC did not damp the breathing mode: {decay:?}");
}

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
