//! Constraint rows of EOL vertices (spec eol_cloth §6.1–6.3): velocity-
//! level, linear in `q̇`; normals point out of the obstacle; `v_o` is the
//! obstacle's velocity at the vertex (zero when static).
//!
//! - corner (not flat): `n_jᵀẋ ≥ n_jᵀv_o` for the three face normals; all
//!   tangential motion is Eulerian;
//! - corner (flat) and point: `nᵀẋ ≥ nᵀv_o`, `t_kᵀẋ = t_kᵀv_o` (k = 1, 2);
//! - edge (not flat): `n_1ᵀẋ ≥ n_1ᵀv_o`, `n_2ᵀẋ ≥ n_2ᵀv_o`, `t̄ᵀẊ = 0`;
//! - edge (flat: [D] bent less than `step::FLAT_EDGE`) and wire:
//!   `n_vᵀẋ ≥ n_vᵀv_o`, `(n_v×t_e)ᵀẋ = (n_v×t_e)ᵀv_o`, `t̄ᵀẊ = 0` (at an
//!   edge `n_v` clamped into the cone of its face normals; a border vertex
//!   uses the border's normal `b̄` for `t̄`).

use super::element::Mat2d;
use super::sparse::{Csc, Triplet};
use super::system::Dofs;
use crate::math::Vec3;

/// The sharp feature an EOL vertex lies on, with its geometry (unit
/// vectors, pointing out of the obstacle) and the obstacle's number among
/// those of its kind (boxes for corners and edges, wires, points): two
/// vertices share a feature (a conformal edge joins them) only on one
/// obstacle, so parallel edges of two boxes, or two nails with one normal,
/// are different features.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Feature {
    /// A box corner: its three face normals.
    Corner { normals: [Vec3<f64>; 3], obstacle: u32 },
    /// A point (nail) with its outward normal.
    Point { normal: Vec3<f64>, obstacle: u32 },
    /// A box edge: its two face normals and its tangent.
    Edge {
        normals: [Vec3<f64>; 2],
        tangent: Vec3<f64>,
        obstacle: u32,
    },
    /// A wire: its support normal and its tangent.
    Wire {
        normal: Vec3<f64>,
        tangent: Vec3<f64>,
        obstacle: u32,
    },
}

impl Feature {
    /// The feature's kind as a number, the same in read-outs and
    /// checkpoints: 0 corner, 1 edge, 2 wire, 3 point.
    pub fn kind(&self) -> i64 {
        match self {
            Feature::Corner { .. } => 0,
            Feature::Edge { .. } => 1,
            Feature::Wire { .. } => 2,
            Feature::Point { .. } => 3,
        }
    }

    /// The obstacle's number among those of its kind.
    pub fn obstacle(&self) -> u32 {
        match *self {
            Feature::Corner { obstacle, .. }
            | Feature::Edge { obstacle, .. }
            | Feature::Wire { obstacle, .. }
            | Feature::Point { obstacle, .. } => obstacle,
        }
    }
}

/// An EOL vertex's situation (spec §6.1–6.3): its feature, whether it is
/// locally flat (§6.3), the material direction whose Eulerian motion is
/// removed (`t̄`, or `b̄` at the border; unused at corners and points), the
/// cloth's normal there (flat edges), and the obstacle's velocity there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Site {
    /// The feature.
    pub feature: Feature,
    /// Locally flat (§6.3; for edges up to a bend of `step::FLAT_EDGE`).
    pub flat: bool,
    /// `t̄` or `b̄` (unit, material space).
    pub along: Mat2d,
    /// The cloth's vertex normal.
    pub vertex_normal: Vec3<f64>,
    /// Obstacle velocity `v_o`, m/s.
    pub v_o: Vec3<f64>,
}

