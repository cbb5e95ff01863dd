//! Bindings of `crumple_core::pbd`: shape matching with plasticity.
//!
//! Settings and materials cross as dicts keyed by the Python names (the
//! core's field lists, `crumple_core::params`); bodies are addressed by
//! index and particles in each body's own numbering.

use crate::collide::{PyCollider, collider_index};
use crate::convert::{arrays_from_py, arrays_to_py, from_dict, rows_to_py, to_dict, to_points, v3};
use crate::errors::{IntoPy, SignalCheck, invalid};
use crate::geometry::PyTriMesh;
use crumple_core::math::Vec3;
use crumple_core::pbd::material::PRESET_NAMES;
use crumple_core::pbd::{Material, Simulation, StepParams};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

type T3 = (f64, f64, f64);
/// A mesh as numpy arrays: vertices (V, 3) float32 and faces (F, 3) int64.
type MeshArrays<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray2<i64>>);

/// A shape-matching simulation (spec `shape_matching.md`).
#[pyclass(module = "crumple._core", name = "PbdSimulation")]
pub struct PyPbdSimulation {
    sim: Simulation,
}

fn f32_points<'py>(
    py: Python<'py>,
    x: impl Iterator<Item = Vec3<f32>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let flat: Vec<f32> = x.flat_map(|v| [v.x, v.y, v.z]).collect();
    let n = flat.len() / 3;
    PyArray1::from_vec(py, flat).reshape([n, 3])
}

