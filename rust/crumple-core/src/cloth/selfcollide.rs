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
mod geom;
mod zones;

#[cfg(test)]
mod tests;

use self::bvh::{Aabb, Bvh, Pairing};
use self::geom::{Near, ee_proximity, triangles_intersect, vf_proximity};
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

    /// All vertex–face and edge–edge pairs closer than `d` (m) at positions
    /// `x`, written to `out` (cleared first): vertex–face pairs, then
    /// edge–edge pairs, each sorted by `vertices`. An edge–edge pair lists
    /// first the edge with the smaller index in the `edges` given to
    /// [`SelfCollision::new`].
    ///
    /// Which pairs count follows the reference code (ARCSim's
    /// `signed_vf_distance`, `signed_ee_distance` and `in_wedge`):
    /// - vertex–face: the vertex's orthogonal projection on the face's plane
    ///   lies inside the face, at distance `< d`;
    /// - edge–edge: the closest points of the two lines lie inside both
    ///   segments (edges within `sin² < 1e-6` of parallel are skipped), at
    ///   distance `< d`, and each closest point lies in the other edge's
    ///   wedge: both faces of each edge bend away from the other edge
    ///   (a boundary edge checks its one face). On a flat region the wedge
    ///   is empty, so flat stacks are covered by vertex–face pairs alone.
    ///
    /// These rules keep a smooth sheet from pairing with its own in-plane
    /// neighbours (which would push it apart in-plane when `d` spans several
    /// edge lengths) while keeping pairs across folds. Pairs sharing a vertex
    /// are never reported.
    ///
    /// # Panics
    /// If `x.len()` differs from the number of vertices.
    pub fn proximity(&mut self, x: &[Vec3<f64>], d: f64, out: &mut Vec<ProximityPair>) {
        out.clear();
        assert_eq!(
            x.len(),
            self.topo.n,
            "SelfCollision::proximity: x has the wrong length"
        );
        if d.is_nan() || d <= 0.0 || d.is_infinite() {
            return;
        }
        self.update_areas(x);
        let topo = &self.topo;
        // Vertex–face: the face's prism `{q + γ n : q ∈ f, |γ| < d}` is the
        // only place the vertex can be; its box pads each axis by `d |n_i|`,
        // which on a flat patch excludes all in-plane neighbours.
        self.face_geom.resize(topo.faces.len(), FaceGeom::default());
        par_fill(&mut self.face_geom, |f| {
            FaceGeom::new(topo.faces[f].map(|v| x[v as usize]))
        });
        let fg = &self.face_geom;
        let face_centre = |f: usize| fg[f].centre;
        self.fbvh.update(topo.faces.len(), face_centre, |f| {
            let [a, b, c] = topo.faces[f].map(|v| x[v as usize]);
            pad_box(Aabb::point(a).grow(b).grow(c), fg[f].normal.abs() * d)
        });
        self.vbvh.update(topo.n, |v| x[v], |v| Aabb::point(x[v]));
        // Face data in the face tree's leaf order: the traversal reads it
        // nearly sequentially instead of jumping around the mesh.
        let forder = self.fbvh.order();
        self.face_leaf.resize(forder.len(), (FaceGeom::default(), [0; 3]));
        par_fill(&mut self.face_leaf, |p| {
            let f = forder[p] as usize;
            (fg[f], topo.faces[f])
        });
        let (va, fa, fl) = (&self.vert_area, &self.face_area, &self.face_leaf);
        let vbvh = &self.vbvh;
        let chunks = tree_pairs(
            &mut self.workers,
            &mut self.seeds,
            &mut self.seeds_next,
            Pairing::Two(&self.vbvh, &self.fbvh),
            |_, _| true,
            |v, f, pv, pf, w| {
                let (geom, [a, b, c]) = &fl[pf];
                // The vertex tree's boxes are the points themselves.
                let p = vbvh.prim_box(pv).lo;
                if v == *a || v == *b || v == *c || !geom.may_hold(p, d) {
                    return;
                }
                if let Some(near) = vf_proximity(p, x[*a as usize], x[*b as usize], x[*c as usize], d) {
                    let area = va[v as usize].min(fa[f as usize]);
                    w.pairs
                        .push(pair(PairKind::VertexFace, [v, *a, *b, *c], near, area));
                }
            },
        );
        for w in &self.workers[..chunks] {
            out.extend_from_slice(&w.pairs);
        }

        // Edge–edge: each closest point lies in the other edge's wedge
        // within `d`; `wedge[e]` bounds that region (see `wedge_box`). One
        // tree over the edges carries both their plain boxes and their wedge
        // boxes, and its traversal keeps node pairs where each side's wedges
        // reach the other side's edges.
        let ne = topo.edges.len();
        self.wedge.resize(ne, (Aabb::empty(), Cone::default()));
        par_fill(&mut self.wedge, |e| wedge_box(topo, x, e, d));
        let wedge = &self.wedge;
        self.ebvh
            .update(ne, |e| edge_centre(topo, x, e), |e| edge_box(topo, x, e));
        self.ebvh.update_alt(|e| wedge[e].0);
        let eorder = self.ebvh.order();
        self.edge_leaf.resize(eorder.len(), EdgeLeaf::default());
        par_fill(&mut self.edge_leaf, |p| {
            let e = eorder[p] as usize;
            let verts = topo.edges[e];
            EdgeLeaf {
                verts,
                ends: verts.map(|v| x[v as usize]),
                cone: wedge[e].1,
            }
        });
        let (ea, el) = (&self.edge_area, &self.edge_leaf);
        let chunks = tree_pairs(
            &mut self.workers,
            &mut self.seeds,
            &mut self.seeds_next,
            Pairing::Cross(&self.ebvh),
            |_, _| true,
            |e, g, pe, pg, w| {
                // Canonical orientation: the smaller edge index first.
                let ((ei, gi), (le, lg)) = if e < g {
                    ((e as usize, g as usize), (&el[pe], &el[pg]))
                } else {
                    ((g as usize, e as usize), (&el[pg], &el[pe]))
                };
                let ([a0, a1], [b0, b1]) = (le.verts, lg.verts);
                if a0 == b0
                    || a0 == b1
                    || a1 == b0
                    || a1 == b1
                    || !le.cone.faces(&lg.cone)
                    || !le.cone.reaches(le.ends[0], lg.ends)
                    || !lg.cone.reaches(lg.ends[0], le.ends)
                {
                    return;
                }
                let Some(near) = ee_proximity(le.ends[0], le.ends[1], lg.ends[0], lg.ends[1], d) else {
                    return;
                };
                // `near.normal` points from edge g toward edge e: e's faces
                // must lie on its + side, g's on its − side.
                if in_wedge(topo, x, ei, near.normal) && in_wedge(topo, x, gi, -near.normal) {
                    w.pairs.push(pair(
                        PairKind::EdgeEdge,
                        [a0, a1, b0, b1],
                        near,
                        ea[ei].min(ea[gi]),
                    ));
                }
            },
        );
        for w in &self.workers[..chunks] {
            out.extend_from_slice(&w.pairs);
        }
        // Traversal order depends on the hierarchy; the documented order
        // does not.
        out.par_sort_unstable_by_key(|p| (p.kind == PairKind::EdgeEdge, p.vertices));
    }

    /// Face, vertex and edge areas at `x` (a third of each incident face for
    /// vertices and edges), gathered per element so the sums are
    /// deterministic.
    fn update_areas(&mut self, x: &[Vec3<f64>]) {
        let topo = &self.topo;
        self.face_area.resize(topo.faces.len(), 0.0);
        self.vert_area.resize(topo.n, 0.0);
        self.edge_area.resize(topo.edges.len(), 0.0);
        par_fill(&mut self.face_area, |f| {
            let [p, q, r] = topo.faces[f].map(|v| x[v as usize]);
            0.5 * (q - p).cross(r - p).norm()
        });
        let fa = &self.face_area;
        let third = 1.0 / 3.0;
        par_fill(&mut self.vert_area, |v| {
            let fs = &topo.vf[topo.vf_offsets[v] as usize..topo.vf_offsets[v + 1] as usize];
            fs.iter().map(|&f| fa[f as usize]).sum::<f64>() * third
        });
        par_fill(&mut self.edge_area, |e| {
            let fs = &topo.ef[topo.ef_offsets[e] as usize..topo.ef_offsets[e + 1] as usize];
            fs.iter().map(|&f| fa[f as usize]).sum::<f64>() * third
        });
    }

    /// Makes the linear path `x0 → x1` free of cloth–cloth crossings by
    /// modifying `x1`; also pushes pairs that end closer than `thickness`
    /// (m) apart to that distance where it can.
    ///
    /// `x0` must be free of crossings. `inv_mass[i] = 0` marks a fixed
    /// vertex: projections never move it, and an impact zone holding it stays
    /// at `x0`.
    ///
    /// 1. Up to 6 rounds of: continuous detection of all vertex–face and
    ///    edge–edge crossings (coplanarity times of the cubic, then a contact
    ///    test with a tolerance of 1e-6 mean edge lengths), plus pairs ending
    ///    within `thickness` (by the rules of [`SelfCollision::proximity`]);
    ///    then two Gauss–Seidel sweeps of inelastic projections that move the
    ///    pair's vertices along the contact normal, weighted by inverse mass
    ///    (so linear momentum is conserved), until the gap is `thickness`.
    /// 2. Then rigid impact zones until no crossing remains: the vertices of
    ///    each remaining collision are merged into a zone, which moves
    ///    rigidly from `x0` with its members' mass-weighted linear and
    ///    angular velocity (rotation capped at π/2 per step). This always
    ///    terminates, after at most `n − 1` merges, because a rigid zone
    ///    cannot collide with itself (see the `zones` module). Zones keep the
    ///    gaps they had at `x0`, not `thickness`.
    ///
    /// Only pairs with a vertex that moved since the previous pass are
    /// re-tested, so rounds after the first cost little.
    ///
    /// Returns [`Error::InvalidInput`] for wrong lengths, non-finite
    /// positions, negative or non-finite masses or thickness, and
    /// [`Error::Solver`] if the zone loop exceeds its cap (`n + 16` rounds),
    /// which the argument above rules out.
    pub fn resolve(
        &mut self,
        x0: &[Vec3<f64>],
        x1: &mut [Vec3<f64>],
        inv_mass: &[f64],
        thickness: f64,
    ) -> Result<ResolveStats> {
        let n = self.topo.n;
        if x0.len() != n || x1.len() != n || inv_mass.len() != n {
            return crate::invalid!(
                "resolve: x0, x1 and inv_mass must have one entry per vertex ({n}), got {}, {}, {}",
                x0.len(),
                x1.len(),
                inv_mass.len()
            );
        }
        if !thickness.is_finite() || thickness < 0.0 {
            return crate::invalid!("resolve: thickness must be finite and >= 0, got {thickness}");
        }
        if let Some(i) = (0..n).find(|&i| !x0[i].is_finite() || !x1[i].is_finite()) {
            return crate::invalid!("resolve: vertex {i} has a non-finite position");
        }
        if let Some(i) = inv_mass.iter().position(|&w| !w.is_finite() || w < 0.0) {
            return crate::invalid!("resolve: inv_mass[{i}] = {} must be finite and >= 0", inv_mass[i]);
        }
        let mut stats = ResolveStats::default();
        let ne = self.topo.edges.len();
        if n == 0 || ne == 0 && self.topo.faces.is_empty() {
            return Ok(stats);
        }
        let edges = &self.topo.edges;
        let mean_edge = if ne > 0 {
            ordered_sum(ne, |e| {
                (x0[edges[e][1] as usize] - x0[edges[e][0] as usize]).norm()
            }) / ne as f64
        } else {
            0.0
        };
        let tol = CCD_TOL * if mean_edge > 0.0 { mean_edge } else { 1.0 };
        // Projections aim a little beyond contact even with zero thickness,
        // so a corrected pair is not found touching again.
        let target = thickness.max(10.0 * tol);

        let topo = &self.topo;
        self.face_ball.resize(topo.faces.len(), (Vec3::zero(), 0.0));
        par_fill(&mut self.face_ball, |f| {
            let g = FaceGeom::new(topo.faces[f].map(|v| x0[v as usize]));
            (g.centre, g.radius2.sqrt())
        });
        self.edge_ball.resize(ne, (Vec3::zero(), 0.0));
        par_fill(&mut self.edge_ball, |e| {
            let [a, b] = topo.edges[e].map(|v| x0[v as usize]);
            ((a + b) * 0.5, 0.5 * (b - a).norm())
        });
        self.dirty.clear();
        self.dirty.resize(n, true);
        for round in 0..self.projection_rounds {
            let impacts = self.ccd_pass(x0, x1, tol, Some(thickness), None);
            if round == 0 {
                stats.collisions = impacts;
            }
            if self.contacts.is_empty() {
                return Ok(stats);
            }
            stats.iterations += 1;
            self.dirty.fill(false);
            for c in self.contacts.iter().filter(|c| c.impact) {
                for v in c.vertices {
                    self.dirty[v as usize] = true;
                }
            }
            for _ in 0..PROJECTION_SWEEPS {
                for c in &self.contacts {
                    project(c, x1, inv_mass, target, &mut self.dirty);
                }
            }
        }

        self.zones.reset(n);
        let cap = n + 16;
        let mut rounds = 0;
        loop {
            let zones = std::mem::take(&mut self.zones);
            let impacts = self.ccd_pass(x0, x1, tol, None, Some(&zones.zone_of));
            self.zones = zones;
            if rounds == 0 && self.projection_rounds == 0 {
                stats.collisions = impacts;
            }
            if impacts == 0 {
                break;
            }
            rounds += 1;
            if rounds > cap {
                return Err(Error::Solver(format!(
                    "self-collision impact zones did not converge in {cap} rounds ({impacts} collisions left)"
                )));
            }
            stats.iterations += 1;
            self.dirty.fill(false);
            for c in &self.contacts {
                let [a, b, c2, d2] = c.vertices;
                self.zones.union(a, b);
                self.zones.union(a, c2);
                self.zones.union(a, d2);
            }
            let dirty = &mut self.dirty;
            self.zones
                .rigidify(x0, x1, inv_mass, |v| dirty[v as usize] = true);
            self.zones.flatten();
        }
        (stats.zones, stats.largest_zone) = self.zones.summary();
        Ok(stats)
    }

    /// One continuous-detection pass over every pair with a dirty vertex;
    /// fills `self.contacts` and returns how many are crossings.
    ///
    /// `thickness`: also report pairs that end closer than this (projection
    /// rounds). `zone_of`: skip pairs inside one impact zone (zone rounds).
    fn ccd_pass(
        &mut self,
        x0: &[Vec3<f64>],
        x1: &[Vec3<f64>],
        tol: f64,
        thickness: Option<f64>,
        zone_of: Option<&[u32]>,
    ) -> usize {
        self.contacts.clear();
        let topo = &self.topo;
        let dirty = &self.dirty;
        let dirty_count = dirty.iter().filter(|&&d| d).count();
        if dirty_count == 0 {
            return 0;
        }
        let pad = thickness.unwrap_or(0.0).max(tol);
        let swept = |v: u32| Aabb::point(x0[v as usize]).grow(x1[v as usize]);
        let face_dirty = |f: u32| topo.faces[f as usize].iter().any(|&v| dirty[v as usize]);
        let edge_dirty = |e: u32| topo.edges[e as usize].iter().any(|&v| dirty[v as usize]);
        self.fbvh.update(
            topo.faces.len(),
            |f| {
                topo.faces[f]
                    .iter()
                    .fold(Vec3::zero(), |s, &v| s + x0[v as usize])
                    * (1.0 / 3.0)
            },
            |f| {
                let [a, b, c] = topo.faces[f];
                swept(a).union(swept(b)).union(swept(c))
            },
        );
        // The vertex boxes carry the padding of vertex–face pairs, each edge
        // box half of it.
        self.vbvh
            .update(topo.n, |v| x0[v], |v| swept(v as u32).padded(pad));
        self.ebvh.update(
            topo.edges.len(),
            |e| edge_centre(topo, x0, e),
            |e| {
                let [a, b] = topo.edges[e];
                swept(a).union(swept(b)).padded(0.5 * pad)
            },
        );
        let or = |a: bool, b: bool| a || b;
        self.vbvh.fold_nodes(
            &mut self.marks_v,
            |ids| ids.iter().any(|&v| dirty[v as usize]),
            or,
        );
        self.fbvh
            .fold_nodes(&mut self.marks_f, |ids| ids.iter().any(|&f| face_dirty(f)), or);
        self.ebvh
            .fold_nodes(&mut self.marks_e, |ids| ids.iter().any(|&e| edge_dirty(e)), or);
        let (mv, mf, me) = (&self.marks_v, &self.marks_f, &self.marks_e);

        let narrow = Narrow {
            topo,
            x0,
            x1,
            tol,
            thickness,
            zone_of,
            face_ball: &self.face_ball,
            edge_ball: &self.edge_ball,
        };
        // Vertex–face pairs with a dirty vertex on either side.
        let chunks = tree_pairs(
            &mut self.workers,
            &mut self.seeds,
            &mut self.seeds_next,
            Pairing::Two(&self.vbvh, &self.fbvh),
            |i, j| mv[i as usize] || mf[j as usize],
            |v, f, _, _, w| {
                if (dirty[v as usize] || face_dirty(f)) && !topo.face_has(f as usize, v) {
                    narrow.vertex_face(v, f, &mut w.contacts);
                }
            },
        );
        for w in &self.workers[..chunks] {
            self.contacts.extend_from_slice(&w.contacts);
        }
        // Edge–edge pairs with a dirty vertex.
        let chunks = tree_pairs(
            &mut self.workers,
            &mut self.seeds,
            &mut self.seeds_next,
            Pairing::Own(&self.ebvh),
            |i, j| me[i as usize] || me[j as usize],
            |e, g, _, _, w| {
                let (e, g) = (e.min(g), e.max(g));
                if (edge_dirty(e) || edge_dirty(g)) && !topo.edges_share(e as usize, g as usize) {
                    narrow.edge_edge(e, g, &mut w.contacts);
                }
            },
        );
        for w in &self.workers[..chunks] {
            self.contacts.extend_from_slice(&w.contacts);
        }
        // A canonical order for the Gauss–Seidel projections, whatever the
        // hierarchy looks like.
        self.contacts
            .sort_unstable_by_key(|c| (c.kind == PairKind::EdgeEdge, c.vertices));
        self.contacts.iter().filter(|c| c.impact).count()
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

/// Fills `out[i] = f(i)` in parallel (sequentially for short slices).
fn par_fill<T: Send, F: Fn(usize) -> T + Sync + Send>(out: &mut [T], f: F) {
    if out.len() < 4096 {
        out.iter_mut().enumerate().for_each(|(i, o)| *o = f(i));
    } else {
        out.par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .for_each(|(i, o)| *o = f(i));
    }
}

/// Calls `pair(i, j, p, q, worker)` (ids, then leaf-order positions) for
/// every primitive pair of `pairing`, in
/// parallel over its traversal seeds. Node pairs failing `keep` are skipped.
/// Returns the number of chunks whose workers hold results.
fn tree_pairs<K, P>(
    workers: &mut Vec<Worker>,
    seeds: &mut Vec<(u32, u32)>,
    next: &mut Vec<(u32, u32)>,
    pairing: Pairing,
    keep: K,
    pair: P,
) -> usize
where
    K: Fn(u32, u32) -> bool + Sync + Send,
    P: Fn(u32, u32, usize, usize, &mut Worker) + Sync + Send,
{
    pairing.seeds(&keep, seeds, next);
    let seeds = &*seeds;
    for_chunks(workers, seeds.len(), SEED_CHUNK, |range, w| {
        let mut stack = std::mem::take(&mut w.stack);
        for &seed in &seeds[range] {
            pairing.descend(&keep, seed, &mut stack, |i, j, p, q| pair(i, j, p, q, w));
        }
        w.stack = stack;
    })
}

/// Edge data for the edge–edge proximity test, kept in the edge tree's leaf
/// order.
#[derive(Clone, Copy, Debug, Default)]
struct EdgeLeaf {
    verts: [u32; 2],
    ends: [Vec3<f64>; 2],
    cone: Cone,
}

/// Plane data of a face for the vertex–face proximity filter.
#[derive(Clone, Copy, Debug, Default)]
struct FaceGeom {
    centre: Vec3<f64>,
    /// Unit normal, zero for a degenerate face.
    normal: Vec3<f64>,
    /// Squared radius of the ball about `centre` holding the face.
    radius2: f64,
}

impl FaceGeom {
    fn new([a, b, c]: [Vec3<f64>; 3]) -> Self {
        let centre = (a + b + c) * (1.0 / 3.0);
        let radius2 = [a, b, c]
            .iter()
            .map(|p| (*p - centre).norm_squared())
            .fold(0.0, f64::max);
        let normal = (b - a).cross(c - a).try_normalize(0.0).unwrap_or_else(Vec3::zero);
        FaceGeom {
            centre,
            normal,
            radius2,
        }
    }

    /// Necessary for [`vf_proximity`]: `p` within `d` of the face's plane,
    /// and its projection within the face's ball. Rejects the in-plane
    /// neighbours that fill a tilted face's prism box with a few flops.
    #[inline]
    fn may_hold(&self, p: Vec3<f64>, d: f64) -> bool {
        let r = p - self.centre;
        let h = self.normal.dot(r);
        h.abs() < d && r.norm_squared() - h * h <= self.radius2 * (1.0 + 1e-9)
    }
}

/// A cone of unit directions: those within `angle` of `axis`. `angle ≥ π`
/// holds every direction, a negative angle none.
#[derive(Clone, Copy, Debug)]
struct Cone {
    axis: Vec3<f64>,
    angle: f64,
    cos: f64,
    sin: f64,
}

impl Default for Cone {
    fn default() -> Self {
        Cone::FULL
    }
}

impl Cone {
    const FULL: Cone = Cone {
        axis: Vec3::new(0.0, 0.0, 1.0),
        angle: core::f64::consts::PI,
        cos: -1.0,
        sin: 0.0,
    };
    const EMPTY: Cone = Cone {
        axis: Vec3::new(0.0, 0.0, 1.0),
        angle: -1.0,
        cos: 1.0,
        sin: 0.0,
    };

    fn new(axis: Vec3<f64>, angle: f64) -> Cone {
        if angle >= core::f64::consts::PI {
            return Cone::FULL;
        }
        Cone {
            axis,
            angle,
            cos: angle.cos(),
            sin: angle.sin(),
        }
    }

    /// Whether some `r` in `self` has `−r` in `o`: the two edges' wedges
    /// can face each other. By the triangle inequality on the sphere this
    /// needs `angle(axis, −o.axis) ≤ angle + o.angle`.
    #[inline]
    fn faces(&self, o: &Cone) -> bool {
        if self.angle < 0.0 || o.angle < 0.0 {
            return false;
        }
        if self.angle + o.angle >= core::f64::consts::PI {
            return true;
        }
        let cos_sum = self.cos * o.cos - self.sin * o.sin;
        -self.axis.dot(o.axis) >= cos_sum - 1e-9
    }

    /// For the wedge cone of an edge through `a` (half-angle at most π/2):
    /// whether the other edge `[p, q]` has an endpoint on the cone's side of
    /// it. The other edge's
    /// closest point is `P + s r` with `P` on `e` and `r · axis ≥ cos(angle)
    /// ≥ 0`, so some endpoint of `g` has `axis · (y − a) ≥ 0`; around a
    /// bent edge, its own layer curves away to the other side.
    #[inline]
    fn reaches(&self, a: Vec3<f64>, [p, q]: [Vec3<f64>; 2]) -> bool {
        if self.angle > core::f64::consts::FRAC_PI_2 + 1e-6 {
            return true;
        }
        let (p, q) = (p - a, q - a);
        let slack = 1e-12 * (p.norm_squared() + q.norm_squared()).sqrt();
        self.axis.dot(p) >= -slack || self.axis.dot(q) >= -slack
    }
}

#[inline]
fn edge_centre(topo: &Topology, x: &[Vec3<f64>], e: usize) -> Vec3<f64> {
    let [a, b] = topo.edges[e];
    (x[a as usize] + x[b as usize]) * 0.5
}

#[inline]
fn edge_box(topo: &Topology, x: &[Vec3<f64>], e: usize) -> Aabb {
    let [a, b] = topo.edges[e].map(|v| x[v as usize]);
    Aabb::point(a).grow(b)
}

/// Compressed rows from `(row, value)` entries, values in input order.
fn csr(rows: usize, entries: impl Iterator<Item = (u32, u32)> + Clone) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; rows + 1];
    for (r, _) in entries.clone() {
        offsets[r as usize + 1] += 1;
    }
    for i in 0..rows {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut values = vec![0u32; offsets[rows] as usize];
    for (r, v) in entries {
        values[fill[r as usize] as usize] = v;
        fill[r as usize] += 1;
    }
    (offsets, values)
}

