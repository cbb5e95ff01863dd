//! The dynamic remesh after the contact-conforming pass (spec eol_cloth
//! §5.6, ARCSim v0.3.1 in material space, written here: ARCSim's licence is
//! non-commercial): a sizing tensor per face from the world curvature, the
//! gradient of the vertex normals and the velocity gradient, per vertex the
//! area-weighted mean, and the edge metric `s(e) = √(½(ΔuᵀS₀Δu + ΔuᵀS₁Δu))`;
//! then flips (anisotropic Delaunay in the metric), splits of every edge
//! with `s > 1`, worst first, and collapses while every new edge has
//! `s ≤ 0.9`. With the EOL restrictions: conformal and border edges never
//! flip; EOL, border, cloth-corner and scripted vertices are never
//! collapsed away; a conformal edge (two EOL vertices on one feature) that
//! splits gives an EOL vertex on that feature with `ẋ` and `Ẋ`
//! interpolated (§5.7).
//!
//! [D] Not here: ARCSim's compression metric (`refine_compression`), and
//! its obstacle sizing; a face's metric is the tensor max of the three
//! terms taken in the principal axes of their sum.

use super::element::deformation_gradient;
use super::element::{Mat2d, signed_area};
use super::remesh::Cloth;
use super::system::{Mesh, edge_buckets};
use crate::math::Vec3;
use crate::{Error, Result};
use rayon::prelude::*;

/// The sizing parameters (spec §8.1 defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sizing {
    /// Smallest edge, material m.
    pub size_min: f64,
    /// Largest edge, material m.
    pub size_max: f64,
    /// Smallest aspect ratio of the metric (its eigenvalue ratio's root).
    pub aspect_min: f64,
    /// The bend per edge (rad) above which an edge is split.
    pub refine_angle: f64,
    /// The velocity difference per edge (m/s) above which an edge is split.
    pub refine_velocity: f64,
}

impl Default for Sizing {
    fn default() -> Self {
        Self {
            size_min: 0.015,
            size_max: 0.03,
            aspect_min: 0.2,
            refine_angle: 0.3,
            refine_velocity: 0.5,
        }
    }
}

impl Sizing {
    /// Checks the parameters (all finite and positive, `size_min ≤ size_max`,
    /// `aspect_min ≤ 1`).
    pub fn validate(&self) -> Result<()> {
        let all = [
            ("size_min", self.size_min),
            ("size_max", self.size_max),
            ("aspect_min", self.aspect_min),
            ("refine_angle", self.refine_angle),
            ("refine_velocity", self.refine_velocity),
        ];
        for (name, v) in all {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::InvalidInput(format!(
                    "sizing {name} must be finite and > 0; got {v}"
                )));
            }
        }
        if self.size_min > self.size_max {
            return Err(Error::InvalidInput(format!(
                "sizing size_min ({}) must not exceed size_max ({})",
                self.size_min, self.size_max
            )));
        }
        if self.aspect_min > 1.0 {
            return Err(Error::InvalidInput(format!(
                "sizing aspect_min must be at most 1; got {}",
                self.aspect_min
            )));
        }
        Ok(())
    }
}

/// A symmetric 2×2 tensor `[[a, b], [b, c]]` as `[a, b, c]`.
pub type Sym2 = [f64; 3];

fn quad(s: &Sym2, d: Mat2d) -> f64 {
    s[0] * d[0] * d[0] + 2.0 * s[1] * d[0] * d[1] + s[2] * d[1] * d[1]
}

/// Eigenvalues (ascending) and the unit eigenvector of the larger.
fn eig(s: &Sym2) -> (f64, f64, Mat2d) {
    let (m, d) = (
        0.5 * (s[0] + s[2]),
        (0.25 * (s[0] - s[2]).powi(2) + s[1] * s[1]).sqrt(),
    );
    let (lo, hi) = (m - d, m + d);
    // (b, hi − a) or (hi − c, b): whichever is longer (both vanish only
    // for a multiple of I, where any direction is one).
    let (p, q) = ([s[1], hi - s[0]], [hi - s[2], s[1]]);
    let v = if p[0].hypot(p[1]) >= q[0].hypot(q[1]) {
        p
    } else {
        q
    };
    let n = v[0].hypot(v[1]);
    let v = if n > 0.0 { [v[0] / n, v[1] / n] } else { [1.0, 0.0] };
    (lo, hi, v)
}

