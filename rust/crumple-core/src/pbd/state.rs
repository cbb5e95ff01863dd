//! What changes while a shape-matching simulation steps (spec
//! shape_matching §2): the particles, the clusters (members in CSR form with
//! a rest position per membership, since one particle has a different rest
//! position in each cluster), the reverse map from particles to their
//! memberships, and each body's skinned surface. Structure of arrays, f32
//! storage as on the GPU.

use crate::geometry::{drop_unused_vertices, retain_used};
use crate::math::{Mat3, Quat, Vec3};

/// Particle flags (spec §2.1).
pub mod flag {
    /// Kinematic: w = 0, moved by its target.
    pub const KINEMATIC: u8 = 1;
    /// Created by seeding this step.
    pub const NEW: u8 = 2;
    /// Joined or left a cluster this step (its orientation and skin slots are refreshed).
    pub const MEMBERSHIP_CHANGED: u8 = 4;
    /// Skinned to a seam made this step (spec §7 merging): a candidate of
    /// cluster creation (§6.4), so clusters form across the seam.
    pub const SEAM: u8 = 8;
}

/// The particles (structure of arrays).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Particles {
    /// Positions, m.
    pub x: Vec<Vec3<f32>>,
    /// Velocities, m/s.
    pub v: Vec<Vec3<f32>>,
    /// Masses, kg.
    pub m: Vec<f32>,
    /// Inverse masses, 1/kg (0 = kinematic).
    pub w: Vec<f32>,
    /// Body index.
    pub body: Vec<u32>,
    /// Connected-component label within the body (spec §7; 0 below surface level 2).
    pub component: Vec<u32>,
    /// Orientation for skinning (spec §8.1), warm-started across steps.
    pub q: Vec<Quat<f32>>,
    /// [`flag`] bits.
    pub flags: Vec<u8>,
    /// Kinematic target at the end of the coming step, m (kinematic particles only).
    pub target: Vec<Vec3<f32>>,
    /// Persistent identity: given in creation order and never reused, kept
    /// by a particle that survives re-sampling, so datasets can follow
    /// material points (spec §11 "tracking the original particle ids").
    pub id: Vec<u32>,
    /// The id the next particle gets.
    pub next_id: u32,
}

impl Particles {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// No particles.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Appends one particle (velocity, mass, body, component, orientation given).
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        x: Vec3<f32>,
        v: Vec3<f32>,
        m: f32,
        body: u32,
        component: u32,
        q: Quat<f32>,
        flags: u8,
    ) {
        self.x.push(x);
        self.v.push(v);
        self.m.push(m);
        self.w.push(if flags & flag::KINEMATIC != 0 {
            0.0
        } else {
            1.0 / m
        });
        self.body.push(body);
        self.component.push(component);
        self.q.push(q);
        self.flags.push(flags);
        self.target.push(x);
        self.id.push(self.next_id);
        self.next_id = self.next_id.wrapping_add(1);
    }
}

/// The clusters: members in CSR form (`offset`, `member`, `rest`) and the
/// per-cluster plastic state (spec §2.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Clusters {
    /// `offset[c]..offset[c+1]` are cluster c's entries; `len + 1` values.
    pub offset: Vec<u32>,
    /// Particle of each entry.
    pub member: Vec<u32>,
    /// Rest position q of each entry in its cluster's rest frame, m (Σ μ q = 0).
    pub rest: Vec<Vec3<f32>>,
    /// Plastic deformation F_P (I at creation).
    pub fp: Vec<Mat3<f32>>,
    /// Current yield ε_γ (log strain).
    pub yield_strain: Vec<f32>,
    /// Member count at creation, n0.
    pub n0: Vec<u32>,
    /// Rotation, warm-started between uses; also the orientation skinning averages.
    pub quat: Vec<Quat<f32>>,
    /// Body of the members.
    pub body: Vec<u32>,
    /// Component of the members.
    pub component: Vec<u32>,
    /// `Qsum = Σ μ q qᵀ`, recomputed when members or weights change.
    pub qsum: Vec<Mat3<f32>>,
    /// Σ μ of the members.
    pub mass: Vec<f32>,
    /// Degenerate (planar, collinear or under 4 members) at the last
    /// end-of-step fit: rigid fit, no plasticity (spec §3.5).
    pub degenerate: Vec<bool>,
}

impl Clusters {
    /// Number of clusters.
    pub fn len(&self) -> usize {
        self.n0.len()
    }

    /// No clusters.
    pub fn is_empty(&self) -> bool {
        self.n0.is_empty()
    }

    /// Entry range of cluster `c`.
    #[inline]
    pub fn entries(&self, c: usize) -> std::ops::Range<usize> {
        self.offset[c] as usize..self.offset[c + 1] as usize
    }
}

