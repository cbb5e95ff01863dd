//! What does not change while stepping (spec §2): particle masses and rest
//! volumes, the three particle ranges, element topology and rest frames,
//! materials, and the vertex → element force-gather lists.
//!
//! Particles are stored in three contiguous ranges, type (i) volumetric
//! particles first, then type (ii) mesh vertices, then type (iii) element
//! quadrature particles (spec §2.1), so every stage is a loop over a range
//! without branching on the type.

use std::ops::Range;

use crate::math::{Real, Vec3};

use super::material::{CodimMaterial, VolumeMaterial};

/// One Lagrangian element (type iii): a triangle (m = 2) or a segment (m = 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Element<T> {
    /// Vertex indices into the vertex range (local: 0 = first vertex
    /// particle). For segments the third entry repeats the second.
    pub vertices: [u32; 3],
    /// Manifold dimension: 2 for triangles, 1 for segments.
    pub dim: u8,
    /// Index into [`Model::codim_materials`].
    pub material: u16,
    /// Upper-triangular rest-frame inverse `Dm⁻¹` (spec §2.3): triangles
    /// `[[a, b], [0, c]]` stored as `[a, b, c]`; segments `[1/L, 0, 0]`.
    pub dm_inv: [T; 3],
}

/// The constant part of an MPM simulation.
#[derive(Clone, Debug)]
pub struct Model<T> {
    /// Particle mass, kg (all particles).
    pub mass: Vec<T>,
    /// Rest volume `V_p⁰`, m³ (all particles; for elements the energy weight, spec §2.6).
    pub volume: Vec<T>,
    /// Type (i) particles.
    pub vol: Range<usize>,
    /// Type (ii) mesh vertices.
    pub vert: Range<usize>,
    /// Type (iii) element particles.
    pub elem: Range<usize>,
    /// Material index of each type (i) particle (into `volume_materials`).
    pub vol_material: Vec<u16>,
    pub volume_materials: Vec<VolumeMaterial<T>>,
    /// Elements, in the order of the type (iii) range.
    pub elements: Vec<Element<T>>,
    pub codim_materials: Vec<CodimMaterial<T>>,
    /// CSR of `vertex → (element, corner)`, for gathering element forces
    /// onto vertices without atomics (spec §10.2): entries of vertex `v` are
    /// `vertex_elems[vertex_offsets[v]..vertex_offsets[v+1]]`, in element order.
    pub vertex_offsets: Vec<u32>,
    pub vertex_elems: Vec<(u32, u8)>,
    /// APIC damping `ν_d` per particle (spec Eq. 2), 0 = APIC, 1 = RPIC.
    pub damping: Vec<T>,
}

impl<T: Real> Default for Model<T> {
    fn default() -> Self {
        Self {
            mass: Vec::new(),
            volume: Vec::new(),
            vol: 0..0,
            vert: 0..0,
            elem: 0..0,
            vol_material: Vec::new(),
            volume_materials: Vec::new(),
            elements: Vec::new(),
            codim_materials: Vec::new(),
            vertex_offsets: vec![0],
            vertex_elems: Vec::new(),
            damping: Vec::new(),
        }
    }
}

impl<T: Real> Model<T> {
    /// Total number of particles.
    pub fn num_particles(&self) -> usize {
        self.mass.len()
    }

    /// Rebuilds the vertex → element gather lists from the elements.
    pub fn rebuild_vertex_lists(&mut self) {
        let nv = self.vert.len();
        let mut counts = vec![0u32; nv + 1];
        for e in &self.elements {
            for c in 0..=e.dim as usize {
                counts[e.vertices[c] as usize + 1] += 1;
            }
        }
        for i in 0..nv {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut list = vec![(0u32, 0u8); counts[nv] as usize];
        for (ei, e) in self.elements.iter().enumerate() {
            for c in 0..=e.dim as usize {
                let v = e.vertices[c] as usize;
                list[fill[v] as usize] = (ei as u32, c as u8);
                fill[v] += 1;
            }
        }
        self.vertex_offsets = counts;
        self.vertex_elems = list;
    }

    /// Total mass, kg.
    pub fn total_mass(&self) -> f64 {
        crate::parallel::ordered_sum(self.mass.len(), |i| self.mass[i].to_f64())
    }
}

/// What changes while stepping (spec §2.2), structure of arrays.
#[derive(Clone, Debug)]
pub struct State<T> {
    /// Positions, m (all particles).
    pub x: Vec<Vec3<T>>,
    /// Velocities, m/s (all particles).
    pub v: Vec<Vec3<T>>,
    /// APIC affine velocity `C_p`, 1/s (all particles).
    pub c: Vec<crate::math::Mat3<T>>,
    /// Elastic deformation gradient `F^E` of type (i) particles.
    pub f: Vec<crate::math::Mat3<T>>,
    /// Drucker–Prager hardening state `q` of type (i) particles (sand; 0 otherwise).
    pub q: Vec<T>,
    /// Normal columns `d_β` of type (iii) elements (spec §2.3): triangles use
    /// `d[0] = d₃`; segments `d[0] = d₂`, `d[1] = d₃`.
    pub d: Vec<[Vec3<T>; 2]>,
    /// In-manifold columns of F̃ per element, used only by the
    /// `eulerian_tangents` ablation (otherwise they come from the mesh).
    pub tangents: Vec<[Vec3<T>; 2]>,
    /// Simulated time, s.
    pub time: f64,
    /// Steps taken.
    pub step: u64,
}

/// Copies `src` into `dst` in place, in parallel chunks (a plain copy: the
/// result does not depend on the thread count).
fn copy_par<V: Copy + Send + Sync>(dst: &mut Vec<V>, src: &[V]) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 14;
    if dst.len() != src.len() {
        dst.clear();
        dst.extend_from_slice(src);
        return;
    }
    dst.par_chunks_mut(CHUNK)
        .zip(src.par_chunks(CHUNK))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

impl<T: Real> State<T> {
    /// Copies what a step writes from `src` (tangent columns only when
    /// `with_tangents`: the Eulerian ablation advects them) into this state,
    /// in parallel chunks and without allocating once sized.
    pub fn copy_from(&mut self, src: &State<T>, with_tangents: bool) {
        copy_par(&mut self.x, &src.x);
        copy_par(&mut self.v, &src.v);
        copy_par(&mut self.c, &src.c);
        copy_par(&mut self.f, &src.f);
        copy_par(&mut self.q, &src.q);
        copy_par(&mut self.d, &src.d);
        if with_tangents {
            copy_par(&mut self.tangents, &src.tangents);
        }
        self.time = src.time;
        self.step = src.step;
    }
}

impl<T: Real> Default for State<T> {
    fn default() -> Self {
        Self {
            x: Vec::new(),
            v: Vec::new(),
            c: Vec::new(),
            f: Vec::new(),
            q: Vec::new(),
            d: Vec::new(),
            tangents: Vec::new(),
            time: 0.0,
            step: 0,
        }
    }
}
