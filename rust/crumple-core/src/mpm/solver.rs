//! One explicit MPM step in the exact order of spec §3, one function per
//! stage: `bin` (sparse grid), `stress` (pre-pass, §3.3), `p2g` (§3.4),
//! `grid_update` (§3.5) with `boundary` (§3.6), `g2p` (§3.7), `advect`
//! (§3.8–3.9) and `plasticity` (§3.10, §5). The GPU backend mirrors these
//! stages one WGSL file each.
//!
//! Determinism: every parallel loop writes disjoint outputs; the only
//! scatter (P2G) is coloured (see [`super::grid`]); reductions are ordered.
//! No floating-point atomics.

use rayon::prelude::*;

use crate::collide::{Collider, boundary_response};
use crate::error::{Error, Result};
use crate::math::{Mat3, Real, Vec3};

use super::grid::{BLOCK_NODES, NO_BLOCK, NodesPtr, SparseGrid, block_key};
use super::kernel::Stencil;
use super::material::{codim_piola, codim_return_map, volume_kirchhoff, volume_plasticity};
use super::model::{Model, State};
use super::params::{Kernel, OutOfDomain, SolverParams, Transfer};

/// A kinematically driven mesh vertex (spec §9 A17): its position is
/// `x0 + v (t − t0)`, overriding the simulation after G2P.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pin {
    /// Index into the vertex range.
    pub vertex: u32,
    /// Target position at `t0`, m.
    pub x0: Vec3<f64>,
    /// Target velocity, m/s.
    pub v: Vec3<f64>,
    /// Time of `x0`, s.
    pub t0: f64,
}

impl Pin {
    /// Target position at time `t`.
    pub fn position(&self, t: f64) -> Vec3<f64> {
        self.x0 + self.v * (t - self.t0)
    }
}

/// Counts of return-map events since the simulation started (spec §5.5 asks
/// to count inverted and degenerate elements: a high rate means Δt is too large).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Element-steps in the compressive stick/slide regime that needed a projection.
    pub slide: u64,
    /// Element-steps in separation (tension) regime.
    pub tension: u64,
    /// Element-steps with an inverted normal (the paper's "red" case).
    pub inverted: u64,
    /// Element-steps skipped as degenerate.
    pub degenerate: u64,
    /// Element-steps computed in total.
    pub element_steps: u64,
}

/// Wall-clock seconds spent in each stage since the simulation started
/// (for profiling; measured with `Instant`, not part of the physics).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub bin: f64,
    pub stress: f64,
    pub p2g: f64,
    pub grid_update: f64,
    pub g2p: f64,
    pub advect: f64,
    pub plasticity: f64,
}

/// Scratch buffers and the grid; owns no simulation state.
#[derive(Clone, Debug, Default)]
pub struct Solver<T> {
    pub grid: SparseGrid<T>,
    keys: Vec<u32>,
    /// Per particle: Kirchhoff-like stress that acts through `∇w`: `V τ` for
    /// type (i), `S_p` for type (iii), zero for vertices (spec §3.3).
    stress: Vec<Mat3<T>>,
    /// Per particle: mesh force `f_q` on type (ii) vertices, zero otherwise.
    force: Vec<Vec3<T>>,
    /// Per element: corner forces from the tangent columns of P̃ (spec §3.3 part 2).
    elem_forces: Vec<[Vec3<T>; 3]>,
    /// Per particle: velocity gradient `∇v̂_p` from G2P (spec §3.7).
    grad_v: Vec<Mat3<T>>,
    /// Per element: return-map event of the last step (for the counters).
    events: Vec<u8>,
    pub counters: Counters,
    pub times: StageTimes,
}

/// Grid geometry in solver precision.
#[derive(Clone, Copy, Debug)]
struct GridFrame<T> {
    lower: Vec3<T>,
    dx: T,
    inv_dx: T,
    nodes: [usize; 3],
}

impl<T: Real> GridFrame<T> {
    fn new(p: &SolverParams) -> Self {
        Self {
            lower: p.lower.cast(),
            dx: T::from_f64(p.dx),
            inv_dx: T::from_f64(1.0 / p.dx),
            nodes: p.nodes_per_axis(),
        }
    }
    #[inline]
    fn grid_units(&self, x: Vec3<T>) -> Vec3<T> {
        (x - self.lower) * self.inv_dx
    }
}

/// Where particles may be, in grid units: far enough inside the domain that
/// the widest stencil (cubic: ξ−1 .. ξ+2) fits and the outermost wall nodes
/// remain beyond it. One rule for the solver's domain check (`bin`) and for
/// deleting escaped particles ([`OutOfDomain::Remove`]); build it once per
/// step, not per particle.
#[derive(Clone, Copy, Debug)]
pub struct ParticleBounds<T> {
    frame: GridFrame<T>,
    lo: T,
    hi: [T; 3],
}

