//! Bindings of `crumple_core::mpm`: one simulation object in f32 or f64.

use crate::collide::PyCollider;
use crate::convert::{arrays_from_py, arrays_to_py, from_dict, keyframes, points_to_py, to_points, v3};
use crate::errors::{IntoPy, SignalCheck, invalid};
use crate::geometry::{PyCurves, PyTriMesh};
use crumple_core::math::{Real, Vec3};
use crumple_core::mpm::{
    CurveSpec, ElasticSpec, EnergyWeight, GooSpec, SandSpec, Simulation, SolverParams, SurfaceSpec,
    VolumeMaterial,
};
use crumple_core::params::Named;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3};
use pyo3::prelude::*;
use pyo3::types::PyDict;

type T3 = (f64, f64, f64);

enum Sim {
    F32(Box<Simulation<f32>>),
    F64(Box<Simulation<f64>>),
}

/// Runs `$body` with `$s` bound to the simulation, whatever its precision.
macro_rules! with_sim {
    ($self:expr, $s:ident => $body:expr) => {
        match &$self.sim {
            Sim::F32($s) => $body,
            Sim::F64($s) => $body,
        }
    };
}
/// `with_sim!` with the simulation borrowed mutably.
macro_rules! with_sim_mut {
    ($self:expr, $s:ident => $body:expr) => {
        match &mut $self.sim {
            Sim::F32($s) => $body,
            Sim::F64($s) => $body,
        }
    };
}
/// Like `with_sim_mut!`, after bringing the host copy of the state up to
/// date with the GPU (a no-op on the CPU backend).
macro_rules! with_host {
    ($self:expr, $s:ident => $body:expr) => {
        with_sim_mut!($self, $s => {
            $s.sync_host().py_err()?;
            $body
        })
    };
}
/// Like `with_sim_mut!`, for edits of the state: syncs the host copy first
/// and has the device copy re-uploaded before the next step.
macro_rules! with_edit {
    ($self:expr, $s:ident => $body:expr) => {
        with_sim_mut!($self, $s => {
            $s.begin_host_edit().py_err()?;
            $body
        })
    };
}

/// An MPM simulation (spec `mpm_anisotropic.md`).
#[pyclass(module = "crumple._core", name = "MpmSimulation")]
pub struct PyMpmSimulation {
    sim: Sim,
}

fn positions_py<'py, T: Real + numpy::Element>(
    py: Python<'py>,
    x: &[Vec3<T>],
) -> PyResult<Bound<'py, PyArray2<T>>> {
    let flat: Vec<T> = x.iter().flat_map(|v| [v.x, v.y, v.z]).collect();
    PyArray1::from_vec(py, flat).reshape([x.len(), 3])
}

/// A volume material dict (the Python field names, without density) → core material.
fn vol_material<T: Real>(kind: &str, p: &Bound<'_, PyDict>) -> PyResult<VolumeMaterial<T>> {
    match kind {
        "elastic" => from_dict::<ElasticSpec>(p, "ElasticMaterial")?.material(),
        "sand" => from_dict::<SandSpec>(p, "SandMaterial")?.material(),
        "goo" => from_dict::<GooSpec>(p, "GooMaterial")?.material(),
        other => {
            return Err(invalid(format!(
                "unknown volume material {other:?}; use elastic, sand or goo"
            )));
        }
    }
    .py_err()
}

#[pymethods]
impl PyMpmSimulation {
    /// `params`: the solver settings by their Python names
    /// (`crumple_core::mpm::SolverParams`'s field list); `precision`: "f32" or "f64".
    #[new]
    fn new(params: &Bound<'_, PyDict>, precision: &str) -> PyResult<Self> {
        let mut params: SolverParams = from_dict(params, "MPM solver")?;
        // The "eulerian" ablation is the paper's meshless MPM (Fig. 10 a,
        // Stomakhin et al. 2013): no mesh forces and no mesh enslaving
        // either; element particles move with their own grid velocity.
        params.enslave_elements = !params.eulerian_tangents;
        let sim = match precision {
            "f32" => Sim::F32(Box::new(Simulation::new(params).py_err()?)),
            "f64" => Sim::F64(Box::new(Simulation::new(params).py_err()?)),
            p => return Err(invalid(format!("unknown precision {p:?}; use 'f32' or 'f64'"))),
        };
        Ok(Self { sim })
    }

