//! The convenience wrapper: a [`Simulation`] owns a model, a state, a solver,
//! colliders and pins, builds particles from meshes, strands and point sets
//! (spec §2.6), and advances by CFL-limited steps that land exactly on the
//! requested time (spec §3.2).

use std::ops::Range;

use crate::collide::{Collider, Motion, RigidHandle};
use crate::error::{Error, Result};
use crate::geometry::{Curves, TriMesh};
use crate::invalid;
use crate::math::{Mat3, Real, Vec3, qr3};

use super::gpu::backend::{GpuMpm, StepOutcome};
use super::material::{CodimMaterial, VolumeMaterial, codim_energy, volume_energy};
use super::model::{Element, Model, State};
use super::params::{OutOfDomain, SolverParams};
use super::solver::{Counters, ParticleBounds, Pin, Solver, element_ft, max_speed};
use crate::gpu::GpuContext;

/// What kind of object a handle refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// Type (i) particles: sand, goo, elastic solid.
    Volume,
    /// A triangle mesh (cloth): vertices are type (ii), triangles type (iii).
    Surface,
    /// Strands (hair, yarn): vertices type (ii), segments type (iii).
    Curves,
}

/// One added object: where its particles live inside their type range.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    pub kind: ObjectKind,
    /// Particles (volume) or vertices (surface, curves), as offsets within the type range.
    pub points: Range<usize>,
    /// Elements, as offsets within the element range (empty for volumes).
    pub elements: Range<usize>,
}

/// How much of an element's volume weights its elastic energy (spec §9 A10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EnergyWeight {
    /// `V_e/(m+2)`, the paper's split (its Table 1 values were tuned with it):
    /// the effective stiffness is E/4 (surfaces) or E/3 (curves).
    #[default]
    Split,
    /// `V_e`: the nominal stiffness.
    Full,
}

/// Speed (m/s) above which a step is reported as diverged.
pub const DIVERGED_SPEED: f64 = 1e4;

/// An MPM simulation in precision `T` (f32 by default in the bindings).
///
/// With the GPU backend ([`Simulation::use_gpu`]) the state lives on the
/// device between steps; `state` is brought up to date by
/// [`Simulation::sync_host`] (the bindings call it before reading arrays),
/// and methods that edit the model or state sync first and re-upload before
/// the next step.
#[derive(Debug)]
pub struct Simulation<T> {
    pub params: SolverParams,
    pub model: Model<T>,
    pub state: State<T>,
    pub solver: Solver<T>,
    pub colliders: Vec<Collider>,
    pub pins: Vec<Pin>,
    /// Scripted handles: pinned vertices (numbered in the vertex range, like
    /// [`Pin::vertex`]) moved along a path; their pins' targets are set from
    /// the path before every step, on both backends.
    pub handles: Vec<RigidHandle>,
    pub objects: Vec<Object>,
    /// Volumetric particles deleted so far ([`OutOfDomain::Remove`]).
    pub removed: u64,
    /// The state at the start of the CPU step in progress: a step that
    /// diverges restores it (no allocation after the first step).
    backup: State<T>,
    gpu: Option<GpuSlot>,
}

/// A copy on the CPU backend. A GPU simulation's copy takes the host copy
/// of the state, so call [`Simulation::sync_host`] first to copy the latest
/// device state.
impl<T: Real> Clone for Simulation<T> {
    fn clone(&self) -> Self {
        Self {
            params: self.params.clone(),
            model: self.model.clone(),
            state: self.state.clone(),
            solver: self.solver.clone(),
            colliders: self.colliders.clone(),
            pins: self.pins.clone(),
            handles: self.handles.clone(),
            objects: self.objects.clone(),
            removed: self.removed,
            backup: State::default(),
            gpu: None,
        }
    }
}

/// The device copy and whether either side is ahead.
#[derive(Debug)]
struct GpuSlot {
    mpm: Box<GpuMpm>,
    /// The device has stepped since the last download.
    host_stale: bool,
    /// The host model or state changed since the last upload.
    device_stale: bool,
    /// Largest speed after the last device step (for the CFL rule).
    max_speed: f64,
    /// Active blocks of the last device step.
    active_blocks: usize,
}

fn splice<V: Clone>(v: &mut Vec<V>, at: usize, items: impl IntoIterator<Item = V>) {
    v.splice(at..at, items);
}

impl<T: Real> Simulation<T> {
    /// A new, empty simulation; errors on invalid parameters.
    pub fn new(params: SolverParams) -> Result<Self> {
        params.validate()?;
        Ok(Self {
            params,
            model: Model::default(),
            state: State::default(),
            solver: Solver::default(),
            colliders: Vec::new(),
            pins: Vec::new(),
            handles: Vec::new(),
            objects: Vec::new(),
            removed: 0,
            backup: State::default(),
            gpu: None,
        })
    }

