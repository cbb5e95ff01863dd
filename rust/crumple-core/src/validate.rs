//! The parameter checks of every module (geometry, colliders, materials,
//! solvers), so a bad argument is reported the same way everywhere.
//!
//! Every check returns [`Error::InvalidInput`](crate::Error::InvalidInput)
//! with a message that names the parameter, shows the value and says how to
//! fix it, because these messages reach Python users unchanged. Names are
//! `impl Display`, so a caller can pass `format_args!("{what}: {field}")`
//! and nothing is formatted unless the check fails.

use core::fmt::Display;

use crate::Result;
use crate::invalid;
use crate::math::{Mat3, Vec3};

/// How far `RᵀR` may be from the identity (max abs entry) and `det R` from 1
/// before a matrix is rejected as a rotation. Loose enough for rotations that
/// went through `float32` (relative error ~1e-7 per entry, amplified by
/// products), tight enough to catch scaled or sheared matrices.
pub(crate) const ROTATION_TOLERANCE: f64 = 1e-4;

/// `value` must be finite.
pub(crate) fn finite(name: impl Display, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        invalid!("{name} must be a finite number, got {value}; pass a finite value")
    }
}

/// `value` must be finite and strictly positive.
pub(crate) fn positive(name: impl Display, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        invalid!("{name} must be a finite number > 0, got {value}; pass a positive value")
    }
}

/// `value` must be finite and ≥ 0.
pub(crate) fn non_negative(name: impl Display, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        invalid!("{name} must be a finite number >= 0, got {value}; pass a non-negative value")
    }
}

/// `value` must be finite and in `[0, 1]`.
pub(crate) fn in_unit(name: impl Display, value: f64) -> Result<f64> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        invalid!("{name} must be a number in [0, 1], got {value}")
    }
}

/// All three components finite.
pub(crate) fn finite_vec(name: impl Display, v: Vec3<f64>) -> Result<Vec3<f64>> {
    if v.is_finite() {
        Ok(v)
    } else {
        invalid!(
            "{name} must have finite components, got ({}, {}, {}); remove NaN/inf values",
            v.x,
            v.y,
            v.z
        )
    }
}

/// Every point finite; the error names the first bad index.
pub(crate) fn all_finite(name: impl Display, points: &[Vec3<f64>]) -> Result<()> {
    match points.iter().position(|p| !p.is_finite()) {
        None => Ok(()),
        Some(i) => invalid!(
            "{name}[{i}] is not finite: {:?}; remove NaN/inf values",
            points[i].to_array()
        ),
    }
}

/// A finite, non-zero direction, returned normalized.
pub(crate) fn direction(name: impl Display, value: Vec3<f64>) -> Result<Vec3<f64>> {
    let value = finite_vec(&name, value)?;
    match value.try_normalize(1e-300) {
        Some(d) => Ok(d),
        None => invalid!(
            "{name} must be a non-zero direction, got ({}, {}, {})",
            value.x,
            value.y,
            value.z
        ),
    }
}

/// A count that must be at least `min`.
pub(crate) fn at_least(name: impl Display, value: usize, min: usize) -> Result<usize> {
    if value >= min {
        Ok(value)
    } else {
        invalid!("{name} must be at least {min}, got {value}")
    }
}

/// A proper rotation (orthonormal, determinant +1) within
/// [`ROTATION_TOLERANCE`]; returned re-orthonormalised (Gram–Schmidt on the
/// columns) so that `Rᵀ` is its inverse to machine precision.
pub(crate) fn rotation(name: impl Display, r: Mat3<f64>) -> Result<Mat3<f64>> {
    if !r.is_finite() {
        return invalid!(
            "{name} must have finite entries, got {:?}; remove NaN/inf values",
            r.m
        );
    }
    let ortho_err = (r.transpose() * r - Mat3::identity()).max_abs();
    let det = r.determinant();
    if ortho_err > ROTATION_TOLERANCE || (det - 1.0).abs() > ROTATION_TOLERANCE {
        return invalid!(
            "{name} must be a rotation matrix (orthonormal, determinant +1), got {:?} \
             (|RᵀR − I| = {ortho_err:.3e}, det = {det:.6}); pass a proper rotation, \
             e.g. built from an axis and angle, without scale or reflection",
            r.m
        );
    }
    Ok(orthonormalize(r))
}

/// Gram–Schmidt on the columns of a matrix that is already close to a
/// rotation; the third column is the cross product so the result is proper.
pub(crate) fn orthonormalize(r: Mat3<f64>) -> Mat3<f64> {
    let c0 = r.col(0).normalize_or_zero();
    let c1 = (r.col(1) - c0 * c0.dot(r.col(1))).normalize_or_zero();
    let c2 = c0.cross(c1);
    Mat3::from_cols(c0, c1, c2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_values_with_named_messages() {
        let e = positive("radius", -1.0).unwrap_err().to_string();
        assert!(e.contains("radius") && e.contains("-1"), "{e}");
        assert!(positive("radius", f64::NAN).is_err());
        assert!(non_negative("friction", 0.0).is_ok());
        assert!(non_negative("friction", -0.1).is_err());
        assert!(finite_vec("center", Vec3::new(0.0, f64::INFINITY, 0.0)).is_err());
        let e = at_least("n_lon", 2, 3).unwrap_err().to_string();
        assert!(e.contains("n_lon") && e.contains('2') && e.contains('3'), "{e}");
        assert!(direction("axis", Vec3::zero()).is_err());
        assert_eq!(
            direction("axis", Vec3::new(0.0, 2.0, 0.0)).unwrap(),
            Vec3::new(0.0, 1.0, 0.0)
        );
        // A lazily formatted name (nothing is formatted unless the check fails).
        let e = finite(format_args!("{}: {}", "bending friction", "tau"), f64::NAN)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("bending friction: tau must be a finite number"),
            "{e}"
        );
    }

    #[test]
    fn rotation_check_accepts_rotations_and_rejects_scale_and_reflection() {
        let r = Mat3::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 1.3);
        let clean = rotation("rotation", r).unwrap();
        assert!((clean - r).max_abs() < 1e-12);
        assert!(rotation("rotation", r * 1.01).is_err());
        let reflect = Mat3::from_diagonal(Vec3::new(1.0, 1.0, -1.0));
        let e = rotation("rotation", reflect).unwrap_err().to_string();
        assert!(e.contains("rotation") && e.contains("det"), "{e}");
        let mut nan = Mat3::identity();
        nan.m[1][2] = f64::NAN;
        assert!(rotation("rotation", nan).is_err());
    }
}
