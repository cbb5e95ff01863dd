//! Mapping of `crumple_core::Error` to the Python exception tree.
//!
//! The exception classes are defined in Python (`crumple/errors.py`) so that
//! `InvalidInputError` can also be a `ValueError`; the binding imports them.

use crumple_core::Error;
use pyo3::PyErr;

pyo3::import_exception!(crumple.errors, InvalidInputError);
pyo3::import_exception!(crumple.errors, MeshError);
pyo3::import_exception!(crumple.errors, BackendUnavailable);
pyo3::import_exception!(crumple.errors, SimulationDiverged);
pyo3::import_exception!(crumple.errors, SolverError);

/// Converts a core error into the matching Python exception.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::InvalidInput(_) => InvalidInputError::new_err(msg),
        Error::Mesh(_) => MeshError::new_err(msg),
        Error::Backend(_) => BackendUnavailable::new_err(msg),
        Error::Diverged { .. } => SimulationDiverged::new_err(msg),
        Error::Solver(_) => SolverError::new_err(msg),
    }
}

/// `Result` of the core mapped to `PyResult`.
pub trait IntoPy<T> {
    fn py_err(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPy<T> for crumple_core::Result<T> {
    fn py_err(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}

/// An `InvalidInputError` with a message.
pub fn invalid(msg: impl Into<String>) -> PyErr {
    InvalidInputError::new_err(msg.into())
}
