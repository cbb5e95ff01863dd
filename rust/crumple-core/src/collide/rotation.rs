//! Rotation exponential and logarithm (axis-angle vectors), used to
//! interpolate keyframed orientations and to integrate constant spin.

use crate::math::{Mat3, Vec3};

/// Rotation by the axis-angle vector `w` (radians; direction = axis,
/// length = angle).
pub(crate) fn exp(w: Vec3<f64>) -> Mat3<f64> {
    let angle = w.norm();
    if angle > 0.0 {
        Mat3::from_axis_angle(w * (1.0 / angle), angle)
    } else {
        Mat3::identity()
    }
}

/// The axis-angle vector `w` with `exp(w) = r` and `|w| ≤ π`, for a proper
/// rotation `r`. Accurate near 0 (through `atan2`) and near π (axis from the
/// symmetric part, where the skew part vanishes).
pub(crate) fn log(r: Mat3<f64>) -> Vec3<f64> {
    let cos = ((r.trace() - 1.0) * 0.5).clamp(-1.0, 1.0);
    // vee((R − Rᵀ)/2) = sin θ · axis
    let w = Vec3::new(
        r.m[2][1] - r.m[1][2],
        r.m[0][2] - r.m[2][0],
        r.m[1][0] - r.m[0][1],
    ) * 0.5;
    let sin = w.norm();
    let angle = sin.atan2(cos);
    if cos > 0.0 {
        return if sin > 0.0 {
            w * (angle / sin)
        } else {
            Vec3::zero()
        };
    }
    // θ ≥ π/2: (R + Rᵀ)/2 − cos θ I = (1 − cos θ) a aᵀ. Use the column with
    // the largest diagonal entry, which is well conditioned.
    let b = r.symmetric_part() - Mat3::identity() * cos;
    let d = b.diagonal();
    let k = if d.x >= d.y && d.x >= d.z {
        0
    } else if d.y >= d.z {
        1
    } else {
        2
    };
    let mut axis = b.col(k).normalize_or_zero();
    if axis.dot(w) < 0.0 {
        axis = -axis;
    }
    axis * angle
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::Rng;

    #[test]
    fn log_inverts_exp_for_all_angles() {
        let mut rng = Rng::new(20);
        let pi = std::f64::consts::PI;
        let mut angles = vec![
            0.0,
            1e-12,
            1e-7,
            1e-3,
            0.5,
            1.0,
            pi / 2.0,
            2.0,
            3.0,
            pi - 1e-6,
            pi - 1e-10,
        ];
        for _ in 0..50 {
            angles.push(rng.uniform(0.0, pi));
        }
        for a in angles {
            let axis = rng.unit();
            let w = axis * a;
            let r = exp(w);
            let back = log(r);
            assert!((exp(back) - r).max_abs() < 1e-12, "angle {a}");
            if a < pi - 1e-3 {
                assert!(
                    (back - w).norm() < 1e-9 * (1.0 + a),
                    "angle {a}: {back:?} vs {w:?}"
                );
            } else {
                assert!((back.norm() - a).abs() < 1e-6, "angle {a}");
            }
        }
        assert_eq!(log(Mat3::identity()), Vec3::zero());
        let half_turn = log(Mat3::from_diagonal(Vec3::new(-1.0, 1.0, -1.0)));
        assert!(
            (half_turn.norm() - pi).abs() < 1e-12 && half_turn.x.abs() < 1e-12 && half_turn.z.abs() < 1e-12
        );
    }
}
