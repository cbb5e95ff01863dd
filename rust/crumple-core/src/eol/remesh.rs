//! The contact-conforming part of the remesher (spec eol_cloth §4.3 test 1,
//! §4.4, §5.2 step 3, §5.3 step 1, §5.5): cloth edges that cross a box's
//! sharp edge are split there, the new vertex is EOL on that edge (its
//! world position snapped just inside the box, its material coordinate
//! interpolated from the cloth), short non-conformal edges at a new EOL
//! vertex are collapsed into it, and EOL vertices no longer inside the
//! obstacle's contact band are released with their world velocity kept.
//! Consecutive crossings of one triangle connect by themselves: splitting an
//! edge joins the new vertex to the opposite corners, so the second split
//! of the same triangle creates the edge between the two crossing vertices.
//! Not written yet: the face (corner/point) insertions, the conformal
//! collapses, ill-conditioned splits and the ARCSim sizing remesh (§5.3
//! steps 2–3, §5.6).

use super::constraints::Feature;
use super::element::Mat2d;
use super::obstacle::{BoxEdge, BoxObstacle};
use super::system::Mesh;
use crate::geometry::MeshTopology;
use crate::geometry::closest::closest_on_segments;
use crate::math::Vec3;
use crate::{Error, Result};

/// What one remesh pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemeshReport {
    /// EOL vertices inserted on box edges.
    pub created: usize,
    /// EOL vertices released (lift-off).
    pub released: usize,
    /// Short edges collapsed into new EOL vertices.
    pub collapsed: usize,
}

/// The mutable per-vertex state the remesher keeps in step with the mesh.
pub struct Cloth<'a> {
    /// The mesh.
    pub mesh: &'a mut Mesh,
    /// World velocities.
    pub xd: &'a mut Vec<Vec3<f64>>,
    /// Material velocities.
    pub ud: &'a mut Vec<Mat2d>,
    /// Features of EOL vertices.
    pub features: &'a mut Vec<Option<Feature>>,
}

/// F of the first face around vertex i (for the world velocity of a
/// released vertex, spec §5.5; the spec's angle-weighted mean differs only
/// where the faces around the vertex disagree, which a released vertex no
/// longer bent over a feature hardly does).
fn vertex_grad(m: &Mesh, i: usize) -> Option<super::element::Grad> {
    let f = m.faces.iter().find(|f| f.contains(&(i as u32)))?;
    super::element::deformation_gradient(&f.map(|k| m.x[k as usize]), &f.map(|k| m.u[k as usize]))
        .map(|(g, _)| g)
}

/// Spec §4.3 test 1 for one box edge and the cloth segment a→b: the cloth
/// parameter `w` and the point on the box edge, when the segment passes
/// within 2·thr of the edge, is not within 2° of parallel to it, and goes
/// from over one of the edge's faces to over the other.
fn crossing(e: &BoxEdge, xa: Vec3<f64>, xb: Vec3<f64>, thr: f64) -> Option<(f64, Vec3<f64>)> {
    let d = xb - xa;
    let len = d.norm();
    if len <= 0.0 || (d.dot(e.tangent) / len).abs() > 2f64.to_radians().cos() {
        return None;
    }
    let (u, w) = closest_on_segments(e.ends[0], e.ends[1], xa, xb);
    let on_edge = e.ends[0] + (e.ends[1] - e.ends[0]) * u;
    if (xa + d * w - on_edge).norm() >= 2.0 * thr {
        return None;
    }
    // The segment must wrap around the edge: one end over the first face
    // (further out along n_1 than along n_2), the other over the second. A
    // segment resting on one face next to the edge never does, though it can
    // cross that face's plane by rounding ([D]: the spec's "pierces a face
    // rectangle" test, which such a segment passes).
    let side = |x: Vec3<f64>| {
        let r = x - e.ends[0];
        e.normals[0].dot(r) > e.normals[1].dot(r)
    };
    (side(xa) != side(xb)).then_some((w, on_edge))
}