    /// Runs every later step on the GPU of `ctx` (f32 only): uploads the
    /// model and state now.
    pub fn use_gpu(&mut self, ctx: &std::sync::Arc<GpuContext>) -> Result<()> {
        if T::EPSILON.to_f64() < 1e-10 {
            return invalid!(
                "the GPU backend runs in single precision; use precision='f32' with backend='gpu'"
            );
        }
        self.sync_host()?;
        let mpm = GpuMpm::new(ctx, &self.model, &self.state)?;
        self.gpu = Some(GpuSlot {
            mpm: Box::new(mpm),
            host_stale: false,
            device_stale: false,
            max_speed: max_speed(&self.state),
            active_blocks: 0,
        });
        Ok(())
    }

    /// The adapter name when running on the GPU, else `None`.
    pub fn gpu_adapter(&self) -> Option<&str> {
        self.gpu.as_ref().map(|g| g.mpm.adapter_name())
    }

    /// Active 4³-node blocks of the sparse grid in the last step.
    pub fn active_blocks(&self) -> usize {
        match &self.gpu {
            Some(g) => g.active_blocks,
            None => self.solver.grid.num_blocks(),
        }
    }

    /// Total grid mass of the last step, kg (spec E8: equals the particle mass).
    pub fn grid_mass(&self) -> Result<f64> {
        match &self.gpu {
            Some(g) => g.mpm.grid_mass(g.active_blocks),
            None => Ok(self.solver.grid.total_mass()),
        }
    }

    /// Brings `state` up to date with the device (no-op on the CPU backend).
    pub fn sync_host(&mut self) -> Result<()> {
        if let Some(g) = self.gpu.as_mut()
            && g.host_stale
        {
            g.mpm.download(&mut self.state)?;
            g.host_stale = false;
        }
        Ok(())
    }

    /// Call before editing `model` or `state` from outside: syncs the host
    /// copy and marks the device copy for re-upload before the next step.
    pub fn begin_host_edit(&mut self) -> Result<()> {
        self.sync_host()?;
        if let Some(g) = self.gpu.as_mut() {
            g.device_stale = true;
        }
        Ok(())
    }

    fn check_inside(&self, what: &str, pts: &[Vec3<f64>]) -> Result<()> {
        let p = &self.params;
        let margin = p.dx * (p.boundary_padding as f64);
        for (i, x) in pts.iter().enumerate() {
            if !x.is_finite() {
                return invalid!("{what}: point {i} is not finite");
            }
            for a in 0..3 {
                if x[a] < p.lower[a] + margin || x[a] > p.upper[a] - margin {
                    return invalid!(
                        "{what}: point {i} at ({:.4}, {:.4}, {:.4}) m lies outside the simulation domain \
                         {:?} to {:?} less its {}-cell wall padding ({margin:.4} m); move the object or \
                         enlarge the domain",
                        x.x,
                        x.y,
                        x.z,
                        p.lower.to_array(),
                        p.upper.to_array(),
                        p.boundary_padding
                    );
                }
            }
        }
        Ok(())
    }

    /// The checks every `add_*` shares: density, a size (volume or thickness),
    /// velocity, damping, and that the points lie inside the padded domain.
    fn check_object(
        &self,
        what: &str,
        points: &[Vec3<f64>],
        density: f64,
        size: (&str, f64),
        velocity: Vec3<f64>,
        damping: f64,
    ) -> Result<()> {
        check_positive("density", density)?;
        check_positive(size.0, size.1)?;
        if !velocity.is_finite() {
            return invalid!("velocity must be finite");
        }
        Self::check_damping(damping)?;
        self.check_inside(what, points)
    }

    fn check_damping(damping: f64) -> Result<()> {
        if !(0.0..=1.0).contains(&damping) {
            return invalid!("damping must be in [0, 1] (0 = APIC, 1 = RPIC); got {damping}");
        }
        Ok(())
    }

    /// Adds volumetric particles (type i) at `points` with rest volume
    /// `particle_volume` (m³) each, density `density` (kg/m³) and initial
    /// `velocity`. Returns the object index.
    pub fn add_volume(
        &mut self,
        points: &[Vec3<f64>],
        material: VolumeMaterial<T>,
        density: f64,
        particle_volume: f64,
        velocity: Vec3<f64>,
        damping: f64,
    ) -> Result<usize> {
        self.begin_host_edit()?;
        if points.is_empty() {
            return invalid!("points is empty; give at least one particle");
        }
        self.check_object(
            "points",
            points,
            density,
            ("particle_volume", particle_volume),
            velocity,
            damping,
        )?;
        let n = points.len();
        let mat_id = self.push_volume_material(material)?;
        let m = &mut self.model;
        let s = &mut self.state;
        let at = m.vol.end;
        let local = m.vol.len();
        let mass = T::from_f64(density * particle_volume);
        splice(&mut m.mass, at, std::iter::repeat_n(mass, n));
        splice(
            &mut m.volume,
            at,
            std::iter::repeat_n(T::from_f64(particle_volume), n),
        );
        splice(&mut m.damping, at, std::iter::repeat_n(T::from_f64(damping), n));
        splice(&mut s.x, at, points.iter().map(|p| p.cast()));
        splice(&mut s.v, at, std::iter::repeat_n(velocity.cast(), n));
        splice(&mut s.c, at, std::iter::repeat_n(Mat3::zero(), n));
        m.vol_material.extend(std::iter::repeat_n(mat_id, n));
        s.f.extend(std::iter::repeat_n(Mat3::identity(), n));
        s.q.extend(std::iter::repeat_n(T::ZERO, n));
        m.vol.end += n;
        m.vert = m.vert.start + n..m.vert.end + n;
        m.elem = m.elem.start + n..m.elem.end + n;
        self.objects.push(Object {
            kind: ObjectKind::Volume,
            points: local..local + n,
            elements: 0..0,
        });
        Ok(self.objects.len() - 1)
    }

