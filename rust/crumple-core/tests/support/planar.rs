//! The 2-D curve variant of the anisotropic MPM method (spec `mpm_anisotropic.md` §2.6 "2-D
//! variant", §4.5, §5.3; paper Figs. 12, 16): polylines (m = 1) in the x–y plane (d = 2).
//!
//! Test support, not part of the library: the reference 2-D solver of spec E5 (paper Figs. 12, 16),
//! used by `tests/mpm_planar_e5.rs`. It stays out of the public API because a user-facing 2-D
//! module would need the whole shared vocabulary (objects, frames, checkpoints, pins) for a second
//! MPM solver, and the 3-D solver runs the same physics (a curve scene in a thin slab). It is a
//! separate, compact solver; it shares no state with the 3-D `mpm::Solver`. It follows the same step (spec §3):
//!
//! 1. Δt = min(Δt_max, CFL·h / max|v_p|, time left) — every `advance` lands exactly.
//! 2. Stress pre-pass per segment: `F̃ = [(x1 − x0)/L | d₂]` (2×2), `(Q, R̃) = qr2(F̃)` with
//!    `q2 = rot90(q1)` and `r22` signed, `P̃ = Q A R̃⁻ᵀ` (§4.5). The tangent column goes to the two
//!    vertices, `G = V P̃[:,0] / L`, `f_{a1} −= G`, `f_{a0} += G`; the normal column becomes the
//!    grid stress `S = V P̃[:,1] d₂ᵀ` applied through `∇w` (§3.3).
//! 3. APIC P2G (quadratic B-splines, 3×3 nodes), fused forces.
//! 4. Grid update `v̂ = p/m + Δt g`, slip domain walls on the outer 3 node layers, static obstacles
//!    with [`boundary_response`] (Coulomb "separate" mode, coefficient
//!    [`PlanarSimulation::set_obstacle_friction`], default 0.3 as in spec §6.4).
//! 5. G2P with RPIC damping `C = skew(C̃) + (1 − ν_d) sym(C̃)`, `C̃ = 4/h² B` (§3.7); `∇v̂` for
//!    segment particles.
//! 6. Vertices move `x += Δt v`; each segment particle is enslaved to its midpoint and its normal
//!    column is advected `d₂ ← (I + Δt ∇v̂) d₂` (§3.8, §3.9).
//! 7. Return map of §5.3 on `(r12, r22)`, then `d₂ = Q R̃[:,1]`.
//!
//! Design notes:
//! * f64 only; the whole step is serial, so results are bit-for-bit deterministic and independent of
//!   the rayon thread count (no float atomics, no parallel reductions).
//! * The grid is dense: a 2-D domain of W×H metres at spacing h has (W/h+1)(H/h+1) nodes, e.g.
//!   201×201 ≈ 40k nodes (1 MB) for a 2 m box at h = 1 cm, so clearing it every step costs about as
//!   much as the particle transfers and the sparse block machinery of the 3-D solver would buy
//!   nothing.
//! * Collision normals use the 3-D [`boundary_response`] with `z = 0` (a 2-D vector embedded in the
//!   x–y plane; the response never creates a z component when all inputs have z = 0).
//! * Volume: a curve is treated as a strip of thickness `h` (per unit depth), `V_e = L_e h`, split
//!   into thirds between the segment particle and its two vertices (§2.6); for a single material the
//!   thickness cancels from the motion (§2.6 "Thickness remark").
//! * Particles that would leave the region where their 3×3 stencil fits (`[lower + h, upper − h]`)
//!   are clamped onto it; with 3-cell slip walls this never triggers in practice.
//! * No allocation happens in the step loop: all particle buffers are sized by
//!   [`PlanarSimulation::add_curves`] and the grid by [`PlanarSimulation::new`].

use crumple_core::Error;
use crumple_core::Result;
use crumple_core::collide::{BoundaryMode, boundary_response};
use crumple_core::math::{Mat2, Vec3, qr2};

/// Number of node layers next to each domain face that get the slip wall condition.
const WALL_LAYERS: usize = 3;

