//! Colliders, kinematic motion and the shared boundary response.
//!
//! * Shapes in their local frame answer signed distance (meters, negative
//!   inside) and outward normal through [`Sdf`]: [`Plane`], [`Sphere`],
//!   [`BoxShape`], [`Capsule`], [`Cylinder`], and [`MeshSdf`], a distance
//!   grid sampled from a closed triangle mesh. [`Shape`] holds any of them.
//! * A [`Collider`] places a shape in the world with a rigid pose, moves it
//!   by a [`Motion`] (static, constant velocity, keyframes, or scripted by
//!   the host) and answers world-space distance, normal and surface velocity
//!   ([`Contact`]).
//! * A [`RigidHandle`] moves a group of pinned vertices along a [`Motion`]
//!   (cloth handles, MPM pins that follow a path).
//! * [`boundary_response`] is the one velocity correction every solver
//!   applies inside colliders ([`BoundaryMode`]: sticky, slip, or separate
//!   with Coulomb friction), per MPM spec §3.6.
//!
//! Everything here is `f64`; f32 solvers cast at the boundary.

mod box_shape;
mod bvh;
mod capsule;
mod collider;
mod cylinder;
mod handle;
mod mesh_check;
mod mesh_sampling;
mod mesh_sdf;
mod motion;
mod plane;
mod response;
pub(crate) mod rotation;
mod sdf;
mod sphere;
mod triangle;

#[cfg(test)]
mod test_util;

pub use box_shape::BoxShape;
pub use capsule::Capsule;
pub use collider::{Collider, Contact};
pub use cylinder::Cylinder;
pub use handle::RigidHandle;
pub use mesh_sdf::MeshSdf;
pub use motion::Motion;
pub use plane::Plane;
pub use response::{BoundaryMode, boundary_response};
pub(crate) use sdf::FALLBACK_NORMAL;
pub use sdf::{Sdf, Shape};
pub use sphere::Sphere;