    fn push_volume_material(&mut self, mat: VolumeMaterial<T>) -> Result<u16> {
        let id = self.model.volume_materials.len();
        if id >= u16::MAX as usize {
            return invalid!("too many materials (at most {})", u16::MAX);
        }
        self.model.volume_materials.push(mat);
        Ok(id as u16)
    }

    /// Appends Lagrangian vertices and elements (spec §2.6). `elements` hold
    /// object-local vertex indices; `dims` is 2 for triangles, 1 for segments.
    #[allow(clippy::too_many_arguments)]
    fn add_codim(
        &mut self,
        kind: ObjectKind,
        verts: &[Vec3<f64>],
        elems: &[[u32; 3]],
        dim: u8,
        material: CodimMaterial<T>,
        density: f64,
        thickness: f64,
        velocity: Vec3<f64>,
        damping: f64,
        weight: EnergyWeight,
    ) -> Result<usize> {
        self.begin_host_edit()?;
        self.check_object(
            "mesh vertices",
            verts,
            density,
            ("thickness", thickness),
            velocity,
            damping,
        )?;
        let mat_id = self.model.codim_materials.len() as u16;
        if mat_id == u16::MAX {
            return invalid!("too many materials (at most {})", u16::MAX);
        }
        let nv = verts.len();
        let ne = elems.len();
        // Per-element rest data and volume split (spec §2.6): V_e = A τ (surfaces)
        // or L π r² (curves), V_e/(m+2) to the element particle and to each vertex.
        let mut vert_volume = vec![0.0f64; nv];
        let mut new_elems = Vec::with_capacity(ne);
        let mut elem_volume = Vec::with_capacity(ne);
        let mut elem_energy = Vec::with_capacity(ne);
        let mut normals = Vec::with_capacity(ne);
        let mut centres = Vec::with_capacity(ne);
        let vbase = self.model.vert.len() as u32;
        for (ei, e) in elems.iter().enumerate() {
            let x0 = verts[e[0] as usize];
            let x1 = verts[e[1] as usize];
            let e1 = x1 - x0;
            let (ve, dm_inv, d, centre) = if dim == 2 {
                let x2 = verts[e[2] as usize];
                let e2 = x2 - x0;
                let l1 = e1.norm();
                let nrm = e1.cross(e2);
                let area2 = nrm.norm();
                if l1 <= 0.0 || area2 <= 1e-14 * l1 * l1 {
                    return Err(Error::Mesh(crate::geometry::MeshError::Other(format!(
                        "triangle {ei} is degenerate (zero area); remove it"
                    ))));
                }
                // Dm = [[|E1|, e1·E2], [0, |E1×E2|/|E1|]] (spec §2.3)
                let (a, b, c) = (l1, e1.dot(e2) / l1, area2 / l1);
                let inv = [1.0 / a, -b / (a * c), 1.0 / c];
                let ve = 0.5 * area2 * thickness;
                (
                    ve,
                    inv,
                    [nrm * (1.0 / area2), Vec3::zero()],
                    (x0 + x1 + x2) * (1.0 / 3.0),
                )
            } else {
                let l = e1.norm();
                if l <= 0.0 {
                    return invalid!("strand segment {ei} has zero length");
                }
                let t = e1 * (1.0 / l);
                let n2 = t.any_orthogonal();
                let n3 = t.cross(n2);
                let ve = l * std::f64::consts::PI * thickness * thickness;
                (ve, [1.0 / l, 0.0, 0.0], [n2, n3], (x0 + x1) * 0.5)
            };
            let share = ve / (dim as f64 + 2.0);
            for c in 0..=dim as usize {
                vert_volume[e[c] as usize] += share;
            }
            elem_volume.push(share);
            elem_energy.push(match weight {
                EnergyWeight::Split => share,
                EnergyWeight::Full => ve,
            });
            normals.push([d[0].cast(), d[1].cast()]);
            centres.push(centre);
            let vs = [
                e[0] + vbase,
                e[1] + vbase,
                if dim == 2 { e[2] + vbase } else { e[1] + vbase },
            ];
            new_elems.push(Element {
                vertices: vs,
                dim,
                material: mat_id,
                dm_inv: dm_inv.map(T::from_f64),
            });
        }
        if let Some(i) = vert_volume.iter().position(|&v| v <= 0.0) {
            return invalid!("vertex {i} belongs to no element; remove unused vertices");
        }
        // Everything is valid: only now change the model (a failed add leaves no trace).
        self.model.codim_materials.push(material);
        let m = &mut self.model;
        let s = &mut self.state;
        // vertices at the end of the vertex range
        let at = m.vert.end;
        let vel: Vec3<T> = velocity.cast();
        splice(
            &mut m.mass,
            at,
            vert_volume.iter().map(|&v| T::from_f64(v * density)),
        );
        splice(&mut m.volume, at, vert_volume.iter().map(|&v| T::from_f64(v)));
        splice(&mut m.damping, at, std::iter::repeat_n(T::from_f64(damping), nv));
        splice(&mut s.x, at, verts.iter().map(|p| p.cast()));
        splice(&mut s.v, at, std::iter::repeat_n(vel, nv));
        splice(&mut s.c, at, std::iter::repeat_n(Mat3::zero(), nv));
        let vlocal = m.vert.len();
        m.vert.end += nv;
        m.elem = m.elem.start + nv..m.elem.end + nv;
        // elements at the end of everything
        let elocal = m.elem.len();
        m.mass
            .extend(elem_volume.iter().map(|&v| T::from_f64(v * density)));
        m.volume.extend(elem_energy.iter().map(|&v| T::from_f64(v)));
        m.damping.extend(std::iter::repeat_n(T::from_f64(damping), ne));
        s.x.extend(centres.iter().map(|p| p.cast()));
        s.v.extend(std::iter::repeat_n(vel, ne));
        s.c.extend(std::iter::repeat_n(Mat3::zero(), ne));
        s.d.extend(normals);
        // rest in-manifold columns Ds Dm⁻¹ (only the eulerian_tangents ablation reads them)
        s.tangents.extend(new_elems.iter().map(|el| {
            let x = |k: usize| verts[(el.vertices[k] - vbase) as usize].cast::<T>();
            let f = super::solver::element_f(el, x(0), x(1), x(2), &[Vec3::zero(); 2]);
            [f.col(0), f.col(1)]
        }));
        m.elements.extend(new_elems);
        m.elem.end += ne;
        m.rebuild_vertex_lists();
        self.objects.push(Object {
            kind,
            points: vlocal..vlocal + nv,
            elements: elocal..elocal + ne,
        });
        Ok(self.objects.len() - 1)
    }