fn from_eig(l_major: f64, l_minor: f64, v: Mat2d) -> Sym2 {
    let w = [-v[1], v[0]];
    [
        l_major * v[0] * v[0] + l_minor * w[0] * w[0],
        l_major * v[0] * v[1] + l_minor * w[0] * w[1],
        l_major * v[1] * v[1] + l_minor * w[1] * w[1],
    ]
}

/// The tensor max of `terms` [D]: in the principal axes of their sum, each
/// axis takes the largest of the terms' quadratic forms along it.
fn tensor_max(terms: &[Sym2]) -> Sym2 {
    let sum = terms
        .iter()
        .fold([0.0; 3], |a, t| [a[0] + t[0], a[1] + t[1], a[2] + t[2]]);
    let (_, _, v) = eig(&sum);
    let w = [-v[1], v[0]];
    let major = terms.iter().map(|t| quad(t, v)).fold(0.0, f64::max);
    let minor = terms.iter().map(|t| quad(t, w)).fold(0.0, f64::max);
    from_eig(major, minor, v)
}

/// `AᵀA` of a 3×2 matrix given by its columns.
fn gram(c: [Vec3<f64>; 2]) -> Sym2 {
    [c[0].dot(c[0]), c[0].dot(c[1]), c[1].dot(c[1])]
}

/// `[p_j − p_i, p_k − p_i]·D⁻¹` with `D⁻¹ = [[d00, d01], [d10, d11]]`:
/// the gradient in material space of a field given at the corners.
fn gradient(p: [Vec3<f64>; 3], dinv: [[f64; 2]; 2]) -> [Vec3<f64>; 2] {
    let (e1, e2) = (p[1] - p[0], p[2] - p[0]);
    [
        e1 * dinv[0][0] + e2 * dinv[1][0],
        e1 * dinv[0][1] + e2 * dinv[1][1],
    ]
}

/// The mesh's edges `(a, b)` with `a < b`, sorted, each with its one or two
/// faces (`u32::MAX` for none), in index order (from
/// [`edge_buckets`]'s counting sort: the remesh builds it several times a
/// step).
fn edge_table(faces: &[[u32; 3]]) -> Vec<((u32, u32), [u32; 2])> {
    let (start, slot) = edge_buckets(faces);
    let mut out: Vec<((u32, u32), [u32; 2])> = Vec::with_capacity(slot.len() / 2 + 1);
    for (a, w) in start.windows(2).enumerate() {
        for &(b, fi) in &slot[w[0] as usize..w[1] as usize] {
            let e = (a as u32, b);
            match out.last_mut() {
                Some((last, fs)) if *last == e => fs[1] = fi,
                _ => out.push((e, [fi, u32::MAX])),
            }
        }
    }
    out
}

fn find_edge(table: &[((u32, u32), [u32; 2])], a: u32, b: u32) -> Option<usize> {
    table.binary_search_by_key(&(a.min(b), a.max(b)), |e| e.0).ok()
}

/// The (unnormalized) world normal of face `f`.
fn face_normal(x: &[Vec3<f64>], f: [u32; 3]) -> Vec3<f64> {
    let [a, b, c] = f.map(|k| x[k as usize]);
    (b - a).cross(c - a)
}

/// The material's world velocity at vertex `i` seen from face `f` (spec
/// §5.7): `ẋ − F Ẋ` with that face's F at an EOL vertex (the faces around
/// a fold disagree on F), `ẋ` elsewhere.
fn world_velocity(m: &Mesh, xd: &[Vec3<f64>], ud: &[Mat2d], i: usize, f: [u32; 3]) -> Vec3<f64> {
    if !m.eol[i] {
        return xd[i];
    }
    match deformation_gradient(&f.map(|k| m.x[k as usize]), &f.map(|k| m.u[k as usize])) {
        Some((g, _)) => xd[i] - g.apply(ud[i]),
        None => xd[i],
    }
}

