//! Kinematic motion of a collider: static, constant velocity, keyframes, or
//! scripted by the host.

use super::rotation;
use crate::math::{Mat3, Vec3};
use crate::validate;
use crate::{Result, invalid};

/// How a collider's pose changes with time. Times are in seconds,
/// translations in meters, velocities in m/s, angular velocities in rad/s
/// (world frame, about the collider's origin, which is its "center" for
/// [`Collider::velocity`](super::Collider::velocity)).
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Motion {
    /// Never moves; surface velocity zero.
    #[default]
    Static,
    /// Constant linear velocity of the center (m/s) and constant angular
    /// velocity about the moving center (rad/s, world frame), starting from
    /// the pose the collider had when the motion was set.
    Constant {
        /// Velocity of the center, m/s.
        linear_velocity: Vec3<f64>,
        /// Angular velocity, rad/s, world frame.
        angular_velocity: Vec3<f64>,
    },
    /// Absolute world poses at given times: translation is piecewise linear,
    /// rotation follows the shortest arc between consecutive keys
    /// (constant angular velocity per segment; add keys for turns of more
    /// than half a revolution). Before the first and from the last time on,
    /// the pose is clamped to the end key and the velocity is zero.
    Keyframes {
        /// Strictly increasing times, seconds.
        times: Vec<f64>,
        /// Translation of the collider origin at each time, meters.
        translations: Vec<Vec3<f64>>,
        /// Rotation (local → world) at each time.
        rotations: Vec<Mat3<f64>>,
    },
    /// The host sets pose and velocity every frame with
    /// [`Collider::set_pose`](super::Collider::set_pose) (Python callbacks,
    /// robot controllers); advancing time leaves them unchanged.
    Scripted,
}

impl Motion {
    /// Short lower-case name (`"static"`, `"constant"`, `"keyframes"`,
    /// `"scripted"`) for messages and bindings.
    pub fn name(&self) -> &'static str {
        match self {
            Motion::Static => "static",
            Motion::Constant { .. } => "constant",
            Motion::Keyframes { .. } => "keyframes",
            Motion::Scripted => "scripted",
        }
    }

    /// Checks the parameters and returns a cleaned copy (rotations
    /// re-orthonormalised).
    pub(crate) fn validated(self) -> Result<Motion> {
        match self {
            Motion::Static | Motion::Scripted => Ok(self),
            Motion::Constant {
                linear_velocity,
                angular_velocity,
            } => {
                validate::finite_vec("linear_velocity", linear_velocity)?;
                validate::finite_vec("angular_velocity", angular_velocity)?;
                Ok(Motion::Constant {
                    linear_velocity,
                    angular_velocity,
                })
            }
            Motion::Keyframes {
                times,
                translations,
                rotations,
            } => {
                if times.is_empty() {
                    return invalid!(
                        "keyframes need at least one time; pass times, translations and rotations of equal non-zero length"
                    );
                }
                if translations.len() != times.len() || rotations.len() != times.len() {
                    return invalid!(
                        "keyframes need one translation and one rotation per time: got {} times, {} translations, {} rotations",
                        times.len(),
                        translations.len(),
                        rotations.len()
                    );
                }
                for (i, &t) in times.iter().enumerate() {
                    validate::finite(format_args!("keyframe times[{i}]"), t)?;
                    if i > 0 && t <= times[i - 1] {
                        return invalid!(
                            "keyframe times must be strictly increasing, but times[{}] = {} and times[{i}] = {t}; sort the keys and remove duplicates",
                            i - 1,
                            times[i - 1]
                        );
                    }
                }
                for (i, &p) in translations.iter().enumerate() {
                    validate::finite_vec(format_args!("keyframe translations[{i}]"), p)?;
                }
                let rotations = rotations
                    .iter()
                    .enumerate()
                    .map(|(i, &r)| validate::rotation(format_args!("keyframe rotations[{i}]"), r))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Motion::Keyframes {
                    times,
                    translations,
                    rotations,
                })
            }
        }
    }

    /// Pose and velocity at absolute time `t` (seconds) given the pose
    /// `base` held at `base_time`; `None` for [`Motion::Scripted`] (the
    /// host owns the pose).
    pub(crate) fn evaluate(&self, t: f64, base: &Kinematics, base_time: f64) -> Option<Kinematics> {
        match self {
            Motion::Static => Some(Kinematics {
                linear_velocity: Vec3::zero(),
                angular_velocity: Vec3::zero(),
                ..*base
            }),
            Motion::Constant {
                linear_velocity,
                angular_velocity,
            } => {
                let dt = t - base_time;
                Some(Kinematics {
                    translation: base.translation + *linear_velocity * dt,
                    rotation: rotation::exp(*angular_velocity * dt) * base.rotation,
                    linear_velocity: *linear_velocity,
                    angular_velocity: *angular_velocity,
                })
            }
            Motion::Keyframes {
                times,
                translations,
                rotations,
            } => Some(keyframe_state(times, translations, rotations, t)),
            Motion::Scripted => None,
        }
    }
}

