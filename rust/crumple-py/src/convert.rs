//! numpy <-> core conversions. Shapes and dtypes are checked in Python first
//! (`crumple/_checks.py`) so messages can name the argument; these checks are
//! the last line of defence and never panic.

use crate::errors::invalid;
use crumple_core::checkpoint::{Array, Arrays, Data};
use crumple_core::collide::Motion;
use crumple_core::math::{Mat3, Vec3};
use crumple_core::params::{Kind, Params, Value};
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyReadonlyArray3, PyReadonlyArrayDyn,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `(N, 3)` float64 array → points.
pub fn to_points(a: &PyReadonlyArray2<'_, f64>, name: &str) -> PyResult<Vec<Vec3<f64>>> {
    let shape = a.shape();
    if shape[1] != 3 {
        return Err(invalid(format!("{name} must have shape (N, 3); got {shape:?}")));
    }
    let view = a.as_array();
    Ok(view
        .rows()
        .into_iter()
        .map(|r| Vec3::new(r[0], r[1], r[2]))
        .collect())
}

/// `(M, 3)` int64 array → index triples (range checked by the core).
pub fn to_triples(a: &PyReadonlyArray2<'_, i64>, name: &str) -> PyResult<Vec<[i64; 3]>> {
    let shape = a.shape();
    if shape[1] != 3 {
        return Err(invalid(format!("{name} must have shape (M, 3); got {shape:?}")));
    }
    let view = a.as_array();
    Ok(view.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect())
}

/// Points → new `(N, 3)` float64 array.
pub fn points_to_py<'py>(py: Python<'py>, p: &[Vec3<f64>]) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let flat: Vec<f64> = p.iter().flat_map(|v| [v.x, v.y, v.z]).collect();
    PyArray1::from_vec(py, flat).reshape([p.len(), 3])
}

/// Rows of `K` u32 → new `(N, K)` int64 array.
pub fn rows_to_py<'py, const K: usize>(
    py: Python<'py>,
    rows: &[[u32; K]],
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let flat: Vec<i64> = rows.iter().flat_map(|r| r.iter().map(|&i| i as i64)).collect();
    PyArray1::from_vec(py, flat).reshape([rows.len(), K])
}

/// A 3-tuple → `Vec3`.
pub fn v3(t: (f64, f64, f64)) -> Vec3<f64> {
    Vec3::new(t.0, t.1, t.2)
}

/// A keyframed path from `times (K,)`, `translations (K, 3)` and
/// `rotations (K, 3, 3)` (validated by the core when used).
pub fn keyframes(
    times: Vec<f64>,
    translations: &PyReadonlyArray2<'_, f64>,
    rotations: &PyReadonlyArray3<'_, f64>,
) -> PyResult<Motion> {
    let s = rotations.shape();
    if s[1] != 3 || s[2] != 3 {
        return Err(invalid(format!("rotations must have shape (K, 3, 3); got {s:?}")));
    }
    let r = rotations.as_array();
    Ok(Motion::Keyframes {
        times,
        translations: to_points(translations, "translations")?,
        rotations: (0..s[0])
            .map(|k| Mat3::from_rows_array(core::array::from_fn(|i| core::array::from_fn(|j| r[[k, i, j]]))))
            .collect(),
    })
}

/// A core checkpoint → dict of float64 arrays (scalars as Python floats,
/// counters as Python ints). The layout is the core's (`checkpoint` of each
/// solver); this only moves values.
pub fn arrays_to_py<'py>(py: Python<'py>, a: &Arrays) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, arr) in a.iter() {
        match (&arr.data, arr.shape.is_empty()) {
            (Data::F64(v), true) => d.set_item(name, v[0])?,
            (Data::U64(v), true) => d.set_item(name, v[0])?,
            (Data::F64(v), false) => {
                d.set_item(name, PyArray1::from_slice(py, v).reshape(arr.shape.clone())?)?
            }
            (Data::U64(v), false) => {
                d.set_item(name, PyArray1::from_slice(py, v).reshape(arr.shape.clone())?)?
            }
        }
    }
    Ok(d)
}