/// The 2-D curve constitutive model of spec §4.5 with the return map of §5.3.
///
/// `ψ̂ = (k_s/2)(r11 − 1)² + (γ/2) r12² + f(r22)`, `f(r) = (k/3)(1 − r)³` for `r ≤ 1`, else 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanarCurveModel {
    /// Stretching stiffness `k_s` (spec default `k_s = E`).
    pub ks: f64,
    /// Shear stiffness `γ`.
    pub gamma: f64,
    /// Normal (compression-only) stiffness `k`.
    pub k: f64,
    /// Friction coefficient `c_F = tan Φ_F`.
    pub c_f: f64,
}

impl PlanarCurveModel {
    /// `f(r22)` and `f'(r22)`.
    fn normal_term(&self, r22: f64) -> (f64, f64) {
        if r22 <= 1.0 {
            let c = 1.0 - r22;
            (self.k / 3.0 * c * c * c, -self.k * c * c)
        } else {
            (0.0, 0.0)
        }
    }

    /// The energy density `ψ(F̃) = ψ̂(R̃)`.
    pub fn psi(&self, f: &Mat2<f64>) -> f64 {
        let (_, r) = qr2(f);
        let (r11, r12, r22) = (r[0][0], r[0][1], r[1][1]);
        let s = r11 - 1.0;
        0.5 * self.ks * s * s + 0.5 * self.gamma * r12 * r12 + self.normal_term(r22).0
    }

    /// The first Piola–Kirchhoff stress `P̃ = ∂ψ/∂F̃ = Q A R̃⁻ᵀ`, or `None` for a degenerate
    /// element (`r11 < 1e-10`, spec §4.1 guard; the caller skips its stress).
    ///
    /// `A R̃⁻ᵀ` is formed in closed form with the `r22` factor cancelled analytically, so the
    /// stress stays finite as `r22 → 0`:
    /// `A R̃⁻ᵀ = [[k_s(r11 − 1), γ r12], [(γ r22 − f'(r22)) r12 / r11, f'(r22)]]`.
    pub fn piola(&self, f: &Mat2<f64>) -> Option<Mat2<f64>> {
        let (q, r) = qr2(f);
        let (r11, r12, r22) = (r[0][0], r[0][1], r[1][1]);
        if r11 < 1e-10 || !r11.is_finite() {
            return None;
        }
        let fp = self.normal_term(r22).1;
        let x = [
            [self.ks * (r11 - 1.0), self.gamma * r12],
            [(self.gamma * r22 - fp) * r12 / r11, fp],
        ];
        Some(mul(&q, &x))
    }

    /// The return map of spec §5.3 applied to the upper-triangular `R̂` (only `r12`, `r22` change).
    pub fn project(&self, r: &Mat2<f64>) -> Mat2<f64> {
        let mut out = *r;
        let (r12, r22) = (r[0][1], r[1][1]);
        if r22 > 1.0 {
            // Tension: separation, zero traction.
            out[0][1] = 0.0;
            out[1][1] = 1.0;
        } else if r22 < 0.0 {
            // Inverted ("red" case): drop the shear, keep r22 (clamped to ≥ −1).
            out[0][1] = 0.0;
            out[1][1] = r22.max(-1.0);
        } else if self.gamma > 0.0 {
            let ff = self.gamma * r12.abs();
            let c = 1.0 - r22;
            let fn_ = self.k * c * c;
            if ff > self.c_f * fn_ {
                out[0][1] = r12 * (self.c_f * fn_ / ff);
            }
        }
        out
    }

    /// The yield function `y = γ|r12| − c_F k (1 − r22)²` (≤ 0 inside, for `r22 ∈ [0, 1]`).
    pub fn yield_fn(&self, r: &Mat2<f64>) -> f64 {
        let c = 1.0 - r[1][1];
        self.gamma * r[0][1].abs() - self.c_f * self.k * c * c
    }
}

/// Material parameters of a set of planar curves ([`PlanarSimulation::add_curves`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanarCurveParams {
    /// Density ρ (kg/m³; the strip is `h` thick, per unit depth).
    pub density: f64,
    /// Stretching stiffness `k_s` (the spec's 2-D default is `k_s = E`).
    pub youngs_modulus: f64,
    /// Shear stiffness γ.
    pub gamma: f64,
    /// Normal (contact) stiffness k.
    pub k: f64,
    /// Friction angle Φ_F in degrees, `c_F = tan Φ_F`, in `[0, 90)`.
    pub friction_angle_deg: f64,
    /// RPIC damping ν_d ∈ [0, 1].
    pub damping: f64,
}

