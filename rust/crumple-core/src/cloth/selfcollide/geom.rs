//! Floating-point geometric kernels (no exact predicates): closest points (for the CCD
//! contact test), the proximity tests of the repulsion pairs, and the
//! segment–triangle crossing test behind the intersection count.

use crate::math::Vec3;

/// Below this `sin²` of the angle between two edges they are treated as
/// parallel by the proximity test (ARCSim's `signed_ee_distance` uses the
/// same 1e-6): their line–line closest points are then ill-defined, and a
/// stack of parallel edges is covered by the vertex–face pairs anyway.
const PARALLEL_SIN2: f64 = 1e-6;

/// A triangle whose `|n|² ≤ DEGENERATE · |ab|² |ac|²` (`sin² ≤ 1e-14` of
/// its sharpest angle) has no usable normal.
const DEGENERATE: f64 = 1e-14;

// The closest-point kernels are shared with EOL cloth's remesher and pbd's
// merge test: crate::geometry::closest.
pub(super) use crate::geometry::closest::{closest_on_segments, closest_on_triangle};

/// A proximity found by [`vf_proximity`] or [`ee_proximity`]: weights with
/// `Σ w = 0`, unit normal from the second side to the first, and the
/// distance `Σ w_k n·x_k ≥ 0`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Near {
    pub(super) weights: [f64; 4],
    pub(super) normal: Vec3<f64>,
    pub(super) distance: f64,
}

/// Vertex `p` closer than `d` to triangle `(a, b, c)` along the triangle's
/// normal, with its orthogonal projection inside the triangle (the
/// reference code's `signed_vf_distance` criterion, spec §6.3). Points whose
/// nearest triangle point is on the boundary are left to other pairs: the
/// criterion keeps a flat or gently curved sheet from pairing each vertex
/// with its in-plane neighbours, which would push the sheet apart in-plane.
#[inline]
pub(super) fn vf_proximity(p: Vec3<f64>, a: Vec3<f64>, b: Vec3<f64>, c: Vec3<f64>, d: f64) -> Option<Near> {
    let ab = b - a;
    let ac = c - a;
    let n = ab.cross(ac);
    let n2 = n.norm_squared();
    if n2 <= DEGENERATE * ab.norm_squared() * ac.norm_squared() || n2 == 0.0 {
        return None;
    }
    let inv = 1.0 / n2.sqrt();
    let h = n.dot(p - a) * inv;
    if h.abs() >= d {
        return None;
    }
    let wa = n.dot((b - p).cross(c - p));
    let wb = n.dot((c - p).cross(a - p));
    let wc = n.dot((a - p).cross(b - p));
    if wa < 0.0 || wb < 0.0 || wc < 0.0 {
        return None;
    }
    let s = 1.0 / (wa + wb + wc);
    let sign = if h >= 0.0 { 1.0 } else { -1.0 };
    Some(Near {
        weights: [1.0, -wa * s, -wb * s, -wc * s],
        normal: n * (inv * sign),
        distance: h.abs(),
    })
}

/// Edges `(p0, p1)` and `(q0, q1)` closer than `d`, with the closest points
/// of their lines inside both segments (ARCSim's `signed_ee_distance`
/// criterion; near-parallel edges are skipped, see [`PARALLEL_SIN2`]). The
/// normal is the unit common perpendicular `±(p1 − p0) × (q1 − q0)`.
#[inline]
pub(super) fn ee_proximity(
    p0: Vec3<f64>,
    p1: Vec3<f64>,
    q0: Vec3<f64>,
    q1: Vec3<f64>,
    d: f64,
) -> Option<Near> {
    let u = p1 - p0;
    let v = q1 - q0;
    let n = u.cross(v);
    let n2 = n.norm_squared();
    let a = u.norm_squared();
    let e = v.norm_squared();
    if n2 <= PARALLEL_SIN2 * a * e || n2 == 0.0 {
        return None;
    }
    let inv = 1.0 / n2.sqrt();
    let r = p0 - q0;
    let h = n.dot(r) * inv;
    if h.abs() >= d {
        return None;
    }
    // Line–line closest points; `n2 = a e − b²` is the Gram determinant.
    let b = u.dot(v);
    let c = u.dot(r);
    let f = v.dot(r);
    let s = (b * f - c * e) / n2;
    let t = (a * f - b * c) / n2;
    if !(0.0..=1.0).contains(&s) || !(0.0..=1.0).contains(&t) {
        return None;
    }
    let sign = if h >= 0.0 { 1.0 } else { -1.0 };
    Some(Near {
        weights: [1.0 - s, s, t - 1.0, -t],
        normal: n * (inv * sign),
        distance: h.abs(),
    })
}

/// `(b − a) × (c − a) · (d − a)`: six times the signed volume of the
/// tetrahedron, positive when `d` is on the side `(a, b, c)` faces
/// counter-clockwise.
#[inline]
pub(super) fn orient(a: Vec3<f64>, b: Vec3<f64>, c: Vec3<f64>, d: Vec3<f64>) -> f64 {
    (b - a).cross(c - a).dot(d - a)
}

/// Whether segment `(p, q)` passes through the interior of triangle
/// `(a, b, c)`: its endpoints strictly on opposite sides of the plane, and
/// the line on the same side of all three edges (the signs of the Plücker
/// products). Touching and coplanar configurations count as not crossing.
#[inline]
pub(super) fn segment_crosses_triangle(
    p: Vec3<f64>,
    q: Vec3<f64>,
    a: Vec3<f64>,
    b: Vec3<f64>,
    c: Vec3<f64>,
) -> bool {
    let sp = orient(a, b, c, p);
    let sq = orient(a, b, c, q);
    if !(sp > 0.0 && sq < 0.0 || sp < 0.0 && sq > 0.0) {
        return false;
    }
    let u = orient(p, q, a, b);
    let v = orient(p, q, b, c);
    let w = orient(p, q, c, a);
    u > 0.0 && v > 0.0 && w > 0.0 || u < 0.0 && v < 0.0 && w < 0.0
}

/// Whether two triangles intersect. Two non-coplanar triangles intersect
/// along a segment whose ends lie on edges of one or the other, so six
/// edge–triangle tests decide it; coplanar overlap is not reported.
pub(super) fn triangles_intersect(t: [Vec3<f64>; 3], u: [Vec3<f64>; 3]) -> bool {
    (0..3).any(|k| {
        segment_crosses_triangle(t[k], t[(k + 1) % 3], u[0], u[1], u[2])
            || segment_crosses_triangle(u[k], u[(k + 1) % 3], t[0], t[1], t[2])
    })
}