impl<T: Real> ParticleBounds<T> {
    pub fn new(params: &SolverParams) -> Self {
        let frame = GridFrame::new(params);
        let hi = frame.nodes.map(|n| T::from_f64(n as f64 - 2.0 - 1e-3));
        Self {
            frame,
            lo: T::ONE,
            hi,
        }
    }

    /// Whether position `x` (m) is allowed.
    #[inline]
    pub fn contains(&self, x: Vec3<T>) -> bool {
        let xi = self.frame.grid_units(x);
        (0..3).all(|a| xi[a] >= self.lo && xi[a] <= self.hi[a])
    }
}

/// The error for particle `bad` found outside the domain (or non-finite)
/// by the binning step; shared by the CPU and GPU backends.
pub(crate) fn domain_error<T: Real>(state: &State<T>, params: &SolverParams, bad: usize) -> Error {
    let x = state.x[bad];
    if !x.is_finite() {
        return Error::Diverged {
            step: state.step,
            time: state.time,
            what: format!(
                "particle {bad} has a non-finite position; reduce dt_max or stiffness, or add damping"
            ),
        };
    }
    Error::InvalidInput(format!(
        "particle {bad} at ({:.4}, {:.4}, {:.4}) m is outside the simulation domain \
         {:?} to {:?} (particles must stay at least one cell inside it); enlarge the domain \
         (lower/upper) or pass out_of_domain='clamp'",
        x.x.to_f64(),
        x.y.to_f64(),
        x.z.to_f64(),
        params.lower.to_array(),
        params.upper.to_array(),
    ))
}

/// Grid coordinate ξ that `out_of_domain = "clamp"` moves a particle to at
/// the lower bound (CPU and GPU alike): a little inside ξ = 1, because
/// x = lower + ξ·h rounds and ξ recomputed from x must not fall below 1,
/// where the cubic stencil's lowest node would be −1 (the upper bound has
/// its margin).
pub(crate) const LOWER_CLAMP_XI: f64 = 1.0 + 1e-3;

/// What the finiteness check reports for particle `p` (CPU and GPU alike).
pub(crate) fn non_finite_message<T>(model: &Model<T>, p: usize) -> String {
    let kind = if model.vol.contains(&p) {
        "volumetric particle"
    } else if model.vert.contains(&p) {
        "mesh vertex"
    } else {
        "element particle"
    };
    format!(
        "{kind} {p} has a non-finite position or velocity; lower dt_max, raise damping, or reduce the stiffness"
    )
}

/// Largest particle speed, m/s (exact max: order-independent).
pub fn max_speed<T: Real>(state: &State<T>) -> f64 {
    state
        .v
        .par_iter()
        .map(|v| v.norm().to_f64())
        .reduce(|| 0.0, f64::max)
}

impl<T: Real> Solver<T> {
    /// Advances `state` by one step of `dt` seconds (spec §3, steps 1–10).
    pub fn step(
        &mut self,
        model: &Model<T>,
        state: &mut State<T>,
        params: &SolverParams,
        colliders: &mut [Collider],
        pins: &[Pin],
        dt: f64,
    ) -> Result<()> {
        let n = model.num_particles();
        let frame = GridFrame::<T>::new(params);
        let mut clock = std::time::Instant::now();
        let mut lap = |slot: &mut f64| {
            let now = std::time::Instant::now();
            *slot += (now - clock).as_secs_f64();
            clock = now;
        };
        self.bin(state, params, &frame)?;
        self.resize(model, n);
        lap(&mut self.times.bin);
        let dt_t = T::from_f64(dt);
        self.stress(model, state, params.eulerian_tangents);
        lap(&mut self.times.stress);
        let d_inv = match params.kernel {
            Kernel::Quadratic => Stencil::<T, 3>::apic_d_inv(frame.inv_dx),
            Kernel::Cubic => Stencil::<T, 4>::apic_d_inv(frame.inv_dx),
        };
        let mls = params.transfer == Transfer::MlsMpm;
        match (params.kernel, mls) {
            (Kernel::Quadratic, false) => {
                self.p2g::<3, false>(model, state, &frame, dt_t, d_inv, Stencil::quadratic)
            }
            (Kernel::Quadratic, true) => {
                self.p2g::<3, true>(model, state, &frame, dt_t, d_inv, Stencil::quadratic)
            }
            (Kernel::Cubic, false) => self.p2g::<4, false>(model, state, &frame, dt_t, d_inv, Stencil::cubic),
            (Kernel::Cubic, true) => self.p2g::<4, true>(model, state, &frame, dt_t, d_inv, Stencil::cubic),
        }
        lap(&mut self.times.p2g);
        let t_new = state.time + dt;
        for c in colliders.iter_mut() {
            c.advance_to(t_new)?;
        }
        self.grid_update(params, &frame, dt_t, colliders);
        lap(&mut self.times.grid_update);
        match (params.kernel, mls) {
            (Kernel::Quadratic, false) => {
                self.g2p::<3, false>(model, state, &frame, d_inv, Stencil::quadratic)
            }
            (Kernel::Quadratic, true) => self.g2p::<3, true>(model, state, &frame, d_inv, Stencil::quadratic),
            (Kernel::Cubic, false) => self.g2p::<4, false>(model, state, &frame, d_inv, Stencil::cubic),
            (Kernel::Cubic, true) => self.g2p::<4, true>(model, state, &frame, d_inv, Stencil::cubic),
        }
        lap(&mut self.times.g2p);
        self.advect(
            model,
            state,
            pins,
            dt,
            t_new,
            params.enslave_elements,
            params.eulerian_tangents,
        );
        lap(&mut self.times.advect);
        self.plasticity(
            model,
            state,
            dt_t,
            params.codim_return_map,
            params.eulerian_tangents,
        );
        lap(&mut self.times.plasticity);
        state.time = t_new;
        state.step += 1;
        self.check_finite(model, state)
    }