impl Default for PlanarCurveParams {
    fn default() -> Self {
        Self {
            density: 1000.0,
            youngs_modulus: 1e4,
            gamma: 500.0,
            k: 2000.0,
            friction_angle_deg: 30.0,
            damping: 0.0,
        }
    }
}

enum Obstacle {
    Ground(f64),
    Box { lower: [f64; 2], upper: [f64; 2] },
}

impl Obstacle {
    /// Signed distance (negative inside) and outward unit normal at `p`.
    fn sdf(&self, p: [f64; 2]) -> (f64, [f64; 2]) {
        match *self {
            Obstacle::Ground(y) => (p[1] - y, [0.0, 1.0]),
            Obstacle::Box { lower, upper } => {
                let c = [0.5 * (lower[0] + upper[0]), 0.5 * (lower[1] + upper[1])];
                let half = [0.5 * (upper[0] - lower[0]), 0.5 * (upper[1] - lower[1])];
                let rel = [p[0] - c[0], p[1] - c[1]];
                let d = [rel[0].abs() - half[0], rel[1].abs() - half[1]];
                if d[0] > 0.0 || d[1] > 0.0 {
                    let o = [d[0].max(0.0), d[1].max(0.0)];
                    let len = o[0].hypot(o[1]);
                    let n = [o[0].copysign(rel[0]) / len, o[1].copysign(rel[1]) / len];
                    (len, n)
                } else if d[0] > d[1] {
                    (d[0], [1f64.copysign(rel[0]), 0.0])
                } else {
                    (d[1], [0.0, 1f64.copysign(rel[1])])
                }
            }
        }
    }
}

/// Quadratic B-spline weights of one particle (spec §3.1) on the 3×3 stencil.
struct Stencil {
    base: [usize; 2],
    w: [[f64; 3]; 2],
    dw: [[f64; 3]; 2],
    /// `f = x/h − base` per axis; node offset `x_i − x_p = (j − f) h`.
    f: [f64; 2],
}

impl Stencil {
    fn new(x: [f64; 2], lower: [f64; 2], inv_h: f64) -> Self {
        let mut s = Stencil {
            base: [0; 2],
            w: [[0.0; 3]; 2],
            dw: [[0.0; 3]; 2],
            f: [0.0; 2],
        };
        for a in 0..2 {
            let fx = (x[a] - lower[a]) * inv_h;
            let b = (fx - 0.5).floor();
            let f = fx - b;
            s.base[a] = b as usize;
            s.f[a] = f;
            s.w[a] = [
                0.5 * (1.5 - f) * (1.5 - f),
                0.75 - (f - 1.0) * (f - 1.0),
                0.5 * (f - 0.5) * (f - 0.5),
            ];
            s.dw[a] = [(f - 1.5) * inv_h, -2.0 * (f - 1.0) * inv_h, (f - 0.5) * inv_h];
        }
        s
    }
}

fn mul(a: &Mat2<f64>, b: &Mat2<f64>) -> Mat2<f64> {
    [
        [
            a[0][0] * b[0][0] + a[0][1] * b[1][0],
            a[0][0] * b[0][1] + a[0][1] * b[1][1],
        ],
        [
            a[1][0] * b[0][0] + a[1][1] * b[1][0],
            a[1][0] * b[0][1] + a[1][1] * b[1][1],
        ],
    ]
}

fn mat_vec(a: &Mat2<f64>, v: [f64; 2]) -> [f64; 2] {
    [a[0][0] * v[0] + a[0][1] * v[1], a[1][0] * v[0] + a[1][1] * v[1]]
}

/// 2-D MPM simulation of planar curves (spec §2.6 2-D variant). See the module docs.
pub struct PlanarSimulation {
    lower: [f64; 2],
    upper: [f64; 2],
    h: f64,
    n: [usize; 2],
    gravity: [f64; 2],
    dt_max: f64,
    cfl: f64,
    time: f64,
    steps: u64,
    obstacle_friction: f64,
    obstacles: Vec<Obstacle>,
    materials: Vec<(PlanarCurveModel, f64)>,
    // Vertices (type ii).
    xv: Vec<[f64; 2]>,
    vv: Vec<[f64; 2]>,
    cv: Vec<Mat2<f64>>,
    mv: Vec<f64>,
    matv: Vec<u32>,
    fv: Vec<[f64; 2]>,
    // Segments (type iii).
    seg: Vec<[u32; 2]>,
    inv_len: Vec<f64>,
    vol: Vec<f64>,
    xe: Vec<[f64; 2]>,
    ve: Vec<[f64; 2]>,
    ce: Vec<Mat2<f64>>,
    me: Vec<f64>,
    d2: Vec<[f64; 2]>,
    mate: Vec<u32>,
    se: Vec<Mat2<f64>>,
    grad_v: Vec<Mat2<f64>>,
    // Dense grid.
    grid_m: Vec<f64>,
    grid_p: Vec<[f64; 2]>,
}

