//! Continuous collision detection for vertex–face and edge–edge pairs moving
//! linearly over the step (Provot 1997; Bridson, Fedkiw, Anderson 2002 §6.2).
//!
//! The four points are coplanar when the cubic
//! `f(t) = A(t) · (B(t) × C(t))` vanishes (`A, B, C` are difference vectors,
//! linear in `t`). A collision is a time at which they are coplanar *and*
//! the two primitives are within a small tolerance of each other. The
//! candidate times are the sign changes of `f` on `[0, 1]` (bracketed
//! between the critical points of `f`, then bisected), plus the critical
//! points themselves (a grazing contact is a double root that floating point
//! may turn into a near miss without a sign change), the ends of the step,
//! and the time of closest approach of the two primitives' centres (which
//! catches the degenerate case `f ≡ 0`: parallel edges, or motion within a
//! common plane). At each candidate the exact closest distance decides.

use super::geom::{closest_on_segments, closest_on_triangle};
use crate::math::Vec3;

/// Bisection steps on a bracketed root: the bracket shrinks to 2⁻⁴⁸ of the
/// step, far below what the distance tolerance needs.
const BISECTIONS: usize = 48;

/// A collision found along the step.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hit {
    /// Time of contact in `[0, 1]` (read by tests and debugging only).
    #[allow(dead_code)]
    pub(super) t: f64,
    /// Barycentric weights at the contact, `Σ w = 0`: `(1, −b0, −b1, −b2)`
    /// for a vertex and face, `(1 − s, s, t − 1, −t)` for two edges.
    pub(super) weights: [f64; 4],
    /// Unit contact normal, oriented so that `Σ w_k n · x0_k ≥ 0`: it points
    /// from the second primitive toward the side the first one came from.
    pub(super) normal: Vec3<f64>,
}

/// Linearly moving difference vectors `A, B, C` (start and end) and the
/// power-basis coefficients of `f(t) = A(t) · (B(t) × C(t))`.
struct Cubic {
    a: [Vec3<f64>; 2],
    b: [Vec3<f64>; 2],
    c: [Vec3<f64>; 2],
    k: [f64; 4],
}

impl Cubic {
    fn new(a0: Vec3<f64>, a1: Vec3<f64>, b0: Vec3<f64>, b1: Vec3<f64>, c0: Vec3<f64>, c1: Vec3<f64>) -> Self {
        let (da, db, dc) = (a1 - a0, b1 - b0, c1 - c0);
        let bc0 = b0.cross(c0);
        let bc1 = db.cross(c0) + b0.cross(dc);
        let bc2 = db.cross(dc);
        Cubic {
            a: [a0, da],
            b: [b0, db],
            c: [c0, dc],
            k: [
                a0.dot(bc0),
                da.dot(bc0) + a0.dot(bc1),
                da.dot(bc1) + a0.dot(bc2),
                da.dot(bc2),
            ],
        }
    }

    #[inline]
    fn eval(&self, t: f64) -> f64 {
        ((self.k[3] * t + self.k[2]) * t + self.k[1]) * t + self.k[0]
    }

    /// Whether the primitives can be within `tol` of each other at `t`:
    /// `|f(t)| = (distance of A's tip from the plane of B, C) · |B × C|`, and
    /// the primitives' distance bounds that plane distance from above, so a
    /// contact needs `|f| ≤ tol |B × C|`. The slack covers the rounding of `f`.
    #[inline]
    fn may_touch(&self, t: f64, tol: f64) -> bool {
        let a = self.a[0] + self.a[1] * t;
        let b = self.b[0] + self.b[1] * t;
        let c = self.c[0] + self.c[1] * t;
        let bc = b.cross(c);
        let slack = 1e-12 * a.norm() * b.norm() * c.norm();
        self.eval(t).abs() <= tol * bc.norm() + slack
    }

