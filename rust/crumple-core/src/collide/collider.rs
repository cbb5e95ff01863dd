//! A posed, moving shape with its contact response parameters.

use super::motion::Kinematics;
use super::{BoundaryMode, Motion, Sdf, Shape};
use crate::math::{Mat3, Vec3};
use crate::validate;
use crate::{Result, invalid};

/// What a collider reports at a world point: signed distance (meters,
/// negative inside), outward unit normal, and the velocity of the collider's
/// material at that point (m/s): the three inputs of
/// [`boundary_response`](super::boundary_response).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Signed distance, meters; negative inside.
    pub phi: f64,
    /// Outward unit normal, world frame.
    pub normal: Vec3<f64>,
    /// Velocity of the collider surface at the point, m/s.
    pub velocity: Vec3<f64>,
}

/// A kinematic collision object: a [`Shape`] in its local frame, placed in
/// the world by a rigid pose (`x = rotation · p + translation`), moved by a
/// [`Motion`], and answering signed distance, normal and surface velocity
/// at world points. Solvers call [`advance_to`](Self::advance_to) with the
/// end time of a step (spec §3.6: objects are moved to their `t^{n+1}` pose
/// before the grid update) and then query it.
#[derive(Clone, Debug)]
pub struct Collider {
    shape: Shape,
    motion: Motion,
    mode: BoundaryMode,
    friction: f64,
    time: f64,
    /// Pose held when the motion was last set (`Static`/`Constant` start there).
    base: Kinematics,
    base_time: f64,
    current: Kinematics,
}

impl Collider {
    /// A static collider at time 0 with pose `translation` (meters) and
    /// `rotation` (local → world, a proper rotation matrix), response
    /// [`BoundaryMode::Separate`] with friction 0. Errors on non-finite
    /// values or a matrix that is not a rotation.
    pub fn new(shape: impl Into<Shape>, translation: Vec3<f64>, rotation: Mat3<f64>) -> Result<Self> {
        let pose = Kinematics {
            translation: validate::finite_vec("collider translation", translation)?,
            rotation: validate::rotation("collider rotation", rotation)?,
            linear_velocity: Vec3::zero(),
            angular_velocity: Vec3::zero(),
        };
        Ok(Collider {
            shape: shape.into(),
            motion: Motion::Static,
            mode: BoundaryMode::default(),
            friction: 0.0,
            time: 0.0,
            base: pose,
            base_time: 0.0,
            current: pose,
        })
    }

    /// Builder form of [`set_mode`](Self::set_mode).
    pub fn with_mode(mut self, mode: BoundaryMode) -> Self {
        self.mode = mode;
        self
    }
    /// Builder form of [`set_friction`](Self::set_friction).
    pub fn with_friction(mut self, friction: f64) -> Result<Self> {
        self.set_friction(friction)?;
        Ok(self)
    }
    /// Builder form of [`set_motion`](Self::set_motion).
    pub fn with_motion(mut self, motion: Motion) -> Result<Self> {
        self.set_motion(motion)?;
        Ok(self)
    }

    /// Sets the contact response mode.
    pub fn set_mode(&mut self, mode: BoundaryMode) {
        self.mode = mode;
    }
    /// Sets the Coulomb friction coefficient μ (dimensionless, finite, ≥ 0;
    /// used by [`BoundaryMode::Separate`]).
    pub fn set_friction(&mut self, friction: f64) -> Result<()> {
        self.friction = validate::non_negative("friction", friction)?;
        Ok(())
    }

    /// Replaces the motion. `Static` and `Constant` start from the current
    /// pose at the current time; `Keyframes` jump to their pose at the
    /// current time; `Scripted` keeps the current pose at rest until the
    /// next [`set_pose`](Self::set_pose).
    pub fn set_motion(&mut self, motion: Motion) -> Result<()> {
        let motion = motion.validated()?;
        self.base = Kinematics {
            linear_velocity: Vec3::zero(),
            angular_velocity: Vec3::zero(),
            ..self.current
        };
        self.base_time = self.time;
        self.motion = motion;
        self.current = self
            .motion
            .evaluate(self.time, &self.base, self.base_time)
            .unwrap_or(self.base);
        Ok(())
    }