impl PlanarSimulation {
    /// A simulation in the box `[lower, upper]` with grid spacing `dx`, gravity, maximum step
    /// `dt_max` and CFL number (`0.3` in the paper).
    pub fn new(
        lower: [f64; 2],
        upper: [f64; 2],
        dx: f64,
        gravity: [f64; 2],
        dt_max: f64,
        cfl: f64,
    ) -> Result<Self> {
        let all = [lower[0], lower[1], upper[0], upper[1], gravity[0], gravity[1]];
        if all.iter().any(|v| !v.is_finite()) {
            return crumple_core::invalid!("planar MPM: domain bounds and gravity must be finite");
        }
        if !(dx.is_finite() && dx > 0.0) {
            return crumple_core::invalid!("planar MPM: dx must be positive and finite, got {dx}");
        }
        if !(dt_max.is_finite() && dt_max > 0.0) {
            return crumple_core::invalid!("planar MPM: dt_max must be positive and finite, got {dt_max}");
        }
        if !(cfl.is_finite() && cfl > 0.0 && cfl <= 1.0) {
            return crumple_core::invalid!("planar MPM: cfl must be in (0, 1], got {cfl}");
        }
        let mut n = [0usize; 2];
        for a in 0..2 {
            let cells = (upper[a] - lower[a]) / dx;
            if cells < (2 * WALL_LAYERS + 2) as f64 {
                return crumple_core::invalid!(
                    "planar MPM: the domain must span at least {} cells along axis {a} \
                     (upper > lower + {}·dx)",
                    2 * WALL_LAYERS + 2,
                    2 * WALL_LAYERS + 2
                );
            }
            if cells > 16384.0 {
                return crumple_core::invalid!(
                    "planar MPM: {cells:.0} cells along axis {a} is too many for the dense 2-D \
                     grid (max 16384); increase dx"
                );
            }
            n[a] = cells.ceil() as usize + 1;
        }
        let nodes = n[0] * n[1];
        Ok(Self {
            lower,
            upper,
            h: dx,
            n,
            gravity,
            dt_max,
            cfl,
            time: 0.0,
            steps: 0,
            obstacle_friction: 0.3,
            obstacles: Vec::new(),
            materials: Vec::new(),
            xv: Vec::new(),
            vv: Vec::new(),
            cv: Vec::new(),
            mv: Vec::new(),
            matv: Vec::new(),
            fv: Vec::new(),
            seg: Vec::new(),
            inv_len: Vec::new(),
            vol: Vec::new(),
            xe: Vec::new(),
            ve: Vec::new(),
            ce: Vec::new(),
            me: Vec::new(),
            d2: Vec::new(),
            mate: Vec::new(),
            se: Vec::new(),
            grad_v: Vec::new(),
            grid_m: vec![0.0; nodes],
            grid_p: vec![[0.0; 2]; nodes],
        })
    }

