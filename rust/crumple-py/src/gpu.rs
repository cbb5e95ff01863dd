//! GPU adapter information and the GPU primitives (scan, radix sort) with
//! their CPU twins, exposed for tests, benchmarks and `crumple info`.

use crate::errors::{IntoPy, invalid};
use crumple_core::gpu::{self as cg, GpuContext};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Mutex;

// One scan and one sort object per process: they own device scratch buffers
// that are reused across calls (no per-call allocation when sizes don't grow).
static SCAN: Mutex<Option<cg::GpuScan>> = Mutex::new(None);
static SORT: Mutex<Option<cg::GpuRadixSort>> = Mutex::new(None);

fn gpu_scan(v: &[u32]) -> crumple_core::Result<Vec<u32>> {
    let mut guard = SCAN.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(cg::GpuScan::new(&GpuContext::shared()?)?);
    }
    guard
        .as_mut()
        .ok_or_else(not_initialised)?
        .scan_exclusive_u32_host(v)
}

fn gpu_sort(k: &[u32], v: &[u32], key_bits: Option<u32>) -> crumple_core::Result<(Vec<u32>, Vec<u32>)> {
    let mut guard = SORT.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(cg::GpuRadixSort::new(&GpuContext::shared()?)?);
    }
    guard
        .as_mut()
        .ok_or_else(not_initialised)?
        .radix_sort_pairs_u32_host(k, v, key_bits)
}

fn not_initialised() -> crumple_core::Error {
    crumple_core::Error::Backend("GPU primitive could not be initialised".into())
}

type U32Array<'py> = Bound<'py, PyArray1<u32>>;

/// The adapter the GPU backend uses, as a dict; raises BackendUnavailable.
#[pyfunction]
fn gpu_adapter_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let ctx = py.detach(GpuContext::shared).py_err()?;
    let a = ctx.adapter_info();
    let d = PyDict::new(py);
    d.set_item("name", &a.name)?;
    d.set_item("device_type", &a.device_type)?;
    d.set_item("backend", &a.backend)?;
    d.set_item(
        "driver",
        if a.driver_info.is_empty() {
            &a.driver
        } else {
            &a.driver_info
        },
    )?;
    Ok(d)
}

fn is_gpu(backend: &str) -> PyResult<bool> {
    match backend {
        "cpu" => Ok(false),
        "gpu" => Ok(true),
        other => Err(invalid(format!(
            "backend must be 'cpu' or 'gpu' here; got {other:?}"
        ))),
    }
}

/// Exclusive prefix sum of a uint32 array (wrapping).
#[pyfunction]
fn scan_exclusive_u32<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, u32>,
    backend: &str,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let v = values
        .as_slice()
        .map_err(|e| invalid(format!("values: {e}")))?
        .to_vec();
    let gpu = is_gpu(backend)?;
    let out = py
        .detach(move || -> crumple_core::Result<Vec<u32>> {
            if gpu {
                gpu_scan(&v)
            } else {
                let mut v = v;
                cg::scan_exclusive_u32(&mut v);
                Ok(v)
            }
        })
        .py_err()?;
    Ok(PyArray1::from_vec(py, out))
}

/// Stable radix sort of (key, value) uint32 pairs by key.
#[pyfunction]
fn radix_sort_pairs_u32<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, u32>,
    values: PyReadonlyArray1<'py, u32>,
    backend: &str,
    key_bits: u32,
) -> PyResult<(U32Array<'py>, U32Array<'py>)> {
    let k = keys
        .as_slice()
        .map_err(|e| invalid(format!("keys: {e}")))?
        .to_vec();
    let v = values
        .as_slice()
        .map_err(|e| invalid(format!("values: {e}")))?
        .to_vec();
    if k.len() != v.len() {
        return Err(invalid(format!(
            "keys and values must have the same length; got {} and {}",
            k.len(),
            v.len()
        )));
    }
    let gpu = is_gpu(backend)?;
    let (ks, vs) = py
        .detach(move || -> crumple_core::Result<(Vec<u32>, Vec<u32>)> {
            let bits = (key_bits < 32).then_some(key_bits);
            if gpu {
                gpu_sort(&k, &v, bits)
            } else {
                let (mut k, mut v) = (k, v);
                cg::radix_sort_pairs_u32(&mut k, &mut v, bits)?;
                Ok((k, v))
            }
        })
        .py_err()?;
    Ok((PyArray1::from_vec(py, ks), PyArray1::from_vec(py, vs)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gpu_adapter_info, m)?)?;
    m.add_function(wrap_pyfunction!(scan_exclusive_u32, m)?)?;
    m.add_function(wrap_pyfunction!(radix_sort_pairs_u32, m)?)?;
    Ok(())
}