    /// Its pose (translation, rotation) at absolute time `t` (s) under its
    /// motion, without moving it; a [`Motion::Scripted`] collider answers
    /// its current pose.
    pub fn pose_at(&self, t: f64) -> (Vec3<f64>, Mat3<f64>) {
        let k = self
            .motion
            .evaluate(t, &self.base, self.base_time)
            .unwrap_or(self.current);
        (k.translation, k.rotation)
    }

    /// Moves the collider to its pose at absolute time `t` (seconds, finite;
    /// earlier times are allowed). A [`Motion::Scripted`] collider only
    /// records the time.
    pub fn advance_to(&mut self, t: f64) -> Result<()> {
        validate::finite("time", t)?;
        self.time = t;
        if let Some(k) = self.motion.evaluate(t, &self.base, self.base_time) {
            self.current = k;
        }
        Ok(())
    }

    /// Sets pose (meters; rotation local → world) and rigid velocity (m/s,
    /// rad/s about the new translation) of a [`Motion::Scripted`] collider,
    /// typically from a Python callback each frame. Errors for other
    /// motions, whose pose follows from time, and on invalid values.
    pub fn set_pose(
        &mut self,
        translation: Vec3<f64>,
        rotation: Mat3<f64>,
        linear_velocity: Vec3<f64>,
        angular_velocity: Vec3<f64>,
    ) -> Result<()> {
        if !matches!(self.motion, Motion::Scripted) {
            return invalid!(
                "set_pose needs a collider with scripted motion, but this one has {} motion; \
                 set its motion to Motion::Scripted first",
                self.motion.name()
            );
        }
        self.current = Kinematics {
            translation: validate::finite_vec("translation", translation)?,
            rotation: validate::rotation("rotation", rotation)?,
            linear_velocity: validate::finite_vec("linear_velocity", linear_velocity)?,
            angular_velocity: validate::finite_vec("angular_velocity", angular_velocity)?,
        };
        Ok(())
    }

    /// The shape in its local frame.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }
    /// The motion (validated copy; keyframe rotations re-orthonormalised).
    pub fn motion(&self) -> &Motion {
        &self.motion
    }
    /// Contact response mode.
    pub fn mode(&self) -> BoundaryMode {
        self.mode
    }
    /// Coulomb friction coefficient μ (dimensionless).
    pub fn friction(&self) -> f64 {
        self.friction
    }
    /// Time of the current pose, seconds.
    pub fn time(&self) -> f64 {
        self.time
    }
    /// Current translation (world position of the local origin, the
    /// rotation center), meters.
    pub fn translation(&self) -> Vec3<f64> {
        self.current.translation
    }
    /// Current rotation, local → world.
    pub fn rotation(&self) -> Mat3<f64> {
        self.current.rotation
    }
    /// Current velocity of the local origin, m/s.
    pub fn linear_velocity(&self) -> Vec3<f64> {
        self.current.linear_velocity
    }
    /// Current angular velocity about the local origin, rad/s, world frame.
    pub fn angular_velocity(&self) -> Vec3<f64> {
        self.current.angular_velocity
    }

    /// World point → local frame of the shape.
    pub fn to_local(&self, x: Vec3<f64>) -> Vec3<f64> {
        self.current.rotation.transpose() * (x - self.current.translation)
    }
    /// Local point → world.
    pub fn to_world(&self, p: Vec3<f64>) -> Vec3<f64> {
        self.current.rotation * p + self.current.translation
    }