/// A dict written by [`arrays_to_py`] (or loaded from a file) → core
/// checkpoint: float arrays of any shape, Python or numpy scalars. Which
/// names, shapes and values are acceptable is the core's to check.
pub fn arrays_from_py(d: &Bound<'_, PyDict>) -> PyResult<Arrays> {
    let mut out = Arrays::new();
    for (k, v) in d.iter() {
        let name: String = k
            .extract()
            .map_err(|_| invalid("checkpoint array names must be strings"))?;
        let np = v.py().import("numpy")?;
        let a = np
            .call_method1("asarray", (&v, "float64"))
            .map_err(|e| invalid(format!("checkpoint array {name:?} is not numeric: {e}")))?;
        let a: PyReadonlyArrayDyn<'_, f64> = a
            .extract()
            .map_err(|e: pyo3::PyErr| invalid(format!("checkpoint array {name:?}: {e}")))?;
        let shape = a.shape().to_vec();
        // A Python or numpy integer scalar is a counter; everything else is f64.
        let counter = match shape.is_empty() && !v.is_instance_of::<pyo3::types::PyFloat>() {
            true => v.extract::<u64>().ok(),
            false => None,
        };
        let data = match counter {
            Some(c) => Data::U64(vec![c]),
            None => Data::F64(a.as_array().iter().copied().collect()),
        };
        out.insert(&name, Array { shape, data });
    }
    Ok(out)
}

/// A dict keyed by the Python names → a core parameter struct. Every field
/// of `P` must be present with a value of its kind, and no other key may be
/// (a misspelt option is an error, not a silent default). The field list is
/// the core's ([`crumple_core::params`]): nothing here names a field.
pub fn from_dict<P: Params>(d: &Bound<'_, PyDict>, what: &str) -> PyResult<P> {
    for k in d.keys() {
        let k: String = k.extract()?;
        if !P::FIELDS.iter().any(|(f, _)| *f == k) {
            let known: Vec<&str> = P::FIELDS.iter().map(|(f, _)| *f).collect();
            return Err(invalid(format!(
                "unknown {what} parameter {k:?}; known: {known:?}"
            )));
        }
    }
    let mut py_err: Option<PyErr> = None;
    let r = P::from_values(&mut |key, kind| {
        let value = (|| -> PyResult<Value> {
            let v = d
                .get_item(key)?
                .ok_or_else(|| invalid(format!("{what} parameter {key:?} is missing")))?;
            let bad = |want: &str| invalid(format!("{what} parameter {key:?} must be {want}; got {v}"));
            Ok(match kind {
                Kind::F64 => {
                    if v.is_instance_of::<pyo3::types::PyBool>() {
                        return Err(bad("a number"));
                    }
                    Value::F64(v.extract::<f64>().map_err(|_| bad("a number"))?)
                }
                Kind::Triple => {
                    let t: Vec<f64> = v.extract().map_err(|_| bad("three numbers"))?;
                    Value::Triple(t.try_into().map_err(|_| bad("three numbers"))?)
                }
                Kind::Bool => Value::Bool(v.extract::<bool>().map_err(|_| bad("True or False"))?),
                Kind::Int => {
                    if v.is_instance_of::<pyo3::types::PyBool>() {
                        return Err(bad("a whole number"));
                    }
                    Value::Int(v.extract::<u64>().map_err(|_| bad("a whole number ≥ 0"))?)
                }
                Kind::Name(names) => {
                    let s: String = v.extract().map_err(|_| bad(&format!("one of {names:?}")))?;
                    Value::Name(
                        names
                            .iter()
                            .copied()
                            .find(|n| *n == s)
                            .ok_or_else(|| bad(&format!("one of {names:?}")))?,
                    )
                }
            })
        })();
        value.map_err(|e| {
            // Keep the Python exception (its type and message); the core only
            // needs to stop.
            let msg = e.to_string();
            py_err = Some(e);
            crumple_core::Error::InvalidInput(msg)
        })
    });
    match (r, py_err) {
        (Ok(p), _) => Ok(p),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(invalid(e.to_string())),
    }
}

/// A core parameter struct → dict keyed by the Python names (presets).
pub fn to_dict<'py, P: Params>(py: Python<'py>, p: &P) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (key, v) in p.values() {
        match v {
            Value::F64(x) => d.set_item(key, x)?,
            Value::Triple(t) => d.set_item(key, (t[0], t[1], t[2]))?,
            Value::Bool(b) => d.set_item(key, b)?,
            Value::Int(i) => d.set_item(key, i)?,
            Value::Name(s) => d.set_item(key, s)?,
        }
    }
    Ok(d)
}