    /// Adds a cloth (triangle mesh) with thickness `τ_h` (m, spec §2.6).
    #[allow(clippy::too_many_arguments)]
    pub fn add_surface(
        &mut self,
        mesh: &TriMesh,
        material: CodimMaterial<T>,
        density: f64,
        thickness: f64,
        velocity: Vec3<f64>,
        damping: f64,
        weight: EnergyWeight,
    ) -> Result<usize> {
        if !matches!(material, CodimMaterial::Surface(_)) {
            return invalid!("a triangle mesh needs a cloth (surface) material");
        }
        self.add_codim(
            ObjectKind::Surface,
            mesh.vertices(),
            mesh.faces(),
            2,
            material,
            density,
            thickness,
            velocity,
            damping,
            weight,
        )
    }

    /// Adds strands (hair, yarn) with cross-section radius `r_h` (m, spec §2.6).
    #[allow(clippy::too_many_arguments)]
    pub fn add_curves(
        &mut self,
        curves: &Curves,
        material: CodimMaterial<T>,
        density: f64,
        radius: f64,
        velocity: Vec3<f64>,
        damping: f64,
        weight: EnergyWeight,
    ) -> Result<usize> {
        if !matches!(material, CodimMaterial::Curve(_)) {
            return invalid!("strands need a curve material");
        }
        let segs: Vec<[u32; 3]> = curves.segments().iter().map(|s| [s[0], s[1], s[1]]).collect();
        self.add_codim(
            ObjectKind::Curves,
            curves.points(),
            &segs,
            1,
            material,
            density,
            radius,
            velocity,
            damping,
            weight,
        )
    }

    /// Adds a collider (moved to the simulation's current time).
    pub fn add_collider(&mut self, mut c: Collider) -> Result<usize> {
        c.advance_to(self.state.time)?;
        self.colliders.push(c);
        Ok(self.colliders.len() - 1)
    }

    /// Removes collider `i` (later ones shift down).
    pub fn remove_collider(&mut self, i: usize) -> Result<Collider> {
        if i >= self.colliders.len() {
            return invalid!("no collider {i}; {} colliders exist", self.colliders.len());
        }
        Ok(self.colliders.remove(i))
    }

    fn object(&self, object: usize) -> Result<&Object> {
        self.objects.get(object).ok_or_else(|| {
            Error::InvalidInput(format!(
                "no object {object}; this simulation has {} objects",
                self.objects.len()
            ))
        })
    }

