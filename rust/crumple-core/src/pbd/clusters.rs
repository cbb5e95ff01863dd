//! Building and maintaining clusters (spec shape_matching §2.4 step 4,
//! §3.1–3.2, §6.4): choosing centres among the under-covered particles,
//! gathering members within r^C, writing rest positions, and keeping every
//! cluster's rest positions centred (Σ μ q = 0) with its Qsum current.

use super::grid::Grid;
use super::params::Weights;
use super::shape_match::weight;
use super::state::{Clusters, Memberships, Particles, flag};
use crate::geometry::SplitMix64;
use crate::math::{Mat3, Quat, Vec3, extract_rotation};

/// A counter-based random value of `(seed, step, index)` (spec §5.2, §6.4):
/// the same on every thread and backend.
pub fn hash3(seed: u64, step: u64, index: u64) -> u64 {
    let mut s = SplitMix64::new(
        seed ^ step.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7),
    );
    s.next_u64()
}

/// What a new cluster is made from.
pub struct NewCluster {
    /// Its members (ascending).
    pub members: Vec<u32>,
    /// Rest positions q = W (x − c), before centring.
    pub rest: Vec<Vec3<f32>>,
    /// Initial yield ε_γ.
    pub yield_strain: f32,
    /// Body and component of the members.
    pub body: u32,
    /// Component of the members.
    pub component: u32,
}

/// Spec §6.4 steps 1–3: centres among the candidates (particles with fewer
/// than `min_clusters` clusters, of non-kinematic or kinematic kind alike),
/// visited in hash-priority order, each marking the candidates within
/// `seed_spacing` of it (same body and component); returns for every centre
/// the members within `radius` (all particles of its body and component).
#[allow(clippy::too_many_arguments)]
pub fn choose_centres(
    particles: &Particles,
    counts: &[u32],
    min_clusters: u32,
    seed_spacing: f32,
    radius: f32,
    seed: u64,
    step: u64,
    grid: &mut Grid,
) -> Vec<(u32, Vec<u32>)> {
    let n = particles.len();
    let x = &particles.x;
    let mut candidates: Vec<u32> = (0..n as u32)
        .filter(|&i| counts[i as usize] < min_clusters)
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    candidates.sort_by_key(|&i| (hash3(seed, step, u64::from(i)), i));
    let h = radius.max(seed_spacing);
    grid.build(x, h, |_| true);
    let mut marked = vec![false; n];
    let is_candidate = {
        let mut v = vec![false; n];
        for &c in &candidates {
            v[c as usize] = true;
        }
        v
    };
    let same = |a: usize, b: usize| {
        particles.body[a] == particles.body[b] && particles.component[a] == particles.component[b]
    };
    let mut out = Vec::new();
    let mut near = Vec::new();
    for &p in &candidates {
        let p = p as usize;
        if marked[p] {
            continue;
        }
        grid.within(x, x[p], seed_spacing, &mut near);
        for &j in &near {
            let j = j as usize;
            if is_candidate[j] && same(p, j) {
                marked[j] = true;
            }
        }
        marked[p] = true;
        grid.within(x, x[p], radius, &mut near);
        let members: Vec<u32> = near.iter().copied().filter(|&j| same(p, j as usize)).collect();
        out.push((p as u32, members));
    }
    out
}

/// Appends a cluster: F_P = I, n0 = |members|, rotation fitted from the
/// identity with `iterations` Müller steps (spec §6.4 step 5). Memberships
/// and centring are the caller's (see [`refresh`]).
pub fn push_cluster(clusters: &mut Clusters, particles: &Particles, new: NewCluster, iterations: u32) {
    if clusters.offset.is_empty() {
        clusters.offset.push(0);
    }
    let start = clusters.member.len();
    clusters.member.extend_from_slice(&new.members);
    clusters.rest.extend_from_slice(&new.rest);
    clusters.offset.push(clusters.member.len() as u32);
    // The fit of the current positions to the new rest shape, from identity.
    let mut mass = 0.0f32;
    let mut sum = Vec3::zero();
    for &i in &new.members {
        mass += particles.m[i as usize];
        sum += particles.x[i as usize] * particles.m[i as usize];
    }
    let c = if mass > 0.0 {
        sum * (1.0 / mass)
    } else {
        Vec3::zero()
    };
    let mut apq = Mat3::zero();
    for (k, &i) in new.members.iter().enumerate() {
        apq += Mat3::outer(
            (particles.x[i as usize] - c) * particles.m[i as usize],
            clusters.rest[start + k],
        );
    }
    let mut q = Quat::identity();
    extract_rotation(&apq, &mut q, iterations);
    clusters.fp.push(Mat3::identity());
    clusters.yield_strain.push(new.yield_strain);
    clusters.n0.push(new.members.len() as u32);
    clusters.quat.push(q);
    clusters.body.push(new.body);
    clusters.component.push(new.component);
    clusters.qsum.push(Mat3::zero());
    clusters.mass.push(0.0);
    clusters.degenerate.push(false);
}