fn local_indices(a: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<u32>> {
    a.as_array()
        .iter()
        .map(|&i| u32::try_from(i).map_err(|_| invalid(format!("particle index {i} is out of range"))))
        .collect()
}

#[pymethods]
impl PyPbdSimulation {
    /// `params`: the settings by their Python names.
    #[new]
    fn new(params: &Bound<'_, PyDict>) -> PyResult<Self> {
        let p: StepParams = from_dict(params, "shape-matching")?;
        Ok(Self {
            sim: Simulation::new(p).py_err()?,
        })
    }

    /// Replaces the settings.
    fn set_params(&mut self, params: &Bound<'_, PyDict>) -> PyResult<()> {
        let p: StepParams = from_dict(params, "shape-matching")?;
        self.sim.set_params(p).py_err()
    }

    /// Adds a body from a closed mesh; returns its index.
    #[pyo3(signature = (mesh, material, velocity, particles=None, cluster_offsets=None, cluster_members=None))]
    #[allow(clippy::too_many_arguments)]
    fn add_body(
        &mut self,
        py: Python<'_>,
        mesh: &PyTriMesh,
        material: &Bound<'_, PyDict>,
        velocity: T3,
        particles: Option<PyReadonlyArray2<'_, f64>>,
        cluster_offsets: Option<PyReadonlyArray1<'_, i64>>,
        cluster_members: Option<PyReadonlyArray1<'_, i64>>,
    ) -> PyResult<usize> {
        let m: Material = from_dict(material, "pbd Material")?;
        let points = particles.map(|p| to_points(&p, "particles")).transpose()?;
        let clusters = match (cluster_offsets, cluster_members) {
            (Some(o), Some(mem)) => Some(csr_to_lists(o.as_slice()?, mem.as_slice()?)?),
            (None, None) => None,
            _ => return Err(invalid("cluster_offsets and cluster_members come together")),
        };
        let sim = &mut self.sim;
        let mesh = &mesh.inner;
        py.detach(|| sim.add_body_with(mesh, m, v3(velocity), points.as_deref(), clusters.as_deref()))
            .py_err()
    }

    /// Number of bodies.
    #[getter]
    fn num_bodies(&self) -> usize {
        self.sim.model.bodies.len()
    }

    /// Body `b`'s particle positions, `(N, 3)` float32 (its own numbering).
    fn positions<'py>(&mut self, py: Python<'py>, b: usize) -> PyResult<Bound<'py, PyArray2<f32>>> {
        self.sim.sync().py_err()?;
        let p = &self.sim.state.particles;
        f32_points(py, self.sim.body_particles(b).into_iter().map(|i| p.x[i]))
    }

    /// Body `b`'s particle velocities, `(N, 3)` float32.
    fn velocities<'py>(&mut self, py: Python<'py>, b: usize) -> PyResult<Bound<'py, PyArray2<f32>>> {
        self.sim.sync().py_err()?;
        let p = &self.sim.state.particles;
        f32_points(py, self.sim.body_particles(b).into_iter().map(|i| p.v[i]))
    }

    /// Sets body `b`'s particle velocities from `(N, 3)`.
    fn set_velocities(&mut self, b: usize, v: PyReadonlyArray2<'_, f64>) -> PyResult<()> {
        let v = to_points(&v, "velocities")?;
        let ids = self.sim.body_particles(b);
        if v.len() != ids.len() || v.iter().any(|x| !x.is_finite()) {
            return Err(invalid(format!(
                "velocities must be finite with shape ({}, 3)",
                ids.len()
            )));
        }
        let state = self.sim.state_mut().py_err()?;
        for (k, i) in ids.into_iter().enumerate() {
            state.particles.v[i] = v[k].cast::<f32>();
        }
        Ok(())
    }

    /// Body `b`'s particle masses, kg.
    fn masses<'py>(&self, py: Python<'py>, b: usize) -> Bound<'py, PyArray1<f32>> {
        let p = &self.sim.state.particles;
        PyArray1::from_vec(
            py,
            self.sim.body_particles(b).into_iter().map(|i| p.m[i]).collect(),
        )
    }

    /// Body `b`'s persistent particle ids (kept through re-sampling).
    fn particle_ids<'py>(&self, py: Python<'py>, b: usize) -> Bound<'py, PyArray1<u32>> {
        let p = &self.sim.state.particles;
        PyArray1::from_vec(
            py,
            self.sim.body_particles(b).into_iter().map(|i| p.id[i]).collect(),
        )
    }

    /// Body `b`'s pinned particles, in its numbering now (ascending).
    fn pinned<'py>(&self, py: Python<'py>, b: usize) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = self.sim.pinned(b).into_iter().map(i64::from).collect();
        PyArray1::from_vec(py, v)
    }

    /// Body `b`'s surface: vertices `(V, 3)` float32 and faces `(F, 3)` int64.
    fn surface<'py>(&mut self, py: Python<'py>, b: usize) -> PyResult<MeshArrays<'py>> {
        self.sim.sync().py_err()?;
        let s = self.surface_of(b)?;
        Ok((f32_points(py, s.y.iter().copied())?, rows_to_py(py, &s.faces)?))
    }

    /// Body `b`'s frame part: the surface's vertices `(V, 3)` float32, faces
    /// `(F, 3)` int64 and each vertex's speed `(V,)` float32 (m/s, the
    /// skinned particles' velocities blended, `pbd::skin::skinned_velocities`).
    #[allow(clippy::type_complexity)]
    fn surface_frame<'py>(
        &mut self,
        py: Python<'py>,
        b: usize,
    ) -> PyResult<(
        Bound<'py, PyArray2<f32>>,
        Bound<'py, PyArray2<i64>>,
        Bound<'py, PyArray1<f32>>,
    )> {
        self.sim.sync().py_err()?;
        let s = self.surface_of(b)?;
        let speed: Vec<f32> = crumple_core::pbd::skin::skinned_velocities(s, &self.sim.state.particles)
            .iter()
            .map(|v| v.norm())
            .collect();
        Ok((
            f32_points(py, s.y.iter().copied())?,
            rows_to_py(py, &s.faces)?,
            PyArray1::from_vec(py, speed),
        ))
    }

    /// Number of particles of body `b` (the device never changes it: no read-back).
    fn num_particles(&self, b: usize) -> usize {
        self.sim
            .state
            .particles
            .body
            .iter()
            .filter(|&&k| k as usize == b)
            .count()
    }

    /// Number of clusters of body `b`.
    fn num_clusters(&self, b: usize) -> usize {
        self.sim.num_clusters(b)
    }

    /// ‖F_P‖_F of body `b`'s clusters.
    fn plastic_norms<'py>(&mut self, py: Python<'py>, b: usize) -> PyResult<Bound<'py, PyArray1<f32>>> {
        self.sim.sync().py_err()?;
        let c = &self.sim.state.clusters;
        let v: Vec<f32> = (0..c.len())
            .filter(|&k| c.body[k] as usize == b)
            .map(|k| c.fp[k].norm())
            .collect();
        Ok(PyArray1::from_vec(py, v))
    }

    #[pyo3(signature = (b, indices, targets=None))]
    fn pin(
        &mut self,
        b: usize,
        indices: PyReadonlyArray1<'_, i64>,
        targets: Option<PyReadonlyArray2<'_, f64>>,
    ) -> PyResult<()> {
        let idx = local_indices(&indices)?;
        let t = targets.map(|t| to_points(&t, "targets")).transpose()?;
        self.sim.pin(b, &idx, t.as_deref()).py_err()
    }

    fn set_pin_targets(
        &mut self,
        b: usize,
        indices: PyReadonlyArray1<'_, i64>,
        targets: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<()> {
        let idx = local_indices(&indices)?;
        let t = to_points(&targets, "positions")?;
        self.sim.set_pin_targets(b, &idx, &t).py_err()
    }

    #[pyo3(signature = (b, indices=None))]
    fn release(&mut self, b: usize, indices: Option<PyReadonlyArray1<'_, i64>>) -> PyResult<()> {
        let idx = indices.map(|i| local_indices(&i)).transpose()?;
        self.sim.release(b, idx.as_deref()).py_err()
    }

    /// The user cut of body `b` along a plane; returns the surface's components.
    fn cut(&mut self, b: usize, point: T3, normal: T3) -> PyResult<u32> {
        self.sim.cut(b, v3(point), v3(normal)).py_err()
    }

    /// One step of `dt` (s; default the configured one).
    #[pyo3(signature = (dt=None))]
    fn step(&mut self, py: Python<'_>, dt: Option<f64>) -> PyResult<()> {
        // On the GPU the state stays on the device; the read-outs that need
        // it (positions, velocities, surface, ...) sync first.
        let sim = &mut self.sim;
        py.detach(|| sim.step_dt(dt)).py_err().map(|_| ())
    }

    /// Advances by `duration` s, landing on `time + duration` (GIL released;
    /// Ctrl-C stops it at a step boundary).
    fn advance(&mut self, py: Python<'_>, duration: f64) -> PyResult<u64> {
        let sim = &mut self.sim;
        let mut sig = SignalCheck::new();
        let r = py.detach(|| sim.advance_with(duration, || sig.stop()));
        sig.finish(r)
    }

    /// Runs every later step on the GPU (wgpu, spec shape_matching §14), or
    /// on the CPU again with `on=False`. Raises `BackendUnavailable`
    /// without an adapter.
    #[pyo3(signature = (on=true))]
    fn use_gpu(&mut self, on: bool) -> PyResult<()> {
        let ctx = if on {
            Some(crumple_core::gpu::GpuContext::shared().py_err()?)
        } else {
            None
        };
        self.sim.use_gpu(ctx.as_ref()).py_err()
    }

    /// The GPU adapter's name, or None on the CPU.
    fn gpu_adapter(&self) -> Option<String> {
        self.sim.gpu_adapter().map(str::to_owned)
    }

    #[getter]
    fn time(&self) -> f64 {
        self.sim.state.time
    }

    #[getter]
    fn step_count(&self) -> u64 {
        self.sim.state.step
    }

    fn add_collider(&mut self, collider: &PyCollider) -> usize {
        self.sim.colliders.push(collider.inner.clone());
        self.sim.colliders.len() - 1
    }

    fn remove_collider(&mut self, index: usize) -> PyResult<()> {
        let i = collider_index(index, self.sim.colliders.len())?;
        self.sim.colliders.remove(i);
        Ok(())
    }

    fn set_collider(&mut self, index: usize, collider: &PyCollider) -> PyResult<()> {
        let i = collider_index(index, self.sim.colliders.len())?;
        self.sim.colliders[i] = collider.inner.clone();
        Ok(())
    }

    fn get_collider(&self, index: usize) -> PyResult<PyCollider> {
        let i = collider_index(index, self.sim.colliders.len())?;
        Ok(PyCollider {
            inner: self.sim.colliders[i].clone(),
        })
    }

    /// Σ ½ m |v|², J.
    fn kinetic_energy(&mut self) -> PyResult<f64> {
        self.sim.sync().py_err()?;
        Ok(self.sim.kinetic_energy())
    }

    /// Σ m v, kg·m/s.
    fn total_momentum(&mut self) -> PyResult<T3> {
        self.sim.sync().py_err()?;
        let p = self.sim.total_momentum();
        Ok((p.x, p.y, p.z))
    }

    /// Seconds per stage since the start.
    fn stage_times<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.sim.stage_times();
        let r = self.sim.resample_times();
        let d = PyDict::new(py);
        for (k, v) in t.named().into_iter().chain([
            ("resample_topo", r.topo),
            ("resample_hash", r.hash),
            ("resample_deletion", r.deletion),
            ("resample_addition", r.addition),
            ("resample_clusters", r.clusters),
            ("resample_skin", r.skin),
            ("resample_other", r.other),
        ]) {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// Counters of the last step and its seconds per stage (`time_<stage>`).
    fn last_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.sim.last_stats();
        let d = PyDict::new(py);
        for (k, v) in s.times.named() {
            d.set_item(format!("time_{k}"), v)?;
        }
        d.set_item("plastic_clusters", s.plastic.flowed)?;
        d.set_item("capped_updates", s.plastic.capped)?;
        d.set_item("degenerate_clusters", s.plastic.degenerate)?;
        d.set_item("particle_contacts", s.particle_contacts)?;
        d.set_item("obstacle_contacts", s.world_contacts)?;
        let r = s.resample;
        d.set_item("deleted_particles", r.deleted)?;
        d.set_item("deleted_crowded", r.crowded)?;
        d.set_item("deleted_outside", r.outside)?;
        d.set_item("seed_sources", r.sources)?;
        d.set_item("seeded_particles", r.seeded)?;
        d.set_item("clusters_removed", r.clusters_removed)?;
        d.set_item("clusters_created", r.clusters_created)?;
        d.set_item("rebound_vertices", r.rebound)?;
        d.set_item("surface_components", r.components)?;
        d.set_item("unsupported_vertices", r.unsupported)?;
        d.set_item("capped_holes", r.caps)?;
        d.set_item("merged_seams", r.seams)?;
        d.set_item("split_edges", r.remesh.splits)?;
        d.set_item("collapsed_edges", r.remesh.collapses)?;
        d.set_item("flipped_edges", r.remesh.flips)?;
        Ok(d)
    }

    /// Every state array, for checkpoints (layout: `crumple_core::pbd::checkpoint`).
    fn state_arrays<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.sim.sync().py_err()?;
        arrays_to_py(py, &self.sim.checkpoint())
    }

    /// Restores the arrays written by `state_arrays`.
    fn set_state_arrays(&mut self, arrays: &Bound<'_, PyDict>) -> PyResult<()> {
        let a = arrays_from_py(arrays)?;
        self.sim.restore(&a).py_err()
    }
}