impl Cloth<'_> {
    /// Per vertex: on the border, and (for border vertices) a cloth corner
    /// (its two border edges not collinear in material space).
    fn border_vertices(&self) -> (Vec<bool>, Vec<bool>) {
        // Ordered, so the first border edge found at a vertex is the same on
        // every run (a HashMap's order changes from run to run).
        let mut count = std::collections::BTreeMap::new();
        for f in &self.mesh.faces {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                *count.entry((a.min(b), a.max(b))).or_insert(0u32) += 1;
            }
        }
        let n = self.mesh.x.len();
        let mut border = vec![false; n];
        let mut dirs: Vec<Vec<Mat2d>> = vec![Vec::new(); n];
        for ((a, b), c) in count {
            if c == 1 {
                let (ua, ub) = (self.mesh.u[a as usize], self.mesh.u[b as usize]);
                let d = [ub[0] - ua[0], ub[1] - ua[1]];
                for k in [a, b] {
                    border[k as usize] = true;
                    dirs[k as usize].push(d);
                }
            }
        }
        let corner = dirs
            .iter()
            .map(|d| match d.as_slice() {
                [p, q] => {
                    let cross = p[0] * q[1] - p[1] * q[0];
                    cross.abs() > 1e-9 * p[0].hypot(p[1]) * q[0].hypot(q[1])
                }
                [] => false,
                _ => true,
            })
            .collect();
        (border, corner)
    }

    /// Splits edge (a, b) at parameter w; the new vertex is EOL on
    /// `feature` at world position `x`.
    fn split(&mut self, a: u32, b: u32, w: f64, x: Vec3<f64>, feature: Feature) {
        let m = &mut *self.mesh;
        let v = m.x.len() as u32;
        let (ua, ub) = (m.u[a as usize], m.u[b as usize]);
        m.x.push(x);
        m.u.push([ua[0] + w * (ub[0] - ua[0]), ua[1] + w * (ub[1] - ua[1])]);
        m.eol.push(true);
        // Velocity transfer (spec §5.7, option "zero_eulerian"): the world
        // velocity interpolated, no Eulerian part (the end points are
        // Lagrangian: new EOL vertices are never made on an EOL edge).
        let (va, vb) = (self.xd[a as usize], self.xd[b as usize]);
        self.xd.push(va + (vb - va) * w);
        self.ud.push([0.0, 0.0]);
        self.features.push(Some(feature));
        let mut added = Vec::new();
        for f in m.faces.iter_mut() {
            for k in 0..3 {
                let (i, j, c) = (f[k], f[(k + 1) % 3], f[(k + 2) % 3]);
                if (i == a && j == b) || (i == b && j == a) {
                    *f = [i, v, c];
                    added.push([v, j, c]);
                    break;
                }
            }
        }
        m.faces.extend(added);
    }

    /// Collapses vertex `w` into `v` (spec §5.3 step 1: always toward the
    /// EOL vertex) unless a face would turn over or vanish in material
    /// space. Returns whether it did.
    fn collapse(&mut self, w: u32, v: u32) -> bool {
        let m = &mut *self.mesh;
        let area = |u: &[Mat2d], f: [u32; 3]| {
            let [a, b, c] = f.map(|k| u[k as usize]);
            0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
        };
        let mut next = Vec::with_capacity(m.faces.len());
        for f in &m.faces {
            if !f.contains(&w) {
                next.push(*f);
                continue;
            }
            if f.contains(&v) {
                continue; // the faces on the collapsed edge go
            }
            let g = f.map(|k| if k == w { v } else { k });
            if area(&m.u, g) <= 1e-12 {
                return false;
            }
            next.push(g);
        }
        m.faces = next;
        true
    }

    /// Drops vertices no face uses; every per-vertex array follows.
    fn compact(&mut self) {
        let m = &mut *self.mesh;
        let n = m.x.len();
        let mut used = vec![false; n];
        for f in &m.faces {
            for &k in f {
                used[k as usize] = true;
            }
        }
        let mut map = vec![u32::MAX; n];
        let mut next = 0u32;
        for (k, u) in used.iter().enumerate() {
            if *u {
                map[k] = next;
                next += 1;
            }
        }
        fn keep<T>(v: &mut Vec<T>, used: &[bool]) {
            let mut k = 0;
            v.retain(|_| {
                k += 1;
                used[k - 1]
            });
        }
        keep(&mut m.x, &used);
        keep(&mut m.u, &used);
        keep(&mut m.eol, &used);
        keep(self.xd, &used);
        keep(self.ud, &used);
        keep(self.features, &used);
        for f in &mut m.faces {
            *f = f.map(|k| map[k as usize]);
        }
    }

    /// One contact-conforming pass against `boxes` with threshold `thr`
    /// (m) and collapse length `tau` (material m): release, insert,
    /// collapse, compact, rebuild the hinges.
    pub fn remesh(&mut self, boxes: &[BoxObstacle], thr: f64, tau: f64) -> Result<RemeshReport> {
        let mut report = RemeshReport::default();
        // Lift-off (§5.5): an EOL vertex no longer inside a box's contact band.
        for i in 0..self.mesh.x.len() {
            if !self.mesh.eol[i] {
                continue;
            }
            let x = self.mesh.x[i];
            let held = boxes
                .iter()
                .any(|b| b.nearest_face(x).is_some_and(|(_, d)| d <= 5.0 * thr));
            if !held {
                if let Some(f) = vertex_grad(self.mesh, i) {
                    self.xd[i] -= f.apply(self.ud[i]);
                }
                self.ud[i] = [0.0, 0.0];
                self.mesh.eol[i] = false;
                self.features[i] = None;
                report.released += 1;
            }
        }
        // Insertion (§5.2 step 3, box edge ↔ cloth edge), each cloth edge once.
        let mut edges: Vec<(u32, u32)> = self
            .mesh
            .faces
            .iter()
            .flat_map(|f| (0..3).map(move |k| (f[k].min(f[(k + 1) % 3]), f[k].max(f[(k + 1) % 3]))))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        for b in boxes {
            for e in b.edges() {
                for &(p, q) in &edges {
                    let (pi, qi) = (p as usize, q as usize);
                    if self.mesh.eol[pi] || self.mesh.eol[qi] {
                        continue;
                    }
                    let (xa, xb) = (self.mesh.x[pi], self.mesh.x[qi]);
                    let Some((w, on_edge)) = crossing(&e, xa, xb, thr) else {
                        continue;
                    };
                    // Still an edge of the mesh (an earlier split this pass may have cut it).
                    if !self.mesh.faces.iter().any(|f| f.contains(&p) && f.contains(&q)) {
                        continue;
                    }
                    let x = on_edge - e.normal() * (0.1 * thr);
                    // A crossing within τ of an end point makes that end point
                    // EOL instead (what the split and the collapse of the short
                    // edge into it would give, without the zero-length edge).
                    let (ua, ub) = (self.mesh.u[pi], self.mesh.u[qi]);
                    let len = (ub[0] - ua[0]).hypot(ub[1] - ua[1]);
                    let near = if w * len < tau {
                        Some(p)
                    } else if (1.0 - w) * len < tau {
                        Some(q)
                    } else {
                        None
                    };
                    match near {
                        Some(k) => {
                            let k_us = k as usize;
                            self.mesh.x[k_us] = x;
                            self.mesh.eol[k_us] = true;
                            self.features[k_us] = Some(e.feature());
                            self.ud[k_us] = [0.0, 0.0];
                        }
                        None => {
                            self.split(p, q, w, x, e.feature());
                        }
                    }
                    report.created += 1;
                }
            }
        }
        // Collapse short non-conformal edges into EOL vertices (§5.3 step 1;
        // the material slides through EOL vertices, so their one-rings shrink
        // on one side).
        let (border, corner) = self.border_vertices();
        let eol_now: Vec<u32> = (0..self.mesh.x.len() as u32)
            .filter(|&k| self.mesh.eol[k as usize])
            .collect();
        for &v in &eol_now {
            let mut nbrs: Vec<u32> = self
                .mesh
                .faces
                .iter()
                .filter(|f| f.contains(&v))
                .flat_map(|f| f.iter().copied())
                .filter(|&k| k != v)
                .collect();
            nbrs.sort_unstable();
            nbrs.dedup();
            for w in nbrs {
                let (uv, uw) = (self.mesh.u[v as usize], self.mesh.u[w as usize]);
                let len = (uv[0] - uw[0]).hypot(uv[1] - uw[1]);
                // Border–interior edges never collapse; a border vertex
                // that an EOL vertex slides up to along the border does (the
                // border stays straight), cloth corners never.
                let (wb, vb) = (border[w as usize], border[v as usize]);
                let allowed = !wb || (vb && !corner[w as usize]);
                if len < tau && !self.mesh.eol[w as usize] && allowed && self.collapse(w, v) {
                    report.collapsed += 1;
                }
            }
        }
        if report != RemeshReport::default() {
            self.compact();
            let topo = MeshTopology::build(self.mesh.x.len(), &self.mesh.faces)
                .map_err(|e| Error::Solver(format!("the remeshed cloth is not a manifold: {e}")))?;
            self.mesh.hinges = topo.hinges().to_vec();
        }
        Ok(report)
    }
}