/// Recentres cluster `c`'s rest positions with the current weights
/// (Σ μ q = 0) and recomputes its mass Σμ and Qsum = Σ μ q qᵀ (spec §3.2).
pub fn refresh(
    clusters: &mut Clusters,
    c: usize,
    particles: &Particles,
    memberships: &Memberships,
    weights: Weights,
) {
    let range = clusters.entries(c);
    let mut mass = 0.0f32;
    let mut sum = Vec3::zero();
    for e in range.clone() {
        let i = clusters.member[e] as usize;
        let mu = weight(weights, particles.m[i], memberships.count(i));
        mass += mu;
        sum += clusters.rest[e] * mu;
    }
    let shift = if mass > 0.0 {
        sum * (1.0 / mass)
    } else {
        Vec3::zero()
    };
    let mut qsum = Mat3::zero();
    for e in range {
        let i = clusters.member[e] as usize;
        let mu = weight(weights, particles.m[i], memberships.count(i));
        clusters.rest[e] -= shift;
        qsum += Mat3::outer(clusters.rest[e] * mu, clusters.rest[e]);
    }
    clusters.mass[c] = mass;
    clusters.qsum[c] = qsum;
}

/// Rebuilds the reverse map and refreshes every cluster (after any change
/// of membership or of masses).
pub fn refresh_all(
    clusters: &mut Clusters,
    particles: &Particles,
    memberships: &mut Memberships,
    weights: Weights,
) {
    memberships.rebuild(particles.len(), clusters);
    for c in 0..clusters.len() {
        refresh(clusters, c, particles, memberships, weights);
    }
}

/// Spec §2.4 step 4: creation rounds over every particle with W = I and the
/// material's yield until every particle is in `min_clusters` clusters or a
/// round creates none. `yield_of(body)` gives the initial yield.
#[allow(clippy::too_many_arguments)]
pub fn initial_clusters(
    particles: &mut Particles,
    clusters: &mut Clusters,
    memberships: &mut Memberships,
    min_clusters: u32,
    seed_spacing: f32,
    radius: f32,
    seed: u64,
    weights: Weights,
    iterations: u32,
    first: usize,
    yield_of: impl Fn(u32) -> f32,
) {
    let mut grid = Grid::default();
    for round in 0..64u64 {
        memberships.rebuild(particles.len(), clusters);
        // Particles before `first` belong to bodies that have their clusters.
        let counts: Vec<u32> = (0..particles.len())
            .map(|i| if i < first { u32::MAX } else { memberships.count(i) })
            .collect();
        let centres = choose_centres(
            particles,
            &counts,
            min_clusters,
            seed_spacing,
            radius,
            seed,
            round,
            &mut grid,
        );
        let mut made = 0;
        for (p, members) in centres {
            // Members below four cannot make a cluster that holds a shape (spec §3.5).
            if members.len() < 2 {
                continue;
            }
            let mut mass = 0.0f32;
            let mut sum = Vec3::zero();
            for &i in &members {
                mass += particles.m[i as usize];
                sum += particles.x[i as usize] * particles.m[i as usize];
            }
            let c = sum * (1.0 / mass);
            let rest = members.iter().map(|&i| particles.x[i as usize] - c).collect();
            let body = particles.body[p as usize];
            push_cluster(
                clusters,
                particles,
                NewCluster {
                    members,
                    rest,
                    yield_strain: yield_of(body),
                    body,
                    component: particles.component[p as usize],
                },
                iterations,
            );
            made += 1;
        }
        if made == 0 {
            break;
        }
    }
    for f in particles.flags.iter_mut() {
        *f &= !flag::NEW;
    }
    refresh_all(clusters, particles, memberships, weights);
}
