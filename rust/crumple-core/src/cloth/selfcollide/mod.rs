//! Cloth–cloth collisions: proximity pairs for the repulsion penalty (spec
//! `persistent_wrinkles.md` §6.1 step 2, §6.3) and the continuous-collision
//! fail-safe run after every step (§6.1 step 12), plus a triangle–triangle
//! intersection count for tests and acceptance checks.
//!
//! [`SelfCollision`] owns the topology and all scratch space, so repeated
//! calls do not allocate once warmed up:
//! - [`SelfCollision::proximity`]: vertex–face and edge–edge pairs closer
//!   than `d`, with the weights, normal and area weight of §6.3.
//! - [`SelfCollision::resolve`]: continuous collision detection along
//!   `x0 → x1` and response, first by inelastic projections (Bridson,
//!   Fedkiw, Anderson 2002, "BFA02", §7.3), then by rigid impact zones
//!   (Provot 1997; BFA02 §7.4; Harmon et al. 2008), which always terminates
//!   with a crossing-free path.
//! - [`SelfCollision::count_intersections`]: pairs of non-adjacent
//!   triangles that intersect.
//!
//! Broad phases are bounding-volume hierarchies over vertices, edges and
//! faces, built once and refitted each call. Work is split into fixed-size
//! chunks whose results are concatenated in chunk order, so every output is
//! identical for any number of rayon threads.

mod bvh;
mod ccd;
mod failsafe;
mod geom;
mod proximity;
mod zones;

#[cfg(test)]
mod tests;

pub(crate) use self::bvh::Aabb;
use self::bvh::{Bvh, Pairing};
use self::geom::{Near, ee_proximity, triangles_intersect, vf_proximity};
use self::proximity::*;
use self::zones::Zones;
use crate::math::Vec3;
use crate::parallel::ordered_sum;
use crate::{Error, Result};
use rayon::prelude::*;

/// The two kinds of primitive pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairKind {
    /// `vertices = [v, f0, f1, f2]`: a vertex and a face not containing it.
    VertexFace,
    /// `vertices = [a0, a1, b0, b1]`: two edges without a shared vertex.
    EdgeEdge,
}

/// A cloth–cloth proximity (spec §6.3).
///
/// The gap `c = Σ_k weights[k] · normal · x[vertices[k]]` equals `distance`
/// at the positions the pair was found at; the repulsion acts on `c − d_rep`.
#[derive(Clone, Copy, Debug)]
pub struct ProximityPair {
    pub kind: PairKind,
    /// Vertex–face: `[v, f0, f1, f2]`; edge–edge: `[a0, a1, b0, b1]`.
    pub vertices: [u32; 4],
    /// Signed weights with `Σ w = 0`: `(1, −b0, −b1, −b2)` with `b` the
    /// barycentrics of the vertex's projection on the face, or
    /// `(1 − s, s, −(1 − t), −t)` with `s, t` the parameters of the closest
    /// points on the two edges.
    pub weights: [f64; 4],
    /// Unit normal pointing from the second side (face, edge `b`) toward the
    /// first (vertex, edge `a`).
    pub normal: Vec3<f64>,
    /// Current distance (m), `≥ 0`.
    pub distance: f64,
    /// Area weight `A` of the penalty (m²): as in the reference code
    /// (ARCSim's `make_constraint`), the smaller of the two sides' areas,
    /// where a vertex owns a third of its incident triangles, an edge a third
    /// of its (one or two) triangles and a face its own area (so 0 for a
    /// vertex or edge without triangles). Computed from the current
    /// positions.
    pub area: f64,
}

/// What [`SelfCollision::resolve`] did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResolveStats {
    /// Collisions (crossings along `x0 → x1`) found in the candidate `x1`
    /// as given, before any correction.
    pub collisions: usize,
    /// Detection passes that found something to correct (projection rounds
    /// plus impact-zone rounds).
    pub iterations: usize,
    /// Rigid impact zones (of two or more vertices) at the end.
    pub zones: usize,
    /// Vertices in the largest impact zone (0 if there is none).
    pub largest_zone: usize,
}