    fn resize(&mut self, model: &Model<T>, n: usize) {
        self.stress.resize(n, Mat3::zero());
        self.force.resize(n, Vec3::zero());
        self.grad_v.resize(n, Mat3::zero());
        self.elem_forces.resize(model.elements.len(), [Vec3::zero(); 3]);
        self.events.resize(model.elements.len(), 0);
    }

    /// Step 1: block keys of every particle and the sparse grid (spec §10.2).
    /// Also the domain check: a particle outside the padded box is an error
    /// (or is clamped back, if asked).
    fn bin(&mut self, state: &mut State<T>, params: &SolverParams, frame: &GridFrame<T>) -> Result<()> {
        let n = state.x.len();
        self.keys.resize(n, 0);
        let bounds = ParticleBounds::<T>::new(params);
        let lo = bounds.lo;
        let lo_clamp = T::from_f64(LOWER_CLAMP_XI);
        let hi = |a: usize| bounds.hi[a];
        let kernel_shift = match params.kernel {
            Kernel::Quadratic => T::HALF,
            Kernel::Cubic => T::ONE,
        };
        let clamp = params.out_of_domain == OutOfDomain::Clamp;
        let bad = self
            .keys
            .par_iter_mut()
            .zip(state.x.par_iter_mut().zip(state.v.par_iter_mut()))
            .enumerate()
            .map(|(p, (key, (x, v)))| {
                let mut xi = frame.grid_units(*x);
                let mut outside = !xi.is_finite();
                for a in 0..3 {
                    if !(xi[a] >= lo && xi[a] <= hi(a)) {
                        outside = true;
                        if clamp && xi[a].is_finite() {
                            xi[a] = xi[a].clamp_to(lo_clamp, hi(a));
                            if (xi[a] == lo_clamp && v[a] < T::ZERO) || (xi[a] == hi(a) && v[a] > T::ZERO) {
                                v[a] = T::ZERO;
                            }
                        }
                    }
                }
                if outside && clamp && xi.is_finite() {
                    *x = frame.lower + xi * frame.dx;
                    // the key from the stored position, as P2G and G2P will see it
                    xi = frame.grid_units(*x);
                    outside = false;
                }
                let b = |a: usize| (((xi[a] - kernel_shift).floor().to_f64().max(0.0)) as u32) >> 2;
                *key = block_key([b(0), b(1), b(2)]);
                if outside { p } else { usize::MAX }
            })
            .min()
            .unwrap_or(usize::MAX);
        if bad != usize::MAX {
            return Err(domain_error(state, params, bad));
        }
        self.grid.rebuild(&self.keys);
        Ok(())
    }

