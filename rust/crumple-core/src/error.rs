//! The error type of crumple-core.
//!
//! Each variant maps to one Python exception of the `crumple` tree (the
//! binding crate does the mapping): `InvalidInput` → `InvalidInputError`,
//! `Mesh` → `MeshError`, `Backend` → `BackendUnavailable`, `Diverged` →
//! `SimulationDiverged`, `Solver` → `SolverError`. Messages say what is wrong
//! and how to fix it: they are shown to users as they are.

use crate::geometry::MeshError;

/// Anything that can go wrong in crumple-core. Rust code never panics on user
/// input; it returns one of these.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter or array that is not acceptable (NaN, wrong size, negative radius, ...).
    #[error("{0}")]
    InvalidInput(String),
    /// A mesh that fails validation; the variant names the offending indices.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The requested compute backend cannot be used (no adapter, device lost, limits).
    #[error("{0}")]
    Backend(String),
    /// A simulation produced non-finite or exploding state.
    /// `step` and `time` (s) are those of the start of the failing step,
    /// where the simulation was left.
    #[error("simulation diverged in step {step} (t = {time} s): {what}")]
    Diverged { step: u64, time: f64, what: String },
    /// A linear or QP solve failed.
    #[error("{0}")]
    Solver(String),
}

/// Result with [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

/// Shorthand for `Err(Error::InvalidInput(format!(...)))`.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => {
        Err($crate::error::Error::InvalidInput(format!($($arg)*)))
    };
}
