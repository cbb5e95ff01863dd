//! One explicit MPM step in the exact order of spec §3, one file per
//! stage, named as its WGSL twin: `bin` (sparse grid), `stress` (pre-pass, §3.3), `p2g` (§3.4),
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

mod advect;
mod bin;
mod g2p;
mod grid_update;
mod p2g;
mod plasticity;
mod stress;

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