    /// Candidate contact times in ascending order (at most 8), see the
    /// module docs. `extra` is the closest-approach time of the centres.
    fn candidates(&self, extra: f64, out: &mut [f64; 8]) -> usize {
        let mut cuts = [0.0; 4];
        let mut nc = 0;
        cuts[nc] = 0.0;
        nc += 1;
        // Critical points: roots of f' = k1 + 2 k2 t + 3 k3 t², by the
        // cancellation-free quadratic formula.
        let (qa, qb, qc) = (3.0 * self.k[3], 2.0 * self.k[2], self.k[1]);
        let mut crit = [f64::NAN; 2];
        if qa == 0.0 {
            if qb != 0.0 {
                crit[0] = -qc / qb;
            }
        } else {
            let disc = qb * qb - 4.0 * qa * qc;
            if disc >= 0.0 {
                let q = -0.5 * (qb + qb.signum() * disc.sqrt());
                crit[0] = q / qa;
                if q != 0.0 {
                    crit[1] = qc / q;
                }
            }
        }
        if crit[0] > crit[1] {
            crit.swap(0, 1);
        }
        for &t in &crit {
            if t > 0.0 && t < 1.0 {
                cuts[nc] = t;
                nc += 1;
            }
        }
        cuts[nc] = 1.0;
        nc += 1;

        let mut n = 0;
        for i in 0..nc {
            out[n] = cuts[i];
            n += 1;
            if i + 1 < nc {
                let (lo, hi) = (cuts[i], cuts[i + 1]);
                let (flo, fhi) = (self.eval(lo), self.eval(hi));
                if flo != 0.0 && fhi != 0.0 && (flo < 0.0) != (fhi < 0.0) {
                    out[n] = self.bisect(lo, hi, flo);
                    n += 1;
                }
            }
        }
        if (0.0..=1.0).contains(&extra) {
            out[n] = extra;
            n += 1;
        }
        out[..n].sort_unstable_by(f64::total_cmp);
        n
    }

