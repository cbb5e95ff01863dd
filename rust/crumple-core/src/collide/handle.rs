//! Scripted handles: a group of vertices moved rigidly along a prescribed
//! path ("rotate a ring, pull an edge": persistent-wrinkles spec §6.1 step 1,
//! and the MPM pins that follow a path). Both solvers pin the handle's
//! vertices and ask it for their targets at the time of each step.

use super::motion::{Kinematics, Motion};
use crate::math::{Mat3, Vec3};
use crate::{Error, Result, invalid};

/// Target of vertex `k` at time `t`: `R(t)(X_k − pivot) + pivot + T(t)`,
/// where `(R, T)` is the motion's pose relative to the handle's `start`
/// time and `X_k` the vertex's position then (`reference`).
#[derive(Clone, Debug)]
pub struct RigidHandle {
    /// The vertices, in the solver's numbering.
    pub vertices: Vec<u32>,
    /// Their positions when the handle was made, m.
    pub reference: Vec<Vec3<f64>>,
    /// Centre of rotation, m.
    pub pivot: Vec3<f64>,
    /// The path (static, constant velocity or keyframes; not scripted).
    pub motion: Motion,
    /// When the handle was made, s.
    pub start: f64,
    /// False once released or frozen: its targets no longer move.
    pub active: bool,
}

impl RigidHandle {
    /// A handle after checking its inputs (non-empty, finite, a motion that
    /// can be evaluated: a scripted motion has no path to follow).
    pub fn new(
        vertices: Vec<u32>,
        reference: Vec<Vec3<f64>>,
        pivot: Vec3<f64>,
        motion: Motion,
        start: f64,
        active: bool,
    ) -> Result<Self> {
        if vertices.is_empty() {
            return invalid!("a handle needs at least one vertex");
        }
        if reference.len() != vertices.len() || reference.iter().any(|r| !r.is_finite()) {
            return invalid!(
                "a handle needs one finite reference position per vertex ({} for {} vertices)",
                reference.len(),
                vertices.len()
            );
        }
        if !(pivot.is_finite() && start.is_finite()) {
            return invalid!("handle pivot {pivot:?} and start time {start} must be finite");
        }
        let motion = motion.validated()?;
        if matches!(motion, Motion::Scripted) {
            return invalid!(
                "a handle's motion cannot be 'scripted'; pin the vertices and set their targets instead"
            );
        }
        Ok(Self {
            vertices,
            reference,
            pivot,
            motion,
            start,
            active,
        })
    }

    /// The handle's pose at time `t` (s).
    pub(crate) fn pose(&self, t: f64) -> Result<Kinematics> {
        let base = Kinematics {
            translation: Vec3::zero(),
            rotation: Mat3::identity(),
            linear_velocity: Vec3::zero(),
            angular_velocity: Vec3::zero(),
        };
        self.motion
            .evaluate(t - self.start, &base, 0.0)
            .ok_or_else(|| Error::InvalidInput("handle motion could not be evaluated".into()))
    }

    /// Target position (m) and velocity (m/s) of the handle's `k`-th vertex
    /// at pose `pose`: the rigid motion about the pivot, which moves with the
    /// translation.
    pub(crate) fn target(&self, pose: &Kinematics, k: usize) -> (Vec3<f64>, Vec3<f64>) {
        let arm = pose.rotation * (self.reference[k] - self.pivot);
        (
            arm + self.pivot + pose.translation,
            pose.linear_velocity + pose.angular_velocity.cross(arm),
        )
    }
}