    /// Pins vertices `indices` (object-local) of a mesh or strand object at
    /// their current positions; returns how many pins exist.
    pub fn pin(&mut self, object: usize, indices: &[u32]) -> Result<usize> {
        self.sync_host()?; // pins hold the vertices' current positions
        let o = self.object(object)?.clone();
        if o.kind == ObjectKind::Volume {
            return invalid!(
                "only mesh and strand vertices can be pinned; object {object} is a particle volume"
            );
        }
        let n = o.points.len();
        if let Some(&i) = indices.iter().find(|&&i| i as usize >= n) {
            return invalid!("pin index {i} is out of range: object {object} has {n} vertices");
        }
        for &i in indices {
            let local = (o.points.start + i as usize) as u32;
            let x = self.state.x[self.model.vert.start + local as usize].cast();
            self.pins.retain(|p| p.vertex != local);
            self.pins.push(Pin {
                vertex: local,
                x0: x,
                v: Vec3::zero(),
                t0: self.state.time,
            });
        }
        Ok(self.pins.len())
    }

    /// Moves pinned vertices of `object`: `indices` (object-local, each
    /// already pinned) reach `positions` now and move on with `velocities`.
    pub fn set_pin_targets(
        &mut self,
        object: usize,
        indices: &[u32],
        positions: &[Vec3<f64>],
        velocities: &[Vec3<f64>],
    ) -> Result<()> {
        let o = self.object(object)?.clone();
        if positions.len() != indices.len() || velocities.len() != indices.len() {
            return invalid!("indices, positions and velocities must have the same length");
        }
        // Check everything first, so that an error leaves the pins untouched.
        let n = o.points.len();
        for (k, &i) in indices.iter().enumerate() {
            if i as usize >= n {
                return invalid!("pin index {i} is out of range: object {object} has {n} vertices");
            }
            let local = (o.points.start + i as usize) as u32;
            if !self.pins.iter().any(|p| p.vertex == local) {
                return invalid!("vertex {i} of object {object} is not pinned; call pin() first");
            }
            if !positions[k].is_finite() || !velocities[k].is_finite() {
                return invalid!("pin target {k} is not finite");
            }
        }
        for (k, &i) in indices.iter().enumerate() {
            let local = (o.points.start + i as usize) as u32;
            if let Some(pin) = self.pins.iter_mut().find(|p| p.vertex == local) {
                *pin = Pin {
                    vertex: local,
                    x0: positions[k],
                    v: velocities[k],
                    t0: self.state.time,
                };
            }
        }
        Ok(())
    }

    /// Removes all pins of `object` (its vertices move freely again).
    pub fn unpin(&mut self, object: usize) -> Result<()> {
        let o = self.object(object)?.clone();
        self.pins.retain(|p| !(o.points.contains(&(p.vertex as usize))));
        Ok(())
    }

    /// Pins `indices` (object-local) of a mesh or strand object and moves
    /// them rigidly by `motion` about `pivot` (m) from now on: at time `t`
    /// vertex `k` is at `R(t − now)(X_k − pivot) + pivot + T(t − now)`.
    /// Returns the handle id.
    pub fn add_handle(
        &mut self,
        object: usize,
        indices: &[u32],
        pivot: Vec3<f64>,
        motion: Motion,
    ) -> Result<usize> {
        self.pin(object, indices)?;
        let start = self.object(object)?.points.start;
        let vertices: Vec<u32> = indices.iter().map(|&i| (start + i as usize) as u32).collect();
        let reference = vertices
            .iter()
            .map(|&v| self.state.x[self.model.vert.start + v as usize].cast())
            .collect();
        let h = RigidHandle::new(vertices, reference, pivot, motion, self.state.time, true)?;
        self.handles.push(h);
        Ok(self.handles.len() - 1)
    }

    /// Restores a handle saved in a checkpoint: `reference` positions (those
    /// its vertices had when it was made), its creation time `start` and
    /// whether it still moves. The pins themselves come with the state.
    #[allow(clippy::too_many_arguments)]
    pub fn restore_handle(
        &mut self,
        object: usize,
        indices: &[u32],
        reference: Vec<Vec3<f64>>,
        pivot: Vec3<f64>,
        motion: Motion,
        start: f64,
        active: bool,
    ) -> Result<usize> {
        let o = self.object(object)?.clone();
        if let Some(&i) = indices.iter().find(|&&i| i as usize >= o.points.len()) {
            return invalid!(
                "handle vertex {i} is out of range: object {object} has {} vertices",
                o.points.len()
            );
        }
        let vertices = indices
            .iter()
            .map(|&i| (o.points.start + i as usize) as u32)
            .collect();
        let h = RigidHandle::new(vertices, reference, pivot, motion, start, active)?;
        self.handles.push(h);
        Ok(self.handles.len() - 1)
    }

    fn handle_mut(&mut self, id: usize) -> Result<&mut RigidHandle> {
        let n = self.handles.len();
        match self.handles.get_mut(id) {
            Some(h) => Ok(h),
            None => invalid!("no handle {id}; {n} handles exist"),
        }
    }

    /// Releases handle `id`: its vertices are unpinned and move freely.
    pub fn release_handle(&mut self, id: usize) -> Result<()> {
        let h = self.handle_mut(id)?;
        h.active = false;
        let mut drop = h.vertices.clone();
        drop.sort_unstable();
        self.pins.retain(|p| drop.binary_search(&p.vertex).is_err());
        Ok(())
    }

