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

use self::bvh::{Aabb, Bvh};
use self::geom::{Near, ee_proximity, triangles_intersect, vf_proximity};
use self::zones::Zones;
use crate::math::Vec3;
use crate::parallel::ordered_sum;
use crate::{Error, Result};
use rayon::prelude::*;
macro_rules! prof { ($t:ident, $l:expr) => { if std::env::var_os("SCPROF").is_some() { eprintln!("  {}: {:?}", $l, $t.elapsed()); } let $t = std::time::Instant::now(); let _ = &$t; } }

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
    /// of its (one or two) triangles and a face its own area. Computed from
    /// the current positions.
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

/// Items per parallel chunk. Fixed, so the concatenation order (and every
/// result) does not depend on the thread count.
const CHUNK: usize = 256;

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
    vertices: [u32; 4],
    weights: [f64; 4],
    /// Oriented so that the first side started on its positive side.
    normal: Vec3<f64>,
    impact: bool,
}

/// Per-chunk scratch, kept between calls.
#[derive(Default)]
struct Worker {
    stack: Vec<u32>,
    hits: Vec<u32>,
    contacts: Vec<Contact>,
    pairs: Vec<ProximityPair>,
    count: usize,
}

/// Runs `f` on the chunks of `0..len` in parallel, each with its own
/// [`Worker`] (cleared first); returns the number of chunks used.
fn for_chunks<F>(workers: &mut Vec<Worker>, len: usize, f: F) -> usize
where
    F: Fn(core::ops::Range<usize>, &mut Worker) + Sync + Send,
{
    let chunks = len.div_ceil(CHUNK);
    if workers.len() < chunks {
        workers.resize_with(chunks, Worker::default);
    }
    workers[..chunks].par_iter_mut().enumerate().for_each(|(c, w)| {
        w.contacts.clear();
        w.pairs.clear();
        w.count = 0;
        let lo = c * CHUNK;
        f(lo..(lo + CHUNK).min(len), w);
    });
    chunks
}