/// Traversal seeds (independent node pairs) per parallel chunk. Fixed, so
/// the concatenation order (and every result) does not depend on the thread
/// count.
const SEED_CHUNK: usize = 2;

/// Rounds of inelastic projection (BFA02 §7.3) before falling back to rigid
/// impact zones. Projections are cheap and keep the motion of the cloth,
/// zones are robust but freeze the relative motion of what they hold.
const PROJECTION_ROUNDS: usize = 6;

/// Gauss–Seidel sweeps over the contacts of one projection round.
const PROJECTION_SWEEPS: usize = 2;

/// Contact tolerance of the continuous test, relative to the mean edge
/// length: far above the rounding of the root finding, far below any
/// physical thickness.
const CCD_TOL: f64 = 1e-6;

/// A contact handled by [`SelfCollision::resolve`]: a crossing found by CCD
/// (`impact`), or a pair ending closer than the thickness.
#[derive(Clone, Copy, Debug)]
struct Contact {
    kind: PairKind,
    vertices: [u32; 4],
    weights: [f64; 4],
    /// Oriented so that the first side started on its positive side.
    normal: Vec3<f64>,
    impact: bool,
}

/// Per-chunk scratch, kept between calls.
#[derive(Default)]
struct Worker {
    stack: Vec<(u32, u32)>,
    contacts: Vec<Contact>,
    pairs: Vec<ProximityPair>,
    count: usize,
}

/// Runs `f` on the chunks of `0..len` in parallel, each with its own
/// [`Worker`] (cleared first); returns the number of chunks used.
fn for_chunks<F>(workers: &mut Vec<Worker>, len: usize, chunk: usize, f: F) -> usize
where
    F: Fn(core::ops::Range<usize>, &mut Worker) + Sync + Send,
{
    let chunks = len.div_ceil(chunk);
    if workers.len() < chunks {
        workers.resize_with(chunks, Worker::default);
    }
    workers[..chunks].par_iter_mut().enumerate().for_each(|(c, w)| {
        w.contacts.clear();
        w.pairs.clear();
        w.count = 0;
        let lo = c * chunk;
        f(lo..(lo + chunk).min(len), w);
    });
    chunks
}

/// Connectivity needed by the queries, fixed at construction.
struct Topology {
    n: usize,
    faces: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    /// Faces of each vertex (CSR).
    vf_offsets: Vec<u32>,
    vf: Vec<u32>,
    /// Faces of each edge (CSR).
    ef_offsets: Vec<u32>,
    ef: Vec<u32>,
    /// Third vertices of (up to) two faces of each edge, `u32::MAX` if absent.
    opposite: Vec<[u32; 2]>,
}

impl Topology {
    #[inline]
    fn face_has(&self, f: usize, v: u32) -> bool {
        self.faces[f].contains(&v)
    }

    #[inline]
    fn edges_share(&self, e: usize, g: usize) -> bool {
        let [a, b] = self.edges[e];
        let [c, d] = self.edges[g];
        a == c || a == d || b == c || b == d
    }
}