    /// Adds volumetric particles; `kind` is "elastic", "sand" or "goo".
    #[allow(clippy::too_many_arguments)]
    fn add_volume(
        &mut self,
        points: PyReadonlyArray2<'_, f64>,
        kind: &str,
        params: &Bound<'_, PyDict>,
        density: f64,
        particle_volume: f64,
        velocity: T3,
        damping: f64,
    ) -> PyResult<usize> {
        let pts = to_points(&points, "points")?;
        with_sim_mut!(self, s => {
            let mat = vol_material(kind, params)?;
            s.add_volume(&pts, mat, density, particle_volume, v3(velocity), damping).py_err()
        })
    }

    /// Adds a cloth mesh with a surface material.
    #[allow(clippy::too_many_arguments)]
    fn add_cloth(
        &mut self,
        mesh: &PyTriMesh,
        params: &Bound<'_, PyDict>,
        density: f64,
        thickness: f64,
        velocity: T3,
        damping: f64,
        energy_weight: &str,
    ) -> PyResult<usize> {
        let w = named::<EnergyWeight>(energy_weight, "energy_weight")?;
        with_sim_mut!(self, s => {
            let mat = from_dict::<SurfaceSpec>(params, "ClothMaterial")?.material().py_err()?;
            s.add_surface(&mesh.inner, mat, density, thickness, v3(velocity), damping, w).py_err()
        })
    }

    /// Adds strands with a curve material.
    #[allow(clippy::too_many_arguments)]
    fn add_curves(
        &mut self,
        curves: &PyCurves,
        params: &Bound<'_, PyDict>,
        density: f64,
        radius: f64,
        velocity: T3,
        damping: f64,
        energy_weight: &str,
    ) -> PyResult<usize> {
        let w = named::<EnergyWeight>(energy_weight, "energy_weight")?;
        with_sim_mut!(self, s => {
            let mat = from_dict::<CurveSpec>(params, "CurveMaterial")?.material().py_err()?;
            s.add_curves(&curves.inner, mat, density, radius, v3(velocity), damping, w).py_err()
        })
    }

    fn add_collider(&mut self, collider: &PyCollider) -> PyResult<usize> {
        let c = collider.inner.clone();
        with_sim_mut!(self, s => s.add_collider(c).py_err())
    }

    fn remove_collider(&mut self, index: usize) -> PyResult<()> {
        with_sim_mut!(self, s => s.remove_collider(index).map(|_| ()).py_err())
    }

    /// Replaces collider `index` with the state of `collider` (pose, motion, response).
    fn set_collider(&mut self, index: usize, collider: &PyCollider) -> PyResult<()> {
        let c = collider.inner.clone();
        with_sim_mut!(self, s => {
            let n = s.colliders.len();
            let slot = s.colliders.get_mut(index).ok_or_else(|| invalid(format!("no collider {index}; there are {n}")))?;
            *slot = c;
            Ok(())
        })
    }

    /// A copy of collider `index` as the simulation has moved it.
    fn get_collider(&self, index: usize) -> PyResult<PyCollider> {
        with_sim!(self, s => {
            let c = s.colliders.get(index).ok_or_else(|| invalid(format!("no collider {index}")))?;
            Ok(PyCollider { inner: c.clone() })
        })
    }

    fn pin(&mut self, object: usize, indices: PyReadonlyArray1<'_, i64>) -> PyResult<usize> {
        let idx = indices_u32(&indices)?;
        with_sim_mut!(self, s => s.pin(object, &idx).py_err())
    }

