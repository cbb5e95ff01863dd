//! Axis-aligned box (in its local frame; rotate it with the collider pose).

use super::Sdf;
use crate::Result;
use crate::math::Vec3;
use crate::validate;

/// A solid box centered at the local origin, spanning `±half_extents`.
/// The SDF is exact inside and outside (Euclidean distance to the box
/// surface), so penetration depth near edges and corners is right.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxShape {
    half_extents: Vec3<f64>,
}

/// `-1` for negative values, `+1` otherwise (zero counts as positive so
/// degenerate points pick a deterministic side).
#[inline]
pub(crate) fn side(v: f64) -> f64 {
    if v < 0.0 { -1.0 } else { 1.0 }
}

impl BoxShape {
    /// A box with `half_extents` meters along local x, y, z (each finite, > 0).
    pub fn new(half_extents: Vec3<f64>) -> Result<Self> {
        validate::positive("box half_extents.x", half_extents.x)?;
        validate::positive("box half_extents.y", half_extents.y)?;
        validate::positive("box half_extents.z", half_extents.z)?;
        Ok(BoxShape { half_extents })
    }
    /// Half extents in meters.
    pub fn half_extents(&self) -> Vec3<f64> {
        self.half_extents
    }
}

impl Sdf for BoxShape {
    fn distance(&self, p: Vec3<f64>) -> f64 {
        let q = p.abs() - self.half_extents;
        let outside = q.component_max(Vec3::zero()).norm();
        let inside = q.max_element().min(0.0);
        outside + inside
    }

    /// Outside: direction from the nearest surface point (face, edge or
    /// corner). Inside: normal of the nearest face; on ties (medial planes)
    /// the first of x, y, z; on a zero coordinate the + side.
    fn normal(&self, p: Vec3<f64>) -> Vec3<f64> {
        let q = p.abs() - self.half_extents;
        let s = Vec3::new(side(p.x), side(p.y), side(p.z));
        if q.max_element() > 0.0 {
            let m = q.component_max(Vec3::zero());
            return m.component_mul(s).normalize_or_zero();
        }
        let axis = if q.x >= q.y && q.x >= q.z {
            0
        } else if q.y >= q.z {
            1
        } else {
            2
        };
        Vec3::unit(axis) * s[axis]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::{Rng, check_distances, check_normals};

    /// Independent formulation: outside, distance to the clamped point;
    /// inside, minus the distance to the nearest face plane.
    fn reference(h: Vec3<f64>, p: Vec3<f64>) -> f64 {
        let c = p.component_max(-h).component_min(h);
        if c != p {
            (p - c).norm()
        } else {
            -(h - p.abs()).min_element()
        }
    }

    #[test]
    fn box_distance_exact() {
        let h = Vec3::new(0.5, 1.0, 0.25);
        let b = BoxShape::new(h).unwrap();
        let cases = [
            (Vec3::new(0.0, 0.0, 0.0), -0.25),
            (Vec3::new(0.5, 0.0, 0.0), 0.0),
            (Vec3::new(0.5, 1.0, 0.25), 0.0),   // corner
            (Vec3::new(1.5, 0.0, 0.0), 1.0),    // face
            (Vec3::new(0.0, -1.0, 0.0), 0.0),   // on face
            (Vec3::new(0.8, 1.4, 0.0), 0.5),    // edge region (3-4-5)
            (Vec3::new(-0.8, -1.4, 0.1), 0.5),  // edge region
            (Vec3::new(1.5, 3.0, 2.25), 3.0),   // corner region (1,2,2)
            (Vec3::new(0.45, 0.0, 0.0), -0.05), // inside near +x
            (Vec3::new(0.0, 0.9, 0.0), -0.1),   // inside near +y
            (Vec3::new(0.4, 0.95, 0.2), -0.05), // inside near corner
        ];
        check_distances(&b, &cases);
        let mut rng = Rng::new(3);
        let pts: Vec<_> = (0..2000)
            .map(|_| rng.point(Vec3::splat(-2.0), Vec3::splat(2.0)))
            .collect();
        for &p in &pts {
            assert!((b.distance(p) - reference(h, p)).abs() < 1e-14, "{p:?}");
        }
        // Many points on the surface: project random points to a face.
        for _ in 0..200 {
            let mut p = rng.point(-h, h);
            let axis = (rng.next_u64() % 3) as usize;
            p[axis] = if rng.uniform(0.0, 1.0) < 0.5 {
                -h[axis]
            } else {
                h[axis]
            };
            assert!(b.distance(p).abs() < 1e-15, "{p:?}");
        }
        check_normals(&b, &pts, 1e-6, 2);
    }

    #[test]
    fn box_normals_at_faces_edges_corners() {
        let b = BoxShape::new(Vec3::new(1.0, 1.0, 1.0)).unwrap();
        let r2 = 0.5_f64.sqrt();
        let r3 = (1.0_f64 / 3.0).sqrt();
        let cases = [
            (Vec3::new(2.0, 0.3, -0.2), Vec3::new(1.0, 0.0, 0.0)),
            (Vec3::new(0.1, -0.2, -0.9), Vec3::new(0.0, 0.0, -1.0)),
            (Vec3::new(2.0, 2.0, 0.0), Vec3::new(r2, r2, 0.0)),
            (Vec3::new(-2.0, 2.0, -2.0), Vec3::new(-r3, r3, -r3)),
            (Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)),
        ];
        for (p, n) in cases {
            assert!((b.normal(p) - n).norm() < 1e-14, "{p:?}: {:?}", b.normal(p));
        }
    }

    #[test]
    fn box_rejects_bad_extents() {
        let e = BoxShape::new(Vec3::new(1.0, 0.0, 1.0)).unwrap_err().to_string();
        assert!(e.contains("half_extents.y"), "{e}");
        assert!(BoxShape::new(Vec3::new(1.0, 1.0, f64::NAN)).is_err());
    }
}
