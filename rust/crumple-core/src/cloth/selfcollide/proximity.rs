//! The proximity search of spec §6.1 step 2 (§6.3): vertex–face and
//! edge–edge pairs closer than the repulsion distance, culled by normal
//! cones and wedges, with their weights, normals and area weights; and the
//! broad-phase helpers the fail-safe shares.

use super::*;

impl SelfCollision {
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
}

/// Fills `out[i] = f(i)` in parallel (sequentially for short slices).
pub(super) fn par_fill<T: Send, F: Fn(usize) -> T + Sync + Send>(out: &mut [T], f: F) {
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
pub(super) fn tree_pairs<K, P>(
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
pub(super) struct EdgeLeaf {
    verts: [u32; 2],
    ends: [Vec3<f64>; 2],
    cone: Cone,
}

/// Plane data of a face for the vertex–face proximity filter.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FaceGeom {
    pub(super) centre: Vec3<f64>,
    /// Unit normal, zero for a degenerate face.
    pub(super) normal: Vec3<f64>,
    /// Squared radius of the ball about `centre` holding the face.
    pub(super) radius2: f64,
}

impl FaceGeom {
    pub(super) fn new([a, b, c]: [Vec3<f64>; 3]) -> Self {
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
pub(super) struct Cone {
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
pub(super) fn edge_centre(topo: &Topology, x: &[Vec3<f64>], e: usize) -> Vec3<f64> {
    let [a, b] = topo.edges[e];
    (x[a as usize] + x[b as usize]) * 0.5
}

#[inline]
pub(super) fn edge_box(topo: &Topology, x: &[Vec3<f64>], e: usize) -> Aabb {
    let [a, b] = topo.edges[e].map(|v| x[v as usize]);
    Aabb::point(a).grow(b)
}

pub(super) use crate::geometry::csr;

#[inline]
pub(super) fn pad_box(b: Aabb, pad: Vec3<f64>) -> Aabb {
    Aabb {
        lo: b.lo - pad,
        hi: b.hi + pad,
    }
}

#[inline]
pub(super) fn pair(kind: PairKind, vertices: [u32; 4], near: Near, area: f64) -> ProximityPair {
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
pub(super) fn in_wedge(topo: &Topology, x: &[Vec3<f64>], e: usize, dir: Vec3<f64>) -> bool {
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
pub(super) fn wedge_box(topo: &Topology, x: &[Vec3<f64>], e: usize, d: f64) -> (Aabb, Cone) {
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
