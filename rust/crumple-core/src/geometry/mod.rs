//! Meshes, strands, generators and sampling (all lengths in meters).
//!
//! - [`TriMesh`]: a validated triangle mesh with cached [`MeshTopology`]
//!   (edges, [`Hinge`]s, adjacency in a fixed, documented order).
//! - Mesh generators: [`grid_mesh`], [`uv_sphere`], [`box_mesh`],
//!   [`cylinder_mesh`], [`torus_mesh`].
//! - [`split_long_edges`]: midpoint refinement to a longest-edge bound;
//!   [`drop_unused_vertices`] and [`retain_used`] for meshes that lose vertices.
//! - [`Curves`]: strands as polylines; [`grid_roots`], [`straight_curves`],
//!   [`helix_curves`].
//! - Volume sampling in a [`Region`] (box, sphere, closed mesh via
//!   [`MeshInside`]): [`sample_lattice`], [`sample_poisson_disk`], seeded by
//!   the deterministic [`SplitMix64`].
pub mod closest;
mod compact;
mod csr;
mod curve_generators;
mod curves;
mod error;
mod generators;
mod inside;
mod params;
mod refine;
mod region;
mod rng;
mod sampling;
mod topology;
mod trimesh;
mod validate;

pub use compact::{drop_unused_vertices, retain_used};
pub use csr::csr;
pub use curve_generators::{grid_roots, helix_curves, straight_curves};
pub use curves::{Curves, MIN_SEGMENT_RATIO};
pub use error::MeshError;
pub use generators::{box_mesh, cylinder_mesh, grid_mesh, torus_mesh, uv_sphere};
pub use inside::MeshInside;
pub use params::MAX_GENERATED_POINTS;
pub use refine::{MAX_REFINED_FACES, split_long_edges};
pub use region::Region;
pub use rng::SplitMix64;
pub use sampling::{POISSON_TRIES, sample_lattice, sample_poisson_disk};
pub use topology::{Hinge, MeshTopology};
pub use trimesh::TriMesh;
pub use validate::DEGENERATE_AREA_RATIO;