    /// Stops handle `id` where it is now; its vertices stay pinned there.
    pub fn freeze_handle(&mut self, id: usize) -> Result<()> {
        let t = self.state.time;
        let h = self.handle_mut(id)?;
        let pose = if h.active { Some(h.pose(t)?) } else { None };
        h.active = false;
        let Some(pose) = pose else { return Ok(()) };
        let h = self.handles[id].clone();
        for (k, &v) in h.vertices.iter().enumerate() {
            if let Some(p) = self.pins.iter_mut().find(|p| p.vertex == v) {
                *p = Pin {
                    vertex: v,
                    x0: h.target(&pose, k).0,
                    v: Vec3::zero(),
                    t0: t,
                };
            }
        }
        Ok(())
    }

    /// Sets the pins of every moving handle to its path at `t` (position and
    /// velocity, so that `Pin::position` is exact at `t`). Handles are few
    /// and small next to the particles: a scan of the pins per handle vertex
    /// stays far below the step's cost.
    fn update_handle_pins(&mut self, t: f64) -> Result<()> {
        for h in self.handles.iter().filter(|h| h.active) {
            let pose = h.pose(t)?;
            for (k, &v) in h.vertices.iter().enumerate() {
                if let Some(p) = self.pins.iter_mut().find(|p| p.vertex == v) {
                    let (x, vel) = h.target(&pose, k);
                    *p = Pin {
                        vertex: v,
                        x0: x,
                        v: vel,
                        t0: t,
                    };
                }
            }
        }
        Ok(())
    }

    /// Unpins `indices` (object-local vertices) of `object`; vertices that
    /// are not pinned are ignored.
    pub fn unpin_vertices(&mut self, object: usize, indices: &[u32]) -> Result<()> {
        let o = self.object(object)?.clone();
        let n = o.points.len();
        if let Some(&i) = indices.iter().find(|&&i| i as usize >= n) {
            return invalid!("vertex {i} is out of range: object {object} has {n} vertices");
        }
        let mut drop = vec![false; n];
        for &i in indices {
            drop[i as usize] = true;
        }
        self.pins.retain(|p| {
            let v = p.vertex as usize;
            !(o.points.contains(&v) && drop[v - o.points.start])
        });
        Ok(())
    }

    /// Global particle range of an object's points (particles or vertices).
    pub fn object_range(&self, object: usize) -> Result<Range<usize>> {
        let o = self.object(object)?;
        let start = match o.kind {
            ObjectKind::Volume => self.model.vol.start,
            _ => self.model.vert.start,
        };
        Ok(start + o.points.start..start + o.points.end)
    }

    /// The time step the CFL rule allows now (spec §3.2), without the frame end.
    pub fn stable_dt(&self) -> f64 {
        let vmax = match &self.gpu {
            // the device is ahead: its last step's speed (a host edit syncs
            // first, so then the host copy is current)
            Some(g) if g.host_stale => g.max_speed,
            _ => max_speed(&self.state),
        };
        let cfl = if vmax > 0.0 {
            self.params.cfl * self.params.dx / vmax
        } else {
            f64::INFINITY
        };
        self.params.dt_max.min(cfl)
    }

    /// One step of exactly `dt` seconds.
    pub fn step(&mut self, dt: f64) -> Result<()> {
        if !(dt.is_finite() && dt > 0.0) {
            return invalid!("dt must be > 0; got {dt}");
        }
        if self.model.num_particles() == 0 {
            return invalid!("the simulation has no particles; add cloth, strands or a volume first");
        }
        if !self.handles.is_empty() {
            self.update_handle_pins(self.state.time + dt)?;
        }
        if self.gpu.is_some() {
            return self.step_gpu(dt);
        }
        if self.params.out_of_domain == OutOfDomain::Remove {
            self.remove_escaped_particles();
        }
        // Keep the start of the step: a diverged step is undone, so the
        // caller can lower dt_max or a stiffness and continue the run.
        let tangents = self.params.eulerian_tangents;
        self.state.save_into(&mut self.backup, tangents);
        let result = self
            .solver
            .step(
                &self.model,
                &mut self.state,
                &self.params,
                &mut self.colliders,
                &self.pins,
                dt,
            )
            .and_then(|()| {
                let vmax = max_speed(&self.state);
                if vmax > DIVERGED_SPEED {
                    return Err(Error::Diverged {
                        step: self.state.step,
                        time: self.state.time,
                        what: format!(
                            "a particle reached {vmax:.3e} m/s; lower dt_max, raise damping or lower the stiffness"
                        ),
                    });
                }
                Ok(())
            });
        if let Err(e) = result {
            self.state.restore_from(&self.backup, tangents);
            for c in self.colliders.iter_mut() {
                c.advance_to(self.state.time)?;
            }
            return Err(match e {
                Error::Diverged { what, .. } => Error::Diverged {
                    step: self.state.step,
                    time: self.state.time,
                    what,
                },
                e => e,
            });
        }
        Ok(())
    }

