//! Finite capped cylinder along local y.

use super::Sdf;
use super::box_shape::side;
use crate::Result;
use crate::math::Vec3;
use crate::validate;

/// A solid cylinder of `radius` around local y, between the caps
/// `y = ±half_height`. The SDF is exact, including the rounded distance
/// field outside the rims and the inside distance to the nearer of side and
/// cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    radius: f64,
    half_height: f64,
}

impl Cylinder {
    /// `radius` and `half_height` in meters, both finite and > 0.
    pub fn new(radius: f64, half_height: f64) -> Result<Self> {
        validate::positive("cylinder radius", radius)?;
        validate::positive("cylinder half_height", half_height)?;
        Ok(Cylinder { radius, half_height })
    }
    /// Radius in meters.
    pub fn radius(&self) -> f64 {
        self.radius
    }
    /// Half height in meters (caps at `y = ±half_height`).
    pub fn half_height(&self) -> f64 {
        self.half_height
    }
    /// Distance past the side and past the cap (negative inside), and the
    /// unit radial direction (+x on the axis).
    fn parts(&self, p: Vec3<f64>) -> (f64, f64, Vec3<f64>) {
        let rho = p.x.hypot(p.z);
        let radial = if rho > 0.0 {
            Vec3::new(p.x / rho, 0.0, p.z / rho)
        } else {
            Vec3::new(1.0, 0.0, 0.0)
        };
        (rho - self.radius, p.y.abs() - self.half_height, radial)
    }
}

impl Sdf for Cylinder {
    fn distance(&self, p: Vec3<f64>) -> f64 {
        let (dr, dy, _) = self.parts(p);
        dr.max(dy).min(0.0) + dr.max(0.0).hypot(dy.max(0.0))
    }
    /// Outside: from the nearest surface point (side, cap or rim). Inside:
    /// the nearer of side and cap; on ties the cap.
    fn normal(&self, p: Vec3<f64>) -> Vec3<f64> {
        let (dr, dy, radial) = self.parts(p);
        let up = Vec3::new(0.0, side(p.y), 0.0);
        if dr > 0.0 && dy > 0.0 {
            (radial * dr + up * dy).normalize_or_zero()
        } else if dr > 0.0 {
            radial
        } else if dy > 0.0 || dy >= dr {
            up
        } else {
            radial
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::{Rng, check_distances, check_normals};

    /// Independent formulation: outside, distance to the clamped point in
    /// (radial, axial) coordinates; inside, minus the nearer of side and cap.
    fn reference(r: f64, h: f64, p: Vec3<f64>) -> f64 {
        let rho = p.x.hypot(p.z);
        if rho <= r && p.y.abs() <= h {
            -(r - rho).min(h - p.y.abs())
        } else {
            (rho - rho.min(r)).hypot(p.y - p.y.clamp(-h, h))
        }
    }

    #[test]
    fn cylinder_distance_exact() {
        let c = Cylinder::new(0.3, 0.5).unwrap();
        let cases = [
            (Vec3::new(0.0, 0.0, 0.0), -0.3),
            (Vec3::new(0.0, 0.4, 0.0), -0.1),    // inside near the cap
            (Vec3::new(0.25, 0.0, 0.0), -0.05),  // inside near the side
            (Vec3::new(0.0, 0.5, 0.0), 0.0),     // cap center
            (Vec3::new(0.3, 0.5, 0.0), 0.0),     // rim
            (Vec3::new(0.0, 0.0, -0.3), 0.0),    // side
            (Vec3::new(0.1, -0.9, 0.1), 0.4),    // below the cap
            (Vec3::new(0.0, 0.2, 1.3), 1.0),     // beside
            (Vec3::new(0.6, 0.9, 0.0), 0.5),     // rim region (3-4-5)
            (Vec3::new(0.0, -0.9, -0.6), 0.5),   // lower rim region
            (Vec3::new(0.28, 0.48, 0.0), -0.02), // inside near the rim
        ];
        check_distances(&c, &cases);
        let mut rng = Rng::new(5);
        let pts: Vec<_> = (0..2000)
            .map(|_| rng.point(Vec3::splat(-1.0), Vec3::splat(1.0)))
            .collect();
        for &p in &pts {
            assert!((c.distance(p) - reference(0.3, 0.5, p)).abs() < 1e-14, "{p:?}");
        }
        for _ in 0..200 {
            let dir = rng.uniform(0.0, std::f64::consts::TAU);
            let on_side = Vec3::new(0.3 * dir.cos(), rng.uniform(-0.5, 0.5), 0.3 * dir.sin());
            assert!(c.distance(on_side).abs() < 1e-15);
            let rr = rng.uniform(0.0, 0.3);
            let on_cap = Vec3::new(rr * dir.cos(), -0.5, rr * dir.sin());
            assert!(c.distance(on_cap).abs() < 1e-15);
        }
        check_normals(&c, &pts, 1e-6, 2);
    }

    #[test]
    fn cylinder_normals_at_caps_and_rims() {
        let c = Cylinder::new(1.0, 1.0).unwrap();
        let r2 = 0.5_f64.sqrt();
        let cases = [
            (Vec3::new(0.2, 1.5, 0.1), Vec3::new(0.0, 1.0, 0.0)),
            (Vec3::new(0.2, -0.95, 0.1), Vec3::new(0.0, -1.0, 0.0)),
            (Vec3::new(0.0, 0.2, 3.0), Vec3::new(0.0, 0.0, 1.0)),
            (Vec3::new(2.0, 2.0, 0.0), Vec3::new(r2, r2, 0.0)),
            (Vec3::new(0.0, -2.0, -2.0), Vec3::new(0.0, -r2, -r2)),
            (Vec3::new(0.95, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)),
            (Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.0, 1.0, 0.0)),
        ];
        for (p, n) in cases {
            assert!((c.normal(p) - n).norm() < 1e-14, "{p:?}: {:?}", c.normal(p));
        }
    }

    #[test]
    fn cylinder_rejects_bad_parameters() {
        let e = Cylinder::new(0.0, 1.0).unwrap_err().to_string();
        assert!(e.contains("cylinder radius"), "{e}");
        let e = Cylinder::new(1.0, -2.0).unwrap_err().to_string();
        assert!(e.contains("cylinder half_height"), "{e}");
    }
}
