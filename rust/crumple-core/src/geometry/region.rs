//! Volumes the samplers fill: a box, a sphere, or the inside of a closed mesh.

use super::MeshInside;
use crate::math::Vec3;
use crate::validate::{finite_vec, positive};
use crate::{Result, invalid};

/// A region of space (coordinates in m). Boundaries count as inside.
///
/// An enum rather than a trait object because the set is closed, it crosses
/// to Python as a plain choice, and `match` keeps the inside test inlined in
/// the samplers' inner loops.
#[derive(Clone, Copy, Debug)]
pub enum Region<'a> {
    /// Axis-aligned box `lower ≤ p ≤ upper` (each `lower` component < `upper`).
    Box {
        /// Lowest corner (m).
        lower: Vec3<f64>,
        /// Highest corner (m).
        upper: Vec3<f64>,
    },
    /// Ball `|p − center| ≤ radius`, `radius > 0`.
    Sphere {
        /// Center (m).
        center: Vec3<f64>,
        /// Radius (m).
        radius: f64,
    },
    /// The inside of a closed mesh (see [`MeshInside`]).
    Mesh(&'a MeshInside),
}

impl Region<'_> {
    /// Checks the parameters, naming the bad one.
    pub fn validate(&self) -> Result<()> {
        match *self {
            Region::Box { lower, upper } => {
                finite_vec("region lower", lower)?;
                finite_vec("region upper", upper)?;
                if !(lower.x < upper.x && lower.y < upper.y && lower.z < upper.z) {
                    return invalid!(
                        "region lower must be below upper on every axis, got lower = ({}, {}, {}), upper = \
                         ({}, {}, {})",
                        lower.x,
                        lower.y,
                        lower.z,
                        upper.x,
                        upper.y,
                        upper.z
                    );
                }
                Ok(())
            }
            Region::Sphere { center, radius } => {
                finite_vec("region center", center)?;
                positive("region radius", radius).map(|_| ())
            }
            Region::Mesh(_) => Ok(()),
        }
    }

    /// Whether `p` is in the region.
    #[inline]
    pub fn contains(&self, p: Vec3<f64>) -> bool {
        match *self {
            Region::Box { lower, upper } => {
                p.x >= lower.x
                    && p.y >= lower.y
                    && p.z >= lower.z
                    && p.x <= upper.x
                    && p.y <= upper.y
                    && p.z <= upper.z
            }
            Region::Sphere { center, radius } => (p - center).norm_squared() <= radius * radius,
            Region::Mesh(m) => m.contains(p),
        }
    }

    /// Axis-aligned bounds `(lower, upper)` (m).
    pub fn bounds(&self) -> (Vec3<f64>, Vec3<f64>) {
        match *self {
            Region::Box { lower, upper } => (lower, upper),
            Region::Sphere { center, radius } => (center - Vec3::splat(radius), center + Vec3::splat(radius)),
            Region::Mesh(m) => m.bounds(),
        }
    }

    /// Volume (m³).
    pub fn volume(&self) -> f64 {
        match *self {
            Region::Box { lower, upper } => {
                let e = upper - lower;
                e.x * e.y * e.z
            }
            Region::Sphere { radius, .. } => 4.0 / 3.0 * core::f64::consts::PI * radius.powi(3),
            Region::Mesh(m) => m.volume(),
        }
    }
}