/// Cloth–cloth proximity, continuous collision response and intersection
/// count for one triangle mesh. Owns the topology (faces, unique edges) and
/// reusable scratch (hierarchies, candidate lists), so repeated calls do not
/// reallocate once warmed up.
pub struct SelfCollision {
    topo: Topology,
    /// Hierarchies over vertices, edges (with the wedge boxes as their
    /// second box set in proximity queries) and faces.
    vbvh: Bvh,
    ebvh: Bvh,
    fbvh: Bvh,
    workers: Vec<Worker>,
    face_area: Vec<f64>,
    vert_area: Vec<f64>,
    edge_area: Vec<f64>,
    /// Per-edge box of the region where an edge–edge proximity can lie,
    /// and the cone of directions it spans.
    wedge: Vec<(Aabb, Cone)>,
    /// Vertices whose pairs must be re-tested by the next CCD pass.
    dirty: Vec<bool>,
    /// Bounding balls of the faces and edges at the start of the step
    /// (centre, radius), for the cheap distance bounds of the CCD pass.
    face_ball: Vec<(Vec3<f64>, f64)>,
    edge_ball: Vec<(Vec3<f64>, f64)>,
    /// Per-face plane data for the vertex–face proximity test, by face and
    /// (with the face's vertices) in the face tree's leaf order.
    face_geom: Vec<FaceGeom>,
    face_leaf: Vec<(FaceGeom, [u32; 3])>,
    /// Edge data in the edge tree's leaf order.
    edge_leaf: Vec<EdgeLeaf>,
    contacts: Vec<Contact>,
    /// Traversal seeds and their expansion scratch.
    seeds: Vec<(u32, u32)>,
    seeds_next: Vec<(u32, u32)>,
    /// Projection rounds before impact zones ([`PROJECTION_ROUNDS`]; tests
    /// set 0 to exercise the zones alone).
    projection_rounds: usize,
    /// Per-node dirty flags of the hierarchies (CCD).
    marks_v: Vec<bool>,
    marks_f: Vec<bool>,
    marks_e: Vec<bool>,
    zones: Zones,
}

impl SelfCollision {
    /// Sets up for a mesh of `num_vertices` vertices with triangles `faces`
    /// and the mesh's unique undirected edges `edges`
    /// ([`MeshTopology::edges`](crate::geometry::MeshTopology::edges)).
    ///
    /// # Panics
    /// If an index is out of range or a face or edge repeats a vertex; use
    /// [`SelfCollision::try_new`] for unchecked input.
    pub fn new(num_vertices: usize, faces: &[[u32; 3]], edges: &[[u32; 2]]) -> Self {
        match Self::try_new(num_vertices, faces, edges) {
            Ok(s) => s,
            Err(e) => panic!("SelfCollision::new: {e}"),
        }
    }

