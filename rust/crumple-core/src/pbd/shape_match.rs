//! Clustered shape matching (spec shape_matching §3): per-cluster sums, the
//! rotation fit and the goals, and the Jacobi stage of the solver that moves
//! each particle by the average of its clusters' corrections.
//!
//! The math is written as pure functions of a cluster's members
//! ([`ClusterFit::compute`], [`elastic_stretch`]) so that the tests check it
//! directly and the GPU twin can follow it; the stage functions apply it to
//! every cluster (in parallel: clusters are independent) and gather the
//! corrections per particle through the reverse map (no scatter, so the
//! result does not depend on the thread count).

use rayon::prelude::*;

use super::params::{RotationFit, Weights};
use super::state::{Clusters, Memberships, Particles};
use crate::math::{Mat3, Vec3, extract_rotation, sym_eigen3};

/// Below this eigenvalue ratio of A_qq a cluster is degenerate (planar or
/// collinear): it projects with the rigid fit and skips plasticity (spec §3.5).
pub const DEGENERATE_RATIO: f32 = 1e-6;

/// Fewest members of a non-degenerate cluster (spec §3.5).
pub const MIN_MEMBERS: usize = 4;

/// Weight μ of a member with mass `m` in `n` clusters (spec §3.1).
#[inline]
pub fn weight(weights: Weights, m: f32, n: u32) -> f32 {
    match weights {
        Weights::Split => m / n.max(1) as f32,
        Weights::Particle => m,
    }
}

/// What one cluster's fit to positions gives: the centre of mass, the
/// moment matrix `B = Σ μ (x − c) qᵀ` and `A_pq = B F_Pᵀ`.
///
/// The sums run in f64 and the centre is kept in f64: a shift δ of c moves
/// every goal by δ and the cluster's momentum by K·M·δ/dt, so a centre
/// rounded to f32 at |x| ≈ 1 m would add ~1e-7 M m/dt per step (0.1 % of the
/// momentum of a body in free flight after 120 steps, spec X6); in f64 the
/// only rounding left is that of the particles' own f32 positions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterFit {
    /// Weighted centre of mass c, m.
    pub c: Vec3<f64>,
    /// `B = Σ μ (x − c) qᵀ`.
    pub b: Mat3<f32>,
    /// `A_pq = B F_Pᵀ` (spec eq. 1).
    pub apq: Mat3<f32>,
}

impl ClusterFit {
    /// The sums of spec §3.2 over `members` (particle, rest q, weight μ) at
    /// positions `x`, with plastic matrix `fp`. One pass in f64 about the
    /// first member's position `o` (so nothing cancels at large coordinates):
    /// `c = o + Σμ(x−o)/Σμ` and `B = Σμ(x−o)qᵀ − (c−o)(Σμq)ᵀ`, which is
    /// `Σμ(x−c)qᵀ` exactly in real arithmetic.
    pub fn compute(
        x: &[Vec3<f32>],
        members: impl Iterator<Item = (usize, Vec3<f32>, f32)>,
        fp: &Mat3<f32>,
    ) -> Self {
        let mut mass = 0.0f64;
        let mut s = Vec3::<f64>::zero();
        let mut sq = Vec3::<f64>::zero();
        let mut m = Mat3::<f64>::zero();
        let mut origin = None;
        for (i, q, mu) in members {
            let o = *origin.get_or_insert(x[i].cast::<f64>());
            let mu = f64::from(mu);
            let d = (x[i].cast::<f64>() - o) * mu;
            let q = q.cast::<f64>();
            mass += mu;
            s += d;
            sq += q * mu;
            m += Mat3::outer(d, q);
        }
        let o = origin.unwrap_or(Vec3::zero());
        let inv = if mass > 0.0 { 1.0 / mass } else { 0.0 };
        let co = s * inv;
        let b = (m - Mat3::outer(co, sq)).cast::<f32>();
        Self {
            c: o + co,
            b,
            apq: b * fp.transpose(),
        }
    }
}

/// `A_qq = F_P Qsum F_Pᵀ` (spec eq. 2).
#[inline]
pub fn aqq(fp: &Mat3<f32>, qsum: &Mat3<f32>) -> Mat3<f32> {
    *fp * *qsum * fp.transpose()
}

/// Whether a cluster of `members` members with this A_qq is degenerate (spec §3.5).
// NaN must take the refusing branch of every `!(a > b)` below.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub fn is_degenerate(members: usize, aqq: &Mat3<f32>) -> bool {
    if members < MIN_MEMBERS || !aqq.is_finite() {
        return true;
    }
    let e = sym_eigen3(aqq).eigenvalues;
    !(e.x > DEGENERATE_RATIO * e.z.abs()) || !(e.z > 0.0)
}