#[inline]
fn pad_box(b: Aabb, pad: Vec3<f64>) -> Aabb {
    Aabb {
        lo: b.lo - pad,
        hi: b.hi + pad,
    }
}

#[inline]
fn pair(kind: PairKind, vertices: [u32; 4], near: Near, area: f64) -> ProximityPair {
    ProximityPair {
        kind,
        vertices,
        weights: near.weights,
        normal: near.normal,
        distance: near.distance,
        area,
    }
}

/// Whether the faces of edge `e` lie on the `+dir` side (`dir ⊥ e`): the
/// far point of an edge–edge pair then lies in `e`'s wedge (ARCSim's
/// `in_wedge`). A margin of `1e-6` (relative) rejects flat edges, whose
/// wedge is a plane and which vertex–face pairs already cover.
#[inline]
fn in_wedge(topo: &Topology, x: &[Vec3<f64>], e: usize, dir: Vec3<f64>) -> bool {
    let a = x[topo.edges[e][0] as usize];
    topo.opposite[e].iter().filter(|&&c| c != u32::MAX).all(|&c| {
        let r = x[c as usize] - a;
        dir.dot(r) > 1e-6 * r.norm()
    })
}

/// A box containing every point within `d` of edge `e` in its wedge, i.e.
/// every place the other edge's closest point can be (see [`in_wedge`]),
/// and the cone of directions from the edge toward such points.
///
/// The separation `r` from the edge is perpendicular to it and makes
/// `r · o_k > 0` with the outward in-plane directions `o_k` of its faces:
/// a sector about `c = (o_1 + o_2)/|o_1 + o_2|` of half-angle `ψ` with
/// `sin ψ = |o_1 + o_2| / 2`. A (numerically) flat edge has an empty sector
/// (`in_wedge` needs `r · o_k > 1e-6`, so `|o_1 + o_2| > 2e-6`) and gets an
/// empty box; a boundary edge gets a half-disk (`ψ = π/2`), an edge without
/// faces the full disk. The sector is one-sided, so a gently bent edge looks
/// only toward its convex side.
fn wedge_box(topo: &Topology, x: &[Vec3<f64>], e: usize, d: f64) -> (Aabb, Cone) {
    let [a, b] = topo.edges[e].map(|v| x[v as usize]);
    let own = Aabb::point(a).grow(b);
    let Some(u) = (b - a).try_normalize(0.0) else {
        return (own.padded(d), Cone::default());
    };
    let outward = |c: u32| {
        let r = x[c as usize] - a;
        (u * r.dot(u) - r).try_normalize(0.0)
    };
    let (axis, sin_psi) = match topo.opposite[e].map(|c| if c == u32::MAX { None } else { outward(c) }) {
        [Some(o0), Some(o1)] => {
            let s = o0 + o1;
            let len = s.norm();
            if len < 1e-6 {
                return (Aabb::empty(), Cone::EMPTY);
            }
            (s * (1.0 / len), (0.5 * len).min(1.0))
        }
        [Some(o), None] | [None, Some(o)] => (o, 1.0),
        [None, None] => {
            if topo.opposite[e] != [u32::MAX; 2] {
                // A degenerate face: no usable wedge, keep everything.
                return (own.padded(d), Cone::default());
            }
            let disk = Vec3::new(
                (1.0 - u.x * u.x).max(0.0).sqrt(),
                (1.0 - u.y * u.y).max(0.0).sqrt(),
                (1.0 - u.z * u.z).max(0.0).sqrt(),
            ) * d;
            return (pad_box(own, disk), Cone::default());
        }
    };
    // Range of each component of r = c cos α + w sin α over |α| ≤ ψ.
    let w = u.cross(axis);
    let cos_psi = (1.0 - sin_psi * sin_psi).max(0.0).sqrt();
    let mut lo = Vec3::zero();
    let mut hi = Vec3::zero();
    for i in 0..3 {
        let (ci, wi) = (axis[i], w[i]);
        let ends = [ci * cos_psi - wi * sin_psi, ci * cos_psi + wi * sin_psi];
        let amp = ci.hypot(wi);
        let mut top = ends[0].max(ends[1]);
        let mut bottom = ends[0].min(ends[1]);
        if ci >= amp * cos_psi {
            top = amp;
        }
        if -ci >= amp * cos_psi {
            bottom = -amp;
        }
        // Distances run from 0 to d along r; the slack covers rounding.
        lo[i] = d * bottom.min(0.0) - 1e-9 * d;
        hi[i] = d * top.max(0.0) + 1e-9 * d;
    }
    let cone = Cone::new(axis, sin_psi.asin() + 1e-9);
    (
        Aabb {
            lo: own.lo + lo,
            hi: own.hi + hi,
        },
        cone,
    )
}