/// The reverse map: for each particle, the entries (and so clusters) that
/// contain it, rebuilt after every change of membership.
#[derive(Clone, Debug, Default)]
pub struct Memberships {
    /// `offset[i]..offset[i+1]` index `entry` for particle i; `n + 1` values.
    pub offset: Vec<u32>,
    /// Entry indices into `Clusters::member`/`rest`, ascending per particle.
    pub entry: Vec<u32>,
    /// Cluster of each entry (indexed like `Clusters::member`).
    pub entry_cluster: Vec<u32>,
    /// A number no other rebuild in this process gave (0: not built by
    /// [`Memberships::rebuild`]), so per-step caches keyed on it know the
    /// memberships did not change. Not part of equality.
    pub id: u64,
}

impl PartialEq for Memberships {
    fn eq(&self, o: &Self) -> bool {
        self.offset == o.offset && self.entry == o.entry && self.entry_cluster == o.entry_cluster
    }
}

impl Memberships {
    /// n_i: the number of clusters containing particle `i`.
    #[inline]
    pub fn count(&self, i: usize) -> u32 {
        self.offset[i + 1] - self.offset[i]
    }

    /// Rebuilds the map for `n` particles from `clusters` (a counting sort:
    /// entries stay in ascending order per particle, whatever the thread count).
    pub fn rebuild(&mut self, n: usize, clusters: &Clusters) {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        self.id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Entries visited in ascending order, so each particle's are ascending.
        let memberships = clusters.member.iter().enumerate().map(|(e, &p)| (p, e as u32));
        (self.offset, self.entry) = crate::geometry::csr(n, memberships);
        self.entry_cluster.clear();
        self.entry_cluster.resize(clusters.member.len(), 0);
        for c in 0..clusters.len() {
            for e in clusters.entries(c) {
                self.entry_cluster[e] = c as u32;
            }
        }
    }
}

/// Skin binding of one surface vertex to four particles (spec §8.2–8.3).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Skin {
    /// Particles.
    pub particle: [u32; 4],
    /// Weights (sum 1; unused slots 0).
    pub weight: [f32; 4],
    /// Offsets in each particle's frame, m.
    pub offset: [Vec3<f32>; 4],
}

/// A body's surface mesh, skinned to its particles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Surface {
    /// Vertex positions, m.
    pub y: Vec<Vec3<f32>>,
    /// Triangles (outward, counter-clockwise seen from outside).
    pub faces: Vec<[u32; 3]>,
    /// Area-weighted vertex normals (spec §8.4).
    pub normals: Vec<Vec3<f32>>,
    /// Skin binding per vertex.
    pub skin: Vec<Skin>,
    /// Target volume of the volume correction (spec §8.5), m³.
    pub volume_target: f64,
    /// Component of each vertex (the smallest vertex index of its connected
    /// piece) at surface level 2, from the last tracking pass; empty below.
    pub vcomp: Vec<u32>,
    /// Per vertex: on the rim of a user cut (spec §7 "User cut"), so never
    /// paired into a seam by the merge (a cut does not heal). Empty or
    /// shorter than `y` means false; not kept in checkpoints.
    pub nopair: Vec<bool>,
}

impl Surface {
    /// Appends an unbound vertex at `y` (zero normal, all-zero skin weights,
    /// so the skin maintenance rebinds it, spec §8.3) with the cut flag
    /// `nopair` and the component label of vertex `like`, each where that
    /// array covers every vertex. Returns its index.
    pub fn push_vertex(&mut self, y: Vec3<f32>, nopair: bool, like: u32) -> u32 {
        let nv = self.y.len();
        if self.nopair.len() == nv {
            self.nopair.push(nopair);
        }
        if self.vcomp.len() == nv {
            let c = self.vcomp[like as usize];
            self.vcomp.push(c);
        }
        self.y.push(y);
        self.normals.push(Vec3::zero());
        self.skin.push(Skin::default());
        nv as u32
    }

    /// Makes `faces` the surface's triangles and drops the vertices they do
    /// not use; positions, normals, skin and cut flags follow (`vcomp`'s
    /// labels are vertex numbers: the caller labels again). Returns the map
    /// old → new vertex index (`u32::MAX`: dropped).
    pub fn set_faces_dropping_unused(&mut self, mut faces: Vec<[u32; 3]>) -> Vec<u32> {
        let (used, map) = drop_unused_vertices(self.y.len(), &mut faces);
        retain_used(&mut self.y, &used);
        retain_used(&mut self.normals, &used);
        retain_used(&mut self.skin, &used);
        // A shorter `nopair` (the rest false) is compacted over its length.
        retain_used(&mut self.nopair, &used);
        self.faces = faces;
        map
    }
}

/// Everything that changes while stepping.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    /// The particles.
    pub particles: Particles,
    /// The clusters.
    pub clusters: Clusters,
    /// Particles → memberships.
    pub memberships: Memberships,
    /// One surface per body.
    pub surfaces: Vec<Surface>,
    /// Simulated time, s.
    pub time: f64,
    /// Steps taken.
    pub step: u64,
}
