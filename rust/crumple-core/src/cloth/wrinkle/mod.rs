//! Scalar internal-variable kernels of the persistent-wrinkle model (spec
//! `persistent_wrinkles.md` §4, App. A.1): friction with dwell (§4.1),
//! hardening plasticity with a plastic-flow clock (§4.2), the Dahl friction
//! baseline (App. A.1) and the hold-time warp (§4.6).
//!
//! The same kernels serve the hinges (input = dihedral angle in radians, spec
//! §0 and A4) and the three in-plane Green-strain components of each triangle
//! (§5.2–5.3). They are called once per element per step, *before* the linear
//! solve, with the start-of-step configuration (§6.1 (a)–(c), A21), for about
//! 60K hinges per step: they allocate nothing, are `#[inline]`, and skip the
//! `exp` calls whenever the result cannot depend on them.
//!
//! One file per element: [`friction`] (§4.1), [`plasticity`] (§4.2),
//! [`dahl`] (App. A.1); the hold-time warp (§4.6) is here; [`one_dof`] is a
//! 1-DOF driver for the hinge protocol of §9 (tests T7–T12, experiment E1).

mod dahl;
mod friction;
mod one_dof;
mod plasticity;
#[cfg(test)]
mod tests;

pub use dahl::{DahlParams, dahl_update};
pub use friction::{FrictionParams, FrictionState, friction_update};
pub use one_dof::*;
pub use plasticity::{PlasticClock, PlasticParams, PlasticState, plastic_update};

use crate::Result;

/// `sign(x)` as the stored flow direction: +1, −1, or 0 for 0 (and NaN).
///
/// §4.2 needs `sign(0) = 0` so that a virgin element (`dir = 0`) counts its
/// first yield as "not same direction" (A14); `f64::signum` returns ±1 for ±0.
#[inline]
fn sign_i8(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// Checks that `v` is finite (the message names `what` and `field`).
fn require_finite(v: f64, what: &str, field: &str) -> Result<()> {
    crate::validate::finite(format_args!("{what}: {field}"), v).map(|_| ())
}

/// Hold-time warp (§4.6): add `dt_warp` (s) to both clocks (`t_stick` and
/// `t_plastic`). Called after the step's state update, so it takes effect in
/// the next step's update. Applied to every element regardless of its state
/// (A16): a slip resets `t_stick` anyway, and under Alg. 2 a virgin element's
/// first yield resets `t_plastic`; a previously yielded element keeps it.
#[inline]
pub fn warp_clocks(f: &mut FrictionState, pl: &mut PlasticState, dt_warp: f64) {
    f.warp(dt_warp);
    pl.warp(dt_warp);
}
