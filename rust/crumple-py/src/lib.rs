//! `crumple._core`: the Python extension module.
//!
//! This crate only converts and validates arguments, maps errors to the
//! Python exception tree and releases the GIL around heavy work. All physics
//! lives in `crumple-core`.

mod cloth;
mod collide;
mod convert;
mod eol;
mod errors;
mod geometry;
mod gpu;
mod mpm;
mod pbd;

use pyo3::prelude::*;

/// Version of the package (from Cargo).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Number of threads the CPU backend uses (rayon's global pool; set
/// RAYON_NUM_THREADS to change it before the first call).
#[pyfunction]
fn num_threads() -> usize {
    rayon_threads()
}

fn rayon_threads() -> usize {
    crumple_core::parallel::current_num_threads()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(num_threads, m)?)?;
    geometry::register(m)?;
    collide::register(m)?;
    gpu::register(m)?;
    mpm::register(m)?;
    cloth::register(m)?;
    pbd::register(m)?;
    eol::register(m)?;
    Ok(())
}
