//! Implicit cloth with time-dependent persistent wrinkles (Gong, Yang, Shao,
//! Wang, CGF 2025; spec `specs/persistent_wrinkles.md`).
//!
//! Layout follows the spec's step (§6.1):
//! - [`hinge`]: signed dihedral angle and its exact gradient (§3.1, §3.3);
//! - [`membrane`]: orthotropic StVK on Green strain with its Gauss–Newton
//!   Hessian, and the tensile friction terms (§5.1–5.3);
//! - [`wrinkle`]: the scalar internal-variable kernels shared by hinges and
//!   membrane components: friction with dwell (§4.1), time-dependent hardening
//!   plasticity (§4.2), the Dahl baseline (App. A.1);
//! - [`selfcollide`]: cloth–cloth proximity (repulsion pairs, §6.3) and the
//!   continuous-collision fail-safe run after every step;
//! - [`material`], [`model`], [`solver`], [`sim`]: parameters and presets,
//!   rest data, the linearized implicit Euler step, the convenience wrapper.

pub mod hinge;
pub mod material;
pub mod membrane;
pub mod model;
pub mod selfcollide;
pub mod sim;
pub mod solver;
pub mod wrinkle;