/// Inelastic projection of one contact (BFA02 §7.3 applied to positions):
/// moves the pair's vertices along the normal, each by its inverse mass
/// times its weight, so that the gap `Σ w n · x1` becomes `target`. Linear
/// momentum is unchanged because `Σ w = 0`.
fn project(c: &Contact, x1: &mut [Vec3<f64>], inv_mass: &[f64], target: f64, dirty: &mut [bool]) {
    let mut gap = 0.0;
    let mut denom = 0.0;
    for k in 0..4 {
        let v = c.vertices[k] as usize;
        gap += c.weights[k] * c.normal.dot(x1[v]);
        denom += c.weights[k] * c.weights[k] * inv_mass[v];
    }
    if gap >= target || denom <= 0.0 {
        return;
    }
    let lambda = (target - gap) / denom;
    for k in 0..4 {
        let v = c.vertices[k] as usize;
        let s = lambda * c.weights[k] * inv_mass[v];
        if s != 0.0 {
            x1[v] += c.normal * s;
            dirty[v] = true;
        }
    }
}

/// The narrow phase of a CCD pass.
struct Narrow<'a> {
    topo: &'a Topology,
    x0: &'a [Vec3<f64>],
    x1: &'a [Vec3<f64>],
    tol: f64,
    thickness: Option<f64>,
    zone_of: Option<&'a [u32]>,
    face_ball: &'a [(Vec3<f64>, f64)],
    edge_ball: &'a [(Vec3<f64>, f64)],
}