    /// Signed distance at world point `x`, meters (negative inside).
    pub fn phi(&self, x: Vec3<f64>) -> f64 {
        self.shape.distance(self.to_local(x))
    }
    /// Outward unit normal at world point `x`, world frame.
    pub fn normal(&self, x: Vec3<f64>) -> Vec3<f64> {
        self.current.rotation * self.shape.normal(self.to_local(x))
    }
    /// Velocity of the collider's material at world point `x`:
    /// `v + ω × (x − c)` with `c` the translation, m/s.
    pub fn velocity(&self, x: Vec3<f64>) -> Vec3<f64> {
        self.current.linear_velocity + self.current.angular_velocity.cross(x - self.current.translation)
    }
    /// Distance, normal and velocity at `x` in one call.
    pub fn contact(&self, x: Vec3<f64>) -> Contact {
        let (phi, n) = self.shape.distance_and_normal(self.to_local(x));
        Contact {
            phi,
            normal: self.current.rotation * n,
            velocity: self.velocity(x),
        }
    }
    /// [`contact`](Self::contact) when `x` is inside or on the surface
    /// (`phi ≤ 0`, where spec §3.6 applies the response), else `None`.
    pub fn query(&self, x: Vec3<f64>) -> Option<Contact> {
        self.query_within(x, 0.0)
    }
    /// [`contact`](Self::contact) when `phi ≤ margin` (meters; a positive
    /// margin gives a contact thickness, e.g. half a cloth thickness).
    pub fn query_within(&self, x: Vec3<f64>, margin: f64) -> Option<Contact> {
        let local = self.to_local(x);
        let phi = self.shape.distance(local);
        if phi <= margin {
            let n = self.current.rotation * self.shape.normal(local);
            Some(Contact {
                phi,
                normal: n,
                velocity: self.velocity(x),
            })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::{Rng, check_normals};
    use crate::collide::{BoxShape, Capsule, Sphere};

    /// World-frame view of a collider as an [`Sdf`], to reuse the normal check.
    struct World<'a>(&'a Collider);
    impl Sdf for World<'_> {
        fn distance(&self, p: Vec3<f64>) -> f64 {
            self.0.phi(p)
        }
        fn normal(&self, p: Vec3<f64>) -> Vec3<f64> {
            self.0.normal(p)
        }
        fn distance_and_normal(&self, p: Vec3<f64>) -> (f64, Vec3<f64>) {
            let c = self.0.contact(p);
            (c.phi, c.normal)
        }
    }

    #[test]
    fn rotated_translated_box() {
        // 90° about z maps local x to world y: a (2, 1, 0.5)-half-extent box
        // looks like a (1, 2, 0.5) one in the world.
        let r = Mat3::from_axis_angle(Vec3::new(0.0, 0.0, 1.0), std::f64::consts::FRAC_PI_2);
        let t = Vec3::new(1.0, -2.0, 3.0);
        let c = Collider::new(BoxShape::new(Vec3::new(2.0, 1.0, 0.5)).unwrap(), t, r).unwrap();
        let same = BoxShape::new(Vec3::new(1.0, 2.0, 0.5)).unwrap();
        let mut rng = Rng::new(30);
        for _ in 0..1000 {
            let x = rng.point(t - Vec3::splat(4.0), t + Vec3::splat(4.0));
            assert!((c.phi(x) - same.distance(x - t)).abs() < 1e-12, "{x:?}");
        }
        // General rotation: the world SDF is the local one moved rigidly.
        let r = Mat3::from_axis_angle(Vec3::new(1.0, 2.0, 2.0) * (1.0 / 3.0), 0.9);
        let shape = BoxShape::new(Vec3::new(0.3, 0.6, 0.2)).unwrap();
        let c = Collider::new(shape, t, r).unwrap();
        let mut pts = Vec::new();
        for _ in 0..1000 {
            let p = rng.point(Vec3::splat(-1.0), Vec3::splat(1.0));
            let x = r * p + t;
            assert!((c.phi(x) - shape.distance(p)).abs() < 1e-12);
            assert!((c.normal(x) - r * shape.normal(p)).norm() < 1e-12);
            assert!((c.to_local(x) - p).norm() < 1e-12 && (c.to_world(p) - x).norm() < 1e-12);
            pts.push(x);
        }
        check_normals(&World(&c), &pts, 1e-6, 2);
    }