impl PyPbdSimulation {
    /// Body `b`'s surface (sync the device's state first).
    fn surface_of(&self, b: usize) -> PyResult<&crumple_core::pbd::state::Surface> {
        self.sim
            .state
            .surfaces
            .get(b)
            .ok_or_else(|| invalid(format!("no body {b}")))
    }
}

/// The fields of a shape-matching material preset (the paper's scenes).
#[pyfunction]
fn pbd_preset<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let m = Material::preset(name).py_err()?;
    to_dict(py, &m)
}

/// Names of the shape-matching presets.
#[pyfunction]
fn pbd_preset_names() -> Vec<&'static str> {
    PRESET_NAMES.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPbdSimulation>()?;
    m.add_function(wrap_pyfunction!(pbd_preset, m)?)?;
    m.add_function(wrap_pyfunction!(pbd_preset_names, m)?)?;
    Ok(())
}

/// Clusters given as CSR (`offsets` C + 1 ascending from 0, `members` the
/// particle indices) as one list per cluster; indices are range-checked by
/// the core.
fn csr_to_lists(offsets: &[i64], members: &[i64]) -> PyResult<Vec<Vec<u32>>> {
    if offsets.first() != Some(&0)
        || offsets.last().copied() != Some(members.len() as i64)
        || offsets.windows(2).any(|w| w[1] < w[0])
    {
        return Err(invalid(format!(
            "cluster_offsets must rise from 0 to len(cluster_members) = {}",
            members.len()
        )));
    }
    offsets
        .windows(2)
        .map(|w| {
            members[w[0] as usize..w[1] as usize]
                .iter()
                .map(|&k| {
                    u32::try_from(k)
                        .map_err(|_| invalid(format!("cluster member {k} is not a particle index")))
                })
                .collect()
        })
        .collect()
}