    fn set_pin_targets(
        &mut self,
        object: usize,
        indices: PyReadonlyArray1<'_, i64>,
        positions: PyReadonlyArray2<'_, f64>,
        velocities: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<()> {
        let idx = indices_u32(&indices)?;
        let p = to_points(&positions, "positions")?;
        let v = to_points(&velocities, "velocities")?;
        with_sim_mut!(self, s => s.set_pin_targets(object, &idx, &p, &v).py_err())
    }

    fn unpin(&mut self, object: usize) -> PyResult<()> {
        with_sim_mut!(self, s => s.unpin(object).py_err())
    }

    /// Pins `indices` of `object` and moves them along keyframes about
    /// `pivot`; returns the handle id.
    fn add_handle_keyframes(
        &mut self,
        object: usize,
        indices: PyReadonlyArray1<'_, i64>,
        pivot: (f64, f64, f64),
        times: Vec<f64>,
        translations: PyReadonlyArray2<'_, f64>,
        rotations: PyReadonlyArray3<'_, f64>,
    ) -> PyResult<usize> {
        let idx = indices_u32(&indices)?;
        let motion = keyframes(times, &translations, &rotations)?;
        with_sim_mut!(self, s => s.add_handle(object, &idx, v3(pivot), motion).py_err())
    }

    /// Restores a checkpointed handle (keyframes, reference positions, start time).
    #[allow(clippy::too_many_arguments)]
    fn restore_handle(
        &mut self,
        object: usize,
        indices: PyReadonlyArray1<'_, i64>,
        reference: PyReadonlyArray2<'_, f64>,
        pivot: (f64, f64, f64),
        start: f64,
        active: bool,
        times: Vec<f64>,
        translations: PyReadonlyArray2<'_, f64>,
        rotations: PyReadonlyArray3<'_, f64>,
    ) -> PyResult<usize> {
        let idx = indices_u32(&indices)?;
        let reference = to_points(&reference, "reference")?;
        let motion = keyframes(times, &translations, &rotations)?;
        with_sim_mut!(self, s => s
            .restore_handle(object, &idx, reference.clone(), v3(pivot), motion.clone(), start, active)
            .py_err())
    }

    fn release_handle(&mut self, id: usize) -> PyResult<()> {
        with_sim_mut!(self, s => s.release_handle(id).py_err())
    }

    fn freeze_handle(&mut self, id: usize) -> PyResult<()> {
        with_sim_mut!(self, s => s.freeze_handle(id).py_err())
    }

    /// Unpins the given (object-local) vertices of `object`.
    fn unpin_vertices(&mut self, object: usize, indices: PyReadonlyArray1<'_, i64>) -> PyResult<()> {
        let idx = indices_u32(&indices)?;
        with_sim_mut!(self, s => s.unpin_vertices(object, &idx).py_err())
    }

    /// Advances by `duration` s (GIL released); returns the number of steps.
    /// Ctrl-C stops it at a step boundary (the state stays intact).
    fn advance(&mut self, py: Python<'_>, duration: f64) -> PyResult<u64> {
        let sim = &mut self.sim;
        let mut sig = SignalCheck::new();
        let r = py.detach(|| match sim {
            Sim::F32(s) => s.advance_with(duration, || sig.stop()),
            Sim::F64(s) => s.advance_with(duration, || sig.stop()),
        });
        sig.finish(r)
    }

    /// One step of exactly `dt` s (default: the step the CFL rule and
    /// `dt_max` allow now).
    #[pyo3(signature = (dt=None))]
    fn step(&mut self, py: Python<'_>, dt: Option<f64>) -> PyResult<()> {
        let sim = &mut self.sim;
        py.detach(|| match sim {
            Sim::F32(s) => s.step(dt.unwrap_or_else(|| s.stable_dt())),
            Sim::F64(s) => s.step(dt.unwrap_or_else(|| s.stable_dt())),
        })
        .py_err()
    }

    /// Positions (N, 3) of an object's particles or vertices, in the simulation's precision.
    fn positions<'py>(&mut self, py: Python<'py>, object: usize) -> PyResult<Bound<'py, PyAny>> {
        with_host!(self, s => {
            let r = s.object_range(object).py_err()?;
            Ok(positions_py(py, &s.state.x[r])?.into_any())
        })
    }

    /// Velocities (N, 3) of an object's particles or vertices.
    fn velocities<'py>(&mut self, py: Python<'py>, object: usize) -> PyResult<Bound<'py, PyAny>> {
        with_host!(self, s => {
            let r = s.object_range(object).py_err()?;
            Ok(positions_py(py, &s.state.v[r])?.into_any())
        })
    }

    /// Overwrites the velocities of an object's particles or vertices.
    fn set_velocities(&mut self, object: usize, velocities: PyReadonlyArray2<'_, f64>) -> PyResult<()> {
        let v = to_points(&velocities, "velocities")?;
        with_edit!(self, s => {
            let r = s.object_range(object).py_err()?;
            if v.len() != r.len() {
                return Err(invalid(format!("velocities must have {} rows; got {}", r.len(), v.len())));
            }
            for (dst, src) in s.state.v[r].iter_mut().zip(&v) {
                *dst = src.cast();
            }
            Ok(())
        })
    }

    /// Element `R̃` factors (E, 3, 3) of every element (diagnostics, spec §4.1).
    fn element_r<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        with_host!(self, s => {
            let r = s.element_r();
            let flat: Vec<f64> = r.iter().flat_map(|m| m.m.iter().flatten().map(|v| v.to_f64()).collect::<Vec<_>>()).collect();
            Ok(PyArray1::from_vec(py, flat).reshape([r.len(), 3, 3])?.into_any())
        })
    }

    /// All particle positions (N, 3) as float64 (diagnostics).
    fn all_positions<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        with_host!(self, s => {
            let x: Vec<Vec3<f64>> = s.state.x.iter().map(|v| v.cast()).collect();
            points_to_py(py, &x)
        })
    }

    #[getter]
    fn time(&self) -> f64 {
        with_sim!(self, s => s.state.time)
    }
    #[getter]
    fn step_count(&self) -> u64 {
        with_sim!(self, s => s.state.step)
    }
    #[getter]
    fn num_particles(&self) -> usize {
        with_sim!(self, s => s.model.num_particles())
    }
    #[getter]
    fn precision(&self) -> &'static str {
        match self.sim {
            Sim::F32(_) => "f32",
            Sim::F64(_) => "f64",
        }
    }
    fn stable_dt(&self) -> f64 {
        with_sim!(self, s => s.stable_dt())
    }
    fn total_momentum(&mut self) -> PyResult<T3> {
        let m = with_host!(self, s => s.total_momentum());
        Ok((m.x, m.y, m.z))
    }
    fn kinetic_energy(&mut self) -> PyResult<f64> {
        Ok(with_host!(self, s => s.kinetic_energy()))
    }
    fn elastic_energy(&mut self) -> PyResult<f64> {
        Ok(with_host!(self, s => s.elastic_energy()))
    }
    fn total_mass(&self) -> f64 {
        with_sim!(self, s => s.total_mass())
    }
    /// Total grid mass of the last step (kg): equals the particle mass (spec E8).
    fn grid_mass(&self) -> PyResult<f64> {
        with_sim!(self, s => s.grid_mass().py_err())
    }
    /// Volumetric particles deleted on leaving the domain (out_of_domain="remove").
    fn removed_particles(&self) -> u64 {
        with_sim!(self, s => s.removed_particles())
    }
    /// Number of active grid blocks of the last step (4³ nodes each).
    fn active_blocks(&self) -> usize {
        with_sim!(self, s => s.active_blocks())
    }
    /// Runs every later step on the GPU (wgpu; f32 only). Raises
    /// BackendUnavailable without an adapter.
    fn use_gpu(&mut self) -> PyResult<()> {
        let ctx = crumple_core::gpu::GpuContext::shared().py_err()?;
        with_sim_mut!(self, s => s.use_gpu(&ctx).py_err())
    }
    /// The GPU adapter's name, or None on the CPU backend.
    #[getter]
    fn gpu_adapter(&self) -> Option<String> {
        with_sim!(self, s => s.gpu_adapter().map(str::to_owned))
    }
    /// The whole mutable state as float64 arrays (for checkpoints; layout:
    /// `crumple_core::mpm::sim::checkpoint`).
    fn state_arrays<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let a = with_sim_mut!(self, s => s.checkpoint().py_err()?);
        arrays_to_py(py, &a)
    }

    /// Restores a state written by `state_arrays` into a simulation built the
    /// same way (every shape and value checked before anything changes).
    fn set_state_arrays(&mut self, arrays: &Bound<'_, PyDict>) -> PyResult<()> {
        let a = arrays_from_py(arrays)?;
        with_sim_mut!(self, s => s.restore(&a).py_err())
    }

    /// Seconds spent per solver stage since the start (profiling).
    fn stage_times<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = with_sim!(self, s => s.solver.times);
        let d = PyDict::new(py);
        for (k, v) in [
            ("bin", t.bin),
            ("stress", t.stress),
            ("p2g", t.p2g),
            ("grid_update", t.grid_update),
            ("g2p", t.g2p),
            ("advect", t.advect),
            ("plasticity", t.plasticity),
        ] {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// Return-map event counters (spec §5.5).
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = with_sim!(self, s => s.counters());
        let d = PyDict::new(py);
        d.set_item("slide", c.slide)?;
        d.set_item("tension", c.tension)?;
        d.set_item("inverted", c.inverted)?;
        d.set_item("degenerate", c.degenerate)?;
        d.set_item("element_steps", c.element_steps)?;
        Ok(d)
    }
}

/// The variant of `N` called `name`, or an error listing the names.
fn named<N: Named>(name: &str, what: &str) -> PyResult<N> {
    N::from_name(name).ok_or_else(|| invalid(format!("unknown {what} {name:?}; use one of {:?}", N::NAMES)))
}

fn indices_u32(a: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<u32>> {
    a.as_array()
        .iter()
        .map(|&i| u32::try_from(i).map_err(|_| invalid(format!("vertex index {i} is out of range"))))
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMpmSimulation>()?;
    Ok(())
}