    /// One device step (the twin of [`Solver::step`]); see [`GpuMpm`].
    fn step_gpu(&mut self, dt: f64) -> Result<()> {
        loop {
            let Some(g) = self.gpu.as_mut() else {
                return invalid!("internal: no GPU backend");
            };
            if g.device_stale {
                g.mpm.upload(&self.model, &self.state)?;
                g.device_stale = false;
            }
            let t_new = self.state.time + dt;
            for c in self.colliders.iter_mut() {
                c.advance_to(t_new)?;
            }
            let outcome = match g
                .mpm
                .step(&self.model, &self.params, &self.colliders, &self.pins, dt, t_new)
            {
                Ok(o) => o,
                Err(Error::Diverged { what, .. }) => {
                    // The device restored the start of the step (as the CPU
                    // backend does): the clock stays where it was.
                    return Err(Error::Diverged {
                        step: self.state.step,
                        time: self.state.time,
                        what,
                    });
                }
                Err(e) => return Err(e),
            };
            match outcome {
                StepOutcome::Done(stats) => {
                    if stats.max_speed > DIVERGED_SPEED {
                        // Undo the step on the device, as the CPU backend does.
                        g.mpm.restore_backup()?;
                        return Err(Error::Diverged {
                            step: self.state.step,
                            time: self.state.time,
                            what: format!(
                                "a particle reached {:.3e} m/s; lower dt_max, raise damping or lower the stiffness",
                                stats.max_speed
                            ),
                        });
                    }
                    g.host_stale = true;
                    g.max_speed = stats.max_speed;
                    let ne = self.model.elements.len() as u64;
                    use super::material::ReturnEvent as R;
                    let c = &mut self.solver.counters;
                    c.slide += u64::from(stats.events[R::Slide as usize]);
                    c.tension += u64::from(stats.events[R::Tension as usize]);
                    c.inverted += u64::from(stats.events[R::Inverted as usize]);
                    c.degenerate += u64::from(stats.events[R::Degenerate as usize]);
                    c.element_steps += ne;
                    g.active_blocks = stats.active_blocks as usize;
                    self.state.time = t_new;
                    self.state.step += 1;
                    return Ok(());
                }
                StepOutcome::OutsideDomain(p) => {
                    self.sync_host()?;
                    let before = self.removed;
                    if self.params.out_of_domain == OutOfDomain::Remove {
                        self.remove_escaped_particles();
                    }
                    if self.removed > before {
                        if let Some(g) = self.gpu.as_mut() {
                            g.device_stale = true;
                        }
                        continue;
                    }
                    // The CPU solver's message, for the same particle.
                    return Err(super::solver::domain_error(&self.state, &self.params, p));
                }
            }
        }
    }

    /// Advances by `duration` seconds with CFL-limited steps, landing exactly
    /// on `time + duration` (spec §3.2). Returns the number of steps taken.
    pub fn advance(&mut self, duration: f64) -> Result<u64> {
        Ok(self.advance_with(duration, || false)?.0)
    }

    /// [`advance`](Self::advance) that calls `stop()` between steps and
    /// returns early, at a step boundary with the state intact, when it
    /// answers true (the bindings check for Ctrl-C there). Returns the steps
    /// taken and whether it stopped early.
    pub fn advance_with(&mut self, duration: f64, mut stop: impl FnMut() -> bool) -> Result<(u64, bool)> {
        if !(duration.is_finite() && duration >= 0.0) {
            return invalid!("duration must be >= 0; got {duration}");
        }
        let t_end = self.state.time + duration;
        let mut steps = 0;
        // A step shorter than this fraction of dt_max is merged into the previous one.
        let tiny = 1e-9 * self.params.dt_max;
        while t_end - self.state.time > tiny {
            if stop() {
                return Ok((steps, true));
            }
            let remaining = t_end - self.state.time;
            let mut dt = self.stable_dt().min(remaining);
            if remaining - dt <= tiny {
                dt = remaining;
            }
            self.step(dt)?;
            steps += 1;
        }
        self.state.time = t_end;
        Ok((steps, false))
    }

