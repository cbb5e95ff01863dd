//! Closest points on segments and triangles (floating point, no exact
//! predicates), shared by the cloth self-collision kernels, EOL cloth's
//! edge crossings and pbd's surface merging.

use crate::math::Vec3;

/// A triangle whose `|n|² ≤ DEGENERATE · |ab|² |ac|²` (`sin² ≤ 1e-14` of
/// its sharpest angle) has no usable normal.
const DEGENERATE: f64 = 1e-14;

/// Parameter in `[0, 1]` of the point of segment `a + s (b − a)` closest to `p`.
#[inline]
pub fn closest_on_segment(p: Vec3<f64>, a: Vec3<f64>, b: Vec3<f64>) -> f64 {
    let ab = b - a;
    let l2 = ab.norm_squared();
    if l2 > 0.0 {
        ((p - a).dot(ab) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Barycentric coordinates `(b0, b1, b2)` of the point of triangle
/// `(a, b, c)` closest to `p`.
///
/// Inside test by signed sub-areas; a point outside the triangle (or any
/// point, for a degenerate triangle) takes the best of the three edges. This
/// is slower than Ericson's Voronoi-region walk but has no division that can
/// blow up on the slivers and collapsed triangles a crumpled sheet produces.
pub fn closest_on_triangle(p: Vec3<f64>, a: Vec3<f64>, b: Vec3<f64>, c: Vec3<f64>) -> [f64; 3] {
    let ab = b - a;
    let ac = c - a;
    let n = ab.cross(ac);
    let n2 = n.norm_squared();
    if n2 > DEGENERATE * ab.norm_squared() * ac.norm_squared() {
        // Sub-areas with `p` itself: the component of p off the plane drops
        // out of `n · ((b − p) × (c − p))`.
        let wa = n.dot((b - p).cross(c - p));
        let wb = n.dot((c - p).cross(a - p));
        let wc = n.dot((a - p).cross(b - p));
        if wa >= 0.0 && wb >= 0.0 && wc >= 0.0 {
            let s = 1.0 / (wa + wb + wc);
            return [wa * s, wb * s, wc * s];
        }
    }
    let mut best = [1.0, 0.0, 0.0];
    let mut best_d2 = f64::INFINITY;
    for k in 0..3 {
        let (i, j) = (k, (k + 1) % 3);
        let v = [a, b, c];
        let s = closest_on_segment(p, v[i], v[j]);
        let q = v[i] + (v[j] - v[i]) * s;
        let d2 = (p - q).norm_squared();
        if d2 < best_d2 {
            best_d2 = d2;
            best = [0.0; 3];
            best[i] = 1.0 - s;
            best[j] = s;
        }
    }
    best
}

/// Parameters `(s, t)` in `[0, 1]²` of the closest points `p0 + s (p1 − p0)`
/// and `q0 + t (q1 − q0)` of two segments, degenerate (point-like or
/// parallel) segments included. Clamped line–line solution, re-projected
/// when clamping moves it (Ericson, Real-Time Collision Detection, §5.1.9).
pub fn closest_on_segments(p0: Vec3<f64>, p1: Vec3<f64>, q0: Vec3<f64>, q1: Vec3<f64>) -> (f64, f64) {
    let u = p1 - p0;
    let v = q1 - q0;
    let r = p0 - q0;
    let a = u.norm_squared();
    let e = v.norm_squared();
    let f = v.dot(r);
    if a == 0.0 && e == 0.0 {
        return (0.0, 0.0);
    }
    if a == 0.0 {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = u.dot(r);
    if e == 0.0 {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = u.dot(v);
    let denom = a * e - b * b;
    // Parallel (to sin² 1e-14): any s works for the lines; start at 0 and
    // let the re-projection below find the overlap.
    let mut s = if denom > 1e-14 * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}
