//! The size budget and plane frames shared by the generators and samplers;
//! their argument checks are `crate::validate`'s.

use crate::math::Vec3;
use crate::{Result, invalid};

/// Most vertices, points or samples one generator or sampler call may
/// produce. A typo such as `resolution=(100000, 100000)` would otherwise try
/// to allocate hundreds of gigabytes and abort the process, which is worse
/// than an error; 10⁸ points (2.4 GB of f64 positions) is beyond any scene a
/// single machine simulates.
pub const MAX_GENERATED_POINTS: usize = 100_000_000;

/// `factors` multiplied, if the product stays within [`MAX_GENERATED_POINTS`].
pub(crate) fn budget(what: &str, factors: &[usize]) -> Result<usize> {
    let total = factors.iter().try_fold(1usize, |acc, &f| acc.checked_mul(f));
    match total {
        Some(n) if n <= MAX_GENERATED_POINTS => Ok(n),
        _ => invalid!(
            "{what} would create {} points, more than the limit of {MAX_GENERATED_POINTS}; use a \
             coarser resolution or spacing",
            total.map_or_else(|| "over 2^64".to_string(), |n| n.to_string())
        ),
    }
}

/// Right-handed orthonormal `(e1, e2)` with `e1 × e2 = axis` for a unit `axis`.
///
/// Chosen so that for the y axis (the default up) `e1 = +z` and `e2 = +x`,
/// i.e. the usual x-z plane, and the frame varies smoothly elsewhere: it is
/// built from the world axis least aligned with `axis`.
pub(crate) fn plane_basis(axis: Vec3<f64>) -> (Vec3<f64>, Vec3<f64>) {
    let a = axis.abs();
    // Ties prefer z so that for ±y the frame is (z, x): e1 = z, e2 = y × z = x.
    let helper = if a.z <= a.x && a.z <= a.y {
        Vec3::unit(2)
    } else if a.x <= a.y {
        Vec3::unit(0)
    } else {
        Vec3::unit(1)
    };
    let e1 = (helper - axis * helper.dot(axis)).normalize_or_zero();
    (e1, axis.cross(e1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn plane_basis_is_right_handed() {
        for axis in [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(1.0, 2.0, -3.0),
            Vec3::new(0.0, 0.0, -1.0),
        ] {
            let a = axis.normalize_or_zero();
            let (e1, e2) = plane_basis(a);
            assert!((e1.norm() - 1.0).abs() < 1e-14 && (e2.norm() - 1.0).abs() < 1e-14);
            assert!(e1.dot(a).abs() < 1e-14 && e1.dot(e2).abs() < 1e-14);
            assert!((e1.cross(e2) - a).norm() < 1e-14);
        }
        let (e1, e2) = plane_basis(Vec3::new(0.0, 1.0, 0.0));
        assert_eq!((e1, e2), (Vec3::new(0.0, 0.0, 1.0), Vec3::new(1.0, 0.0, 0.0)));
    }

    #[test]
    fn budget_refuses_overflow_and_huge_counts() {
        let Err(Error::InvalidInput(m)) = budget("grid", &[usize::MAX, 2]) else {
            panic!()
        };
        assert!(m.contains("grid") && m.contains("limit"), "{m}");
        assert!(budget("grid", &[MAX_GENERATED_POINTS, 2]).is_err());
        assert_eq!(budget("grid", &[3, 4]).unwrap(), 12);
    }
}
