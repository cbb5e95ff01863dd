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
        // `.step` and `.time` become attributes of the Python exception.
        Error::Diverged { step, time, .. } => SimulationDiverged::new_err((msg, step, time)),
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

/// Ctrl-C while a long `advance` runs with the GIL released: `stop()` is
/// called between steps and looks at Python's signal flags at most every
/// 50 ms (re-acquiring the GIL costs little at that rate), so the run stops
/// at a step boundary with its state intact within a fraction of a second.
pub struct SignalCheck {
    last: std::time::Instant,
    /// The `KeyboardInterrupt` (or other signal handler error) that stopped the run.
    pub err: Option<pyo3::PyErr>,
}

impl SignalCheck {
    /// A checker whose first look is 50 ms from now.
    pub fn new() -> Self {
        Self {
            last: std::time::Instant::now(),
            err: None,
        }
    }

    /// Whether the run should stop now.
    pub fn stop(&mut self) -> bool {
        if self.last.elapsed() < std::time::Duration::from_millis(50) {
            return false;
        }
        self.last = std::time::Instant::now();
        match pyo3::Python::attach(|py| py.check_signals()) {
            Ok(()) => false,
            Err(e) => {
                self.err = Some(e);
                true
            }
        }
    }

    /// The advance's result: the signal's error if it stopped the run.
    pub fn finish(mut self, r: crumple_core::Result<(u64, bool)>) -> pyo3::PyResult<u64> {
        let (steps, stopped) = r.map_err(to_py)?;
        match (stopped, self.err.take()) {
            (true, Some(e)) => Err(e),
            _ => Ok(steps),
        }
    }
}

impl Default for SignalCheck {
    fn default() -> Self {
        Self::new()
    }
}
