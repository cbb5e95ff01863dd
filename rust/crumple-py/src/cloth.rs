//! Bindings of `crumple_core::cloth`: the implicit persistent-wrinkle cloth.
//!
//! Materials, switches and step settings cross as flat dicts (built by
//! `crumple/cloth.py`, which documents every key with its unit); presets come
//! from the core so the tables live in one place.

use crate::collide::PyCollider;
use crate::convert::{
    arrays_from_py, arrays_to_py, from_dict, keyframes, points_to_py, rows_to_py, to_dict, to_points, v3,
};
use crate::errors::{IntoPy, SignalCheck, invalid};
use crate::geometry::PyTriMesh;
use crumple_core::cloth::material::{Material, Wrinkles};
use crumple_core::cloth::model::{Garment, MaterialFrame};
use crumple_core::cloth::sim::Simulation;
use crumple_core::cloth::solver::StepParams;
use crumple_core::collide::Motion;
use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

type T3 = (f64, f64, f64);

/// Material dict (the Python field names) → core material, range-checked.
fn material_from(d: &Bound<'_, PyDict>) -> PyResult<Material> {
    let m: Material = from_dict(d, "cloth material")?;
    m.validate().py_err()?;
    Ok(m)
}

/// The parameters of a paper preset (Table 2/3) as a dict.
#[pyfunction]
fn cloth_preset<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let m = Material::preset(name).py_err()?;
    to_dict(py, &m)
}

/// Names of the presets.
#[pyfunction]
fn cloth_preset_names() -> Vec<&'static str> {
    crumple_core::cloth::material::PRESET_NAMES.to_vec()
}

fn indices(a: &PyReadonlyArray1<'_, i64>, n: usize) -> PyResult<Vec<u32>> {
    a.as_array()
        .iter()
        .map(|&i| {
            if i < 0 || i as usize >= n {
                Err(invalid(format!(
                    "vertex index {i} is out of range: the cloth has {n} vertices"
                )))
            } else {
                Ok(i as u32)
            }
        })
        .collect()
}

fn f64_array<'py>(py: Python<'py>, v: Vec<f64>) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_vec(py, v)
}

/// One garment from the Python side's dicts and arrays.
fn garment_from(
    mesh: &PyTriMesh,
    material: &Bound<'_, PyDict>,
    wrinkles: &Bound<'_, PyDict>,
    uv: Option<PyReadonlyArray3<'_, f64>>,
    warp_direction: Option<T3>,
    init_rest_from_mesh: bool,
) -> PyResult<Garment> {
    let frame = match (uv, warp_direction) {
        (Some(a), _) => {
            let s = a.shape();
            if s[1] != 3 || s[2] != 2 {
                return Err(invalid(format!("uv must have shape (F, 3, 2); got {s:?}")));
            }
            let view = a.as_array();
            let mut out = Vec::with_capacity(s[0]);
            for f in 0..s[0] {
                out.push(core::array::from_fn(|c| [view[[f, c, 0]], view[[f, c, 1]]]));
            }
            MaterialFrame::Uv(out)
        }
        (None, Some(d)) => MaterialFrame::Direction(v3(d)),
        (None, None) => MaterialFrame::Principal,
    };
    Ok(Garment {
        mesh: (*mesh.inner).clone(),
        material: material_from(material)?,
        wrinkles: from_dict::<Wrinkles>(wrinkles, "wrinkles")?,
        frame,
        init_rest_from_mesh,
    })
}

/// Implicit cloth simulation (spec `persistent_wrinkles.md`).
#[pyclass(module = "crumple._core", name = "ClothSimulation")]
pub struct PyClothSimulation {
    sim: Simulation,
}