/// The matrix the rotation is extracted from (spec §3.3): A_pq for the
/// rigid fit, A_pq A_qq⁻¹ for the linear fit (rigid when degenerate or when
/// A_qq has no inverse).
pub fn rotation_source(fit: RotationFit, apq: &Mat3<f32>, aqq: &Mat3<f32>, degenerate: bool) -> Mat3<f32> {
    match fit {
        RotationFit::Rigid => *apq,
        RotationFit::Linear if degenerate => *apq,
        RotationFit::Linear => match aqq.try_inverse(f32::MIN_POSITIVE) {
            Some(inv) => *apq * inv,
            None => *apq,
        },
    }
}

/// The symmetric S minimising Σ μ |R S Fq − (x − c)|² for the given R
/// (spec §4.2 eq. 5): `S = V [(Vᵀ S_pq V) ∘ Λ̄] Vᵀ` with
/// `S_pq = ½(Rᵀ A_pq + A_pqᵀ R)`, `A_qq = V diag(λ) Vᵀ` and
/// `Λ̄_jk = 2/(λ_j + λ_k)` (denominators clamped to 1e-12·trace).
pub fn elastic_stretch(r: &Mat3<f32>, apq: &Mat3<f32>, aqq: &Mat3<f32>) -> Mat3<f32> {
    let rt_apq = r.transpose() * *apq;
    let spq = (rt_apq + rt_apq.transpose()) * 0.5;
    let eig = sym_eigen3(aqq);
    let v = eig.eigenvectors;
    let lam = eig.eigenvalues;
    let floor = 1e-12 * (lam.x + lam.y + lam.z).abs();
    let mut m = v.transpose() * spq * v;
    for j in 0..3 {
        for k in 0..3 {
            m.m[j][k] *= 2.0 / (lam[j] + lam[k]).max(floor).max(f32::MIN_POSITIVE);
        }
    }
    v * m * v.transpose()
}

/// Scratch of the shape-matching stage: each cluster's centre and goal
/// transform `T = R F_P` of the current iteration, and, prepared once per
/// step ([`ClusterScratch::prepare`]), each membership's weight μ and the
/// memberships' rest positions and clusters in particle order, so the
/// goal gather reads them in sequence.
#[derive(Clone, Debug, Default)]
pub struct ClusterScratch {
    /// c per cluster, m (f64: see [`ClusterFit`]).
    pub c: Vec<Vec3<f64>>,
    /// T = R F_P per cluster.
    pub t: Vec<Mat3<f32>>,
    /// μ per entry (indexed like `Clusters::member`).
    pub mu: Vec<f32>,
    /// Rest position of each membership, in the order of `Memberships::entry`.
    pub rest_by_particle: Vec<Vec3<f32>>,
    /// Cluster of each membership, in the order of `Memberships::entry`.
    pub cluster_by_particle: Vec<u32>,
    /// Per cluster, Σμ and Σμq (f64): fixed within a step.
    pub sums: Vec<(f64, Vec3<f64>)>,
}

impl ClusterScratch {
    /// Weights and particle-ordered copies for the coming step (masses and
    /// memberships do not change inside a step).
    pub fn prepare(
        &mut self,
        particles: &Particles,
        clusters: &Clusters,
        memberships: &Memberships,
        weights: Weights,
    ) {
        let counts = &memberships.offset;
        self.mu.clear();
        self.mu.extend(clusters.member.iter().map(|&i| {
            let i = i as usize;
            weight(weights, particles.m[i], counts[i + 1] - counts[i])
        }));
        self.rest_by_particle.clear();
        self.rest_by_particle
            .extend(memberships.entry.iter().map(|&e| clusters.rest[e as usize]));
        self.cluster_by_particle.clear();
        self.cluster_by_particle.extend(
            memberships
                .entry
                .iter()
                .map(|&e| memberships.entry_cluster[e as usize]),
        );
        let mu = &self.mu;
        self.sums.clear();
        self.sums.extend((0..clusters.len()).map(|c| {
            clusters.entries(c).fold((0.0, Vec3::zero()), |(m, q), e| {
                let w = f64::from(mu[e]);
                (m + w, q + clusters.rest[e].cast::<f64>() * w)
            })
        }));
    }
}

/// Per-cluster material and flags the stage reads.
pub struct ClusterParams<'a> {
    /// K per cluster.
    pub stiffness: &'a [f32],
    /// Rotation fit.
    pub fit: RotationFit,
    /// Müller iterations per solver iteration.
    pub rotation_iterations: u32,
    /// Member weights.
    pub weights: Weights,
}

