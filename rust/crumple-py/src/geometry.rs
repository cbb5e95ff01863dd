//! Bindings of `crumple_core::geometry`: TriMesh, Curves, generators, sampling.

use crate::convert::{points_to_py, rows_to_py, to_points, to_triples, v3};
use crate::errors::{IntoPy, invalid};
use crumple_core::geometry as g;
use crumple_core::math::Vec3;
use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use std::sync::Arc;

type T3 = (f64, f64, f64);

/// A validated triangle mesh (immutable; shared cheaply).
#[pyclass(module = "crumple._core", name = "TriMesh", frozen)]
pub struct PyTriMesh {
    pub inner: Arc<g::TriMesh>,
}

impl PyTriMesh {
    pub fn wrap(m: g::TriMesh) -> Self {
        Self { inner: Arc::new(m) }
    }
}

#[pymethods]
impl PyTriMesh {
    #[new]
    fn new(
        py: Python<'_>,
        vertices: PyReadonlyArray2<'_, f64>,
        faces: PyReadonlyArray2<'_, i64>,
    ) -> PyResult<Self> {
        let v = to_points(&vertices, "vertices")?;
        let f = to_triples(&faces, "faces")?;
        let m = py.detach(move || g::TriMesh::new(v, &f)).py_err()?;
        Ok(Self::wrap(m))
    }
    #[getter]
    fn vertices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        points_to_py(py, self.inner.vertices())
    }
    #[getter]
    fn faces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        rows_to_py(py, self.inner.faces())
    }
    #[getter]
    fn num_vertices(&self) -> usize {
        self.inner.num_vertices()
    }
    #[getter]
    fn num_faces(&self) -> usize {
        self.inner.num_faces()
    }
    #[getter]
    fn edges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        rows_to_py(py, self.inner.topology().edges())
    }
    #[getter]
    fn hinges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let h: Vec<[u32; 4]> = self
            .inner
            .topology()
            .hinges()
            .iter()
            .map(|h| h.vertices)
            .collect();
        rows_to_py(py, &h)
    }
    #[getter]
    fn hinge_faces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let h: Vec<[u32; 2]> = self.inner.topology().hinges().iter().map(|h| h.faces).collect();
        rows_to_py(py, &h)
    }
    #[getter]
    fn face_areas<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.inner.face_areas())
    }
    #[getter]
    fn vertex_normals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        points_to_py(py, &self.inner.vertex_normals())
    }
    #[getter]
    fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }
    #[getter]
    fn is_consistently_oriented(&self) -> bool {
        self.inner.consistently_oriented()
    }
    #[getter]
    fn bounds(&self) -> (T3, T3) {
        let (lo, hi) = self.inner.bounds();
        ((lo.x, lo.y, lo.z), (hi.x, hi.y, hi.z))
    }
}

/// A set of polyline strands.
#[pyclass(module = "crumple._core", name = "Curves", frozen)]
pub struct PyCurves {
    pub inner: Arc<g::Curves>,
}

#[pymethods]
impl PyCurves {
    #[new]
    fn new(points: PyReadonlyArray2<'_, f64>, offsets: PyReadonlyArray1<'_, i64>) -> PyResult<Self> {
        let p = to_points(&points, "points")?;
        let o = offsets.as_array().to_vec();
        Ok(Self {
            inner: Arc::new(g::Curves::new(p, &o).py_err()?),
        })
    }
    #[getter]
    fn points<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        points_to_py(py, self.inner.points())
    }
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        PyArray1::from_vec(py, self.inner.offsets().iter().map(|&o| o as i64).collect())
    }
    #[getter]
    fn num_strands(&self) -> usize {
        self.inner.num_strands()
    }
    #[getter]
    fn segments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        rows_to_py(py, &self.inner.segments())
    }
}

fn wrap_mesh(
    py: Python<'_>,
    f: impl FnOnce() -> crumple_core::Result<g::TriMesh> + Send,
) -> PyResult<PyTriMesh> {
    Ok(PyTriMesh::wrap(py.detach(f).py_err()?))
}

#[pyfunction]
fn grid_mesh(
    py: Python<'_>,
    size: (f64, f64),
    resolution: (usize, usize),
    center: T3,
    normal_axis: usize,
) -> PyResult<PyTriMesh> {
    wrap_mesh(py, || g::grid_mesh(size, resolution, v3(center), normal_axis))
}

#[pyfunction]
fn uv_sphere(py: Python<'_>, center: T3, radius: f64, n_lat: usize, n_lon: usize) -> PyResult<PyTriMesh> {
    wrap_mesh(py, || g::uv_sphere(v3(center), radius, n_lat, n_lon))
}

