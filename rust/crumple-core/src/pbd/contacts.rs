//! Contacts of the PBD loop (spec shape_matching §1.3 steps 3–5 and 7b–7c,
//! §1.4): a uniform neighbour grid on the predicted positions, particle–
//! particle candidates between different bodies (inside a body the clusters
//! keep particles apart), particle–world candidates against the colliders,
//! and the two Jacobi projections with Coulomb friction.
//!
//! Determinism: the grid is a sort of unique `(cell, particle)` keys;
//! neighbour lists are filled per particle in ascending index order into a
//! fixed-capacity buffer; the particle–particle projection reads one buffer
//! and writes another, so every particle's update is a pure function of the
//! previous iterate (no order dependence, no float atomics).

use rayon::prelude::*;

use super::grid::Grid;
use super::state::Particles;
use crate::collide::{BoundaryMode, Collider};
use crate::math::Vec3;

/// The neighbour grid and the contact candidates of one step.
#[derive(Clone, Debug, Default)]
pub struct Contacts {
    /// The exposed particles' grid (cells of `d_pp + margin`).
    grid: Grid,
    /// Neighbours per particle, `max_neighbors` slots each.
    pub neighbors: Vec<u32>,
    /// Used slots per particle.
    pub neighbor_count: Vec<u32>,
    /// Capacity per particle.
    pub capacity: usize,
    /// `(particle, collider)` candidates, ascending.
    pub world: Vec<(u32, u32)>,
    /// Scratch for the double buffer of the particle–particle projection.
    pub buffer: Vec<Vec3<f32>>,
    /// Per body, the box of its predicted positions grown by the search reach.
    boxes: Vec<(Vec3<f32>, Vec3<f32>)>,
    /// Particles inside another body's grown box: the only ones that can
    /// have a neighbour of another body (the others skip the grid).
    exposed: Vec<bool>,
    /// Per particle, the colliders of one group it is near (bit per collider).
    world_bits: Vec<u64>,
}

/// Contact settings of one step (distances in m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactParams {
    /// Particle–particle contact distance d_pp.
    pub d_pp: f32,
    /// Particle–world contact offset d_pw.
    pub d_pw: f32,
    /// Search margin δ_m.
    pub margin: f32,
    /// Static / kinetic particle–particle friction.
    pub mu_pp: (f32, f32),
    /// Static over kinetic friction against colliders.
    pub static_ratio: f32,
    /// Over-relaxation ω.
    pub sor: f32,
}