    /// Step 2: stress pre-pass at `t^n` (spec §3.3).
    fn stress(&mut self, model: &Model<T>, state: &State<T>, eulerian: bool) {
        let (vol, vert, elem) = (model.vol.clone(), model.vert.clone(), model.elem.clone());
        // (i) τ_p = V⁰ P Fᵀ
        self.stress[vol.clone()]
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, s)| {
                let p = vol.start + i;
                let mat = &model.volume_materials[model.vol_material[i] as usize];
                *s = volume_kirchhoff(mat, &state.f[i]) * model.volume[p];
            });
        self.stress[vert.clone()]
            .par_iter_mut()
            .for_each(|s| *s = Mat3::zero());
        // (iii) P̃ on the element frame, S_p from the normal columns, corner forces from the tangent ones.
        let stress_elem = &mut self.stress[elem.clone()];
        stress_elem
            .par_iter_mut()
            .zip(self.elem_forces.par_iter_mut())
            .enumerate()
            .for_each(|(e, (s, fe))| {
                let el = &model.elements[e];
                let vol_p = model.volume[elem.start + e];
                let xs = |k: usize| state.x[vert.start + el.vertices[k] as usize];
                let ft = element_ft(el, xs(0), xs(1), xs(2), &state.d[e], &state.tangents[e], eulerian);
                let mat = &model.codim_materials[el.material as usize];
                *s = Mat3::zero();
                *fe = [Vec3::zero(); 3];
                let Some(p) = codim_piola(mat, &ft) else { return };
                if eulerian {
                    // ablation (spec E6 a): the whole Kirchhoff stress acts through ∇w,
                    // the mesh carries no force
                    *s = p * ft.transpose() * vol_p;
                    return;
                }
                let [a, b, c] = el.dm_inv;
                if el.dim == 2 {
                    // G = V P̃[:, 0:2] Dm⁻ᵀ with Dm⁻¹ = [[a, b], [0, c]]:
                    // G₀ = V (a P₀ + b P₁), G₁ = V c P₁ (= ∂Φ/∂x₁, ∂Φ/∂x₂)
                    let (p0, p1) = (p.col(0), p.col(1));
                    let g0 = (p0 * a + p1 * b) * vol_p;
                    let g1 = p1 * (c * vol_p);
                    *fe = [g0 + g1, -g0, -g1];
                    *s = Mat3::outer(p.col(2), state.d[e][0]) * vol_p;
                } else {
                    let g0 = p.col(0) * (vol_p * a);
                    *fe = [g0, -g0, Vec3::zero()];
                    *s =
                        (Mat3::outer(p.col(1), state.d[e][0]) + Mat3::outer(p.col(2), state.d[e][1])) * vol_p;
                }
            });
        // (ii) gather corner forces onto vertices, in element order (deterministic).
        let ef = &self.elem_forces;
        self.force[vert.clone()]
            .par_iter_mut()
            .enumerate()
            .for_each(|(v, f)| {
                let mut acc = Vec3::zero();
                for &(e, c) in &model.vertex_elems
                    [model.vertex_offsets[v] as usize..model.vertex_offsets[v + 1] as usize]
                {
                    acc += ef[e as usize][c as usize];
                }
                *f = acc;
            });
        self.force[vol].par_iter_mut().for_each(|f| *f = Vec3::zero());
        self.force[elem].par_iter_mut().for_each(|f| *f = Vec3::zero());
    }

    /// Step 3: APIC P2G with fused forces (spec §3.4, fused form):
    /// `m_i += w m`, `p_i += w m (v + C (x_i − x_p)) − Δt s_p ∇w + Δt w f_q`.
    ///
    /// The affine term is built up axis by axis (`C (x_i − x_p)` is a sum of
    /// C's columns times the per-axis offsets), so the innermost loop does
    /// one multiply-add per column instead of a matrix–vector product.
    ///
    /// With `MLS` the force uses `∇w ≈ 𝔇⁻¹ w (x_i − x_p)` (Hu et al. 2018), so
    /// stress and APIC fold into one affine matrix `A = m C − Δt 𝔇⁻¹ s_p` and
    /// a node receives `w (m v + Δt f_q + A (x_i − x_p))`.
    fn p2g<const K: usize, const MLS: bool>(
        &mut self,
        model: &Model<T>,
        state: &State<T>,
        frame: &GridFrame<T>,
        dt: T,
        d_inv: T,
        make: impl Fn(Vec3<T>, T) -> Stencil<T, K> + Sync,
    ) {
        let grid = &mut self.grid;
        let ptr = NodesPtr(grid.nodes.as_mut_ptr());
        let (order, offsets, neighbours) = (&grid.order, &grid.particle_offsets, &grid.neighbours);
        let (stress, force) = (&self.stress, &self.force);
        let vert = model.vert.clone();
        for colour in &grid.colours {
            colour.par_iter().for_each(|&b| {
                let b = b as usize;
                let nbh = &neighbours[b];
                let nodes = ptr;
                for &p in &order[offsets[b] as usize..offsets[b + 1] as usize] {
                    let p = p as usize;
                    let no_stress = vert.contains(&p);
                    let st = make(frame.grid_units(state.x[p]), frame.inv_dx);
                    let ax = AxisTables::new(&st);
                    let m = model.mass[p];
                    let s_dt = stress[p] * dt;
                    // lever arms are in grid units: (x_i − x_p) = h · off
                    let mc = if MLS {
                        (state.c[p] * m - s_dt * d_inv) * frame.dx
                    } else {
                        state.c[p] * (m * frame.dx)
                    };
                    let (mc0, mc1, mc2) = (mc.col(0), mc.col(1), mc.col(2));
                    let (s0, s1, s2) = (s_dt.col(0), s_dt.col(1), s_dt.col(2));
                    let base_u = state.v[p] * m + force[p] * dt;
                    for a in 0..K {
                        let (wa, dwa) = (st.w[0][a], st.dw[0][a]);
                        let ua = base_u + mc0 * ax.off[0][a];
                        for bb in 0..K {
                            let (wb, dwb) = (st.w[1][bb], st.dw[1][bb]);
                            let uab = ua + mc1 * ax.off[1][bb];
                            let (wab, dwa_b, wa_dwb) = (wa * wb, dwa * wb, wa * dwb);
                            let row = ax.blk[0][a] * 4 + ax.blk[1][bb] * 2;
                            let lrow = ax.loc[0][a] * 16 + ax.loc[1][bb] * 4;
                            for c in 0..K {
                                let (wc, dwc) = (st.w[2][c], st.dw[2][c]);
                                let w = wab * wc;
                                let u = uab + mc2 * ax.off[2][c];
                                // mesh vertices carry no stress (spec §3.3): skip the ∇w term
                                let dmv = if MLS || no_stress {
                                    u * w
                                } else {
                                    u * w - (s0 * (dwa_b * wc) + s1 * (wa_dwb * wc) + s2 * (wab * dwc))
                                };
                                let blk = nbh[row + ax.blk[2][c]];
                                debug_assert!(blk != NO_BLOCK);
                                let idx = blk as usize * BLOCK_NODES + lrow + ax.loc[2][c];
                                // SAFETY: idx lies in block b + {0,1}³; blocks of one colour
                                // are ≥ 2 apart, so no other task of this colour writes it
                                // (NodesPtr contract), and colours run one after another.
                                let node = unsafe { &mut *nodes.0.add(idx) };
                                node.mass += w * m;
                                node.mv += dmv;
                            }
                        }
                    }
                }
            });
        }
    }

    /// Steps 4–5: grid velocities with gravity (spec §3.5), then domain walls
    /// and colliders (§3.6), node by node.
    fn grid_update(&mut self, params: &SolverParams, frame: &GridFrame<T>, dt: T, colliders: &[Collider]) {
        let g: Vec3<T> = params.gravity.cast();
        let pad = params.boundary_padding as u32;
        let nmax = frame.nodes.map(|n| n as u32 - 1 - pad);
        let lower = params.lower;
        let dx = params.dx;
        let keys = &self.grid.block_keys;
        let nodes = &mut self.grid.nodes;
        // A collider can only touch a block whose centre is within reach: the
        // colliders' signed distances are 1-Lipschitz (√3 for the trilinear
        // mesh grid), so a centre farther than √3 × the block's half diagonal
        // (1.5√3 h) from the surface rules out every node of the block.
        let reach = 4.5 * dx * 1.001;
        let cull = colliders.len() <= 64;
        nodes
            .par_chunks_mut(BLOCK_NODES)
            .enumerate()
            .for_each(|(b, blk)| {
                let mut near: u64 = u64::MAX;
                if cull && !colliders.is_empty() {
                    let [bx, by, bz] = super::grid::key_coords(keys[b]);
                    let centre = lower
                        + Vec3::new(
                            bx as f64 * 4.0 + 1.5,
                            by as f64 * 4.0 + 1.5,
                            bz as f64 * 4.0 + 1.5,
                        ) * dx;
                    near = 0;
                    for (i, c) in colliders.iter().enumerate() {
                        if c.phi(centre) <= reach {
                            near |= 1 << i;
                        }
                    }
                }
                for (l, node) in blk.iter_mut().enumerate() {
                    // An empty node, or one whose mass is subnormal: a particle
                    // sitting within rounding of a kernel's outer zero gives
                    // it w·m ≈ 1e-43 kg in f32, and 1/m would overflow to inf
                    // (a NaN velocity in G2P). Such a node carries nothing.
                    if node.mass < T::MIN_POSITIVE {
                        node.mv = Vec3::zero();
                        continue;
                    }
                    let mut v = node.mv * (T::ONE / node.mass) + g * dt;
                    let ijk = grid_coords(keys, b, l);
                    // Domain walls: slip (remove the outward normal component).
                    for a in 0..3 {
                        if (ijk[a] < pad && v[a] < T::ZERO) || (ijk[a] > nmax[a] && v[a] > T::ZERO) {
                            v[a] = T::ZERO;
                        }
                    }
                    if near != 0 && !colliders.is_empty() {
                        let xw = lower + Vec3::new(ijk[0] as f64, ijk[1] as f64, ijk[2] as f64) * dx;
                        for (i, c) in colliders.iter().enumerate() {
                            if cull && near & (1 << i) == 0 {
                                continue;
                            }
                            if let Some(ct) = c.query(xw) {
                                let vd: Vec3<f64> = v.cast();
                                let out =
                                    boundary_response(vd, ct.velocity, ct.normal, c.mode(), c.friction());
                                v = out.cast();
                            }
                        }
                    }
                    node.mv = v;
                }
            });
    }

    /// Step 6: G2P with RPIC-style damping of the symmetric part of C (spec
    /// §3.7, paper Eq. 2) and the velocity gradient ∇v̂_p (types i and iii
    /// only: mesh vertices carry no deformation).
    ///
    /// With `MLS` the velocity gradient is the undamped APIC matrix `C̃`
    /// (spec §9 A15 option), and the kernel-gradient sum is skipped.
    fn g2p<const K: usize, const MLS: bool>(
        &mut self,
        model: &Model<T>,
        state: &mut State<T>,
        frame: &GridFrame<T>,
        d_inv: T,
        make: impl Fn(Vec3<T>, T) -> Stencil<T, K> + Sync,
    ) {
        let grid = &self.grid;
        let scale = d_inv * frame.dx; // (x_i − x_p) = h·offset, C̃ = B 𝔇⁻¹
        let x = &state.x;
        let vert = model.vert.clone();
        state
            .v
            .par_iter_mut()
            .zip(state.c.par_iter_mut())
            .zip(self.grad_v.par_iter_mut())
            .enumerate()
            .for_each(|(p, ((vp, cp), gp))| {
                let nbh = &grid.neighbours[grid.particle_block[p] as usize];
                let st = make(frame.grid_units(x[p]), frame.inv_dx);
                let ax = AxisTables::new(&st);
                let want_grad = !MLS && !vert.contains(&p);
                let mut v = Vec3::zero();
                // columns of B = Σ w v̂ offᵀ and of ∇v = Σ v̂ ∇wᵀ. The weights
                // factor per axis (w = wa·wb·wc, off = (offa, offb, offc)),
                // so the sums are nested: the innermost loop gathers only
                // Σ_c wc v̂, Σ_c wc offc v̂ (and Σ_c dwc v̂), and the outer
                // axes are applied once per row instead of once per node. The
                // GPU's g2p.wgsl nests its sums the same way, in this order.
                let (mut b0, mut b1, mut b2) = (Vec3::zero(), Vec3::zero(), Vec3::zero());
                let (mut g0, mut g1, mut g2) = (Vec3::zero(), Vec3::zero(), Vec3::zero());
                for a in 0..K {
                    let (wa, dwa) = (st.w[0][a], st.dw[0][a]);
                    // Σ_b wb s, Σ_b wb offb s, Σ_b wb sc, Σ_b dwb s, Σ_b wb sd
                    let (mut sa, mut sa_ob, mut sa_c) = (Vec3::zero(), Vec3::zero(), Vec3::zero());
                    let (mut sa_db, mut sa_dc) = (Vec3::zero(), Vec3::zero());
                    for bb in 0..K {
                        let (wb, dwb) = (st.w[1][bb], st.dw[1][bb]);
                        let row = ax.blk[0][a] * 4 + ax.blk[1][bb] * 2;
                        let lrow = ax.loc[0][a] * 16 + ax.loc[1][bb] * 4;
                        // Σ_c wc v̂, Σ_c wc offc v̂, Σ_c dwc v̂
                        let (mut s, mut sc, mut sd) = (Vec3::zero(), Vec3::zero(), Vec3::zero());
                        for c in 0..K {
                            let blk = nbh[row + ax.blk[2][c]] as usize;
                            let vi = grid.nodes[blk * BLOCK_NODES + lrow + ax.loc[2][c]].mv;
                            s += vi * st.w[2][c];
                            sc += vi * ax.w_off[c];
                            if want_grad {
                                sd += vi * st.dw[2][c];
                            }
                        }
                        sa += s * wb;
                        sa_ob += s * (wb * ax.off[1][bb]);
                        sa_c += sc * wb;
                        if want_grad {
                            sa_db += s * dwb;
                            sa_dc += sd * wb;
                        }
                    }
                    v += sa * wa;
                    b0 += sa * (wa * ax.off[0][a]);
                    b1 += sa_ob * wa;
                    b2 += sa_c * wa;
                    if want_grad {
                        g0 += sa * dwa;
                        g1 += sa_db * wa;
                        g2 += sa_dc * wa;
                    }
                }
                let ct = Mat3::from_cols(b0, b1, b2) * scale;
                let nu = model.damping[p];
                let skew = (ct - ct.transpose()) * T::HALF;
                let sym = ct.symmetric_part();
                *vp = v;
                *cp = skew + sym * (T::ONE - nu);
                *gp = if MLS { ct } else { Mat3::from_cols(g0, g1, g2) };
            });
    }

    /// Steps 7–8 and pins: positions of types (i), (ii); kinematic pins;
    /// `F ← (I + Δt∇v)F` for type (i); normal columns `d ← (I + Δt∇v) d`
    /// and barycentre enslaving for type (iii) (spec §3.8, §3.9, A17).
    #[allow(clippy::too_many_arguments)]
    fn advect(
        &mut self,
        model: &Model<T>,
        state: &mut State<T>,
        pins: &[Pin],
        dt: f64,
        t_new: f64,
        enslave: bool,
        eulerian: bool,
    ) {
        let dt_t = T::from_f64(dt);
        let (vol, vert, elem) = (model.vol.clone(), model.vert.clone(), model.elem.clone());
        let upto = if enslave { vert.end } else { elem.end };
        state.x[..upto]
            .par_iter_mut()
            .zip(state.v[..upto].par_iter())
            .for_each(|(x, v)| *x += *v * dt_t);
        for pin in pins {
            let p = vert.start + pin.vertex as usize;
            state.x[p] = pin.position(t_new).cast();
            state.v[p] = pin.v.cast();
            state.c[p] = Mat3::zero();
        }
        let gv = &self.grad_v;
        state.f.par_iter_mut().enumerate().for_each(|(i, f)| {
            *f = (Mat3::identity() + gv[vol.start + i] * dt_t) * *f;
        });
        let (xs, ds, ts) = (&mut state.x, &mut state.d, &mut state.tangents);
        let (x_before, x_elem) = xs.split_at_mut(elem.start);
        let verts = &x_before[vert.clone()];
        x_elem
            .par_iter_mut()
            .zip(ds.par_iter_mut().zip(ts.par_iter_mut()))
            .enumerate()
            .for_each(|(e, (xe, (d, t)))| {
                let el = &model.elements[e];
                let g = Mat3::identity() + gv[elem.start + e] * dt_t;
                d[0] = g * d[0];
                if el.dim == 1 {
                    d[1] = g * d[1];
                }
                if eulerian {
                    t[0] = g * t[0];
                    if el.dim == 2 {
                        t[1] = g * t[1];
                    }
                }
                if !enslave {
                    return; // moved with its own velocity above
                }
                if el.dim == 1 {
                    *xe = (verts[el.vertices[0] as usize] + verts[el.vertices[1] as usize]) * T::HALF;
                } else {
                    let third = T::ONE / T::from_f64(3.0);
                    *xe = (verts[el.vertices[0] as usize]
                        + verts[el.vertices[1] as usize]
                        + verts[el.vertices[2] as usize])
                        * third;
                }
            });
    }

    /// Step 9: return mapping (spec §3.10, §5) for elements and volumetric plasticity.
    ///
    /// `run_return_map = false` skips the element return maps (the
    /// "elasticity without return map" ablation of spec E6 c): normals keep
    /// their trial values.
    fn plasticity(
        &mut self,
        model: &Model<T>,
        state: &mut State<T>,
        dt: T,
        run_return_map: bool,
        eulerian: bool,
    ) {
        let vert = model.vert.clone();
        let vol_mats = &model.volume_materials;
        state
            .f
            .par_iter_mut()
            .zip(state.q.par_iter_mut())
            .enumerate()
            .for_each(|(i, (f, q))| {
                let mat = &vol_mats[model.vol_material[i] as usize];
                let (nf, nq) = volume_plasticity(mat, f, *q, dt);
                *f = nf;
                *q = nq;
            });
        if !run_return_map {
            self.counters.element_steps += self.events.len() as u64;
            return;
        }
        let (x, tangents) = (&state.x, &state.tangents);
        state
            .d
            .par_iter_mut()
            .zip(self.events.par_iter_mut())
            .enumerate()
            .for_each(|(e, (d, ev))| {
                let el = &model.elements[e];
                let xs = |k: usize| x[vert.start + el.vertices[k] as usize];
                let ft = element_ft(el, xs(0), xs(1), xs(2), d, &tangents[e], eulerian);
                let (fnew, event) = codim_return_map(&model.codim_materials[el.material as usize], &ft);
                *ev = event as u8;
                if el.dim == 2 {
                    d[0] = fnew.col(2);
                } else {
                    d[0] = fnew.col(1);
                    d[1] = fnew.col(2);
                }
            });
        let mut counts = [0u64; 5];
        for &e in &self.events {
            counts[(e as usize).min(4)] += 1;
        }
        use super::material::ReturnEvent as R;
        self.counters.slide += counts[R::Slide as usize];
        self.counters.tension += counts[R::Tension as usize];
        self.counters.inverted += counts[R::Inverted as usize];
        self.counters.degenerate += counts[R::Degenerate as usize];
        self.counters.element_steps += self.events.len() as u64;
    }

    fn check_finite(&self, model: &Model<T>, state: &State<T>) -> Result<()> {
        let bad = state
            .x
            .par_iter()
            .zip(state.v.par_iter())
            .enumerate()
            .map(|(p, (x, v))| {
                if x.is_finite() && v.is_finite() {
                    usize::MAX
                } else {
                    p
                }
            })
            .min()
            .unwrap_or(usize::MAX);
        if bad != usize::MAX {
            return Err(Error::Diverged {
                step: state.step,
                time: state.time,
                what: non_finite_message(model, bad),
            });
        }
        Ok(())
    }
}