    /// Adds polylines. `points` holds all vertices; curve `c` is `points[offsets[c]..offsets[c+1]]`
    /// (`offsets` has one more entry than there are curves, starts at 0, ends at `points.len()`,
    /// and every curve has at least 2 points). Returns the index of the first added vertex.
    pub fn add_curves(
        &mut self,
        points: &[[f64; 2]],
        offsets: &[usize],
        params: PlanarCurveParams,
    ) -> Result<usize> {
        let p = params;
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        if !(p.density.is_finite() && p.density > 0.0) {
            return crumple_core::invalid!("planar MPM: density must be positive, got {}", p.density);
        }
        if !(ok(p.youngs_modulus) && ok(p.gamma) && ok(p.k)) {
            return crumple_core::invalid!(
                "planar MPM: youngs_modulus, gamma and k must be finite and non-negative"
            );
        }
        if !(p.friction_angle_deg.is_finite() && (0.0..90.0).contains(&p.friction_angle_deg)) {
            return crumple_core::invalid!(
                "planar MPM: friction_angle_deg must be in [0, 90), got {}",
                p.friction_angle_deg
            );
        }
        if !(p.damping.is_finite() && (0.0..=1.0).contains(&p.damping)) {
            return crumple_core::invalid!("planar MPM: damping must be in [0, 1], got {}", p.damping);
        }
        if offsets.len() < 2 || offsets[0] != 0 || *offsets.last().unwrap_or(&0) != points.len() {
            return crumple_core::invalid!(
                "planar MPM: offsets must start at 0, end at points.len() = {} and name at least \
                 one curve",
                points.len()
            );
        }
        if let Some(c) = offsets.windows(2).position(|w| w[1] < w[0] + 2) {
            return crumple_core::invalid!(
                "planar MPM: offsets must increase by at least 2 (curve {c} has fewer than 2 points)"
            );
        }
        let (lo, hi) = self.safe_band();
        for (i, q) in points.iter().enumerate() {
            if !(q[0].is_finite() && q[1].is_finite()) {
                return crumple_core::invalid!("planar MPM: point {i} is not finite");
            }
            if q[0] < lo[0] || q[0] > hi[0] || q[1] < lo[1] || q[1] > hi[1] {
                return crumple_core::invalid!(
                    "planar MPM: point {i} = {q:?} is outside the usable domain \
                     [{lo:?}, {hi:?}] (one cell inside the box)"
                );
            }
        }
        for w in offsets.windows(2) {
            for i in w[0]..w[1] - 1 {
                let (a, b) = (points[i], points[i + 1]);
                let len = (b[0] - a[0]).hypot(b[1] - a[1]);
                if len <= 1e-12 * self.h {
                    return crumple_core::invalid!("planar MPM: segment {i}–{} has zero length", i + 1);
                }
            }
        }
        let model = PlanarCurveModel {
            ks: p.youngs_modulus,
            gamma: p.gamma,
            k: p.k,
            c_f: p.friction_angle_deg.to_radians().tan(),
        };
        let mat = self.materials.len() as u32;
        self.materials.push((model, p.damping));
        let first = self.xv.len();
        for q in points {
            self.xv.push(*q);
            self.vv.push([0.0; 2]);
            self.cv.push([[0.0; 2]; 2]);
            self.mv.push(0.0);
            self.matv.push(mat);
            self.fv.push([0.0; 2]);
        }
        for w in offsets.windows(2) {
            for i in w[0]..w[1] - 1 {
                let (a, b) = (points[i], points[i + 1]);
                let t = [b[0] - a[0], b[1] - a[1]];
                let len = t[0].hypot(t[1]);
                let ve = len * self.h;
                let m = p.density * ve / 3.0;
                let (ia, ib) = (first + i, first + i + 1);
                self.mv[ia] += m;
                self.mv[ib] += m;
                self.seg.push([ia as u32, ib as u32]);
                self.inv_len.push(1.0 / len);
                self.vol.push(ve / 3.0);
                self.xe.push([0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])]);
                self.ve.push([0.0; 2]);
                self.ce.push([[0.0; 2]; 2]);
                self.me.push(m);
                self.d2.push([-t[1] / len, t[0] / len]);
                self.mate.push(mat);
                self.se.push([[0.0; 2]; 2]);
                self.grad_v.push([[0.0; 2]; 2]);
            }
        }
        Ok(first)
    }

    /// A static axis-aligned box obstacle.
    pub fn add_box_obstacle(&mut self, lower: [f64; 2], upper: [f64; 2]) -> Result<()> {
        if !(lower.iter().chain(upper.iter()).all(|v| v.is_finite())
            && lower[0] < upper[0]
            && lower[1] < upper[1])
        {
            return crumple_core::invalid!("planar MPM: box obstacle needs finite lower < upper");
        }
        self.obstacles.push(Obstacle::Box { lower, upper });
        Ok(())
    }

    /// A static ground line `y = const` (solid below).
    pub fn add_ground(&mut self, y: f64) -> Result<()> {
        if !y.is_finite() {
            return crumple_core::invalid!("planar MPM: ground height must be finite");
        }
        self.obstacles.push(Obstacle::Ground(y));
        Ok(())
    }

    /// Coulomb coefficient μ_b of the obstacles (default 0.3); 0 makes them frictionless.
    pub fn set_obstacle_friction(&mut self, mu: f64) -> Result<()> {
        if !(mu.is_finite() && mu >= 0.0) {
            return crumple_core::invalid!("planar MPM: obstacle friction must be finite and >= 0");
        }
        self.obstacle_friction = mu;
        Ok(())
    }

    /// Sets every vertex and segment velocity to `v` (APIC matrices to 0).
    pub fn set_velocity(&mut self, v: [f64; 2]) -> Result<()> {
        if !(v[0].is_finite() && v[1].is_finite()) {
            return crumple_core::invalid!("planar MPM: velocity must be finite");
        }
        self.vv.iter_mut().chain(self.ve.iter_mut()).for_each(|x| *x = v);
        self.cv
            .iter_mut()
            .chain(self.ce.iter_mut())
            .for_each(|c| *c = [[0.0; 2]; 2]);
        Ok(())
    }

    /// Vertex positions.
    pub fn positions(&self) -> Vec<[f64; 2]> {
        self.xv.clone()
    }

    /// Vertex velocities.
    pub fn velocities(&self) -> Vec<[f64; 2]> {
        self.vv.clone()
    }

    /// Segment-particle positions (midpoints).
    pub fn segment_positions(&self) -> &[[f64; 2]] {
        &self.xe
    }

    /// Simulated time so far.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Total particle mass (vertices and segment particles).
    pub fn particle_mass(&self) -> f64 {
        self.mv.iter().sum::<f64>() + self.me.iter().sum::<f64>()
    }

    /// Total grid mass of the last P2G (0 before the first step).
    pub fn grid_mass(&self) -> f64 {
        self.grid_m.iter().sum()
    }

    /// `R̃` of every segment (`qr2` of `[(x1 − x0)/L | d₂]`) in the current state.
    pub fn segment_r(&self) -> Vec<Mat2<f64>> {
        (0..self.seg.len()).map(|e| qr2(&self.f_tilde(e)).1).collect()
    }

    /// Advances by `duration` seconds in CFL-limited steps, landing exactly. Returns the number of
    /// steps taken.
    pub fn advance(&mut self, duration: f64) -> Result<u64> {
        if !(duration.is_finite() && duration >= 0.0) {
            return crumple_core::invalid!("planar MPM: duration must be finite and >= 0");
        }
        let t0 = self.time;
        let mut elapsed = 0.0;
        let mut count = 0u64;
        while elapsed < duration {
            let vmax = self
                .vv
                .iter()
                .chain(self.ve.iter())
                .fold(0.0f64, |m, v| m.max(v[0].hypot(v[1])));
            let mut dt = self.dt_max;
            if vmax > 0.0 {
                dt = dt.min(self.cfl * self.h / vmax);
            }
            let left = duration - elapsed;
            let last = dt >= left;
            if last {
                dt = left;
            }
            self.step(dt)?;
            count += 1;
            elapsed = if last { duration } else { elapsed + dt };
            self.time = t0 + elapsed;
        }
        Ok(count)
    }

    fn safe_band(&self) -> ([f64; 2], [f64; 2]) {
        (
            [self.lower[0] + self.h, self.lower[1] + self.h],
            [self.upper[0] - self.h, self.upper[1] - self.h],
        )
    }

    fn f_tilde(&self, e: usize) -> Mat2<f64> {
        let [a, b] = self.seg[e];
        let (xa, xb) = (self.xv[a as usize], self.xv[b as usize]);
        let il = self.inv_len[e];
        let c1 = [(xb[0] - xa[0]) * il, (xb[1] - xa[1]) * il];
        let d = self.d2[e];
        [[c1[0], d[0]], [c1[1], d[1]]]
    }

    fn step(&mut self, dt: f64) -> Result<()> {
        let h = self.h;
        let inv_h = 1.0 / h;
        let nx = self.n[0];
        // 1. Stress pre-pass (state at t^n).
        self.fv.iter_mut().for_each(|f| *f = [0.0; 2]);
        for e in 0..self.seg.len() {
            let model = self.materials[self.mate[e] as usize].0;
            let f = self.f_tilde(e);
            let Some(p) = model.piola(&f) else {
                self.se[e] = [[0.0; 2]; 2];
                continue;
            };
            let v = self.vol[e];
            let g = [v * p[0][0] * self.inv_len[e], v * p[1][0] * self.inv_len[e]];
            let [a, b] = self.seg[e];
            let (a, b) = (a as usize, b as usize);
            self.fv[a][0] += g[0];
            self.fv[a][1] += g[1];
            self.fv[b][0] -= g[0];
            self.fv[b][1] -= g[1];
            let n = [v * p[0][1], v * p[1][1]];
            let d = self.d2[e];
            self.se[e] = [[n[0] * d[0], n[0] * d[1]], [n[1] * d[0], n[1] * d[1]]];
        }
        // 2. P2G (serial: deterministic).
        self.grid_m.iter_mut().for_each(|m| *m = 0.0);
        self.grid_p.iter_mut().for_each(|p| *p = [0.0; 2]);
        let zero = [[0.0; 2]; 2];
        for q in 0..self.xv.len() {
            let (x, v, c, m, f) = (self.xv[q], self.vv[q], self.cv[q], self.mv[q], self.fv[q]);
            let st = Stencil::new(x, self.lower, inv_h);
            scatter(
                &mut self.grid_m,
                &mut self.grid_p,
                nx,
                h,
                dt,
                &st,
                m,
                v,
                &c,
                f,
                &zero,
            );
        }
        for e in 0..self.xe.len() {
            let (x, v, c, m, s) = (self.xe[e], self.ve[e], self.ce[e], self.me[e], self.se[e]);
            let st = Stencil::new(x, self.lower, inv_h);
            scatter(
                &mut self.grid_m,
                &mut self.grid_p,
                nx,
                h,
                dt,
                &st,
                m,
                v,
                &c,
                [0.0; 2],
                &s,
            );
        }
        // 3. Grid update and boundary conditions; grid_p becomes the velocity v̂.
        let mu = self.obstacle_friction;
        for j in 0..self.n[1] {
            for i in 0..nx {
                let idx = j * nx + i;
                let m = self.grid_m[idx];
                if m <= 0.0 {
                    continue;
                }
                let p = self.grid_p[idx];
                let mut v = Vec3::new(
                    p[0] / m + dt * self.gravity[0],
                    p[1] / m + dt * self.gravity[1],
                    0.0,
                );
                let xi = [self.lower[0] + i as f64 * h, self.lower[1] + j as f64 * h];
                for o in &self.obstacles {
                    let (phi, n) = o.sdf(xi);
                    if phi <= 0.0 {
                        let n = Vec3::new(n[0], n[1], 0.0);
                        v = boundary_response(v, Vec3::zero(), n, BoundaryMode::Separate, mu);
                    }
                }
                let walls = [
                    (i < WALL_LAYERS, Vec3::new(1.0, 0.0, 0.0)),
                    (i + WALL_LAYERS >= nx, Vec3::new(-1.0, 0.0, 0.0)),
                    (j < WALL_LAYERS, Vec3::new(0.0, 1.0, 0.0)),
                    (j + WALL_LAYERS >= self.n[1], Vec3::new(0.0, -1.0, 0.0)),
                ];
                for (on, n) in walls {
                    if on {
                        v = boundary_response(v, Vec3::zero(), n, BoundaryMode::Slip, 0.0);
                    }
                }
                self.grid_p[idx] = [v.x, v.y];
            }
        }
        // 4. G2P and positions.
        let (lo, hi) = self.safe_band();
        let clamp = |x: [f64; 2]| [x[0].clamp(lo[0], hi[0]), x[1].clamp(lo[1], hi[1])];
        for q in 0..self.xv.len() {
            let st = Stencil::new(self.xv[q], self.lower, inv_h);
            let nu = self.materials[self.matv[q] as usize].1;
            let (v, c, _) = gather(&self.grid_p, nx, h, &st, nu);
            self.vv[q] = v;
            self.cv[q] = c;
            self.xv[q] = clamp([self.xv[q][0] + dt * v[0], self.xv[q][1] + dt * v[1]]);
        }
        for e in 0..self.xe.len() {
            let st = Stencil::new(self.xe[e], self.lower, inv_h);
            let nu = self.materials[self.mate[e] as usize].1;
            let (v, c, gv) = gather(&self.grid_p, nx, h, &st, nu);
            self.ve[e] = v;
            self.ce[e] = c;
            self.grad_v[e] = gv;
        }
        // 5. Enslave segment particles, advect d₂, return map.
        for e in 0..self.seg.len() {
            let [a, b] = self.seg[e];
            let (xa, xb) = (self.xv[a as usize], self.xv[b as usize]);
            self.xe[e] = [0.5 * (xa[0] + xb[0]), 0.5 * (xa[1] + xb[1])];
            let gv = self.grad_v[e];
            let d = self.d2[e];
            let dv = mat_vec(&gv, d);
            self.d2[e] = [d[0] + dt * dv[0], d[1] + dt * dv[1]];
            let model = self.materials[self.mate[e] as usize].0;
            let (q, r) = qr2(&self.f_tilde(e));
            if r[0][0] < 1e-10 {
                continue;
            }
            let rp = model.project(&r);
            self.d2[e] = mat_vec(&q, [rp[0][1], rp[1][1]]);
        }
        self.steps += 1;
        let bad = self
            .xv
            .iter()
            .chain(self.vv.iter())
            .chain(self.d2.iter())
            .any(|v| !(v[0].is_finite() && v[1].is_finite()));
        if bad {
            return Err(Error::Diverged {
                step: self.steps,
                time: self.time,
                what: "planar MPM: non-finite vertex position/velocity or normal column".into(),
            });
        }
        Ok(())
    }
}