impl Contacts {
    /// Spec §1.3 steps 3–5: the grid on `xs` with cells of `d_pp + margin`,
    /// neighbour lists (other bodies only, within `d_pp + margin`, at most
    /// `capacity`, ascending), and world candidates (`φ < d_pw + margin`).
    pub fn find(
        &mut self,
        xs: &[Vec3<f32>],
        particles: &Particles,
        colliders: &[Collider],
        p: &ContactParams,
        capacity: usize,
    ) {
        let n = xs.len();
        let h = p.d_pp + p.margin;
        self.capacity = capacity;
        // Particles of one body never collide (spec §1.4), so a particle
        // needs the grid only inside another body's box grown by the reach:
        // if i and j of different bodies are within h, each lies in the
        // other's grown box, so the filter loses no pair. A lone body, or
        // bodies apart, cost nothing here (a lone body: no boxes at all).
        let bodies = particles.body.iter().map(|&b| b as usize + 1).max().unwrap_or(0);
        let empty = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        self.boxes.clear();
        if bodies > 1 {
            self.boxes.resize(bodies, empty);
            for (i, &x) in xs.iter().enumerate() {
                let bx = &mut self.boxes[particles.body[i] as usize];
                *bx = (bx.0.component_min(x), bx.1.component_max(x));
            }
        }
        for bx in &mut self.boxes {
            *bx = (bx.0 - Vec3::splat(h), bx.1 + Vec3::splat(h));
        }
        let boxes = &self.boxes;
        // Whether any two bodies' grown boxes overlap: if none do, no
        // particle is exposed (a lone body, or bodies apart) and the grid
        // and neighbour lists are skipped.
        let overlap = |a: &(Vec3<f32>, Vec3<f32>), b: &(Vec3<f32>, Vec3<f32>)| {
            a.0.x <= b.1.x
                && b.0.x <= a.1.x
                && a.0.y <= b.1.y
                && b.0.y <= a.1.y
                && a.0.z <= b.1.z
                && b.0.z <= a.1.z
        };
        let any_overlap =
            (0..boxes.len()).any(|a| (a + 1..boxes.len()).any(|b| overlap(&boxes[a], &boxes[b])));
        self.exposed.clear();
        if any_overlap {
            self.exposed.par_extend(xs.par_iter().enumerate().map(|(i, x)| {
                let b = particles.body[i] as usize;
                boxes.iter().enumerate().any(|(k, (lo, hi))| {
                    k != b
                        && x.x >= lo.x
                        && x.y >= lo.y
                        && x.z >= lo.z
                        && x.x <= hi.x
                        && x.y <= hi.y
                        && x.z <= hi.z
                })
            }));
            let exposed = &self.exposed;
            self.grid.build(xs, h, |i| exposed[i]);
        } else {
            self.exposed.resize(n, false);
            self.grid.build(&[], h, |_| false);
        }
        self.neighbors.resize(n * capacity, 0);
        self.neighbor_count.resize(n, 0);
        let (grid, exposed) = (&self.grid, &self.exposed);
        let reach2 = h * h;
        if grid.is_empty() {
            self.neighbor_count.fill(0);
        } else {
            self.neighbors
                .par_chunks_mut(capacity.max(1))
                .zip(self.neighbor_count.par_iter_mut())
                .enumerate()
                .for_each(|(i, (slots, count))| {
                    *count = 0;
                    if !exposed[i] {
                        return;
                    }
                    let xi = xs[i];
                    let bi = particles.body[i];
                    // Gather candidates cell by cell, then keep the nearest-index-first order.
                    let mut found = 0usize;
                    let mut found_sorted = true;
                    grid.scan(xi, |j| {
                        let j = j as usize;
                        if j == i || particles.body[j] == bi || (xs[j] - xi).norm_squared() >= reach2 {
                            return;
                        }
                        if found < slots.len() {
                            if found > 0 && slots[found - 1] > j as u32 {
                                found_sorted = false;
                            }
                            slots[found] = j as u32;
                            found += 1;
                        }
                    });
                    if !found_sorted {
                        slots[..found].sort_unstable();
                    }
                    *count = found as u32;
                });
        }
        // World candidates, in (particle, collider) order.
        // In parallel, one bit per collider and particle (at most 64
        // colliders per pass), then flattened in (particle, collider) order.
        self.world.clear();
        let reach = f64::from(p.d_pw + p.margin);
        for base in (0..colliders.len()).step_by(64) {
            let group = &colliders[base..(base + 64).min(colliders.len())];
            self.world_bits.clear();
            self.world_bits
                .par_extend(xs.par_iter().enumerate().map(|(i, &x)| {
                    if particles.w[i] == 0.0 {
                        return 0u64;
                    }
                    let xd = x.cast::<f64>();
                    group
                        .iter()
                        .enumerate()
                        .fold(0u64, |m, (s, c)| if c.phi(xd) < reach { m | (1 << s) } else { m })
                }));
            for (i, &bits) in self.world_bits.iter().enumerate() {
                let mut b = bits;
                while b != 0 {
                    let s = b.trailing_zeros();
                    self.world.push((i as u32, base as u32 + s));
                    b &= b - 1;
                }
            }
        }
        if colliders.len() > 64 {
            // Several groups: restore the (particle, collider) order.
            self.world.par_sort_unstable();
        }
    }

    /// Neighbours of particle `i`.
    #[inline]
    pub fn of(&self, i: usize) -> &[u32] {
        &self.neighbors[i * self.capacity..i * self.capacity + self.neighbor_count[i] as usize]
    }

