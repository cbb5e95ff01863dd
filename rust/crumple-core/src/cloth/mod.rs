//! Implicit cloth with time-dependent persistent wrinkles (Gong, Yang, Shao,
//! Wang, CGF 2025; spec `specs/persistent_wrinkles.md`).
//!
//! One file per stage of the spec's step (§6.1), called in order by
//! [`solver::Solver::step`]:
//! - proximity: cloth–cloth pairs at `x_n` ([`selfcollide`], §6.3);
//! - [`elements`]: membrane and hinge kernels with the wrinkle elements and
//!   the hold warp (steps 5, 6, 8);
//! - [`contact`]: gravity, handle springs, obstacle and cloth–cloth contact
//!   per vertex (steps 3, 4, 7);
//! - [`assemble`]: element forces gathered per vertex and `A Δv = b`
//!   assembled from fixed lists (step 9, §11.1–2);
//! - [`linear_solve`]: the one sparse solve per step (step 10, §11.3);
//! - [`integrate`]: integration, obstacle projection, the continuous-collision
//!   fail-safe and the divergence check (steps 11–14).
//!
//! The math they use: [`hinge`] (dihedral angle and its exact gradient,
//! §3.1, §3.3), [`membrane`] (orthotropic StVK on Green strain, §5.1–5.3),
//! [`wrinkle`] (friction with dwell §4.1, time-dependent hardening §4.2, the
//! Dahl baseline App. A.1). What it acts on: [`params`] (step settings),
//! [`material`] (materials, presets, switches), [`model`] (garments, rest
//! data, the matrix pattern), [`state`] (positions, velocities, internal
//! variables, pins); [`sim`] is the convenience wrapper (garments, pins,
//! handles, colliders, rollback, exact `advance`).

mod assemble;
pub mod checkpoint;
mod contact;
pub(crate) mod elements;
pub mod hinge;
mod integrate;
mod linear_solve;
pub mod material;
pub mod membrane;
pub mod model;
pub mod params;
pub mod pattern;
pub mod selfcollide;
pub mod sim;
pub mod solver;
pub mod state;
pub mod wrinkle;