    /// [`SelfCollision::new`] returning [`Error::InvalidInput`] for indices
    /// out of range and faces or edges that repeat a vertex.
    pub fn try_new(num_vertices: usize, faces: &[[u32; 3]], edges: &[[u32; 2]]) -> Result<Self> {
        let n = num_vertices;
        if n > u32::MAX as usize - 1 {
            return crate::invalid!("self-collision supports at most 2^32 - 2 vertices, got {n}");
        }
        for (i, f) in faces.iter().enumerate() {
            if f.iter().any(|&v| v as usize >= n) || f[0] == f[1] || f[1] == f[2] || f[0] == f[2] {
                return crate::invalid!(
                    "face {i} = {f:?} has an index out of range (n = {n}) or a repeated vertex"
                );
            }
        }
        for (i, e) in edges.iter().enumerate() {
            if e.iter().any(|&v| v as usize >= n) || e[0] == e[1] {
                return crate::invalid!(
                    "edge {i} = {e:?} has an index out of range (n = {n}) or a repeated vertex"
                );
            }
        }
        let (vf_offsets, vf) = csr(
            n,
            faces
                .iter()
                .enumerate()
                .flat_map(|(f, t)| t.iter().map(move |&v| (v, f as u32))),
        );
        // Edge of each face side, by binary search in the sorted edge keys.
        let key = |a: u32, b: u32| ((a.min(b) as u64) << 32) | a.max(b) as u64;
        let mut keys: Vec<(u64, u32)> = edges
            .iter()
            .enumerate()
            .map(|(i, e)| (key(e[0], e[1]), i as u32))
            .collect();
        keys.sort_unstable();
        let mut sides = Vec::with_capacity(faces.len() * 3);
        for (f, t) in faces.iter().enumerate() {
            for k in 0..3 {
                let kk = key(t[k], t[(k + 1) % 3]);
                if let Ok(pos) = keys.binary_search_by(|probe| probe.0.cmp(&kk)) {
                    sides.push((keys[pos].1, f as u32));
                }
            }
        }
        let (ef_offsets, ef) = csr(edges.len(), sides.into_iter());
        let opposite = (0..edges.len())
            .map(|e| {
                let mut o = [u32::MAX; 2];
                let fs = &ef[ef_offsets[e] as usize..ef_offsets[e + 1] as usize];
                for (slot, &f) in o.iter_mut().zip(fs) {
                    *slot = faces[f as usize]
                        .into_iter()
                        .find(|&v| v != edges[e][0] && v != edges[e][1])
                        .unwrap_or(u32::MAX);
                }
                o
            })
            .collect();
        Ok(Self {
            topo: Topology {
                n,
                faces: faces.to_vec(),
                edges: edges.to_vec(),
                vf_offsets,
                vf,
                ef_offsets,
                ef,
                opposite,
            },
            vbvh: Bvh::default(),
            ebvh: Bvh::default(),
            fbvh: Bvh::default(),
            workers: Vec::new(),
            face_area: Vec::new(),
            vert_area: Vec::new(),
            edge_area: Vec::new(),
            wedge: Vec::new(),
            dirty: Vec::new(),
            face_ball: Vec::new(),
            edge_ball: Vec::new(),
            face_geom: Vec::new(),
            face_leaf: Vec::new(),
            edge_leaf: Vec::new(),
            contacts: Vec::new(),
            seeds: Vec::new(),
            seeds_next: Vec::new(),
            projection_rounds: PROJECTION_ROUNDS,
            marks_v: Vec::new(),
            marks_f: Vec::new(),
            marks_e: Vec::new(),
            zones: Zones::default(),
        })
    }

    /// Number of vertices the mesh was set up with.
    pub fn num_vertices(&self) -> usize {
        self.topo.n
    }

    /// Number of pairs of triangles sharing no vertex that intersect at
    /// positions `x` (coplanar overlaps are not counted).
    ///
    /// # Panics
    /// If `x.len()` differs from the number of vertices.
    pub fn count_intersections(&mut self, x: &[Vec3<f64>]) -> usize {
        assert_eq!(
            x.len(),
            self.topo.n,
            "SelfCollision::count_intersections: x has the wrong length"
        );
        let topo = &self.topo;
        let tri = |f: usize| topo.faces[f].map(|v| x[v as usize]);
        let tri_box = |f: usize| {
            let [a, b, c] = tri(f);
            Aabb::point(a).grow(b).grow(c)
        };
        self.fbvh.update(
            topo.faces.len(),
            |f| tri(f).iter().fold(Vec3::zero(), |s, &p| s + p),
            tri_box,
        );
        let chunks = tree_pairs(
            &mut self.workers,
            &mut self.seeds,
            &mut self.seeds_next,
            Pairing::Own(&self.fbvh),
            |_, _| true,
            |f, g, _, _, w| {
                let (f, g) = (f as usize, g as usize);
                if !topo.faces[g].iter().any(|&v| topo.faces[f].contains(&v))
                    && triangles_intersect(tri(f), tri(g))
                {
                    w.count += 1;
                }
            },
        );
        self.workers[..chunks].iter().map(|w| w.count).sum()
    }
}

/// Intersection count of a mesh state: pairs of triangles sharing no vertex
/// that intersect (see [`SelfCollision::count_intersections`]).
///
/// # Panics
/// If a face index is out of range of `x`.
pub fn count_triangle_intersections(x: &[Vec3<f64>], faces: &[[u32; 3]]) -> usize {
    let mut edges: Vec<[u32; 2]> = faces
        .iter()
        .flat_map(|t| (0..3).map(move |k| [t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3])]))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    SelfCollision::new(x.len(), faces, &edges).count_intersections(x)
}