    /// Spec §1.3 step 7b: particle–particle separation with friction
    /// (Jacobi, double-buffered: reads `xs`, writes the result back).
    pub fn project_particles(&mut self, xs: &mut [Vec3<f32>], particles: &Particles, p: &ContactParams) {
        if self.grid.is_empty() {
            // No particle near another body: nothing to project.
            return;
        }
        self.buffer.clear();
        self.buffer.extend_from_slice(xs);
        let prev = &self.buffer;
        let tiny = 1e-6 * p.d_pp;
        let (mu_s, mu_k) = p.mu_pp;
        let me = &*self;
        xs.par_iter_mut().enumerate().for_each(|(i, out)| {
            let wi = particles.w[i];
            if wi == 0.0 {
                return;
            }
            let xi = prev[i];
            let mut d = Vec3::zero();
            let mut count = 0u32;
            for &j in me.of(i) {
                let j = j as usize;
                let wj = particles.w[j];
                let diff = xi - prev[j];
                let dist = diff.norm();
                if dist >= p.d_pp || dist < tiny || wi + wj == 0.0 {
                    continue;
                }
                let nrm = diff * (1.0 / dist);
                let pen = p.d_pp - dist;
                let share = wi / (wi + wj);
                d += nrm * (share * pen);
                // Friction removes relative sliding over the step.
                let u = (xi - particles.x[i]) - (prev[j] - particles.x[j]);
                let ut = u - nrm * u.dot(nrm);
                d -= friction(ut, pen, mu_s, mu_k) * share;
                count += 1;
            }
            if count > 0 {
                *out = xi + d * (p.sor / count as f32);
            }
        });
    }

    /// Spec §1.3 step 7c: particle–world contacts at the colliders' poses at
    /// the end of the step. `sticky` colliders remove all relative sliding,
    /// `slip` none, `separate` applies Coulomb friction with the collider's
    /// `friction` as the kinetic coefficient.
    // NaN must take the refusing branch of every `!(a > b)` below.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn project_world(
        &self,
        xs: &mut [Vec3<f32>],
        particles: &Particles,
        colliders: &[Collider],
        p: &ContactParams,
        dt: f32,
    ) {
        // Candidates are sorted by particle: one pass per particle run.
        let mut k = 0;
        let w = &self.world;
        while k < w.len() {
            let i = w[k].0 as usize;
            let mut end = k;
            while end < w.len() && w[end].0 as usize == i {
                end += 1;
            }
            let xi = xs[i];
            let xd = xi.cast::<f64>();
            let mut d = Vec3::zero();
            let mut count = 0u32;
            for &(_, s) in &w[k..end] {
                let c = &colliders[s as usize];
                let contact = c.contact(xd);
                let pen = p.d_pw - contact.phi as f32;
                if !(pen > 0.0) {
                    continue;
                }
                let nrm = contact.normal.cast::<f32>();
                d += nrm * pen;
                let surface = (c.velocity(particles.x[i].cast::<f64>()) * f64::from(dt)).cast::<f32>();
                let u = (xi - particles.x[i]) - surface;
                let ut = u - nrm * u.dot(nrm);
                let mu_k = c.friction() as f32;
                d -= match c.mode() {
                    BoundaryMode::Sticky => ut,
                    BoundaryMode::Slip => Vec3::zero(),
                    BoundaryMode::Separate => friction(ut, pen, mu_k * p.static_ratio, mu_k),
                };
                count += 1;
            }
            if count > 0 {
                xs[i] = xi + d * (p.sor / count as f32);
            }
            k = end;
        }
    }
}

/// Position-level Coulomb friction (Macklin et al. 2014): the tangential
/// displacement `ut` is removed entirely inside the static cone
/// (|ut| < μ_s·pen), else reduced by μ_k·pen.
#[inline]
fn friction(ut: Vec3<f32>, pen: f32, mu_s: f32, mu_k: f32) -> Vec3<f32> {
    let t = ut.norm();
    if t < mu_s * pen {
        ut
    } else if t > 0.0 {
        ut * (mu_k * pen / t).min(1.0)
    } else {
        Vec3::zero()
    }
}
