//! Clustered shape matching (spec shape_matching §3): per-cluster sums, the
//! rotation fit and the goals, and the Jacobi stage of the solver that moves
//! each particle by the average of its clusters' corrections.
//!
//! The math is written as pure functions of a cluster's members
//! ([`ClusterFit::compute`], all in f64, the reference the tests and the
//! GPU twin follow; [`elastic_stretch`]). The solver loop and the
//! end-of-step plasticity compute the same c and B with `fit_sums` over
//! packed entries (four lanes, `sm_kernels.rs`); the stage functions apply
//! it to every cluster (in parallel: clusters are independent) and gather
//! the corrections per particle through the reverse map (no scatter, so the
//! result does not depend on the thread count).

use rayon::prelude::*;

use super::params::{RotationFit, Weights};
use super::sm_kernels::{GoalPass, Moments, apply_chunk, moments};
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
pub fn is_degenerate(members: usize, aqq: &Mat3<f32>) -> bool {
    degenerate_from(aqq_eigenvalues(members, aqq))
}

/// A_qq's eigenvalues (ascending), or None for a cluster too small or with
/// a non-finite A_qq (degenerate either way): computed once for both the
/// degeneracy and the thinness test of the end-of-step pass.
pub fn aqq_eigenvalues(members: usize, aqq: &Mat3<f32>) -> Option<Vec3<f32>> {
    (members >= MIN_MEMBERS && aqq.is_finite()).then(|| sym_eigen3(aqq).eigenvalues)
}

/// [`is_degenerate`] from [`aqq_eigenvalues`]'s result.
// NaN must take the refusing branch of every `!(a > b)` below.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub fn degenerate_from(e: Option<Vec3<f32>>) -> bool {
    e.is_none_or(|e| !(e.x > DEGENERATE_RATIO * e.z.abs()) || !(e.z > 0.0))
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

/// Four f32 lanes in one 16-byte register (SSE on x86-64, NEON on
/// aarch64): the packed layout of the solver loop's hot data (see
/// [`ClusterScratch`]). From `wide`, because LLVM's auto-vectoriser splits
/// lane-wise array code into 2 + 1 lanes once the fourth is unused (about
/// twice the instructions in both passes; 4.4 → 3.3 ms of shape matching
/// per step on the 39.3K-particle SM-block). Only add, sub and mul: no
/// fused multiply-add, so the result is the same on every CPU.
pub(crate) type F4 = wide::f32x4;

/// `(v, w)` as four lanes.
#[inline(always)]
pub(crate) fn f4(v: Vec3<f32>, w: f32) -> F4 {
    F4::new([v.x, v.y, v.z, w])
}

/// The first three lanes.
#[inline(always)]
pub(crate) fn xyz(a: F4) -> Vec3<f32> {
    let a = a.to_array();
    Vec3::new(a[0], a[1], a[2])
}

/// One membership in particle order for the goal gather: the rest position
/// q and the cluster, one aligned 16-byte load.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(16))]
pub struct GoalEntry {
    /// Rest position q, m.
    pub q: [f32; 3],
    /// Cluster index.
    pub cluster: u32,
}

/// One cluster's goals for the gather, `K (g − x) = K T q + K (c − a) + K (a − x)`:
/// the columns of K·T, the sub-ulp remainder K·(c − a) of the goals' offset
/// c (an f64, see [`ClusterFit`]) about its f32 rounding a, and `(a, K)`.
/// Each particle forms `a − x` in f32 (rounded relative to the cluster's
/// extent, as the f64 `c − x` of the earlier loop was) and no per-membership
/// f64 arithmetic is left. 80 bytes, read from cache: a particle's clusters
/// are few and its neighbours share them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
pub(crate) struct GoalBlock {
    /// K·T columns 0–2 (lane 3 zero) and K·(c − a) (lane 3 zero).
    pub(crate) cols: [F4; 4],
    /// The goals' offset rounded to f32, a, and K in lane 3.
    pub(crate) anchor: F4,
}