/// Pose (local → world: `x = rotation · p + translation`) and rigid
/// velocity of a collider.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Kinematics {
    pub(crate) translation: Vec3<f64>,
    pub(crate) rotation: Mat3<f64>,
    pub(crate) linear_velocity: Vec3<f64>,
    pub(crate) angular_velocity: Vec3<f64>,
}

/// Keyframe interpolation at `t`. Segment `i` covers `[times[i],
/// times[i+1])`; on it `R(s) = R_i exp(s a)` with `a = log(R_iᵀ R_{i+1})`
/// and `s = (t − t_i)/Δ`, so `dR/dt = [R_i a / Δ]× R`: the world angular
/// velocity is `R_i a / Δ`, exactly, with no finite differences.
fn keyframe_state(times: &[f64], translations: &[Vec3<f64>], rotations: &[Mat3<f64>], t: f64) -> Kinematics {
    let n = times.len();
    let after = times.partition_point(|&k| k <= t);
    let clamped = |i: usize| Kinematics {
        translation: translations[i],
        rotation: rotations[i],
        linear_velocity: Vec3::zero(),
        angular_velocity: Vec3::zero(),
    };
    if after == 0 {
        return clamped(0);
    }
    if after == n {
        return clamped(n - 1);
    }
    let i = after - 1;
    let span = times[i + 1] - times[i];
    let s = (t - times[i]) / span;
    let (r0, r1) = (rotations[i], rotations[i + 1]);
    let a = rotation::log(r0.transpose() * r1);
    let dp = translations[i + 1] - translations[i];
    Kinematics {
        translation: translations[i] + dp * s,
        rotation: r0 * rotation::exp(a * s),
        linear_velocity: dp * (1.0 / span),
        angular_velocity: (r0 * a) * (1.0 / span),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Motion {
        Motion::Keyframes {
            times: vec![0.0, 1.0, 3.0],
            translations: vec![Vec3::zero(), Vec3::new(1.0, 2.0, 0.0), Vec3::new(1.0, 2.0, -4.0)],
            rotations: vec![
                Mat3::identity(),
                Mat3::from_axis_angle(Vec3::new(0.0, 0.0, 1.0), 1.2),
                Mat3::from_axis_angle(Vec3::new(0.6, 0.8, 0.0), 2.5),
            ],
        }
        .validated()
        .unwrap()
    }

    fn base() -> Kinematics {
        Kinematics {
            translation: Vec3::zero(),
            rotation: Mat3::identity(),
            linear_velocity: Vec3::zero(),
            angular_velocity: Vec3::zero(),
        }
    }

    #[test]
    fn keyframes_hit_knots_and_interpolate_between() {
        let m = keys();
        let Motion::Keyframes {
            times,
            translations,
            rotations,
        } = &m
        else {
            unreachable!()
        };
        for i in 0..3 {
            let k = m.evaluate(times[i], &base(), 0.0).unwrap();
            assert!((k.translation - translations[i]).norm() < 1e-14, "knot {i}");
            assert!((k.rotation - rotations[i]).max_abs() < 1e-12, "knot {i}");
        }
        // Midpoint of segment 1: half-way translation, half the relative angle.
        let k = m.evaluate(2.0, &base(), 0.0).unwrap();
        assert!((k.translation - Vec3::new(1.0, 2.0, -2.0)).norm() < 1e-14);
        assert!((k.linear_velocity - Vec3::new(0.0, 0.0, -2.0)).norm() < 1e-14);
        let to0 = rotation::log(rotations[1].transpose() * k.rotation).norm();
        let to1 = rotation::log(k.rotation.transpose() * rotations[2]).norm();
        let total = rotation::log(rotations[1].transpose() * rotations[2]).norm();
        assert!((to0 - total / 2.0).abs() < 1e-12 && (to1 - total / 2.0).abs() < 1e-12);
        assert!((k.rotation.transpose() * k.rotation - Mat3::identity()).max_abs() < 1e-12);
        // Quarter of segment 0: rotation about z by 0.3 rad, ω = 1.2 rad/s about z.
        let k = m.evaluate(0.25, &base(), 0.0).unwrap();
        assert!((k.rotation - Mat3::from_axis_angle(Vec3::new(0.0, 0.0, 1.0), 0.3)).max_abs() < 1e-12);
        assert!((k.angular_velocity - Vec3::new(0.0, 0.0, 1.2)).norm() < 1e-12);
        assert!((k.translation - Vec3::new(0.25, 0.5, 0.0)).norm() < 1e-14);
        // Clamped outside the range, at rest.
        for (t, i) in [(-1.0, 0), (3.0, 2), (10.0, 2)] {
            let k = m.evaluate(t, &base(), 0.0).unwrap();
            assert_eq!(k.translation, translations[i]);
            assert_eq!(k.linear_velocity, Vec3::zero());
            assert_eq!(k.angular_velocity, Vec3::zero());
        }
    }

    #[test]
    fn keyframe_velocity_matches_finite_differences_of_pose() {
        let m = keys();
        for t in [0.1, 0.5, 0.93, 1.2, 2.0, 2.9] {
            let h = 1e-6;
            let a = m.evaluate(t - h, &base(), 0.0).unwrap();
            let b = m.evaluate(t + h, &base(), 0.0).unwrap();
            let k = m.evaluate(t, &base(), 0.0).unwrap();
            let v_fd = (b.translation - a.translation) * (0.5 / h);
            assert!((v_fd - k.linear_velocity).norm() < 1e-7, "t = {t}");
            // dR/dt = [ω]× R
            let rdot = (b.rotation - a.rotation) * (0.5 / h);
            let expect = Mat3::skew(k.angular_velocity) * k.rotation;
            assert!((rdot - expect).max_abs() < 1e-6, "t = {t}");
        }
    }

    #[test]
    fn keyframes_are_validated() {
        let bad_times = Motion::Keyframes {
            times: vec![0.0, 0.0],
            translations: vec![Vec3::zero(); 2],
            rotations: vec![Mat3::identity(); 2],
        };
        let e = bad_times.validated().unwrap_err().to_string();
        assert!(e.contains("strictly increasing"), "{e}");
        let bad_len = Motion::Keyframes {
            times: vec![0.0, 1.0],
            translations: vec![Vec3::zero()],
            rotations: vec![Mat3::identity(); 2],
        };
        assert!(
            bad_len
                .validated()
                .unwrap_err()
                .to_string()
                .contains("1 translations")
        );
        let bad_rot = Motion::Keyframes {
            times: vec![0.0],
            translations: vec![Vec3::zero()],
            rotations: vec![Mat3::identity() * 2.0],
        };
        assert!(
            bad_rot
                .validated()
                .unwrap_err()
                .to_string()
                .contains("rotations[0]")
        );
        let empty = Motion::Keyframes {
            times: vec![],
            translations: vec![],
            rotations: vec![],
        };
        assert!(empty.validated().is_err());
        let nan = Motion::Constant {
            linear_velocity: Vec3::new(f64::NAN, 0.0, 0.0),
            angular_velocity: Vec3::zero(),
        };
        assert!(
            nan.validated()
                .unwrap_err()
                .to_string()
                .contains("linear_velocity")
        );
    }
}
