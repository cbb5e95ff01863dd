//! U4: the grid force is minus the gradient of the potential.

use super::*;

// ---------------------------------------------------------------------------------------------
// U4: the force split is the gradient of the potential
// ---------------------------------------------------------------------------------------------

/// A grid node's integer coordinates.
pub(crate) type Node = [i32; 3];

/// The 27 quadratic-kernel nodes of a particle at `x`: (node, `w_ip`, `∇w_ip`).
pub(crate) fn stencil_of(sim: &Sim, x: V) -> Vec<(Node, f64, V)> {
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