/// Scratch of the shape-matching stage: each cluster's goal block of the
/// current iteration, and, prepared once per step
/// ([`ClusterScratch::prepare`]), each membership's weight μ, the weighted
/// rest positions in cluster order and the memberships in particle order,
/// so that both passes read their entries in sequence, 16 bytes at a time.
#[derive(Clone, Debug, Default)]
pub struct ClusterScratch {
    /// The goal block per cluster.
    pub(crate) block: Vec<GoalBlock>,
    /// μ per entry (indexed like `Clusters::member`).
    pub mu: Vec<f32>,
    /// (μ q, μ) per entry (indexed like `Clusters::member`).
    pub(crate) weighted: Vec<F4>,
    /// Rest position and cluster of each membership, in the order of `Memberships::entry`.
    pub goal: Vec<GoalEntry>,
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
        self.weighted.clear();
        self.weighted
            .extend(clusters.rest.iter().zip(&self.mu).map(|(&q, &w)| f4(q * w, w)));
        self.goal.clear();
        self.goal.extend(memberships.entry.iter().map(|&e| {
            let q = clusters.rest[e as usize];
            GoalEntry {
                q: [q.x, q.y, q.z],
                cluster: memberships.entry_cluster[e as usize],
            }
        }));
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
/// `clusters.quat`, which is updated), T = R F_P, and the goal block.
pub fn fit_clusters(
    xs: &[Vec3<f32>],
    clusters: &mut Clusters,
    p: &ClusterParams<'_>,
    scratch: &mut ClusterScratch,
) {
    let n = clusters.len();
    scratch.block.resize(n, GoalBlock::default());
    let Clusters {
        offset,
        member,
        fp,
        qsum,
        quat,
        degenerate,
        ..
    } = clusters;
    let (weighted, sums) = (&scratch.weighted, &scratch.sums);
    debug_assert_eq!(
        weighted.len(),
        member.len(),
        "ClusterScratch::prepare was not called"
    );
    scratch
        .block
        .par_iter_mut()
        .zip(quat.par_iter_mut())
        .enumerate()
        .for_each(|(c, (block, q))| {
            let range = offset[c] as usize..offset[c + 1] as usize;
            let (centre, b) = fit_sums(xs, &member[range.clone()], &weighted[range], sums[c]);
            let apq = b * fp[c].transpose();
            let a = rotation_source(p.fit, &apq, &aqq(&fp[c], &qsum[c]), degenerate[c]);
            extract_rotation(&a, q, p.rotation_iterations);
            let t = q.to_mat3() * fp[c];
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
            let off = centre - t.cast::<f64>() * qbar;
            let anchor = off.cast::<f32>();
            let k = p.stiffness[c];
            let kt = t * k;
            *block = GoalBlock {
                cols: [
                    f4(kt.col(0), 0.0),
                    f4(kt.col(1), 0.0),
                    f4(kt.col(2), 0.0),
                    f4((off - anchor.cast::<f64>()).cast::<f32>() * k, 0.0),
                ],
                anchor: f4(anchor, k),
            };
        });
}

/// The solver loop's [`ClusterFit`]: the same c and B from one pass with
/// Σμ and Σμq given, the centre sum in f64 (the goals' momentum balance
/// rests on it) and the moment B in f32 about the first member (relative
/// rounding ~1e-6 of a cluster's extent; the test
/// `fit_sums_match_the_f64_fit` bounds it). Row k of B accumulates
/// `d_k (μq)` ([`moments`]). The end-of-step fit uses it too, where B also
/// feeds the elastic stretch, the yield test and the re-sampling snapshot:
/// 1e-6 of a cluster's extent is far below any yield strain the presets use
/// (≥ 1e-3).
#[inline]
pub(crate) fn fit_sums(
    xs: &[Vec3<f32>],
    member: &[u32],
    weighted: &[F4],
    (mass, sq): (f64, Vec3<f64>),
) -> (Vec3<f64>, Mat3<f32>) {
    let Some(&first) = member.first() else {
        return (Vec3::zero(), Mat3::zero());
    };
    let o = xs[first as usize];
    let Moments { rows, s } = moments(bytemuck::cast_slice(xs), member, weighted, o);
    let inv = if mass > 0.0 { 1.0 / mass } else { 0.0 };
    let co = s * inv;
    let b = Mat3::from_rows(xyz(rows[0]), xyz(rows[1]), xyz(rows[2]))
        - Mat3::outer(co.cast::<f32>(), sq.cast::<f32>());
    (o.cast::<f64>() + co, b)
}

/// Spec §1.3 step 7a (second half): every particle moves by
/// `ω Σ_C K_C (g_{C,i} − x*_i) / n_i` with goals `g = T_C q + c_C`;
/// kinematic particles and particles in no cluster stay.
pub fn apply_goals(
    xs: &mut [Vec3<f32>],
    particles: &Particles,
    memberships: &Memberships,
    sor: f32,
    scratch: &ClusterScratch,
) {
    let pass = GoalPass {
        offset: &memberships.offset,
        w: &particles.w,
        goal: &scratch.goal,
        block: &scratch.block,
        sor,
    };
    // Fixed chunks (each particle's update depends only on its own data,
    // so the chunking changes nothing but the per-call overhead).
    xs.par_chunks_mut(APPLY_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| apply_chunk(chunk, c * APPLY_CHUNK, &pass));
}

/// Particles per call of the goal pass's kernel.
const APPLY_CHUNK: usize = 256;

#[cfg(test)]
#[path = "shape_match_tests.rs"]
mod tests;