#[pymethods]
impl PyClothSimulation {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (mesh, material, wrinkles, params, uv=None, warp_direction=None, init_rest_from_mesh=false))]
    fn new(
        py: Python<'_>,
        mesh: &PyTriMesh,
        material: &Bound<'_, PyDict>,
        wrinkles: &Bound<'_, PyDict>,
        params: &Bound<'_, PyDict>,
        uv: Option<PyReadonlyArray3<'_, f64>>,
        warp_direction: Option<T3>,
        init_rest_from_mesh: bool,
    ) -> PyResult<Self> {
        let g = garment_from(mesh, material, wrinkles, uv, warp_direction, init_rest_from_mesh)?;
        let p = from_dict::<StepParams>(params, "cloth step")?;
        let sim = py
            .detach(move || Simulation::from_garments(vec![g], p))
            .py_err()?;
        Ok(Self { sim })
    }

    /// Adds a garment at rest; returns its vertex range `(start, stop)`.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (mesh, material, wrinkles, uv=None, warp_direction=None, init_rest_from_mesh=false))]
    fn add_garment(
        &mut self,
        py: Python<'_>,
        mesh: &PyTriMesh,
        material: &Bound<'_, PyDict>,
        wrinkles: &Bound<'_, PyDict>,
        uv: Option<PyReadonlyArray3<'_, f64>>,
        warp_direction: Option<T3>,
        init_rest_from_mesh: bool,
    ) -> PyResult<(usize, usize)> {
        let g = garment_from(mesh, material, wrinkles, uv, warp_direction, init_rest_from_mesh)?;
        let sim = &mut self.sim;
        let r = py.detach(move || sim.add_garment(g)).py_err()?;
        Ok((r.start, r.end))
    }

    /// Per garment: `(vertex_start, vertex_stop, face_start, face_stop,
    /// hinge_start, hinge_stop)`.
    fn garment_ranges(&self) -> Vec<(usize, usize, usize, usize, usize, usize)> {
        self.sim
            .model()
            .garments
            .iter()
            .map(|g| {
                (
                    g.vertices.start,
                    g.vertices.end,
                    g.faces.start,
                    g.faces.end,
                    g.hinges.start,
                    g.hinges.end,
                )
            })
            .collect()
    }

    /// Replaces the step settings.
    fn set_params(&mut self, params: &Bound<'_, PyDict>) -> PyResult<()> {
        let p = from_dict::<StepParams>(params, "cloth step")?;
        self.sim.set_params(p).py_err()
    }

    /// One step of `dt` (s; default: the configured step).
    #[pyo3(signature = (dt=None))]
    fn step(&mut self, py: Python<'_>, dt: Option<f64>) -> PyResult<()> {
        let sim = &mut self.sim;
        py.detach(|| match dt {
            Some(h) => sim.step_dt(h),
            None => sim.step(),
        })
        .py_err()?;
        Ok(())
    }

    /// Advances by `duration` s, landing on `time + duration` (GIL
    /// released; Ctrl-C stops it at a step boundary).
    fn advance(&mut self, py: Python<'_>, duration: f64) -> PyResult<u64> {
        let sim = &mut self.sim;
        let mut sig = SignalCheck::new();
        let r = py.detach(|| sim.advance_with(duration, || sig.stop()));
        sig.finish(r)
    }

    #[pyo3(signature = (vertices, targets=None, stiffness=None))]
    fn pin(
        &mut self,
        vertices: PyReadonlyArray1<'_, i64>,
        targets: Option<PyReadonlyArray2<'_, f64>>,
        stiffness: Option<f64>,
    ) -> PyResult<()> {
        let v = indices(&vertices, self.sim.model().num_vertices())?;
        let t = targets.map(|t| to_points(&t, "targets")).transpose()?;
        self.sim.pin(&v, t.as_deref(), stiffness).py_err()
    }

    fn set_pin_targets(
        &mut self,
        vertices: PyReadonlyArray1<'_, i64>,
        targets: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<()> {
        let v = indices(&vertices, self.sim.model().num_vertices())?;
        let t = to_points(&targets, "targets")?;
        self.sim.set_pin_targets(&v, &t).py_err()
    }

    fn release(&mut self, vertices: PyReadonlyArray1<'_, i64>) -> PyResult<()> {
        let v = indices(&vertices, self.sim.model().num_vertices())?;
        self.sim.release(&v).py_err()
    }

    /// Handle moved by keyframes: relative poses (translation, rotation) at times.
    #[pyo3(signature = (vertices, pivot, times, translations, rotations, stiffness=None))]
    fn add_handle_keyframes(
        &mut self,
        vertices: PyReadonlyArray1<'_, i64>,
        pivot: T3,
        times: Vec<f64>,
        translations: PyReadonlyArray2<'_, f64>,
        rotations: PyReadonlyArray3<'_, f64>,
        stiffness: Option<f64>,
    ) -> PyResult<usize> {
        let v = indices(&vertices, self.sim.model().num_vertices())?;
        let motion = keyframes(times, &translations, &rotations)?;
        self.sim.add_handle(&v, v3(pivot), motion, stiffness).py_err()
    }

    /// Handle moved at constant linear and angular velocity about `pivot`.
    #[pyo3(signature = (vertices, pivot, linear_velocity, angular_velocity, stiffness=None))]
    fn add_handle_constant(
        &mut self,
        vertices: PyReadonlyArray1<'_, i64>,
        pivot: T3,
        linear_velocity: T3,
        angular_velocity: T3,
        stiffness: Option<f64>,
    ) -> PyResult<usize> {
        let v = indices(&vertices, self.sim.model().num_vertices())?;
        let motion = Motion::Constant {
            linear_velocity: v3(linear_velocity),
            angular_velocity: v3(angular_velocity),
        };
        self.sim.add_handle(&v, v3(pivot), motion, stiffness).py_err()
    }

    /// Restores a checkpointed handle (keyframes when `times` is given, else
    /// constant velocities).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (vertices, reference, pivot, start, active, times=None, translations=None, rotations=None, linear_velocity=None, angular_velocity=None))]
    fn restore_handle(
        &mut self,
        vertices: PyReadonlyArray1<'_, i64>,
        reference: PyReadonlyArray2<'_, f64>,
        pivot: T3,
        start: f64,
        active: bool,
        times: Option<Vec<f64>>,
        translations: Option<PyReadonlyArray2<'_, f64>>,
        rotations: Option<PyReadonlyArray3<'_, f64>>,
        linear_velocity: Option<T3>,
        angular_velocity: Option<T3>,
    ) -> PyResult<usize> {
        let v = indices(&vertices, self.sim.model().num_vertices())?;
        let reference = to_points(&reference, "reference")?;
        let motion = match (times, translations, rotations) {
            (Some(times), Some(tr), Some(rot)) => keyframes(times, &tr, &rot)?,
            _ => Motion::Constant {
                linear_velocity: v3(linear_velocity.unwrap_or((0.0, 0.0, 0.0))),
                angular_velocity: v3(angular_velocity.unwrap_or((0.0, 0.0, 0.0))),
            },
        };
        self.sim
            .restore_handle(&v, reference, v3(pivot), motion, start, active)
            .py_err()
    }

    /// Drops the lagged factor (checkpoint saves call it; see the core).
    fn invalidate_solver_cache(&mut self) {
        self.sim.invalidate_solver_cache();
    }

    /// Every state array, for checkpoints (layout: `crumple_core::cloth::checkpoint`).
    fn state_arrays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        arrays_to_py(py, &self.sim.checkpoint())
    }

    /// Restores the arrays written by `state_arrays` (every shape and value
    /// checked before anything changes).
    fn set_state_arrays(&mut self, arrays: &Bound<'_, PyDict>) -> PyResult<()> {
        let a = arrays_from_py(arrays)?;
        self.sim.restore(&a).py_err()
    }

    fn release_handle(&mut self, id: usize) -> PyResult<()> {
        self.sim.release_handle(id).py_err()
    }

    fn freeze_handle(&mut self, id: usize) -> PyResult<()> {
        self.sim.freeze_handle(id).py_err()
    }

    fn add_collider(&mut self, collider: &PyCollider) -> usize {
        self.sim.add_collider(collider.inner.clone());
        self.sim.colliders().len() - 1
    }

    fn remove_collider(&mut self, index: usize) -> PyResult<()> {
        self.sim.remove_collider(index).py_err().map(|_| ())
    }

    /// Replaces collider `index` (same slot) with a new one, e.g. after the
    /// user changed its motion in Python.
    fn set_collider(&mut self, index: usize, collider: &PyCollider) -> PyResult<()> {
        *self.sim.collider_mut(index).py_err()? = collider.inner.clone();
        Ok(())
    }

    fn get_collider(&self, index: usize) -> PyResult<PyCollider> {
        let c = self
            .sim
            .colliders()
            .get(index)
            .ok_or_else(|| invalid(format!("no collider {index}")))?;
        Ok(PyCollider { inner: c.clone() })
    }

    fn set_hold_warp(&mut self, per_step: f64, steps: u64) -> PyResult<()> {
        self.sim.set_hold_warp(per_step, steps).py_err()
    }

    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        points_to_py(py, &self.sim.state().x)
    }

    #[getter]
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        points_to_py(py, &self.sim.state().v)
    }

    fn set_positions(&mut self, x: PyReadonlyArray2<'_, f64>) -> PyResult<()> {
        let p = to_points(&x, "positions")?;
        let n = self.sim.model().num_vertices();
        if p.len() != n || p.iter().any(|q| !q.is_finite()) {
            return Err(invalid(format!("positions must be finite with shape ({n}, 3)")));
        }
        self.sim.state_mut().x = p;
        Ok(())
    }

    fn set_velocities(&mut self, v: PyReadonlyArray2<'_, f64>) -> PyResult<()> {
        let p = to_points(&v, "velocities")?;
        let n = self.sim.model().num_vertices();
        if p.len() != n || p.iter().any(|q| !q.is_finite()) {
            return Err(invalid(format!("velocities must be finite with shape ({n}, 3)")));
        }
        self.sim.state_mut().v = p;
        Ok(())
    }

    #[getter]
    fn time(&self) -> f64 {
        self.sim.state().time
    }

    #[getter]
    fn step_count(&self) -> u64 {
        self.sim.state().step
    }

    #[getter]
    fn faces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        rows_to_py(py, &self.sim.model().faces)
    }

    #[getter]
    fn hinges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        rows_to_py(py, &self.sim.model().hinges)
    }

    #[getter]
    fn hinge_rest_length<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(py, self.sim.model().hinge_rest_length.clone())
    }

    #[getter]
    fn masses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(py, self.sim.model().mass.clone())
    }

    /// Current dihedral angles, rad.
    fn hinge_angles<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(py, self.sim.hinge_angles())
    }

    #[getter]
    fn plastic_angle<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(
            py,
            self.sim.state().hinge_plastic.iter().map(|p| p.theta_p).collect(),
        )
    }

    #[getter]
    fn anchor_angle<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(
            py,
            self.sim.state().hinge_friction.iter().map(|f| f.anchor).collect(),
        )
    }

    #[getter]
    fn stick_time<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(
            py,
            self.sim
                .state()
                .hinge_friction
                .iter()
                .map(|f| f.t_stick)
                .collect(),
        )
    }

    #[getter]
    fn plastic_time<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(
            py,
            self.sim
                .state()
                .hinge_plastic
                .iter()
                .map(|p| p.t_plastic)
                .collect(),
        )
    }

    #[getter]
    fn yield_angle<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(
            py,
            self.sim.state().hinge_plastic.iter().map(|p| p.eps_y).collect(),
        )
    }

    #[getter]
    fn hinge_dahl<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(py, self.sim.state().hinge_dahl.clone())
    }

    /// Tensile plastic strains (F, 3): uu, vv, uv.
    #[getter]
    fn tensile_plastic_strain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let st = self.sim.state();
        let flat: Vec<f64> = st.tri_plastic.iter().flat_map(|p| p.map(|c| c.theta_p)).collect();
        PyArray1::from_vec(py, flat).reshape([st.tri_plastic.len(), 3])
    }

    /// Tensile friction anchors (F, 3).
    #[getter]
    fn tensile_anchor<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let st = self.sim.state();
        let flat: Vec<f64> = st.tri_friction.iter().flat_map(|p| p.map(|c| c.anchor)).collect();
        PyArray1::from_vec(py, flat).reshape([st.tri_friction.len(), 3])
    }

    fn pin_forces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        points_to_py(py, &self.sim.pin_forces())
    }

    #[getter]
    fn pin_stiffness<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        f64_array(py, self.sim.pins().stiffness.clone())
    }

    fn count_self_intersections(&self, py: Python<'_>) -> usize {
        let sim = &self.sim;
        py.detach(|| sim.count_self_intersections())
    }

    /// Statistics of the last step as a dict.
    fn last_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.sim.last_stats();
        let d = PyDict::new(py);
        d.set_item("cg_iterations", s.cg_iterations)?;
        d.set_item("residual", s.residual)?;
        d.set_item("hinge_slips", s.hinge_slips)?;
        d.set_item("hinge_yields", s.hinge_yields)?;
        d.set_item("proximity_pairs", s.proximity_pairs)?;
        d.set_item("obstacle_contacts", s.obstacle_contacts)?;
        d.set_item("collisions", s.collisions)?;
        d.set_item("impact_zones", s.impact_zones)?;
        d.set_item("time_proximity", s.times.proximity)?;
        d.set_item("time_elements", s.times.elements)?;
        d.set_item("time_assemble", s.times.assemble)?;
        d.set_item("time_solve", s.times.solve)?;
        d.set_item("time_collide", s.times.collide)?;
        Ok(d)
    }

    /// Kinetic energy, J.
    fn kinetic_energy(&self) -> f64 {
        let st = self.sim.state();
        let m = &self.sim.model().mass;
        st.v.iter().zip(m).map(|(v, &m)| 0.5 * m * v.norm_squared()).sum()
    }
}

/// Intersection count of a mesh state (non-adjacent triangle pairs).
#[pyfunction]
fn count_triangle_intersections(
    py: Python<'_>,
    positions: PyReadonlyArray2<'_, f64>,
    faces: PyReadonlyArray2<'_, i64>,
) -> PyResult<usize> {
    let x = to_points(&positions, "positions")?;
    let n = x.len() as i64;
    let f: Vec<[u32; 3]> = crate::convert::to_triples(&faces, "faces")?
        .into_iter()
        .map(|t| {
            if t.iter().any(|&i| i < 0 || i >= n) {
                Err(invalid(format!("face {t:?} has an index outside 0..{n}")))
            } else {
                Ok([t[0] as u32, t[1] as u32, t[2] as u32])
            }
        })
        .collect::<PyResult<_>>()?;
    Ok(py.detach(|| crumple_core::cloth::selfcollide::count_triangle_intersections(&x, &f)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyClothSimulation>()?;
    m.add_function(wrap_pyfunction!(cloth_preset, m)?)?;
    m.add_function(wrap_pyfunction!(cloth_preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(count_triangle_intersections, m)?)?;
    Ok(())
}