/// Per-axis lookups of a stencil: which neighbour block (0 or 1) and which
/// node inside it each of the `K` stencil nodes falls in, and the APIC lever
/// arm `(x_i − x_p)/h` along the axis.
struct AxisTables<T, const K: usize> {
    blk: [[usize; K]; 3],
    loc: [[usize; K]; 3],
    off: [[T; K]; 3],
    /// `w[2][c] · off[2][c]`: the innermost G2P factor of B's third column.
    w_off: [T; K],
}

impl<T: Real, const K: usize> AxisTables<T, K> {
    #[inline]
    fn new(st: &Stencil<T, K>) -> Self {
        let mut t = Self {
            blk: [[0; K]; 3],
            loc: [[0; K]; 3],
            off: [[T::ZERO; K]; 3],
            w_off: [T::ZERO; K],
        };
        for d in 0..3 {
            let lb = (st.base[d] & 3) as usize;
            for k in 0..K {
                t.blk[d][k] = (lb + k) >> 2;
                t.loc[d][k] = (lb + k) & 3;
                t.off[d][k] = T::from_f64(k as f64) - st.frac[d];
            }
        }
        for k in 0..K {
            t.w_off[k] = st.w[2][k] * t.off[2][k];
        }
        t
    }
}

/// Global coordinates of node `l` of active block `b`.
#[inline]
fn grid_coords(keys: &[u32], b: usize, l: usize) -> [u32; 3] {
    let [x, y, z] = super::grid::key_coords(keys[b]);
    let (a, rest) = (l / 16, l % 16);
    [
        x * 4 + a as u32,
        y * 4 + (rest / 4) as u32,
        z * 4 + (rest % 4) as u32,
    ]
}