    #[test]
    fn rotated_capsule_along_x() {
        // Local y → world x: a capsule from (−0.5, 1, 0) to (1.5, 1, 0).
        let r = Mat3::from_axis_angle(Vec3::new(0.0, 0.0, 1.0), -std::f64::consts::FRAC_PI_2);
        let c = Collider::new(Capsule::new(1.0, 0.25).unwrap(), Vec3::new(0.5, 1.0, 0.0), r).unwrap();
        let mut rng = Rng::new(31);
        let mut pts = Vec::new();
        for _ in 0..1000 {
            let x = rng.point(Vec3::new(-1.5, -0.5, -1.0), Vec3::new(2.5, 2.5, 1.0));
            let on_axis = Vec3::new(x.x.clamp(-0.5, 1.5), 1.0, 0.0);
            assert!((c.phi(x) - ((x - on_axis).norm() - 0.25)).abs() < 1e-12, "{x:?}");
            pts.push(x);
        }
        check_normals(&World(&c), &pts, 1e-6, 0);
        assert!((c.normal(Vec3::new(2.0, 1.0, 0.0)) - Vec3::new(1.0, 0.0, 0.0)).norm() < 1e-12);
        let q = c.query(Vec3::new(0.0, 1.1, 0.0)).unwrap();
        assert!((q.phi + 0.15).abs() < 1e-12 && (q.normal - Vec3::new(0.0, 1.0, 0.0)).norm() < 1e-12);
        assert!(c.query(Vec3::new(0.0, 1.3, 0.0)).is_none());
        assert!(c.query_within(Vec3::new(0.0, 1.3, 0.0), 0.06).is_some());
    }

    /// Follows a material point of the collider over time and compares the
    /// finite-difference velocity of its world position with `velocity`.
    fn check_material_velocity(c: &mut Collider, times: &[f64]) {
        let mut rng = Rng::new(32);
        for &t in times {
            c.advance_to(t).unwrap();
            for _ in 0..20 {
                let p = rng.point(Vec3::splat(-1.0), Vec3::splat(1.0));
                let h = 1e-6;
                c.advance_to(t - h).unwrap();
                let xa = c.to_world(p);
                c.advance_to(t + h).unwrap();
                let xb = c.to_world(p);
                c.advance_to(t).unwrap();
                let x = c.to_world(p);
                let v_fd = (xb - xa) * (0.5 / h);
                let v = c.velocity(x);
                assert!(
                    (v - v_fd).norm() < 1e-6 * (1.0 + v.norm()),
                    "t = {t}: {v:?} vs {v_fd:?}"
                );
                assert_eq!(c.contact(x).velocity, v);
            }
        }
    }

    #[test]
    fn constant_motion_velocity_matches_material_points() {
        let v = Vec3::new(0.3, -0.2, 1.0);
        let w = Vec3::new(0.5, 2.0, -1.0);
        let mut c = Collider::new(
            Sphere::new(0.2).unwrap(),
            Vec3::new(1.0, 2.0, 3.0),
            Mat3::identity(),
        )
        .unwrap()
        .with_motion(Motion::Constant {
            linear_velocity: v,
            angular_velocity: w,
        })
        .unwrap();
        check_material_velocity(&mut c, &[0.0, 0.37, 1.5, 4.0]);
        c.advance_to(2.0).unwrap();
        assert!((c.translation() - (Vec3::new(1.0, 2.0, 3.0) + v * 2.0)).norm() < 1e-12);
        assert_eq!(c.linear_velocity(), v);
        assert_eq!(c.angular_velocity(), w);
        // Velocity at the center is v; at an offset, v + ω × r.
        let r = Vec3::new(0.1, 0.0, 0.0);
        assert!((c.velocity(c.translation() + r) - (v + w.cross(r))).norm() < 1e-14);
    }

