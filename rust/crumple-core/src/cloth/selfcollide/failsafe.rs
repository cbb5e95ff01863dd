//! The continuous-collision fail-safe of spec §6.1 step 12: inelastic
//! projections along `x0 → x1` (Bridson, Fedkiw, Anderson 2002, §7.3), then
//! rigid impact zones (Provot 1997; BFA02 §7.4; Harmon et al. 2008).

use super::*;

impl SelfCollision {
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
}

/// Inelastic projection of one contact (BFA02 §7.3 applied to positions):
/// moves the pair's vertices along the normal, each by its inverse mass
/// times its weight, so that the gap `Σ w n · x1` becomes `target`. Linear
/// momentum is unchanged because `Σ w = 0`.
pub(super) fn project(c: &Contact, x1: &mut [Vec3<f64>], inv_mass: &[f64], target: f64, dirty: &mut [bool]) {
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
pub(super) struct Narrow<'a> {
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
pub(super) fn thick_contact(kind: PairKind, v: [u32; 4], near: Near, start: &[Vec3<f64>; 4]) -> Contact {
    let gap0: f64 = (0..4).map(|k| near.weights[k] * near.normal.dot(start[k])).sum();
    Contact {
        kind,
        vertices: v,
        weights: near.weights,
        normal: if gap0 < 0.0 { -near.normal } else { near.normal },
        impact: false,
    }
}