/// Per face, the sizing tensor (spec §5.6), clamped: eigenvalues in
/// `[1/size_max², 1/size_min²]`, the smaller raised to `aspect_min²` of the
/// larger. `v` holds per face its corners' world velocities (m/s).
pub fn face_sizing(
    x: &[Vec3<f64>],
    u: &[Mat2d],
    faces: &[[u32; 3]],
    v: &[[Vec3<f64>; 3]],
    p: &Sizing,
) -> Vec<Sym2> {
    let normal = |f: &[u32; 3]| face_normal(x, *f);
    // World dihedral angle per interior edge, and area-weighted vertex normals.
    // The per-face maps run on the thread pool (the sizing remesh runs
    // alone on the step's critical path); each item is computed as it
    // would be sequentially and collected in order, so the result does
    // not depend on the thread count.
    let unit: Vec<Vec3<f64>> = faces.par_iter().map(|f| normal(f).normalize_or_zero()).collect();
    let mut vn = vec![Vec3::zero(); x.len()];
    for f in faces {
        let n = normal(f);
        for &k in f {
            vn[k as usize] += n;
        }
    }
    let vn: Vec<Vec3<f64>> = vn.into_iter().map(|n| n.normalize_or_zero()).collect();
    let table = edge_table(faces);
    let dihedral: Vec<f64> = table
        .par_iter()
        .map(|(_, [f, g])| {
            if *g == u32::MAX {
                0.0
            } else {
                unit[*f as usize].dot(unit[*g as usize]).clamp(-1.0, 1.0).acos()
            }
        })
        .collect();
    let theta = |a: u32, b: u32| find_edge(&table, a, b).map_or(0.0, |i| dihedral[i]);
    let (lmin, lmax) = (1.0 / (p.size_max * p.size_max), 1.0 / (p.size_min * p.size_min));
    faces
        .par_iter()
        .zip(v)
        .map(|(f, vf)| {
            let uf = f.map(|k| u[k as usize]);
            let area = signed_area(&uf);
            if area <= 0.0 {
                return [lmax, 0.0, lmax];
            }
            let d = [
                [uf[1][0] - uf[0][0], uf[2][0] - uf[0][0]],
                [uf[1][1] - uf[0][1], uf[2][1] - uf[0][1]],
            ];
            let det = d[0][0] * d[1][1] - d[0][1] * d[1][0];
            let dinv = [[d[1][1] / det, -d[0][1] / det], [-d[1][0] / det, d[0][0] / det]];
            // Curvature (ARCSim's Sw1 in material space): the discrete shape
            // operator Σₑ θₑ ℓₑ tₑtₑᵀ / (2A) over the face's edges, tₑ the unit
            // in-plane normal of edge e; squared, per refine_angle².
            let mut curv = [0.0; 3];
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                let e = [
                    u[b as usize][0] - u[a as usize][0],
                    u[b as usize][1] - u[a as usize][1],
                ];
                let len = e[0].hypot(e[1]);
                if len <= 0.0 {
                    continue;
                }
                let t = [e[1] / len, -e[0] / len];
                let w = theta(a, b) * len / (2.0 * area);
                curv = [
                    curv[0] + w * t[0] * t[0],
                    curv[1] + w * t[0] * t[1],
                    curv[2] + w * t[1] * t[1],
                ];
            }
            let curv2 = [
                curv[0] * curv[0] + curv[1] * curv[1],
                curv[1] * (curv[0] + curv[2]),
                curv[1] * curv[1] + curv[2] * curv[2],
            ];
            let ra2 = p.refine_angle * p.refine_angle;
            let rv2 = p.refine_velocity * p.refine_velocity;
            let dn = gram(gradient(f.map(|k| vn[k as usize]), dinv));
            let dv = gram(gradient(*vf, dinv));
            let s = tensor_max(&[curv2.map(|c| c / ra2), dn.map(|c| c / ra2), dv.map(|c| c / rv2)]);
            let (lo, hi, dir) = eig(&s);
            let hi = hi.clamp(lmin, lmax);
            let lo = lo.clamp(lmin, lmax).max(p.aspect_min * p.aspect_min * hi);
            from_eig(hi, lo, dir)
        })
        .collect()
}

