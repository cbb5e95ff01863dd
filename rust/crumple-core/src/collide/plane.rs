//! Half-space bounded by a plane.

use super::Sdf;
use crate::math::Vec3;
use crate::validate;
use crate::{Result, invalid};

/// The half-space below a plane: points with `(p − point)·normal < 0` are
/// inside. The ground and domain walls are planes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    point: Vec3<f64>,
    normal: Vec3<f64>,
}

impl Plane {
    /// A plane through `point` (meters, local frame) with outward `normal`
    /// (any non-zero length; stored normalised). Errors on non-finite values
    /// or a zero normal.
    pub fn new(point: Vec3<f64>, normal: Vec3<f64>) -> Result<Self> {
        validate::finite_vec("plane point", point)?;
        validate::finite_vec("plane normal", normal)?;
        match normal.try_normalize(1e-12 * (1.0 + normal.abs().max_element())) {
            Some(n) if n.is_finite() => Ok(Plane { point, normal: n }),
            _ => invalid!(
                "plane normal must be non-zero, got ({}, {}, {}); pass the outward direction, e.g. (0, 1, 0) for a floor",
                normal.x,
                normal.y,
                normal.z
            ),
        }
    }
    /// A point on the plane (meters, local frame).
    pub fn point(&self) -> Vec3<f64> {
        self.point
    }
    /// Outward unit normal (local frame; the SDF gradient everywhere).
    pub fn unit_normal(&self) -> Vec3<f64> {
        self.normal
    }
}

impl Sdf for Plane {
    fn distance(&self, p: Vec3<f64>) -> f64 {
        (p - self.point).dot(self.normal)
    }
    fn normal(&self, _p: Vec3<f64>) -> Vec3<f64> {
        self.normal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::{Rng, check_normals};

    #[test]
    fn plane_distance_and_normal() {
        let pl = Plane::new(Vec3::new(0.0, 0.02, 0.0), Vec3::new(0.0, 2.0, 0.0)).unwrap();
        assert_eq!(Sdf::normal(&pl, Vec3::zero()), Vec3::new(0.0, 1.0, 0.0));
        assert!((pl.distance(Vec3::new(3.0, 0.52, -1.0)) - 0.5).abs() < 1e-15);
        assert!((pl.distance(Vec3::new(3.0, -0.08, -1.0)) + 0.1).abs() < 1e-15);
        assert_eq!(pl.distance(Vec3::new(7.0, 0.02, 5.0)), 0.0);

        let n = Vec3::new(1.0, 2.0, -2.0);
        let pl = Plane::new(Vec3::new(1.0, 0.0, 0.0), n).unwrap();
        let mut rng = Rng::new(1);
        let pts: Vec<_> = (0..200)
            .map(|_| rng.point(Vec3::splat(-2.0), Vec3::splat(2.0)))
            .collect();
        for &p in &pts {
            let expect = (p - Vec3::new(1.0, 0.0, 0.0)).dot(n) / 3.0;
            assert!((pl.distance(p) - expect).abs() < 1e-14);
        }
        check_normals(&pl, &pts, 1e-7, 0);
    }

    #[test]
    fn plane_rejects_zero_or_nan_normal() {
        let e = Plane::new(Vec3::zero(), Vec3::zero()).unwrap_err().to_string();
        assert!(e.contains("normal"), "{e}");
        assert!(Plane::new(Vec3::new(f64::NAN, 0.0, 0.0), Vec3::unit(1)).is_err());
        assert!(Plane::new(Vec3::zero(), Vec3::new(0.0, f64::INFINITY, 0.0)).is_err());
    }
}