    #[test]
    fn keyframed_motion_velocity_matches_material_points() {
        let m = Motion::Keyframes {
            times: vec![0.0, 1.0, 2.5],
            translations: vec![Vec3::zero(), Vec3::new(1.0, 0.5, 0.0), Vec3::new(2.0, 0.0, 1.0)],
            rotations: vec![
                Mat3::identity(),
                Mat3::from_axis_angle(Vec3::new(0.0, 1.0, 0.0), 1.0),
                Mat3::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), -2.0),
            ],
        };
        let mut c = Collider::new(
            BoxShape::new(Vec3::splat(0.2)).unwrap(),
            Vec3::zero(),
            Mat3::identity(),
        )
        .unwrap()
        .with_motion(m)
        .unwrap();
        check_material_velocity(&mut c, &[0.2, 0.5, 0.99, 1.3, 2.0]);
        c.advance_to(1.0).unwrap();
        assert!((c.translation() - Vec3::new(1.0, 0.5, 0.0)).norm() < 1e-14);
        c.advance_to(5.0).unwrap();
        assert_eq!(c.linear_velocity(), Vec3::zero());
        assert!((c.translation() - Vec3::new(2.0, 0.0, 1.0)).norm() < 1e-14);
    }

    #[test]
    fn static_and_scripted_motion() {
        let mut c = Collider::new(
            Sphere::new(0.5).unwrap(),
            Vec3::new(0.0, 1.0, 0.0),
            Mat3::identity(),
        )
        .unwrap();
        c.advance_to(3.0).unwrap();
        assert_eq!(c.translation(), Vec3::new(0.0, 1.0, 0.0));
        assert_eq!(c.velocity(Vec3::new(1.0, 0.0, 0.0)), Vec3::zero());
        let e = c
            .set_pose(Vec3::zero(), Mat3::identity(), Vec3::zero(), Vec3::zero())
            .unwrap_err()
            .to_string();
        assert!(e.contains("scripted") && e.contains("static"), "{e}");

        c.set_motion(Motion::Scripted).unwrap();
        let r = Mat3::from_axis_angle(Vec3::new(1.0, 0.0, 0.0), 0.4);
        c.set_pose(
            Vec3::new(2.0, 0.0, 0.0),
            r,
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 0.0, 3.0),
        )
        .unwrap();
        c.advance_to(4.0).unwrap();
        assert_eq!(c.translation(), Vec3::new(2.0, 0.0, 0.0));
        assert_eq!(c.time(), 4.0);
        assert!((c.velocity(Vec3::new(3.0, 0.0, 0.0)) - Vec3::new(0.0, 4.0, 0.0)).norm() < 1e-14);
        assert!((c.phi(Vec3::new(2.0, 0.0, 0.0)) + 0.5).abs() < 1e-14);
        assert!(
            c.set_pose(Vec3::zero(), r * 1.5, Vec3::zero(), Vec3::zero())
                .is_err()
        );
        assert!(
            c.set_pose(Vec3::zero(), r, Vec3::new(f64::NAN, 0.0, 0.0), Vec3::zero())
                .is_err()
        );

        // Switching to constant motion starts from the current pose and time.
        c.set_motion(Motion::Constant {
            linear_velocity: Vec3::new(1.0, 0.0, 0.0),
            angular_velocity: Vec3::zero(),
        })
        .unwrap();
        c.advance_to(5.0).unwrap();
        assert!((c.translation() - Vec3::new(3.0, 0.0, 0.0)).norm() < 1e-14);
        assert!((c.rotation() - r).max_abs() < 1e-14);
    }

    #[test]
    fn collider_rejects_bad_parameters() {
        let s = Sphere::new(1.0).unwrap();
        assert!(Collider::new(s, Vec3::new(f64::NAN, 0.0, 0.0), Mat3::identity()).is_err());
        let e = Collider::new(s, Vec3::zero(), Mat3::identity() * 2.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("collider rotation"), "{e}");
        let c = Collider::new(s, Vec3::zero(), Mat3::identity()).unwrap();
        let e = c.clone().with_friction(-0.5).unwrap_err().to_string();
        assert!(e.contains("friction") && e.contains("-0.5"), "{e}");
        let mut c = c.with_mode(BoundaryMode::Sticky).with_friction(0.4).unwrap();
        assert_eq!((c.mode(), c.friction()), (BoundaryMode::Sticky, 0.4));
        assert!(c.advance_to(f64::INFINITY).is_err());
        assert_eq!(c.shape().name(), "sphere");
    }
}
