//! Capsule (segment swept by a sphere) along local y.

use super::Sdf;
use super::box_shape::side;
use crate::Result;
use crate::math::Vec3;
use crate::validate;

/// All points within `radius` of the segment from `(0, −half_height, 0)` to
/// `(0, half_height, 0)`: a cylinder with hemispherical caps, the usual
/// proxy for limbs, rods and robot fingers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    half_height: f64,
    radius: f64,
}

impl Capsule {
    /// `half_height` (meters, finite, ≥ 0: half the length of the core
    /// segment, caps excluded; 0 gives a sphere) and `radius` (meters,
    /// finite, > 0).
    pub fn new(half_height: f64, radius: f64) -> Result<Self> {
        validate::non_negative("capsule half_height", half_height)?;
        validate::positive("capsule radius", radius)?;
        Ok(Capsule { half_height, radius })
    }
    /// Half length of the core segment in meters.
    pub fn half_height(&self) -> f64 {
        self.half_height
    }
    /// Radius in meters.
    pub fn radius(&self) -> f64 {
        self.radius
    }
    fn offset(&self, p: Vec3<f64>) -> Vec3<f64> {
        let y = p.y.clamp(-self.half_height, self.half_height);
        Vec3::new(p.x, p.y - y, p.z)
    }
}

impl Sdf for Capsule {
    fn distance(&self, p: Vec3<f64>) -> f64 {
        self.offset(p).norm() - self.radius
    }
    /// Direction from the nearest point of the core segment; on the segment
    /// itself, +x beside it or ±y at its ends.
    fn normal(&self, p: Vec3<f64>) -> Vec3<f64> {
        match self.offset(p).try_normalize(0.0) {
            Some(n) => n,
            None if p.y.abs() >= self.half_height => Vec3::new(0.0, side(p.y), 0.0),
            None => Vec3::new(1.0, 0.0, 0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::{Rng, check_distances, check_normals};

    #[test]
    fn capsule_distance_and_normal() {
        let c = Capsule::new(0.6, 0.2).unwrap();
        let cases = [
            (Vec3::new(0.0, 0.0, 0.0), -0.2),
            (Vec3::new(0.2, 0.3, 0.0), 0.0),
            (Vec3::new(0.0, 0.8, 0.0), 0.0),
            (Vec3::new(0.0, -1.0, 0.0), 0.2),
            (Vec3::new(0.3, 1.0, 0.0), 0.3),  // 3-4-5 from the top end
            (Vec3::new(-0.6, 0.1, 0.8), 0.8), // beside the segment
            (Vec3::new(0.1, -0.5, 0.0), -0.1),
        ];
        check_distances(&c, &cases);
        let mut rng = Rng::new(4);
        let pts: Vec<_> = (0..1000)
            .map(|_| rng.point(Vec3::splat(-1.5), Vec3::splat(1.5)))
            .collect();
        for &p in &pts {
            // Reference: brute-force minimum over samples of the segment is an
            // upper bound; the exact value is below it by at most the sampling error.
            let mut best = f64::INFINITY;
            for i in 0..=2000 {
                let y = -0.6 + 1.2 * i as f64 / 2000.0;
                best = best.min((p - Vec3::new(0.0, y, 0.0)).norm());
            }
            let d = c.distance(p) + 0.2;
            assert!(d <= best + 1e-14 && best - d < 1e-3, "{p:?}");
        }
        check_normals(&c, &pts, 1e-6, 0);
        assert_eq!(c.normal(Vec3::new(0.0, 0.1, 0.0)), Vec3::new(1.0, 0.0, 0.0));
        assert_eq!(c.normal(Vec3::new(0.0, -0.6, 0.0)), Vec3::new(0.0, -1.0, 0.0));
    }

    #[test]
    fn capsule_rejects_bad_parameters() {
        assert!(Capsule::new(0.0, 0.1).is_ok());
        let e = Capsule::new(-0.1, 0.1).unwrap_err().to_string();
        assert!(e.contains("half_height"), "{e}");
        let e = Capsule::new(0.5, 0.0).unwrap_err().to_string();
        assert!(e.contains("capsule radius"), "{e}");
    }
}
