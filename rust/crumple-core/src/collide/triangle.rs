//! Closest point on a triangle, with the feature (vertex, edge or face
//! interior) it lies on; the feature picks the pseudonormal that signs the
//! mesh distance.

use crate::math::Vec3;

/// Which part of triangle `(a, b, c)` a closest point lies on. Edges are
/// numbered `0 = ab`, `1 = bc`, `2 = ca`; vertices `0 = a`, `1 = b`, `2 = c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Feature {
    Vertex(u8),
    Edge(u8),
    Face,
}

/// Closest point to `p` on the triangle `(a, b, c)` and its feature, by
/// Voronoi-region tests on barycentric parameters (Ericson, Real-Time
/// Collision Detection, §5.1.5). The triangle must not be degenerate.
pub(crate) fn closest_point(p: Vec3<f64>, a: Vec3<f64>, b: Vec3<f64>, c: Vec3<f64>) -> (Vec3<f64>, Feature) {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Feature::Vertex(0));
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Feature::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, Feature::Edge(0));
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Feature::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, Feature::Edge(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, Feature::Edge(1));
    }
    let denom = 1.0 / (va + vb + vc);
    let v = vb * denom;
    let w = vc * denom;
    (a + ab * v + ac * w, Feature::Face)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::Rng;

    #[test]
    fn closest_point_matches_brute_force_and_features() {
        let a = Vec3::new(0.0, 0.0, 0.0);
        let b = Vec3::new(1.0, 0.0, 0.0);
        let c = Vec3::new(0.2, 0.9, 0.1);
        let mut rng = Rng::new(40);
        for _ in 0..500 {
            let p = rng.point(Vec3::splat(-1.0), Vec3::splat(2.0));
            let (q, f) = closest_point(p, a, b, c);
            let mut best = f64::INFINITY;
            let n = 300;
            for i in 0..=n {
                for j in 0..=(n - i) {
                    let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                    best = best.min((p - (a + (b - a) * u + (c - a) * v)).norm());
                }
            }
            let d = (p - q).norm();
            assert!(d <= best + 1e-12 && best - d < 5e-3, "{p:?}: {d} vs {best}");
            match f {
                Feature::Vertex(0) => assert_eq!(q, a),
                Feature::Vertex(1) => assert_eq!(q, b),
                Feature::Vertex(2) => assert_eq!(q, c),
                Feature::Edge(k) => {
                    let (e0, e1) = [(a, b), (b, c), (c, a)][k as usize];
                    assert!((q - e0).cross(e1 - e0).norm() < 1e-12);
                }
                Feature::Face => {
                    let n = (b - a).cross(c - a);
                    assert!((p - q).cross(n).norm() < 1e-12 * (1.0 + (p - q).norm()));
                }
                Feature::Vertex(_) => unreachable!(),
            }
        }
        let above = (a + b + c) * (1.0 / 3.0) + (b - a).cross(c - a) * 5.0;
        assert_eq!(closest_point(above, a, b, c).1, Feature::Face);
        assert_eq!(
            closest_point(Vec3::new(0.5, -1.0, 0.0), a, b, c).1,
            Feature::Edge(0)
        );
        assert_eq!(
            closest_point(Vec3::new(-1.0, -1.0, 0.0), a, b, c).1,
            Feature::Vertex(0)
        );
    }
}
