//! Bindings of `crumple_core::collide`: colliders, motion, boundary response.

use crate::convert::{points_to_py, to_points, v3};
use crate::errors::{IntoPy, invalid};
use crate::geometry::PyTriMesh;
use crumple_core::collide as c;
use crumple_core::math::{Mat3, Vec3};
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::sync::Arc;

type T3 = (f64, f64, f64);

fn mat3(a: &PyReadonlyArray2<'_, f64>, name: &str) -> PyResult<Mat3<f64>> {
    if a.shape() != [3, 3] {
        return Err(invalid(format!(
            "{name} must be a 3x3 matrix; got shape {:?}",
            a.shape()
        )));
    }
    let v = a.as_array();
    Ok(Mat3::from_rows_array([
        [v[[0, 0]], v[[0, 1]], v[[0, 2]]],
        [v[[1, 0]], v[[1, 1]], v[[1, 2]]],
        [v[[2, 0]], v[[2, 1]], v[[2, 2]]],
    ]))
}

fn mat3_to_py<'py>(py: Python<'py>, m: &Mat3<f64>) -> PyResult<Bound<'py, PyArray2<f64>>> {
    PyArray1::from_vec(py, m.m.iter().flatten().copied().collect()).reshape([3, 3])
}

/// `index` into a simulation's `len` colliders, or the error that says how
/// many there are (the add/remove/set/get bindings of every module).
pub fn collider_index(index: usize, len: usize) -> PyResult<usize> {
    if index < len {
        Ok(index)
    } else {
        Err(invalid(format!("no collider {index}; there are {len}")))
    }
}

/// A kinematic collider: a shape, a pose, a motion and a boundary response.
#[pyclass(module = "crumple._core", name = "Collider")]
pub struct PyCollider {
    pub inner: c::Collider,
}

fn build(
    shape: c::Shape,
    translation: Vec3<f64>,
    rotation: Mat3<f64>,
    mode: &str,
    friction: f64,
) -> PyResult<PyCollider> {
    let mode = c::BoundaryMode::from_name(mode).py_err()?;
    let col = c::Collider::new(shape, translation, rotation)
        .py_err()?
        .with_mode(mode)
        .with_friction(friction)
        .py_err()?;
    Ok(PyCollider { inner: col })
}

impl PyCollider {
    fn map_points<'py, R: Send>(
        &self,
        py: Python<'py>,
        points: &PyReadonlyArray2<'py, f64>,
        f: impl Fn(&c::Collider, Vec3<f64>) -> R + Sync,
    ) -> PyResult<Vec<R>> {
        let p = to_points(points, "points")?;
        let col = &self.inner;
        Ok(py.detach(|| p.par_iter().map(|&x| f(col, x)).collect()))
    }
}

#[pymethods]
impl PyCollider {
    #[staticmethod]
    fn plane(point: T3, normal: T3, mode: &str, friction: f64) -> PyResult<Self> {
        let s = c::Plane::new(v3(point), v3(normal)).py_err()?;
        build(s.into(), Vec3::zero(), Mat3::identity(), mode, friction)
    }
    #[staticmethod]
    fn sphere(center: T3, radius: f64, mode: &str, friction: f64) -> PyResult<Self> {
        let s = c::Sphere::new(radius).py_err()?;
        build(s.into(), v3(center), Mat3::identity(), mode, friction)
    }
    #[staticmethod]
    #[pyo3(name = "box")]
    fn box_(
        center: T3,
        half_extents: T3,
        rotation: PyReadonlyArray2<'_, f64>,
        mode: &str,
        friction: f64,
    ) -> PyResult<Self> {
        let s = c::BoxShape::new(v3(half_extents)).py_err()?;
        build(s.into(), v3(center), mat3(&rotation, "rotation")?, mode, friction)
    }
    #[staticmethod]
    fn capsule(
        center: T3,
        half_height: f64,
        radius: f64,
        rotation: PyReadonlyArray2<'_, f64>,
        mode: &str,
        friction: f64,
    ) -> PyResult<Self> {
        let s = c::Capsule::new(half_height, radius).py_err()?;
        build(s.into(), v3(center), mat3(&rotation, "rotation")?, mode, friction)
    }
    #[staticmethod]
    fn cylinder(
        center: T3,
        radius: f64,
        half_height: f64,
        rotation: PyReadonlyArray2<'_, f64>,
        mode: &str,
        friction: f64,
    ) -> PyResult<Self> {
        let s = c::Cylinder::new(radius, half_height).py_err()?;
        build(s.into(), v3(center), mat3(&rotation, "rotation")?, mode, friction)
    }
    #[staticmethod]
    fn mesh(
        py: Python<'_>,
        mesh: &PyTriMesh,
        dx: f64,
        padding_cells: usize,
        mode: &str,
        friction: f64,
    ) -> PyResult<Self> {
        let m = Arc::clone(&mesh.inner);
        let sdf = py
            .detach(move || c::MeshSdf::from_mesh(m.vertices(), m.faces(), dx, padding_cells))
            .py_err()?;
        build(
            c::Shape::Mesh(Arc::new(sdf)),
            Vec3::zero(),
            Mat3::identity(),
            mode,
            friction,
        )
    }