/// Per vertex, the material-area-weighted mean of the incident faces'
/// sizing (spec §5.6).
pub fn vertex_sizing(n: usize, u: &[Mat2d], faces: &[[u32; 3]], face: &[Sym2]) -> Vec<Sym2> {
    let mut s = vec![[0.0; 3]; n];
    let mut w = vec![0.0; n];
    for (f, sf) in faces.iter().zip(face) {
        let a = signed_area(&f.map(|k| u[k as usize])).max(0.0);
        for &k in f {
            let k = k as usize;
            s[k] = [s[k][0] + a * sf[0], s[k][1] + a * sf[1], s[k][2] + a * sf[2]];
            w[k] += a;
        }
    }
    s.iter()
        .zip(&w)
        .map(|(s, &w)| if w > 0.0 { s.map(|c| c / w) } else { *s })
        .collect()
}

/// The edge metric `s(e)` (spec §5.6).
pub fn edge_metric(u: &[Mat2d], s: &[Sym2], a: u32, b: u32) -> f64 {
    let (ua, ub) = (u[a as usize], u[b as usize]);
    let d = [ub[0] - ua[0], ub[1] - ua[1]];
    (0.5 * (quad(&s[a as usize], d) + quad(&s[b as usize], d))).sqrt()
}

/// What one dynamic remesh did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdaptReport {
    /// Edges split.
    pub split: usize,
    /// Edges collapsed.
    pub collapsed: usize,
    /// Edges flipped.
    pub flipped: usize,
}

impl std::ops::AddAssign for AdaptReport {
    fn add_assign(&mut self, o: Self) {
        self.split += o.split;
        self.collapsed += o.collapsed;
        self.flipped += o.flipped;
    }
}