/// F̃ of an element: from the mesh ([`element_f`]), or, in the
/// `eulerian_tangents` ablation, from the advected columns `tangents`.
#[inline]
pub(crate) fn element_ft<T: Real>(
    el: &super::model::Element<T>,
    x0: Vec3<T>,
    x1: Vec3<T>,
    x2: Vec3<T>,
    d: &[Vec3<T>; 2],
    tangents: &[Vec3<T>; 2],
    eulerian: bool,
) -> Mat3<T> {
    if !eulerian {
        element_f(el, x0, x1, x2, d)
    } else if el.dim == 2 {
        Mat3::from_cols(tangents[0], tangents[1], d[0])
    } else {
        Mat3::from_cols(tangents[0], d[0], d[1])
    }
}

/// The element's deformation gradient in its orthonormal rest frame (spec
/// §2.3): `F̃ = [Ds(x) Dm⁻¹ | d_{m+1} … d₃]`.
#[inline]
pub fn element_f<T: Real>(
    el: &super::model::Element<T>,
    x0: Vec3<T>,
    x1: Vec3<T>,
    x2: Vec3<T>,
    d: &[Vec3<T>; 2],
) -> Mat3<T> {
    let [a, b, c] = el.dm_inv;
    let e1 = x1 - x0;
    if el.dim == 2 {
        let e2 = x2 - x0;
        // Ds Dm⁻¹ with Dm⁻¹ = [[a, b], [0, c]]: columns (a e1, b e1 + c e2)
        Mat3::from_cols(e1 * a, e1 * b + e2 * c, d[0])
    } else {
        Mat3::from_cols(e1 * a, d[0], d[1])
    }
}
