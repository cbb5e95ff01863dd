//! Sphere.

use super::Sdf;
use super::sdf::FALLBACK_NORMAL;
use crate::Result;
use crate::math::Vec3;
use crate::validate;

/// A solid sphere centered at the local origin (place it with the collider
/// pose).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    radius: f64,
}

impl Sphere {
    /// A sphere of `radius` meters (finite, > 0).
    pub fn new(radius: f64) -> Result<Self> {
        Ok(Sphere {
            radius: validate::positive("sphere radius", radius)?,
        })
    }
    /// Radius in meters.
    pub fn radius(&self) -> f64 {
        self.radius
    }
}

impl Sdf for Sphere {
    fn distance(&self, p: Vec3<f64>) -> f64 {
        p.norm() - self.radius
    }
    /// `p/|p|`; at the center, +y.
    fn normal(&self, p: Vec3<f64>) -> Vec3<f64> {
        p.try_normalize(0.0).unwrap_or(FALLBACK_NORMAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::{Rng, check_normals};

    #[test]
    fn sphere_distance_and_normal() {
        let s = Sphere::new(0.5).unwrap();
        let mut rng = Rng::new(2);
        let mut pts = Vec::new();
        for _ in 0..300 {
            let dir = rng.unit();
            let r = rng.uniform(0.0, 1.5);
            let p = dir * r;
            assert!((s.distance(p) - (r - 0.5)).abs() < 1e-14, "{p:?}");
            pts.push(p);
            // On the surface.
            assert!(s.distance(dir * 0.5).abs() < 1e-15);
            assert!((s.normal(dir * 0.5) - dir).norm() < 1e-14);
        }
        check_normals(&s, &pts, 1e-6, 0);
        assert_eq!(s.distance(Vec3::zero()), -0.5);
        assert_eq!(s.normal(Vec3::zero()), Vec3::new(0.0, 1.0, 0.0));
    }

    #[test]
    fn sphere_rejects_bad_radius() {
        for r in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = Sphere::new(r).unwrap_err().to_string();
            assert!(e.contains("sphere radius"), "{e}");
        }
    }
}