impl Cloth<'_> {
    /// Spec §5.6 on this cloth: flips, splits, flips, collapses. Returns
    /// what it did; the caller compacts and rebuilds the hinges.
    pub fn adapt(&mut self, p: &Sizing) -> AdaptReport {
        let mut report = AdaptReport::default();
        let s = self.vertex_sizes(p);
        let mut s = s;
        report.flipped += self.flip_pass(&s);
        // Splits, worst first; a split vertex takes the mean of its ends'
        // sizing. Capped so one step cannot run away (ARCSim has no cap): a
        // cloth of equilateral faces of edge size_min has area/(0.433·size_min²)
        // faces, and each split adds two; twice that is the most a pass makes.
        let total: f64 = self
            .mesh
            .faces
            .iter()
            .map(|f| signed_area(&f.map(|k| self.mesh.u[k as usize])).max(0.0))
            .sum();
        // … and at most 4F + 10⁴ per pass whatever size_min (a split costs O(F)).
        let cap = ((2.0 * total / (0.433 * p.size_min * p.size_min)).min(1e6) as usize
            + self.mesh.faces.len())
        .min(4 * self.mesh.faces.len() + 10_000);
        let (split, flipped) = self.split_sweeps(&mut s, cap);
        report.split += split;
        report.flipped += flipped;
        report.flipped += self.flip_pass(&s);
        // Collapses until none is left (a few sweeps: each removes at most
        // one vertex per edge it looks at), flipping after each.
        // Collapses remove interior vertices only: the border flags hold.
        let (border, _) = self.border_vertices();
        for _ in 0..8 {
            let c = self.collapse_pass(&s, p, &border);
            report.collapsed += c;
            if c == 0 {
                break;
            }
            report.flipped += self.flip_pass(&s);
        }
        report
    }

    fn vertex_sizes(&self, p: &Sizing) -> Vec<Sym2> {
        let m = &*self.mesh;
        // The material's world velocity (spec §5.7), each face with its own F.
        let (xd, ud) = (&*self.xd, &*self.ud);
        let w: Vec<[Vec3<f64>; 3]> = m
            .faces
            .par_iter()
            .map(|&f| f.map(|k| world_velocity(m, xd, ud, k as usize, f)))
            .collect();
        let face = face_sizing(&m.x, &m.u, &m.faces, &w, p);
        vertex_sizing(m.x.len(), &m.u, &m.faces, &face)
    }

    /// Splits edge (a, b) at its middle: a conformal edge (both ends EOL
    /// on one feature) gives an EOL vertex on that feature with `ẋ` and `Ẋ`
    /// interpolated (§5.7); any other a Lagrangian vertex with the
    /// material's world velocity interpolated.
    fn split_mid(&mut self, a: u32, b: u32) -> u32 {
        let (ai, bi) = (a as usize, b as usize);
        let m = &*self.mesh;
        let conformal =
            m.eol[ai] && m.eol[bi] && self.features[ai].is_some() && self.features[ai] == self.features[bi];
        let x = (m.x[ai] + m.x[bi]) * 0.5;
        // The old enclosing face (spec §5.7): one on the edge; both lie on
        // one side of any feature the ends are on.
        let face = m.faces.iter().copied().find(|f| f.contains(&a) && f.contains(&b));
        let w = face.map_or((self.xd[ai] + self.xd[bi]) * 0.5, |f| {
            (world_velocity(m, self.xd, self.ud, ai, f) + world_velocity(m, self.xd, self.ud, bi, f)) * 0.5
        });
        let feature = if conformal { self.features[ai] } else { None };
        let (da, db) = (self.ud[ai], self.ud[bi]);
        let v = self.split(a, b, 0.5, x, feature);
        let vi = v as usize;
        if self.mesh.eol[vi] {
            // A conformal split: ẋ (set by `split`) and Ẋ interpolated.
            self.ud[vi] = [0.5 * (da[0] + db[0]), 0.5 * (da[1] + db[1])];
        } else {
            // Lagrangian (also a conformal split held Lagrangian this step).
            self.xd[vi] = w;
        }
        v
    }

    /// Spec §5.3 step 0: one sweep of the ARCSim flip test (§5.6) over the
    /// edges of triangles at an EOL vertex, in material space (the
    /// identity metric: the contact pass has no sizing field). Returns the
    /// count flipped.
    pub(super) fn flip_near_eol(&mut self) -> usize {
        if !self.mesh.eol.iter().any(|&e| e) {
            return 0;
        }
        let identity = vec![[1.0, 0.0, 1.0]; self.mesh.x.len()];
        self.flip_where(&identity, true)
    }

    /// [`Cloth::refine_length`]: splits every edge longer than `len`
    /// (material m) at its middle, the split loop of §5.6 in the metric
    /// `I/len²` (`split_sweeps`). Capped at 4F + 10⁴ splits. Returns the
    /// count.
    pub(super) fn refine(&mut self, len: f64) -> usize {
        if len.is_nan() || len <= 0.0 || len.is_infinite() {
            return 0;
        }
        // Most steps have no such edge: look before building the edge table.
        let u = &self.mesh.u;
        let long = |a: u32, b: u32| {
            let (p, q) = (u[a as usize], u[b as usize]);
            (p[0] - q[0]).hypot(p[1] - q[1]) > len
        };
        if !self
            .mesh
            .faces
            .iter()
            .any(|f| long(f[0], f[1]) || long(f[1], f[2]) || long(f[2], f[0]))
        {
            return 0;
        }
        let q = 1.0 / (len * len);
        let mut s = vec![[q, 0.0, q]; self.mesh.x.len()];
        let cap = 4 * self.mesh.faces.len() + 10_000;
        self.split_sweeps(&mut s, cap).0
    }

    /// ARCSim's split loop (spec §5.6 step 2) in the vertex metric `s`:
    /// sweeps that split every edge with `s(e) > 1` at its middle, worst
    /// first, one split per vertex per sweep, a split vertex taking the
    /// mean of its ends' metric, with the metric-Delaunay flips after each
    /// sweep; until no such edge is left or `cap` splits are made. Returns
    /// (splits, flips).
    fn split_sweeps(&mut self, s: &mut Vec<Sym2>, cap: usize) -> (usize, usize) {
        let (mut split, mut flipped) = (0, 0);
        loop {
            let mut edges: Vec<(f64, u32, u32)> = edge_table(&self.mesh.faces)
                .into_iter()
                .map(|((a, b), _)| (edge_metric(&self.mesh.u, s, a, b), a, b))
                .filter(|e| e.0 > 1.0)
                .collect();
            if edges.is_empty() || split >= cap {
                return (split, flipped);
            }
            // Worst first; ties in the (deterministic) edge order.
            edges.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
            let mut touched = vec![false; self.mesh.x.len()];
            for (_, a, b) in edges {
                // One split per vertex per sweep: the edge metric of a cut
                // edge has changed (the next sweep measures it again).
                if touched[a as usize] || touched[b as usize] || split >= cap {
                    continue;
                }
                self.split_mid(a, b);
                let (sa, sb) = (s[a as usize], s[b as usize]);
                s.push([
                    0.5 * (sa[0] + sb[0]),
                    0.5 * (sa[1] + sb[1]),
                    0.5 * (sa[2] + sb[2]),
                ]);
                touched[a as usize] = true;
                touched[b as usize] = true;
                touched.push(true);
                debug_assert_eq!(s.len(), self.mesh.x.len());
                split += 1;
            }
            // Flip after each sweep (ARCSim flips after every split): the
            // new vertices' diagonals turn towards the metric's Delaunay
            // ones, so the next sweep finds the long edges that are left,
            // not the halves of a uniform subdivision.
            flipped += self.flip_pass(s);
        }
    }

    /// One sweep of metric-Delaunay flips over the interior edges that may
    /// flip (not conformal, not border, world dihedral below 40°).
    fn flip_pass(&mut self, s: &[Sym2]) -> usize {
        self.flip_where(s, false)
    }

    /// [`Cloth::flip_pass`], with `near_eol`: only the edges of the two
    /// triangles of which one has an EOL vertex.
    fn flip_where(&mut self, s: &[Sym2], near_eol: bool) -> usize {
        let mut flipped = 0;
        let table = edge_table(&self.mesh.faces);
        // Unit normals once per pass over every edge (a face a flip
        // changes is `done`, and no later edge of it is looked at, so the
        // others' stay current); a pass near EOL vertices looks at a few
        // edges and computes theirs.
        let unit: Vec<Vec3<f64>> = if near_eol {
            Vec::new()
        } else {
            let m = &*self.mesh;
            m.faces
                .iter()
                .map(|&f| face_normal(&m.x, f).normalize_or_zero())
                .collect()
        };
        // Edges this pass made (two flips must not make the same one).
        let mut made = std::collections::HashSet::new();
        let mut done = vec![false; self.mesh.faces.len()];
        for &((p, q), [f1, f2]) in &table {
            if f2 == u32::MAX {
                continue;
            }
            let (f1, f2) = (f1 as usize, f2 as usize);
            if done[f1] || done[f2] {
                continue;
            }
            let m = &*self.mesh;
            let (pi, qi) = (p as usize, q as usize);
            if m.eol[pi] && m.eol[qi] && self.features[pi].is_some() && self.features[pi] == self.features[qi]
            {
                continue;
            }
            let opp = |f: [u32; 3]| f.into_iter().find(|&k| k != p && k != q).unwrap_or(p);
            let (a, b) = (opp(m.faces[f1]), opp(m.faces[f2]));
            if near_eol && ![p, q, a, b].iter().any(|&k| m.eol[k as usize]) {
                continue;
            }
            if a == b || find_edge(&table, a, b).is_some() || made.contains(&(a.min(b), a.max(b))) {
                continue;
            }
            // Never join two EOL vertices: a new edge between two vertices
            // of a feature line would cut across it (a face with three of
            // them has no defined fold).
            if m.eol[a as usize] && m.eol[b as usize] {
                continue;
            }
            // World dihedral ≥ 40°: never flip (ARCSim).
            let nrm = |fi: usize| {
                unit.get(fi)
                    .copied()
                    .unwrap_or_else(|| face_normal(&m.x, m.faces[fi]).normalize_or_zero())
            };
            if nrm(f1).dot(nrm(f2)) < 40f64.to_radians().cos() {
                continue;
            }
            // Metric Delaunay: the angles opposite the edge, measured in the
            // mean metric of the four vertices, sum to more than π (+1e-2).
            let mm = [p, q, a, b].iter().fold([0.0; 3], |acc, &k| {
                let t = s[k as usize];
                [acc[0] + 0.25 * t[0], acc[1] + 0.25 * t[1], acc[2] + 0.25 * t[2]]
            });
            let angle = |c: u32| {
                let (uc, up, uq) = (m.u[c as usize], m.u[pi], m.u[qi]);
                let (e1, e2) = ([up[0] - uc[0], up[1] - uc[1]], [uq[0] - uc[0], uq[1] - uc[1]]);
                let dot =
                    mm[0] * e1[0] * e2[0] + mm[1] * (e1[0] * e2[1] + e1[1] * e2[0]) + mm[2] * e1[1] * e2[1];
                (dot / (quad(&mm, e1).sqrt() * quad(&mm, e2).sqrt()))
                    .clamp(-1.0, 1.0)
                    .acos()
            };
            if angle(a) + angle(b) <= std::f64::consts::PI + 1e-2 {
                continue;
            }
            // The new faces keep the winding of the old ones: f1 runs p → q
            // → a or q → p → a; rotate so that it is (p, q, a).
            let f1v = m.faces[f1];
            let k = f1v.iter().position(|&k| k == a).unwrap_or(0);
            let (x0, x1) = (f1v[(k + 1) % 3], f1v[(k + 2) % 3]); // f1 = (x0, x1, a)
            let g1 = [a, x0, b];
            let g2 = [b, x1, a];
            let ok = |g: [u32; 3]| signed_area(&g.map(|k| m.u[k as usize])) > 1e-12;
            if !(ok(g1) && ok(g2)) {
                continue;
            }
            self.mesh.faces[f1] = g1;
            self.mesh.faces[f2] = g2;
            made.insert((a.min(b), a.max(b)));
            done[f1] = true;
            done[f2] = true;
            flipped += 1;
        }
        flipped
    }

    /// One sweep of collapses (spec §5.6 step 3): an edge (w → v) goes when
    /// every edge it makes has `s ≤ 0.9`, every face it makes keeps a
    /// material area of at least `0.1·size_min²` and a metric aspect ratio
    /// of at least `aspect_min`, and the link condition holds (the mesh
    /// stays a manifold). EOL, border and scripted vertices are never the
    /// one removed. Works on a copy of the faces with a vertex → faces map
    /// (one scan of the mesh, not one per candidate).
    fn collapse_pass(&mut self, s: &[Sym2], p: &Sizing, border: &[bool]) -> usize {
        let m = &*self.mesh;
        let mut faces: Vec<Option<[u32; 3]>> = m.faces.iter().copied().map(Some).collect();
        let mut vf: Vec<Vec<usize>> = vec![Vec::new(); m.x.len()];
        for (fi, f) in m.faces.iter().enumerate() {
            for &k in f {
                vf[k as usize].push(fi);
            }
        }
        // A vertex's ring (its neighbours, sorted), into a kept buffer.
        let ring = |faces: &[Option<[u32; 3]>], vf: &[Vec<usize>], k: u32, r: &mut Vec<u32>| {
            r.clear();
            r.extend(
                vf[k as usize]
                    .iter()
                    .filter_map(|&fi| faces[fi])
                    .flat_map(|f| f.into_iter())
                    .filter(|&j| j != k),
            );
            r.sort_unstable();
            r.dedup();
        };
        let (mut rw, mut rv) = (Vec::new(), Vec::new());
        let mut collapsed = 0;
        let edges: Vec<(u32, u32)> = edge_table(&m.faces).into_iter().map(|(e, _)| e).collect();
        for (a, b) in edges {
            // A long edge never collapses: the edges it would make are as long.
            if edge_metric(&m.u, s, a, b) > 0.9 {
                continue;
            }
            for (w, v) in [(a, b), (b, a)] {
                let (wi, vi) = (w as usize, v as usize);
                if vf[wi].is_empty() || vf[vi].is_empty() {
                    break; // one end already collapsed away
                }
                if m.eol[wi] || border[wi] || self.pinned.get(wi).copied().unwrap_or(false) {
                    continue;
                }
                ring(&faces, &vf, w, &mut rw);
                if !rw.contains(&v) {
                    break; // no longer an edge
                }
                // The edges the collapse makes, first: this test turns
                // away most candidates, so v's ring is only built for the
                // rest (the tests are independent; their order changes no
                // outcome).
                if rw.iter().any(|&r| r != v && edge_metric(&m.u, s, v, r) > 0.9) {
                    continue;
                }
                ring(&faces, &vf, v, &mut rv);
                // Link condition: the common neighbours are exactly the two
                // vertices opposite the (interior) edge.
                if rw.iter().filter(|k| rv.contains(k)).count() != 2 {
                    continue;
                }
                // Never join two EOL vertices that were not joined (see
                // `flip_pass`).
                if m.eol[vi]
                    && rw
                        .iter()
                        .any(|&r| r != v && m.eol[r as usize] && !rv.contains(&r))
                {
                    continue;
                }
                let fine = vf[wi]
                    .iter()
                    .filter_map(|&fi| faces[fi])
                    .filter(|f| !f.contains(&v))
                    .all(|f| {
                        let g = f.map(|k| if k == w { v } else { k });
                        if g.iter().all(|&k| m.eol[k as usize]) {
                            return false; // spec §10 test 15: no face of three EOL vertices
                        }
                        let ug = g.map(|k| m.u[k as usize]);
                        let area = signed_area(&ug);
                        let mean = g.iter().fold([0.0; 3], |acc, &k| {
                            let t = s[k as usize];
                            [acc[0] + t[0] / 3.0, acc[1] + t[1] / 3.0, acc[2] + t[2] / 3.0]
                        });
                        // Metric aspect 4√3·A_M / Σℓ²_M (1 when equilateral in
                        // the metric); A_M = A·√det M.
                        let det = (mean[0] * mean[2] - mean[1] * mean[1]).max(0.0);
                        let l2: f64 = (0..3)
                            .map(|k| {
                                let (p0, p1) = (ug[k], ug[(k + 1) % 3]);
                                quad(&mean, [p1[0] - p0[0], p1[1] - p0[1]])
                            })
                            .sum();
                        let aspect = 4.0 * 3f64.sqrt() * area * det.sqrt() / l2.max(1e-300);
                        area >= 0.1 * p.size_min * p.size_min && aspect >= p.aspect_min
                    });
                if !fine {
                    continue;
                }
                for fi in std::mem::take(&mut vf[wi]) {
                    let Some(f) = faces[fi] else { continue };
                    if f.contains(&v) {
                        faces[fi] = None; // the two faces on the edge go
                    } else {
                        faces[fi] = Some(f.map(|k| if k == w { v } else { k }));
                        vf[vi].push(fi);
                    }
                }
                collapsed += 1;
                break;
            }
        }
        self.mesh.faces = faces.into_iter().flatten().collect();
        collapsed
    }
}

#[cfg(test)]
#[path = "sizing_tests.rs"]
mod tests;