/// The vertex normal `nv` of an edge vertex projected on the plane of the
/// edge's face normals `n` (⊥ `t`), turned outward and clamped into their
/// cone `{a n_0 + b n_1 : a, b ≥ 0}`, unit. Parallel to `t` (no direction
/// in that plane): the cone's bisector.
fn cone_normal(nv: Vec3<f64>, n: [Vec3<f64>; 2], t: Vec3<f64>) -> Vec3<f64> {
    let mut p = nv - t * t.dot(nv);
    let mid = (n[0] + n[1]).normalize_or_zero();
    if p.norm() <= 1e-6 {
        return mid;
    }
    if p.dot(mid) < 0.0 {
        p = -p;
    }
    // p = a n_0 + b n_1 (both ⊥ t): the 2×2 Gram system.
    let (g00, g01, g11) = (n[0].dot(n[0]), n[0].dot(n[1]), n[1].dot(n[1]));
    let (r0, r1) = (p.dot(n[0]), p.dot(n[1]));
    let det = g00 * g11 - g01 * g01;
    if det.abs() <= 1e-12 {
        return mid;
    }
    let a = (r0 * g11 - r1 * g01) / det;
    let b = (r1 * g00 - r0 * g01) / det;
    if a < 0.0 {
        n[1]
    } else if b < 0.0 {
        n[0]
    } else {
        p.normalize_or_zero()
    }
}

/// Rows being collected: equalities `aᵀq̇ = b` and inequalities `aᵀq̇ ≥ b`.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    eq: Vec<Triplet>,
    b_eq: Vec<f64>,
    ineq: Vec<Triplet>,
    b_in: Vec<f64>,
    /// Per inequality row: the vertex it acts on (its first column / 3),
    /// which keys the warm start of the next step's active set.
    ineq_vertex: Vec<u32>,
    /// Per inequality row: its world normal and the obstacle's velocity
    /// there (friction, spec §6.7). Every row has them (rows on material
    /// velocities are equalities); the option is kept for the readers.
    ineq_world: Vec<Option<(Vec3<f64>, Vec3<f64>)>>,
    /// Per inequality row over several vertices (a Lagrangian point inside
    /// a cloth edge or face): the vertices and their weights, which share
    /// the row's impulse for friction; empty for a row on one vertex.
    ineq_spread: Vec<Vec<(u32, f64)>>,
    /// Per inequality row: the Coulomb μ of its contact (0 unless set).
    ineq_mu: Vec<f64>,
}

/// Two unit vectors completing `n` to an orthonormal frame.
fn tangents(n: Vec3<f64>) -> [Vec3<f64>; 2] {
    let a = if n.x.abs() < 0.9 {
        Vec3::new(1.0, 0.0, 0.0)
    } else {
        Vec3::new(0.0, 1.0, 0.0)
    };
    let t1 = (a - n * a.dot(n)).normalize_or_zero();
    [t1, n.cross(t1)]
}

impl Rows {
    fn world(&mut self, inequality: bool, x: usize, a: Vec3<f64>, v_o: Vec3<f64>) {
        let (t, b) = if inequality {
            (&mut self.ineq, &mut self.b_in)
        } else {
            (&mut self.eq, &mut self.b_eq)
        };
        let r = b.len() as u32;
        for k in 0..3 {
            t.push((r, (x + k) as u32, a[k]));
        }
        b.push(a.dot(v_o));
        if inequality {
            self.ineq_vertex.push((x / 3) as u32);
            self.ineq_world.push(Some((a, v_o)));
            self.ineq_spread.push(Vec::new());
            self.ineq_mu.push(0.0);
        }
    }

    /// Inequality rows so far.
    pub fn inequality_count(&self) -> usize {
        self.b_in.len()
    }

    /// Sets the Coulomb μ of the inequality rows from `start` on (the rows
    /// of one contact just added).
    pub fn set_friction_from(&mut self, start: usize, mu: f64) {
        for m in self.ineq_mu.iter_mut().skip(start) {
            *m = mu;
        }
    }

    /// Per inequality row so far: its Coulomb μ.
    pub fn inequality_friction(&self) -> &[f64] {
        &self.ineq_mu
    }

    /// Per inequality row so far: the vertex it acts on.
    pub fn inequality_vertices(&self) -> &[u32] {
        &self.ineq_vertex
    }

    /// Per inequality row so far: its world normal and the obstacle's
    /// velocity, for the rows on world velocities.
    pub fn inequality_normals(&self) -> &[Option<(Vec3<f64>, Vec3<f64>)>] {
        &self.ineq_world
    }

    /// Per inequality row so far: the vertices and weights of a row over
    /// several vertices (empty for a row on one).
    pub fn inequality_spread(&self) -> &[Vec<(u32, f64)>] {
        &self.ineq_spread
    }