#[pyfunction]
fn box_mesh(
    py: Python<'_>,
    center: T3,
    half_extents: T3,
    subdivisions: (usize, usize, usize),
) -> PyResult<PyTriMesh> {
    let (a, b, c) = subdivisions;
    wrap_mesh(py, || g::box_mesh(v3(center), v3(half_extents), [a, b, c]))
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn cylinder_mesh(
    py: Python<'_>,
    center: T3,
    axis: T3,
    radius: f64,
    height: f64,
    n_around: usize,
    n_along: usize,
    capped: bool,
) -> PyResult<PyTriMesh> {
    wrap_mesh(py, || {
        g::cylinder_mesh(v3(center), v3(axis), radius, height, n_around, n_along, capped)
    })
}

#[pyfunction]
fn torus_mesh(
    py: Python<'_>,
    center: T3,
    major_radius: f64,
    minor_radius: f64,
    n_major: usize,
    n_minor: usize,
) -> PyResult<PyTriMesh> {
    wrap_mesh(py, || {
        g::torus_mesh(v3(center), major_radius, minor_radius, n_major, n_minor)
    })
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn helix_curves(
    center: T3,
    count: (usize, usize),
    spacing: f64,
    radius: f64,
    pitch: f64,
    turns: f64,
    points_per_turn: usize,
    axis: T3,
) -> PyResult<PyCurves> {
    let roots = g::grid_roots(v3(center), v3(axis), count, spacing).py_err()?;
    let c = g::helix_curves(&roots, v3(axis), radius, pitch, turns, points_per_turn).py_err()?;
    Ok(PyCurves { inner: Arc::new(c) })
}

#[pyfunction]
fn straight_curves(
    roots: PyReadonlyArray2<'_, f64>,
    direction: T3,
    length: f64,
    segments: usize,
) -> PyResult<PyCurves> {
    let r = to_points(&roots, "roots")?;
    let c = g::straight_curves(&r, v3(direction), length, segments).py_err()?;
    Ok(PyCurves { inner: Arc::new(c) })
}

enum RegionKind {
    Box { lower: Vec3<f64>, upper: Vec3<f64> },
    Sphere { center: Vec3<f64>, radius: f64 },
    Mesh(Arc<g::MeshInside>),
}

/// A volume to sample: a box, a ball or the inside of a closed mesh.
#[pyclass(module = "crumple._core", name = "Region", frozen)]
pub struct PyRegion {
    kind: RegionKind,
}

#[pymethods]
impl PyRegion {
    #[staticmethod]
    #[pyo3(name = "box")]
    fn box_(lower: T3, upper: T3) -> Self {
        Self {
            kind: RegionKind::Box {
                lower: v3(lower),
                upper: v3(upper),
            },
        }
    }
    #[staticmethod]
    fn sphere(center: T3, radius: f64) -> Self {
        Self {
            kind: RegionKind::Sphere {
                center: v3(center),
                radius,
            },
        }
    }
    #[staticmethod]
    fn mesh(py: Python<'_>, mesh: &PyTriMesh) -> PyResult<Self> {
        let m = Arc::clone(&mesh.inner);
        let inside = py.detach(move || g::MeshInside::new(&m)).py_err()?;
        Ok(Self {
            kind: RegionKind::Mesh(Arc::new(inside)),
        })
    }
}

/// Points filling `region`: `method` is "lattice" or "poisson".
#[pyfunction]
fn sample_region<'py>(
    py: Python<'py>,
    region: &PyRegion,
    method: &str,
    spacing: f64,
    seed: u64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let r = match &region.kind {
        RegionKind::Box { lower, upper } => g::Region::Box {
            lower: *lower,
            upper: *upper,
        },
        RegionKind::Sphere { center, radius } => g::Region::Sphere {
            center: *center,
            radius: *radius,
        },
        RegionKind::Mesh(m) => g::Region::Mesh(m),
    };
    let pts = match method {
        "lattice" => py.detach(|| g::sample_lattice(&r, spacing)),
        "poisson" => py.detach(|| g::sample_poisson_disk(&r, spacing, seed)),
        other => {
            return Err(invalid(format!(
                "unknown sampling method {other:?}; expected 'lattice' or 'poisson'"
            )));
        }
    }
    .py_err()?;
    points_to_py(py, &pts)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTriMesh>()?;
    m.add_class::<PyCurves>()?;
    m.add_class::<PyRegion>()?;
    m.add_function(wrap_pyfunction!(grid_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(uv_sphere, m)?)?;
    m.add_function(wrap_pyfunction!(box_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(cylinder_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(torus_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(helix_curves, m)?)?;
    m.add_function(wrap_pyfunction!(straight_curves, m)?)?;
    m.add_function(wrap_pyfunction!(sample_region, m)?)?;
    Ok(())
}