    /// Signed distance (m, negative inside) at each point.
    fn signed_distance<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let d = self.map_points(py, &points, |c, x| c.phi(x))?;
        Ok(PyArray1::from_vec(py, d))
    }
    /// Outward unit normal at each point.
    fn normal<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let n = self.map_points(py, &points, |c, x| c.normal(x))?;
        points_to_py(py, &n)
    }
    /// Velocity (m/s) of the collider's rigid motion at each point.
    fn velocity<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let v = self.map_points(py, &points, |c, x| c.velocity(x))?;
        points_to_py(py, &v)
    }

    fn set_static(&mut self) -> PyResult<()> {
        self.inner.set_motion(c::Motion::Static).py_err()
    }
    fn set_constant_motion(&mut self, linear_velocity: T3, angular_velocity: T3) -> PyResult<()> {
        self.inner
            .set_motion(c::Motion::Constant {
                linear_velocity: v3(linear_velocity),
                angular_velocity: v3(angular_velocity),
            })
            .py_err()
    }
    fn set_keyframes(
        &mut self,
        times: PyReadonlyArray1<'_, f64>,
        translations: PyReadonlyArray2<'_, f64>,
        rotations: PyReadonlyArray3<'_, f64>,
    ) -> PyResult<()> {
        let t = times.as_array().to_vec();
        let tr = to_points(&translations, "translations")?;
        let r = rotations.as_array();
        if r.shape()[1..] != [3, 3] || r.shape()[0] != t.len() || tr.len() != t.len() {
            return Err(invalid(format!(
                "keyframes need times (K,), translations (K, 3) and rotations (K, 3, 3) of one length K; got {}, {:?} and {:?}",
                t.len(),
                translations.shape(),
                r.shape()
            )));
        }
        let rots = (0..t.len())
            .map(|k| {
                Mat3::from_rows_array([
                    [r[[k, 0, 0]], r[[k, 0, 1]], r[[k, 0, 2]]],
                    [r[[k, 1, 0]], r[[k, 1, 1]], r[[k, 1, 2]]],
                    [r[[k, 2, 0]], r[[k, 2, 1]], r[[k, 2, 2]]],
                ])
            })
            .collect();
        self.inner
            .set_motion(c::Motion::Keyframes {
                times: t,
                translations: tr,
                rotations: rots,
            })
            .py_err()
    }
    fn set_scripted(&mut self) -> PyResult<()> {
        self.inner.set_motion(c::Motion::Scripted).py_err()
    }
    fn set_pose(
        &mut self,
        translation: T3,
        rotation: PyReadonlyArray2<'_, f64>,
        linear_velocity: T3,
        angular_velocity: T3,
    ) -> PyResult<()> {
        let r = mat3(&rotation, "rotation")?;
        self.inner
            .set_pose(v3(translation), r, v3(linear_velocity), v3(angular_velocity))
            .py_err()
    }
    fn advance_to(&mut self, t: f64) -> PyResult<()> {
        self.inner.advance_to(t).py_err()
    }
    #[getter]
    fn time(&self) -> f64 {
        self.inner.time()
    }
    #[getter]
    fn translation(&self) -> T3 {
        let t = self.inner.translation();
        (t.x, t.y, t.z)
    }
    #[getter]
    fn rotation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        mat3_to_py(py, &self.inner.rotation())
    }
    #[getter]
    fn linear_velocity(&self) -> T3 {
        let t = self.inner.linear_velocity();
        (t.x, t.y, t.z)
    }
    #[getter]
    fn angular_velocity(&self) -> T3 {
        let t = self.inner.angular_velocity();
        (t.x, t.y, t.z)
    }
    #[getter]
    fn mode(&self) -> &'static str {
        self.inner.mode().name()
    }
    #[getter]
    fn friction(&self) -> f64 {
        self.inner.friction()
    }
    #[getter]
    fn shape_name(&self) -> &'static str {
        self.inner.shape().name()
    }
    #[getter]
    fn motion_name(&self) -> &'static str {
        self.inner.motion().name()
    }
}

/// The shared boundary response, vectorised: new velocities (N, 3).
#[pyfunction]
fn boundary_response<'py>(
    py: Python<'py>,
    v: PyReadonlyArray2<'py, f64>,
    v_co: PyReadonlyArray2<'py, f64>,
    n: PyReadonlyArray2<'py, f64>,
    mode: &str,
    friction: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let mode = c::BoundaryMode::from_name(mode).py_err()?;
    let (v, vc, n) = (
        to_points(&v, "v")?,
        to_points(&v_co, "v_co")?,
        to_points(&n, "n")?,
    );
    if v.len() != vc.len() || v.len() != n.len() {
        return Err(invalid("v, v_co and n must have the same number of rows"));
    }
    let out: Vec<Vec3<f64>> = (0..v.len())
        .map(|i| c::boundary_response(v[i], vc[i], n[i], mode, friction))
        .collect();
    points_to_py(py, &out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCollider>()?;
    m.add_function(wrap_pyfunction!(boundary_response, m)?)?;
    Ok(())
}