/// Spec §1.3 step 7a: for every cluster, c, A_pq and R (warm-started from
/// `clusters.quat`, which is updated), and T = R F_P.
pub fn fit_clusters(
    xs: &[Vec3<f32>],
    clusters: &mut Clusters,
    p: &ClusterParams<'_>,
    scratch: &mut ClusterScratch,
) {
    let n = clusters.len();
    scratch.c.resize(n, Vec3::zero());
    scratch.t.resize(n, Mat3::identity());
    let Clusters {
        offset,
        member,
        rest,
        fp,
        qsum,
        quat,
        degenerate,
        ..
    } = clusters;
    let (mu, sums) = (&scratch.mu, &scratch.sums);
    debug_assert_eq!(mu.len(), member.len(), "ClusterScratch::prepare was not called");
    scratch
        .c
        .par_iter_mut()
        .zip(scratch.t.par_iter_mut())
        .zip(quat.par_iter_mut())
        .enumerate()
        .for_each(|(c, ((cc, t), q))| {
            let range = offset[c] as usize..offset[c + 1] as usize;
            let (centre, b) = fit_sums(
                xs,
                &member[range.clone()],
                &rest[range.clone()],
                &mu[range],
                sums[c],
            );
            let apq = b * fp[c].transpose();
            let a = rotation_source(p.fit, &apq, &aqq(&fp[c], &qsum[c]), degenerate[c]);
            extract_rotation(&a, q, p.rotation_iterations);
            *t = q.to_mat3() * fp[c];
            // The goals' offset c − T q̄, q̄ = Σμq/Σμ: zero up to the f32
            // rounding of the stored rest positions, but a constant residual
            // of the centring would push the cluster's momentum by K·M·T q̄
            // every iteration, so the goals are g = T (q − q̄) + c.
            let (mass, sq) = sums[c];
            let qbar = if mass > 0.0 {
                sq * (1.0 / mass)
            } else {
                Vec3::zero()
            };
            *cc = centre - t.cast::<f64>() * qbar;
        });
}

/// The solver loop's [`ClusterFit`]: the same c and B from one pass with
/// Σμ and Σμq given, the centre sum in f64 (the goals' momentum balance
/// rests on it) and the moment B in f32 about the first member (it only
/// feeds the rotation; relative rounding ~1e-6 of a cluster's extent).
#[inline]
fn fit_sums(
    xs: &[Vec3<f32>],
    member: &[u32],
    rest: &[Vec3<f32>],
    mu: &[f32],
    (mass, sq): (f64, Vec3<f64>),
) -> (Vec3<f64>, Mat3<f32>) {
    let Some(&first) = member.first() else {
        return (Vec3::zero(), Mat3::zero());
    };
    let o = xs[first as usize];
    let mut s = Vec3::<f64>::zero();
    let mut m = [0.0f32; 9];
    for ((&i, q), &w) in member.iter().zip(rest).zip(mu) {
        let d = (xs[i as usize] - o) * w;
        s += d.cast::<f64>();
        m[0] += d.x * q.x;
        m[1] += d.x * q.y;
        m[2] += d.x * q.z;
        m[3] += d.y * q.x;
        m[4] += d.y * q.y;
        m[5] += d.y * q.z;
        m[6] += d.z * q.x;
        m[7] += d.z * q.y;
        m[8] += d.z * q.z;
    }
    let inv = if mass > 0.0 { 1.0 / mass } else { 0.0 };
    let co = s * inv;
    let sqf = sq.cast::<f32>();
    let cof = co.cast::<f32>();
    let b = Mat3::from_rows(
        Vec3::new(m[0], m[1], m[2]),
        Vec3::new(m[3], m[4], m[5]),
        Vec3::new(m[6], m[7], m[8]),
    ) - Mat3::outer(cof, sqf);
    (o.cast::<f64>() + co, b)
}

/// Spec §1.3 step 7a (second half): every particle moves by
/// `ω Σ_C K_C (g_{C,i} − x*_i) / n_i` with goals `g = T_C q + c_C`;
/// kinematic particles and particles in no cluster stay.
pub fn apply_goals(
    xs: &mut [Vec3<f32>],
    particles: &Particles,
    memberships: &Memberships,
    stiffness: &[f32],
    sor: f32,
    scratch: &ClusterScratch,
) {
    xs.par_iter_mut().enumerate().for_each(|(i, x)| {
        let n = memberships.count(i);
        if n == 0 || particles.w[i] == 0.0 {
            return;
        }
        // In f64 (see ClusterFit): g − x = T q + (c − x), rounded to f32 once.
        // c − x in f64 (c is f64, see ClusterFit), then the short
        // per-cluster offsets g − x (a cluster's extent) summed in f32.
        let xd = x.cast::<f64>();
        let mut d = Vec3::<f32>::zero();
        let range = memberships.offset[i] as usize..memberships.offset[i + 1] as usize;
        for (q, &c) in scratch.rest_by_particle[range.clone()]
            .iter()
            .zip(&scratch.cluster_by_particle[range])
        {
            let c = c as usize;
            d += (scratch.t[c] * *q + (scratch.c[c] - xd).cast::<f32>()) * stiffness[c];
        }
        *x = (xd + (d * (sor / n as f32)).cast::<f64>()).cast::<f32>();
    });
}

#[cfg(test)]
#[path = "shape_match_tests.rs"]
mod tests;