    /// [`Self::inequality_spread`], moved out (the rows keep empty lists).
    pub fn take_spread(&mut self) -> Vec<Vec<(u32, f64)>> {
        let n = self.ineq_spread.len();
        std::mem::replace(&mut self.ineq_spread, vec![Vec::new(); n])
    }

    /// The rows of EOL vertex `i` at `site` (spec §6.1).
    pub fn eol_vertex(&mut self, dofs: &Dofs, i: usize, site: &Site) {
        let Site {
            feature,
            flat,
            along,
            vertex_normal,
            v_o,
        } = *site;
        let x = dofs.x(i);
        let eulerian = |rows: &mut Rows| {
            if let Some(u) = dofs.u(i) {
                let r = rows.b_eq.len() as u32;
                rows.eq.push((r, u as u32, along[0]));
                rows.eq.push((r, u as u32 + 1, along[1]));
                rows.b_eq.push(0.0);
            }
        };
        match feature {
            Feature::Corner { normals, .. } if !flat => {
                for n in normals {
                    self.world(true, x, n, v_o);
                }
            }
            Feature::Corner { normals, .. } => {
                let n = (normals[0] + normals[1] + normals[2]).normalize_or_zero();
                self.pinned_point(x, n, v_o);
            }
            Feature::Point { normal, .. } => self.pinned_point(x, normal, v_o),
            Feature::Edge { normals, .. } if !flat => {
                for n in normals {
                    self.world(true, x, n, v_o);
                }
                eulerian(self);
            }
            Feature::Edge { normals, tangent, .. } => {
                // Flat (§6.3, [D] up to `step::FLAT_EDGE`): one row along
                // the vertex normal, clamped into the cone of the two face
                // normals (lift-off stays possible, never into a face), and
                // the in-plane row across the edge (full rank: one normal
                // for friction).
                let nc = cone_normal(vertex_normal, normals, tangent);
                self.world(true, x, nc, v_o);
                self.world(false, x, nc.cross(tangent).normalize_or_zero(), v_o);
                eulerian(self);
            }
            Feature::Wire { normal, tangent, .. } => {
                self.world(true, x, normal, v_o);
                self.world(false, x, normal.cross(tangent).normalize_or_zero(), v_o);
                eulerian(self);
            }
        }
    }

    /// The rows of a conformal but Lagrangian vertex `i` at `site`: the
    /// Lagrangian baselines of spec §6.4 ("LAG conformal"), which run the
    /// same contact-conforming remesher as EOL and hold the vertices it puts
    /// on a feature Lagrangian (`Ẋ_i = 0`, two equality rows; spec §10 test
    /// 5). `cone` gives the face normals of an edge or corner as rows
    /// (`n_jᵀẋ ≥ n_jᵀv_o`: the vertex cannot leave the feature along the
    /// faces, so a pull over the edge locks); otherwise one averaged row
    /// `n_avgᵀẋ ≥ n_avgᵀv_o`, `n_avg = normalize(Σ n_j)` (it slides off the
    /// feature into a face, "always penetrates when sharply bent"). Wires
    /// and points have one normal, the same row in both.
    pub fn conformal_vertex(&mut self, dofs: &Dofs, i: usize, site: &Site, cone: bool) {
        let x = dofs.x(i);
        if let Some(u) = dofs.u(i) {
            for k in 0..2 {
                let r = self.b_eq.len() as u32;
                self.eq.push((r, (u + k) as u32, 1.0));
                self.b_eq.push(0.0);
            }
        }
        let v_o = site.v_o;
        let normals: Vec<Vec3<f64>> = match site.feature {
            Feature::Corner { normals, .. } => normals.to_vec(),
            Feature::Edge { normals, .. } => normals.to_vec(),
            Feature::Wire { normal, .. } | Feature::Point { normal, .. } => vec![normal],
        };
        if cone {
            for n in normals {
                self.world(true, x, n, v_o);
            }
        } else {
            let n = normals
                .iter()
                .fold(Vec3::zero(), |a, b| a + *b)
                .normalize_or_zero();
            self.world(true, x, n, v_o);
        }
    }

    fn pinned_point(&mut self, x: usize, n: Vec3<f64>, v_o: Vec3<f64>) {
        self.world(true, x, n, v_o);
        for t in tangents(n) {
            self.world(false, x, t, v_o);
        }
    }