impl Narrow<'_> {
    #[inline]
    fn same_zone(&self, v: [u32; 4]) -> bool {
        self.zone_of.is_some_and(|z| {
            let r = z[v[0] as usize];
            v[1..].iter().all(|&u| z[u as usize] == r)
        })
    }

    /// Vertex `vert` against face `face` (which must not contain it).
    #[inline]
    fn vertex_face(&self, vert: u32, face: u32, out: &mut Vec<Contact>) {
        let [a, b, c] = self.topo.faces[face as usize];
        let v = [vert, a, b, c];
        if self.same_zone(v) {
            return;
        }
        let (x0, x1) = (self.x0, self.x1);
        let p = v.map(|i| x0[i as usize]);
        let q = v.map(|i| x1[i as usize]);
        // How far the pair can approach during the step: relative to the
        // vertex, face points move by convex combinations of the corners'
        // displacements.
        let dp = q[0] - p[0];
        let motion = (1..4)
            .map(|k| (q[k] - p[k] - dp).norm_squared())
            .fold(0.0, f64::max)
            .sqrt();
        let reach = self.thickness.unwrap_or(0.0).max(self.tol) + motion;
        // Cheap bound first: distance to the face's bounding ball.
        let (g, r) = self.face_ball[face as usize];
        if (p[0] - g).norm_squared() > (r + reach) * (r + reach) {
            return;
        }
        let b = geom::closest_on_triangle(p[0], p[1], p[2], p[3]);
        let start = (p[0] - (p[1] * b[0] + p[2] * b[1] + p[3] * b[2])).norm();
        // Lower bound on the distance during the step.
        let lower = start - motion;
        if lower <= self.tol
            && let Some(hit) = ccd::vertex_face(p[0], p[1], p[2], p[3], q[0], q[1], q[2], q[3], self.tol)
        {
            out.push(Contact {
                kind: PairKind::VertexFace,
                vertices: v,
                weights: hit.weights,
                normal: hit.normal,
                impact: true,
            });
            return;
        }
        if let Some(h) = self.thickness
            && lower < h
            && let Some(near) = vf_proximity(q[0], q[1], q[2], q[3], h)
        {
            out.push(thick_contact(PairKind::VertexFace, v, near, &p));
        }
    }

    /// Edge `e` against edge `g`.
    #[inline]
    fn edge_edge(&self, e: u32, g: u32, out: &mut Vec<Contact>) {
        let [a, b] = self.topo.edges[e as usize];
        let [c, d] = self.topo.edges[g as usize];
        let v = [a, b, c, d];
        if self.same_zone(v) {
            return;
        }
        let (x0, x1) = (self.x0, self.x1);
        let p = v.map(|i| x0[i as usize]);
        let q = v.map(|i| x1[i as usize]);
        let dx = [q[0] - p[0], q[1] - p[1], q[2] - p[2], q[3] - p[3]];
        let mut m2: f64 = 0.0;
        for i in 0..2 {
            for j in 2..4 {
                m2 = m2.max((dx[i] - dx[j]).norm_squared());
            }
        }
        let motion = m2.sqrt();
        let reach = self.thickness.unwrap_or(0.0).max(self.tol) + motion;
        let ((ma, ra), (mb, rb)) = (self.edge_ball[e as usize], self.edge_ball[g as usize]);
        let reach = ra + rb + reach;
        if (ma - mb).norm_squared() > reach * reach {
            return;
        }
        let (s, t) = geom::closest_on_segments(p[0], p[1], p[2], p[3]);
        let start = ((p[0] + (p[1] - p[0]) * s) - (p[2] + (p[3] - p[2]) * t)).norm();
        let lower = start - motion;
        if lower <= self.tol
            && let Some(hit) = ccd::edge_edge(p[0], p[1], p[2], p[3], q[0], q[1], q[2], q[3], self.tol)
        {
            out.push(Contact {
                kind: PairKind::EdgeEdge,
                vertices: v,
                weights: hit.weights,
                normal: hit.normal,
                impact: true,
            });
            return;
        }
        // Thickness pairs follow the proximity rules, wedges included.
        if let Some(h) = self.thickness
            && lower < h
            && let Some(near) = ee_proximity(q[0], q[1], q[2], q[3], h)
            && in_wedge(self.topo, x1, e as usize, near.normal)
            && in_wedge(self.topo, x1, g as usize, -near.normal)
        {
            out.push(thick_contact(PairKind::EdgeEdge, v, near, &p));
        }
    }
}

/// A pair ending within the thickness, its normal flipped if needed so that
/// the first side started on the positive side (if it ended on the other
/// side, it crossed, and the projection pushes it back).
#[inline]
fn thick_contact(kind: PairKind, v: [u32; 4], near: Near, start: &[Vec3<f64>; 4]) -> Contact {
    let gap0: f64 = (0..4).map(|k| near.weights[k] * near.normal.dot(start[k])).sum();
    Contact {
        kind,
        vertices: v,
        weights: near.weights,
        normal: if gap0 < 0.0 { -near.normal } else { near.normal },
        impact: false,
    }
}