/// Connectivity needed by the tests, fixed at construction.
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
    vbvh: Bvh,
    ebvh: Bvh,
    fbvh: Bvh,
    workers: Vec<Worker>,
    face_area: Vec<f64>,
    vert_area: Vec<f64>,
    edge_area: Vec<f64>,
    /// Per-edge boxes of the region where an edge–edge proximity can lie.
    wedge: Vec<Aabb>,
    /// Vertices whose pairs must be re-tested by the next CCD pass.
    dirty: Vec<bool>,
    dirty_verts: Vec<u32>,
    dirty_faces: Vec<u32>,
    dirty_edges: Vec<u32>,
    contacts: Vec<Contact>,
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
                return crate::invalid!("face {i} = {f:?} has an index out of range (n = {n}) or a repeated vertex");
            }
        }
        for (i, e) in edges.iter().enumerate() {
            if e.iter().any(|&v| v as usize >= n) || e[0] == e[1] {
                return crate::invalid!("edge {i} = {e:?} has an index out of range (n = {n}) or a repeated vertex");
            }
        }
        let (vf_offsets, vf) = csr(n, faces.iter().enumerate().flat_map(|(f, t)| t.iter().map(move |&v| (v, f as u32))));
        // Edge of each face side, by binary search in the sorted edge keys.
        let key = |a: u32, b: u32| ((a.min(b) as u64) << 32) | a.max(b) as u64;
        let mut keys: Vec<(u64, u32)> = edges.iter().enumerate().map(|(i, e)| (key(e[0], e[1]), i as u32)).collect();
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
            dirty_verts: Vec::new(),
            dirty_faces: Vec::new(),
            dirty_edges: Vec::new(),
            contacts: Vec::new(),
            zones: Zones::default(),
        })
    }

    /// Number of vertices the mesh was set up with.
    pub fn num_vertices(&self) -> usize {
        self.topo.n
    }

    /// All vertex–face and edge–edge pairs closer than `d` (m) at positions
    /// `x`, written to `out` (cleared first): vertex–face pairs sorted by
    /// `(vertex, face)`, then edge–edge pairs sorted by edge indices.
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
        assert_eq!(x.len(), self.topo.n, "SelfCollision::proximity: x has the wrong length");
        if !(d > 0.0) || !d.is_finite() {
            return;
        }
        let t0 = std::time::Instant::now();
        self.update_areas(x);
        prof!(t0, "areas");
        let topo = &self.topo;
        // Vertex–face: the face's prism `{q + γ n : q ∈ f, |γ| < d}` is the
        // only place the vertex can be; its box pads each axis by `d |n_i|`,
        // which on a flat patch excludes all in-plane neighbours.
        self.fbvh.update(topo.faces.len(), |f| {
            let [a, b, c] = topo.faces[f].map(|v| x[v as usize]);
            let bx = Aabb::point(a).grow(b).grow(c);
            match (b - a).cross(c - a).try_normalize(0.0) {
                Some(n) => pad_box(bx, n.abs() * d),
                None => bx,
            }
        });
        prof!(t0, "fbvh");
        let (fbvh, va, fa) = (&self.fbvh, &self.vert_area, &self.face_area);
        let chunks = for_chunks(&mut self.workers, topo.n, |range, w| {
            for v in range {
                let p = x[v];
                w.hits.clear();
                let hits = &mut w.hits;
                fbvh.query(&Aabb::point(p), &mut w.stack, |f| hits.push(f));
                w.hits.sort_unstable();
                for &f in &w.hits {
                    let f = f as usize;
                    if topo.face_has(f, v as u32) {
                        continue;
                    }
                    let [a, b, c] = topo.faces[f];
                    if let Some(near) = vf_proximity(p, x[a as usize], x[b as usize], x[c as usize], d) {
                        w.pairs.push(pair(PairKind::VertexFace, [v as u32, a, b, c], near, va[v].min(fa[f])));
                    }
                }
            }
        });
        for w in &self.workers[..chunks] {
            out.extend_from_slice(&w.pairs);
        }

        prof!(t0, "vf");
        // Edge–edge: each closest point lies in the other edge's wedge
        // within `d`; `wedge[e]` bounds that region (see `wedge_pad`).
        let ne = topo.edges.len();
        self.wedge.resize(ne, Aabb::empty());
        let seq = ne < 4096;
        let wedge_of = |(e, wb): (usize, &mut Aabb)| {
            let [a, b] = topo.edges[e].map(|v| x[v as usize]);
            *wb = pad_box(Aabb::point(a).grow(b), wedge_pad(topo, x, e, d));
        };
        if seq {
            self.wedge.iter_mut().enumerate().for_each(wedge_of);
        } else {
            self.wedge.par_iter_mut().enumerate().for_each(wedge_of);
        }
        self.ebvh.update(ne, |e| {
            let [a, b] = topo.edges[e].map(|v| x[v as usize]);
            Aabb::point(a).grow(b)
        });
        prof!(t0, "wedge+ebvh");
        let (ebvh, wedge, ea) = (&self.ebvh, &self.wedge, &self.edge_area);
        let chunks = for_chunks(&mut self.workers, ne, |range, w| {
            for e in range {
                w.hits.clear();
                let hits = &mut w.hits;
                let [a0, a1] = topo.edges[e];
                let own = Aabb::point(x[a0 as usize]).grow(x[a1 as usize]);
                ebvh.query(&wedge[e], &mut w.stack, |g| {
                    if g as usize > e && own.overlaps(&wedge[g as usize]) {
                        hits.push(g);
                    }
                });
                w.hits.sort_unstable();
                for &g in &w.hits {
                    let g = g as usize;
                    if topo.edges_share(e, g) {
                        continue;
                    }
                    let [b0, b1] = topo.edges[g];
                    let Some(near) = ee_proximity(x[a0 as usize], x[a1 as usize], x[b0 as usize], x[b1 as usize], d) else {
                        continue;
                    };
                    // `near.normal` points from edge g toward edge e: e's
                    // faces must lie on its + side, g's on its − side.
                    if in_wedge(topo, x, e, near.normal) && in_wedge(topo, x, g, -near.normal) {
                        w.pairs.push(pair(PairKind::EdgeEdge, [a0, a1, b0, b1], near, ea[e].min(ea[g])));
                    }
                }
            }
        });
        for w in &self.workers[..chunks] {
            out.extend_from_slice(&w.pairs);
        }
        prof!(t0, "ee");
    }

    /// Face, vertex and edge areas at `x` (a third of each incident face for
    /// vertices and edges), gathered per element so the sums are
    /// deterministic.
    fn update_areas(&mut self, x: &[Vec3<f64>]) {
        let topo = &self.topo;
        self.face_area.resize(topo.faces.len(), 0.0);
        self.vert_area.resize(topo.n, 0.0);
        self.edge_area.resize(topo.edges.len(), 0.0);
        self.face_area.par_iter_mut().enumerate().with_min_len(1024).for_each(|(f, a)| {
            let [p, q, r] = topo.faces[f].map(|v| x[v as usize]);
            *a = 0.5 * (q - p).cross(r - p).norm();
        });
        let fa = &self.face_area;
        let third = 1.0 / 3.0;
        self.vert_area.par_iter_mut().enumerate().with_min_len(1024).for_each(|(v, a)| {
            let fs = &topo.vf[topo.vf_offsets[v] as usize..topo.vf_offsets[v + 1] as usize];
            *a = fs.iter().map(|&f| fa[f as usize]).sum::<f64>() * third;
        });
        self.edge_area.par_iter_mut().enumerate().with_min_len(1024).for_each(|(e, a)| {
            let fs = &topo.ef[topo.ef_offsets[e] as usize..topo.ef_offsets[e + 1] as usize];
            *a = fs.iter().map(|&f| fa[f as usize]).sum::<f64>() * third;
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
    /// 1. Up to [`PROJECTION_ROUNDS`] rounds of: continuous detection of all
    ///    vertex–face and edge–edge crossings (plus pairs ending within
    ///    `thickness`), then Gauss–Seidel inelastic projections that move the
    ///    pair's vertices along the contact normal (weighted by inverse mass,
    ///    so momentum is conserved) until the gap is `thickness`.
    /// 2. Then rigid impact zones until no crossing remains (see the
    ///    `zones` module: this always terminates, after at most `n − 1`
    ///    merges). Zones keep the gaps they had at `x0`, not `thickness`.
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
        if !(thickness >= 0.0) || !thickness.is_finite() {
            return crate::invalid!("resolve: thickness must be finite and >= 0, got {thickness}");
        }
        if let Some(i) = (0..n).find(|&i| !x0[i].is_finite() || !x1[i].is_finite()) {
            return crate::invalid!("resolve: vertex {i} has a non-finite position");
        }
        if let Some(i) = inv_mass.iter().position(|&w| !(w >= 0.0) || !w.is_finite()) {
            return crate::invalid!("resolve: inv_mass[{i}] = {} must be finite and >= 0", inv_mass[i]);
        }
        let mut stats = ResolveStats::default();
        let ne = self.topo.edges.len();
        if n == 0 || ne == 0 && self.topo.faces.is_empty() {
            return Ok(stats);
        }
        let edges = &self.topo.edges;
        let mean_edge = if ne > 0 {
            ordered_sum(ne, |e| (x0[edges[e][1] as usize] - x0[edges[e][0] as usize]).norm()) / ne as f64
        } else {
            0.0
        };
        let tol = CCD_TOL * if mean_edge > 0.0 { mean_edge } else { 1.0 };
        // Projections aim a little beyond contact even with zero thickness,
        // so a corrected pair is not found touching again.
        let target = thickness.max(10.0 * tol);

        self.dirty.clear();
        self.dirty.resize(n, true);
        for round in 0..PROJECTION_ROUNDS {
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
            self.zones.rigidify(x0, x1, inv_mass, |v| dirty[v as usize] = true);
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
        self.dirty_verts.clear();
        self.dirty_verts.extend((0..topo.n as u32).filter(|&v| dirty[v as usize]));
        if self.dirty_verts.is_empty() {
            return 0;
        }
        let full = self.dirty_verts.len() == topo.n;
        self.dirty_faces.clear();
        if !full {
            self.dirty_faces.extend(
                (0..topo.faces.len() as u32).filter(|&f| topo.faces[f as usize].iter().any(|&v| dirty[v as usize])),
            );
        }
        self.dirty_edges.clear();
        self.dirty_edges.extend(
            (0..topo.edges.len() as u32).filter(|&e| topo.edges[e as usize].iter().any(|&v| dirty[v as usize])),
        );

        let t0 = std::time::Instant::now();
        let pad = thickness.unwrap_or(0.0).max(tol);
        let swept = |v: u32| Aabb::point(x0[v as usize]).grow(x1[v as usize]);
        self.fbvh.update(topo.faces.len(), |f| {
            let [a, b, c] = topo.faces[f];
            swept(a).union(swept(b)).union(swept(c))
        });
        self.ebvh.update(topo.edges.len(), |e| {
            let [a, b] = topo.edges[e];
            swept(a).union(swept(b))
        });
        if !full {
            self.vbvh.update(topo.n, |v| swept(v as u32));
        }

        prof!(t0, "ccd refit");
        let narrow = Narrow {
            topo,
            x0,
            x1,
            tol,
            thickness,
            zone_of,
        };
        let (fbvh, vbvh, ebvh) = (&self.fbvh, &self.vbvh, &self.ebvh);
        let (dv, df, de) = (&self.dirty_verts, &self.dirty_faces, &self.dirty_edges);

        // (a) Dirty vertices against all faces.
        let chunks = for_chunks(&mut self.workers, dv.len(), |range, w| {
            for &v in &dv[range] {
                w.hits.clear();
                let hits = &mut w.hits;
                fbvh.query(&swept(v).padded(pad), &mut w.stack, |f| {
                    if !topo.face_has(f as usize, v) {
                        hits.push(f);
                    }
                });
                w.hits.sort_unstable();
                for &f in &w.hits {
                    let [a, b, c] = topo.faces[f as usize];
                    narrow.vertex_face([v, a, b, c], &mut w.contacts);
                }
            }
        });
        for w in &self.workers[..chunks] {
            self.contacts.extend_from_slice(&w.contacts);
        }
        prof!(t0, "ccd vf");
        // (b) Faces with a dirty vertex against clean vertices.
        let chunks = for_chunks(&mut self.workers, df.len(), |range, w| {
            for &f in &df[range] {
                let [a, b, c] = topo.faces[f as usize];
                w.hits.clear();
                let hits = &mut w.hits;
                let q = swept(a).union(swept(b)).union(swept(c)).padded(pad);
                vbvh.query(&q, &mut w.stack, |v| {
                    if !dirty[v as usize] && v != a && v != b && v != c {
                        hits.push(v);
                    }
                });
                w.hits.sort_unstable();
                for &v in &w.hits {
                    narrow.vertex_face([v, a, b, c], &mut w.contacts);
                }
            }
        });
        for w in &self.workers[..chunks] {
            self.contacts.extend_from_slice(&w.contacts);
        }
        // (c) Edges with a dirty vertex against all edges (each pair once).
        let chunks = for_chunks(&mut self.workers, de.len(), |range, w| {
            for &e in &de[range] {
                let [a, b] = topo.edges[e as usize];
                w.hits.clear();
                let hits = &mut w.hits;
                ebvh.query(&swept(a).union(swept(b)).padded(pad), &mut w.stack, |g| {
                    let [c, d] = topo.edges[g as usize];
                    let g_dirty = dirty[c as usize] || dirty[d as usize];
                    if (!g_dirty || g > e) && !topo.edges_share(e as usize, g as usize) {
                        hits.push(g);
                    }
                });
                w.hits.sort_unstable();
                for &g in &w.hits {
                    narrow.edge_edge(e, g, &mut w.contacts);
                }
            }
        });
        for w in &self.workers[..chunks] {
            self.contacts.extend_from_slice(&w.contacts);
        }
        prof!(t0, "ccd ee");
        self.contacts.iter().filter(|c| c.impact).count()
    }

    /// Number of pairs of triangles sharing no vertex that intersect at
    /// positions `x` (coplanar overlaps are not counted).
    ///
    /// # Panics
    /// If `x.len()` differs from the number of vertices.
    pub fn count_intersections(&mut self, x: &[Vec3<f64>]) -> usize {
        assert_eq!(x.len(), self.topo.n, "SelfCollision::count_intersections: x has the wrong length");
        let topo = &self.topo;
        let tri = |f: usize| topo.faces[f].map(|v| x[v as usize]);
        let tri_box = |f: usize| {
            let [a, b, c] = tri(f);
            Aabb::point(a).grow(b).grow(c)
        };
        self.fbvh.update(topo.faces.len(), tri_box);
        let fbvh = &self.fbvh;
        let chunks = for_chunks(&mut self.workers, topo.faces.len(), |range, w| {
            for f in range {
                let t = tri(f);
                let mut count = 0;
                fbvh.query(&tri_box(f), &mut w.stack, |g| {
                    let g = g as usize;
                    if g > f && !topo.faces[g].iter().any(|&v| topo.faces[f].contains(&v)) && triangles_intersect(t, tri(g)) {
                        count += 1;
                    }
                });
                w.count += count;
            }
        });
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

/// Per-axis padding of edge `e`'s box that contains every point within `d`
/// of the edge in its wedge: the directions `r ⊥ e` with `r · o_k ≥ 0` for
/// the outward in-plane directions `o_k` of its faces form a sector of
/// half-angle `ψ = (π − θ)/2` (`θ` the angle between `o_1, o_2`) about an
/// axis `c`, and a unit `r` within `ψ` of `±c` has `|r_i| ≤ |c_i| + sin ψ`.
/// Boundary and isolated edges get the full disk `d sqrt(1 − ê_i²)`.
fn wedge_pad(topo: &Topology, x: &[Vec3<f64>], e: usize, d: f64) -> Vec3<f64> {
    let [a, b] = topo.edges[e].map(|v| x[v as usize]);
    let Some(u) = (b - a).try_normalize(0.0) else {
        return Vec3::splat(d);
    };
    let full = Vec3::new(
        (1.0 - u.x * u.x).max(0.0).sqrt(),
        (1.0 - u.y * u.y).max(0.0).sqrt(),
        (1.0 - u.z * u.z).max(0.0).sqrt(),
    ) * d;
    let [c0, c1] = topo.opposite[e];
    if c0 == u32::MAX || c1 == u32::MAX {
        return full;
    }
    let outward = |c: u32| {
        let r = x[c as usize] - a;
        (u * r.dot(u) - r).try_normalize(0.0)
    };
    let (Some(o0), Some(o1)) = (outward(c0), outward(c1)) else {
        return full;
    };
    let Some(axis) = u.cross(o0 - o1).try_normalize(1e-6) else {
        return full;
    };
    let sin_psi = ((1.0 + o0.dot(o1)) * 0.5).max(0.0).sqrt();
    (axis.abs() * d + Vec3::splat(sin_psi * d)).component_min(full)
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
}

impl Narrow<'_> {
    #[inline]
    fn same_zone(&self, v: [u32; 4]) -> bool {
        self.zone_of.is_some_and(|z| {
            let r = z[v[0] as usize];
            v[1..].iter().all(|&u| z[u as usize] == r)
        })
    }

    /// Vertex `v[0]` against face `v[1..]`.
    #[inline]
    fn vertex_face(&self, v: [u32; 4], out: &mut Vec<Contact>) {
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
        let motion = (1..4).map(|k| (q[k] - p[k] - dp).norm_squared()).fold(0.0, f64::max).sqrt();
        let reach = self.thickness.unwrap_or(0.0).max(self.tol) + motion;
        // Cheap bound first: distance to the face's bounding sphere.
        let g = (p[1] + p[2] + p[3]) * (1.0 / 3.0);
        let r = (1..4).map(|k| (p[k] - g).norm_squared()).fold(0.0, f64::max).sqrt();
        if (p[0] - g).norm() - r > reach {
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
            out.push(thick_contact(v, near, &p));
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
        let (ma, mb) = ((p[0] + p[1]) * 0.5, (p[2] + p[3]) * 0.5);
        if (ma - mb).norm() - 0.5 * ((p[1] - p[0]).norm() + (p[3] - p[2]).norm()) > reach {
            return;
        }
        let (s, t) = geom::closest_on_segments(p[0], p[1], p[2], p[3]);
        let start = ((p[0] + (p[1] - p[0]) * s) - (p[2] + (p[3] - p[2]) * t)).norm();
        let lower = start - motion;
        if lower <= self.tol
            && let Some(hit) = ccd::edge_edge(p[0], p[1], p[2], p[3], q[0], q[1], q[2], q[3], self.tol)
        {
            out.push(Contact {
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
            out.push(thick_contact(v, near, &p));
        }
    }
}

/// A pair ending within the thickness, its normal flipped if needed so that
/// the first side started on the positive side (if it ended on the other
/// side, it crossed, and the projection pushes it back).
#[inline]
fn thick_contact(v: [u32; 4], near: Near, start: &[Vec3<f64>; 4]) -> Contact {
    let gap0: f64 = (0..4).map(|k| near.weights[k] * near.normal.dot(start[k])).sum();
    Contact {
        vertices: v,
        weights: near.weights,
        normal: if gap0 < 0.0 { -near.normal } else { near.normal },
        impact: false,
    }
}