    /// Deletes volumetric particles outside the domain (policy
    /// [`OutOfDomain::Remove`]), compacting every per-particle array in place
    /// and shrinking the objects' ranges. Mesh particles are left for the
    /// solver's domain check. Allocation-free.
    fn remove_escaped_particles(&mut self) {
        let vol = self.model.vol.clone();
        let bounds = ParticleBounds::<T>::new(&self.params);
        if self.state.x[vol.clone()].iter().all(|&x| bounds.contains(x)) {
            return;
        }
        let (m, s) = (&mut self.model, &mut self.state);
        let mut write = 0usize;
        // Volume objects, in order: their point ranges tile the volume range.
        let mut removed_before = 0usize;
        for o in self.objects.iter_mut().filter(|o| o.kind == ObjectKind::Volume) {
            let mut removed_in = 0usize;
            for read in o.points.clone() {
                let p = vol.start + read;
                if !bounds.contains(s.x[p]) {
                    removed_in += 1;
                    continue;
                }
                let w = vol.start + write;
                m.mass[w] = m.mass[p];
                m.volume[w] = m.volume[p];
                m.damping[w] = m.damping[p];
                m.vol_material[write] = m.vol_material[read];
                s.x[w] = s.x[p];
                s.v[w] = s.v[p];
                s.c[w] = s.c[p];
                s.f[write] = s.f[read];
                s.q[write] = s.q[read];
                write += 1;
            }
            o.points = o.points.start - removed_before..o.points.end - removed_before - removed_in;
            removed_before += removed_in;
        }
        let gone = vol.len() - write;
        // shift everything after the volume range down by `gone`
        let tail = vol.end..m.mass.len();
        let to = vol.start + write;
        m.mass.copy_within(tail.clone(), to);
        m.volume.copy_within(tail.clone(), to);
        m.damping.copy_within(tail.clone(), to);
        s.x.copy_within(tail.clone(), to);
        s.v.copy_within(tail.clone(), to);
        s.c.copy_within(tail, to);
        let n = m.mass.len() - gone;
        m.mass.truncate(n);
        m.volume.truncate(n);
        m.damping.truncate(n);
        s.x.truncate(n);
        s.v.truncate(n);
        s.c.truncate(n);
        m.vol_material.truncate(write);
        s.f.truncate(write);
        s.q.truncate(write);
        m.vol.end -= gone;
        m.vert = m.vert.start - gone..m.vert.end - gone;
        m.elem = m.elem.start - gone..m.elem.end - gone;
        self.removed += gone as u64;
    }

    /// Volumetric particles deleted on leaving the domain so far.
    pub fn removed_particles(&self) -> u64 {
        self.removed
    }

    /// Event counters of the return maps (spec §5.5).
    pub fn counters(&self) -> Counters {
        self.solver.counters
    }

    /// Total linear momentum `Σ m v`, kg·m/s (ordered sums). Reads the host
    /// copy: on the GPU backend call [`Simulation::sync_host`] first (as
    /// every reader of `state` must; the Python bindings do).
    pub fn total_momentum(&self) -> Vec3<f64> {
        let n = self.model.num_particles();
        let (m, v) = (&self.model.mass, &self.state.v);
        let s = |a: usize| crate::parallel::ordered_sum(n, |i| m[i].to_f64() * v[i][a].to_f64());
        Vec3::new(s(0), s(1), s(2))
    }

    /// Kinetic energy `Σ ½ m |v|²`, J (host copy, see [`Simulation::total_momentum`]).
    pub fn kinetic_energy(&self) -> f64 {
        let (m, v) = (&self.model.mass, &self.state.v);
        crate::parallel::ordered_sum(self.model.num_particles(), |i| {
            0.5 * m[i].to_f64() * v[i].norm_squared().to_f64()
        })
    }

    /// Total elastic potential `Φ = Σ_(i) V⁰ ψ(F^E) + Σ_(iii) V⁰ ψ(F̃)`, J: the
    /// potential whose negative gradient with respect to the grid node
    /// positions is the elastic grid force (spec §3.3). Element energies use
    /// the same F̃ as the stress stage (the mesh's tangent columns, or the
    /// advected ones in the `eulerian_tangents` ablation) and the element
    /// particle's volume, so the `energy_weight` option is included. Mesh
    /// vertices carry none. A degenerate element (spec §5.5) is counted here
    /// although the solver applies no force for it. Ordered sums: independent
    /// of the thread count.
    /// Host copy, see [`Simulation::total_momentum`].
    pub fn elastic_energy(&self) -> f64 {
        let m = &self.model;
        let (vol, vert, elem) = (m.vol.clone(), m.vert.clone(), m.elem.clone());
        let eulerian = self.params.eulerian_tangents;
        let st = &self.state;
        let volume = crate::parallel::ordered_sum(vol.len(), |i| {
            let mat = &m.volume_materials[m.vol_material[i] as usize];
            (volume_energy(mat, &st.f[i]) * m.volume[vol.start + i]).to_f64()
        });
        let codim = crate::parallel::ordered_sum(m.elements.len(), |e| {
            let el = &m.elements[e];
            let xs = |k: usize| st.x[vert.start + el.vertices[k] as usize];
            let ft = element_ft(el, xs(0), xs(1), xs(2), &st.d[e], &st.tangents[e], eulerian);
            (codim_energy(&m.codim_materials[el.material as usize], &ft) * m.volume[elem.start + e]).to_f64()
        });
        volume + codim
    }

    /// Total mass of particles, kg.
    pub fn total_mass(&self) -> f64 {
        self.model.total_mass()
    }

    /// `R̃` of every element (for tests and diagnostics): the QR factor of F̃ (spec §4.1).
    pub fn element_r(&self) -> Vec<Mat3<T>> {
        let vs = self.model.vert.start;
        self.model
            .elements
            .iter()
            .enumerate()
            .map(|(e, el)| {
                let x = |k: usize| self.state.x[vs + el.vertices[k] as usize];
                qr3(&super::solver::element_f(el, x(0), x(1), x(2), &self.state.d[e])).r
            })
            .collect()
    }
}

fn check_positive(name: &str, v: f64) -> Result<()> {
    if !(v.is_finite() && v > 0.0) {
        return invalid!("{name} must be a finite number > 0; got {v}");
    }
    Ok(())
}