    /// A root of `f` in `[lo, hi]` where `f(lo) = flo` and `f(hi)` differ in sign.
    fn bisect(&self, mut lo: f64, mut hi: f64, mut flo: f64) -> f64 {
        for _ in 0..BISECTIONS {
            let mid = 0.5 * (lo + hi);
            let fm = self.eval(mid);
            if fm == 0.0 {
                return mid;
            }
            if (fm < 0.0) == (flo < 0.0) {
                lo = mid;
                flo = fm;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

#[inline]
fn lerp(a: Vec3<f64>, b: Vec3<f64>, t: f64) -> Vec3<f64> {
    a + (b - a) * t
}

/// Time in `[0, 1]` minimising `|m0 + t (m1 − m0)|`, the separation of two
/// centres (NaN when it does not move).
#[inline]
fn closest_approach(m0: Vec3<f64>, m1: Vec3<f64>) -> f64 {
    let dm = m1 - m0;
    let l2 = dm.norm_squared();
    if l2 > 0.0 {
        (-m0.dot(dm) / l2).clamp(0.0, 1.0)
    } else {
        f64::NAN
    }
}

/// Orients `n` so that the contact's first side was on its positive side at
/// the start of the step (`Σ w x0 · n > 0`). A pair that starts in contact
/// (within `tol`) takes the side it is moving away from, i.e. the normal
/// opposes the relative motion `Σ w (x1 − x0)`.
#[inline]
fn orient_normal(n: Vec3<f64>, gap0: Vec3<f64>, gap1: Vec3<f64>, tol: f64) -> Vec3<f64> {
    let g0 = n.dot(gap0);
    let away = if g0.abs() > tol {
        g0 < 0.0
    } else {
        n.dot(gap1 - gap0) > 0.0
    };
    if away { -n } else { n }
}

/// The first of `cands` whose squared length exceeds `1e-12` times its
/// scale (a cross product of two edges with `sin > 1e-6` between them, a
/// non-zero separation), normalised; `+z` if none does.
#[inline]
fn first_unit(cands: &[(Vec3<f64>, f64)]) -> Vec3<f64> {
    for &(c, scale2) in cands {
        let l2 = c.norm_squared();
        if l2 > 1e-12 * scale2 && l2 > 0.0 && l2.is_finite() {
            return c * (1.0 / l2.sqrt());
        }
    }
    Vec3::new(0.0, 0.0, 1.0)
}

/// A cross product `u × v` with the scale `|u|² |v|²` it is judged against.
#[inline]
fn cross_scaled(u: Vec3<f64>, v: Vec3<f64>) -> (Vec3<f64>, f64) {
    (u.cross(v), u.norm_squared() * v.norm_squared())
}

/// Earliest time in `[0, 1]` at which vertex `p` comes within `tol` of the
/// triangle `(a, b, c)` while coplanar with it (positions `*0` at the start,
/// `*1` at the end of the step).
#[allow(clippy::too_many_arguments)]
pub(super) fn vertex_face(
    p0: Vec3<f64>,
    a0: Vec3<f64>,
    b0: Vec3<f64>,
    c0: Vec3<f64>,
    p1: Vec3<f64>,
    a1: Vec3<f64>,
    b1: Vec3<f64>,
    c1: Vec3<f64>,
    tol: f64,
) -> Option<Hit> {
    let cubic = Cubic::new(p0 - a0, p1 - a1, b0 - a0, b1 - a1, c0 - a0, c1 - a1);
    let third = 1.0 / 3.0;
    let m0 = p0 - (a0 + b0 + c0) * third;
    let m1 = p1 - (a1 + b1 + c1) * third;
    let mut ts = [0.0; 8];
    let nt = cubic.candidates(closest_approach(m0, m1), &mut ts);
    for &t in &ts[..nt] {
        if !cubic.may_touch(t, tol) {
            continue;
        }
        let (p, a, b, c) = (lerp(p0, p1, t), lerp(a0, a1, t), lerp(b0, b1, t), lerp(c0, c1, t));
        let bary = closest_on_triangle(p, a, b, c);
        let q = a * bary[0] + b * bary[1] + c * bary[2];
        if (p - q).norm_squared() > tol * tol {
            continue;
        }
        let weights = [1.0, -bary[0], -bary[1], -bary[2]];
        let gap = |p: Vec3<f64>, a: Vec3<f64>, b: Vec3<f64>, c: Vec3<f64>| {
            p - a * bary[0] - b * bary[1] - c * bary[2]
        };
        let (g0, g1) = (gap(p0, a0, b0, c0), gap(p1, a1, b1, c1));
        // The face normal at contact; for a collapsed face, the face normal
        // at either end of the step, then the start-of-step separation.
        let n = first_unit(&[
            cross_scaled(b - a, c - a),
            cross_scaled(b0 - a0, c0 - a0),
            cross_scaled(b1 - a1, c1 - a1),
            (g0, 0.0),
            (p - q, 0.0),
        ]);
        let normal = orient_normal(n, g0, g1, tol);
        return Some(Hit { t, weights, normal });
    }
    None
}

/// Earliest time in `[0, 1]` at which edges `(p, q)` and `(r, s)` come
/// within `tol` of each other while coplanar.
#[allow(clippy::too_many_arguments)]
pub(super) fn edge_edge(
    p0: Vec3<f64>,
    q0: Vec3<f64>,
    r0: Vec3<f64>,
    s0: Vec3<f64>,
    p1: Vec3<f64>,
    q1: Vec3<f64>,
    r1: Vec3<f64>,
    s1: Vec3<f64>,
    tol: f64,
) -> Option<Hit> {
    let cubic = Cubic::new(r0 - p0, r1 - p1, q0 - p0, q1 - p1, s0 - r0, s1 - r1);
    let m0 = (p0 + q0 - r0 - s0) * 0.5;
    let m1 = (p1 + q1 - r1 - s1) * 0.5;
    let mut ts = [0.0; 8];
    let nt = cubic.candidates(closest_approach(m0, m1), &mut ts);
    for &t in &ts[..nt] {
        if !cubic.may_touch(t, tol) {
            continue;
        }
        let (p, q, r, s) = (lerp(p0, p1, t), lerp(q0, q1, t), lerp(r0, r1, t), lerp(s0, s1, t));
        let (u, v) = closest_on_segments(p, q, r, s);
        let x = lerp(p, q, u);
        let y = lerp(r, s, v);
        if (x - y).norm_squared() > tol * tol {
            continue;
        }
        let weights = [1.0 - u, u, v - 1.0, -v];
        let gap = |p: Vec3<f64>, q: Vec3<f64>, r: Vec3<f64>, s: Vec3<f64>| lerp(p, q, u) - lerp(r, s, v);
        let (g0, g1) = (gap(p0, q0, r0, s0), gap(p1, q1, r1, s1));
        // The common perpendicular at contact; for (near-)parallel edges,
        // the one at either end of the step, then the start-of-step
        // separation.
        let n = first_unit(&[
            cross_scaled(q - p, s - r),
            cross_scaled(q0 - p0, s0 - r0),
            cross_scaled(q1 - p1, s1 - r1),
            (g0, 0.0),
            (x - y, 0.0),
        ]);
        let normal = orient_normal(n, g0, g1, tol);
        return Some(Hit { t, weights, normal });
    }
    None
}