/// APIC P2G of one particle with fused forces: vertex force `f` (weighted by w) and grid stress
/// `s` (through −∇w).
#[allow(clippy::too_many_arguments)]
fn scatter(
    gm: &mut [f64],
    gp: &mut [[f64; 2]],
    nx: usize,
    h: f64,
    dt: f64,
    st: &Stencil,
    m: f64,
    v: [f64; 2],
    c: &Mat2<f64>,
    f: [f64; 2],
    s: &Mat2<f64>,
) {
    for b in 0..3 {
        for a in 0..3 {
            let w = st.w[0][a] * st.w[1][b];
            let gw = [st.dw[0][a] * st.w[1][b], st.w[0][a] * st.dw[1][b]];
            let dxi = [(a as f64 - st.f[0]) * h, (b as f64 - st.f[1]) * h];
            let cv = mat_vec(c, dxi);
            let sg = mat_vec(s, gw);
            let idx = (st.base[1] + b) * nx + st.base[0] + a;
            gm[idx] += w * m;
            gp[idx][0] += w * m * (v[0] + cv[0]) + dt * (w * f[0] - sg[0]);
            gp[idx][1] += w * m * (v[1] + cv[1]) + dt * (w * f[1] - sg[1]);
        }
    }
}

/// APIC G2P of one particle: velocity, damped affine matrix (RPIC ν_d), velocity gradient.
fn gather(gv: &[[f64; 2]], nx: usize, h: f64, st: &Stencil, nu: f64) -> ([f64; 2], Mat2<f64>, Mat2<f64>) {
    let mut v = [0.0; 2];
    let mut bm = [[0.0; 2]; 2];
    let mut g = [[0.0; 2]; 2];
    for b in 0..3 {
        for a in 0..3 {
            let w = st.w[0][a] * st.w[1][b];
            let gw = [st.dw[0][a] * st.w[1][b], st.w[0][a] * st.dw[1][b]];
            let dxi = [(a as f64 - st.f[0]) * h, (b as f64 - st.f[1]) * h];
            let vi = gv[(st.base[1] + b) * nx + st.base[0] + a];
            for r in 0..2 {
                v[r] += w * vi[r];
                for col in 0..2 {
                    bm[r][col] += w * vi[r] * dxi[col];
                    g[r][col] += vi[r] * gw[col];
                }
            }
        }
    }
    let k = 4.0 / (h * h);
    let ct = [[bm[0][0] * k, bm[0][1] * k], [bm[1][0] * k, bm[1][1] * k]];
    let off_sym = 0.5 * (ct[0][1] + ct[1][0]);
    let off_skew = 0.5 * (ct[0][1] - ct[1][0]);
    let s = 1.0 - nu;
    let c = [
        [s * ct[0][0], off_skew + s * off_sym],
        [-off_skew + s * off_sym, s * ct[1][1]],
    ];
    (v, c, g)
}

#[cfg(test)]
#[path = "planar_tests.rs"]
mod tests;