    /// A speculative contact on vertex i (spec §6.4 [D]): `nᵀẋ ≥ nᵀv_o −
    /// closing`, `closing` (m/s) the gap over the step; friction sees the
    /// obstacle's own velocity `v_o`.
    pub fn vertex_ahead(&mut self, dofs: &Dofs, i: usize, n: Vec3<f64>, v_o: Vec3<f64>, closing: f64) {
        self.world(true, dofs.x(i), n, v_o - n * closing);
        if let Some(last) = self.ineq_world.last_mut() {
            *last = Some((n, v_o));
        }
    }

    /// A plain world row on vertex i (a Lagrangian contact `nᵀẋ ≥ nᵀv_o`,
    /// spec §6.4, or a scripted component, §6.5).
    pub fn vertex(&mut self, dofs: &Dofs, i: usize, inequality: bool, a: Vec3<f64>, v: Vec3<f64>) {
        self.world(inequality, dofs.x(i), a, v);
    }

    /// A Lagrangian contact of a point inside a cloth edge or face with an
    /// obstacle moving at `v_o` (spec §6.4 tests 1–2): `Σ_k w_k aᵀẋ_k ≥ b`
    /// over the vertices `(i_k, w_k)` (keyed for the warm start by the
    /// first); for friction each vertex takes its weight's share of the
    /// row's impulse.
    pub fn weighted(&mut self, dofs: &Dofs, vertices: &[(usize, f64)], a: Vec3<f64>, v_o: Vec3<f64>, b: f64) {
        let r = self.b_in.len() as u32;
        for &(i, w) in vertices {
            let x = dofs.x(i);
            for k in 0..3 {
                self.ineq.push((r, (x + k) as u32, w * a[k]));
            }
        }
        self.b_in.push(b);
        self.ineq_vertex.push(vertices.first().map_or(0, |v| v.0 as u32));
        self.ineq_world.push(Some((a, v_o)));
        self.ineq_spread
            .push(vertices.iter().map(|&(i, w)| (i as u32, w)).collect());
        self.ineq_mu.push(0.0);
    }

    /// `(A_eq, b_eq, A_in, b_in)` over `n` unknowns.
    pub fn build(mut self, n: usize) -> (Csc, Vec<f64>, Csc, Vec<f64>) {
        let a_eq = Csc::from_triplets(self.b_eq.len(), n, &mut self.eq);
        let a_in = Csc::from_triplets(self.b_in.len(), n, &mut self.ineq);
        (a_eq, self.b_eq, a_in, self.b_in)
    }
}

/// `t̄` of an interior edge-EOL vertex at material position `u` with
/// conformal neighbours `prev` and `next` along the line (spec §6.1): the
/// normalized mean of the unit directions `(prev − u)` and `(u − next)`.
/// The unit material direction `normalize((FᵀF)⁻¹Fᵀ t)` of a world
/// direction `t` (spec §6.1 [D]: `t̄` of an EOL vertex with no conformal
/// neighbour yet), or None where F is degenerate.
pub fn material_direction(g: &super::element::Grad, t: Vec3<f64>) -> Option<Mat2d> {
    let [[a, b], [_, d]] = g.ftf();
    let r = g.apply_t(t);
    let det = a * d - b * b;
    let m = [(d * r[0] - b * r[1]) / det, (a * r[1] - b * r[0]) / det];
    let l = m[0].hypot(m[1]);
    (l > 0.0 && l.is_finite()).then(|| [m[0] / l, m[1] / l])
}

/// `t̄` of spec §6.1 at `u` between the line's neighbours `prev` and `next`.
pub fn line_direction(prev: Mat2d, u: Mat2d, next: Mat2d) -> Mat2d {
    let unit = |a: Mat2d, b: Mat2d| {
        let d = [a[0] - b[0], a[1] - b[1]];
        let l = d[0].hypot(d[1]);
        if l > 0.0 { [d[0] / l, d[1] / l] } else { [0.0, 0.0] }
    };
    let (a, b) = (unit(prev, u), unit(u, next));
    let s = [a[0] + b[0], a[1] + b[1]];
    let l = s[0].hypot(s[1]);
    if l > 0.0 { [s[0] / l, s[1] / l] } else { a }
}

#[cfg(test)]
#[path = "constraints_tests.rs"]
mod tests;
