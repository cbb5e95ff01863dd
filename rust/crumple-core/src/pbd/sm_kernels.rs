//! The two inner loops of clustered shape matching (spec shape_matching
//! §3.2 and §1.3 step 7a), where the SM-block benchmark spends most of its
//! time: a cluster's moment sums over its members ([`moments`]) and the
//! particles' goal sums over their clusters ([`apply_chunk`]).
//!
//! Four lanes at a time (SSE on every x86-64, NEON on aarch64, through
//! `wide`), with members alternating between two accumulators so that
//! consecutive members do not wait on each other's adds; no fused
//! multiply-add, so the result is the same on every CPU and, as every
//! cluster and particle is summed by one thread in a fixed order, for any
//! thread count. An eight-lane AVX twin of both loops (two members per
//! register, same bits) measured no faster on the SM-block (2.67 against
//! 2.69 ms of shape matching per step at 39.3K particles): the loops wait
//! on their loads as much as on arithmetic, so it was not kept.

use super::shape_match::{F4, GoalBlock, GoalEntry, f4, xyz};
use crate::math::Vec3;

/// Point `i` of a flat `[x, y, z, x, y, z, ...]` view as four lanes in one
/// 16-byte load; lane 3 is the next point's x (never read: every use of
/// lane 3 below is lane-wise and dropped), 0 for the last point.
#[inline(always)]
fn load4(flat: &[f32], i: usize) -> F4 {
    match flat.get(3 * i..3 * i + 4) {
        Some(s) => F4::new(<[f32; 4]>::try_from(s).unwrap_or_default()),
        None => F4::new([flat[3 * i], flat[3 * i + 1], flat[3 * i + 2], 0.0]),
    }
}

/// A membership's `(q, cluster bits)` as four lanes (lane 3 never read).
#[inline(always)]
fn q4(e: &GoalEntry) -> F4 {
    F4::new(bytemuck::cast::<GoalEntry, [f32; 4]>(*e))
}

/// `K (g − x)` of one membership (see [`GoalBlock`]), summed as a tree.
#[inline(always)]
fn goal_term(b: &GoalBlock, e: &GoalEntry, x: F4) -> F4 {
    let k = F4::splat(b.anchor.to_array()[3]);
    let [qx, qy, qz, _] = q4(e).to_array();
    (b.cols[0] * F4::splat(qx) + b.cols[1] * F4::splat(qy))
        + (b.cols[2] * F4::splat(qz) + (b.cols[3] + (b.anchor - x) * k))
}

/// What [`moments`] sums: the rows of `Σ d (μq, μ)ᵀ` (lane 3 unused) and,
/// in f64, `Σ μ d` with `d = x − o`, o the first member's position.
pub(crate) struct Moments {
    /// Rows of `Σ μ d qᵀ` (lanes 0–2).
    pub rows: [F4; 3],
    /// `Σ μ d`, m·kg.
    pub s: Vec3<f64>,
}

/// One member's share of the moment rows (into one of the two accumulator
/// sets); returns its share `μ d` of the centre sum.
#[inline(always)]
fn moment_term(x: F4, o: F4, w: F4, rows: &mut [F4; 3]) -> F4 {
    let d = x - o;
    let [dx, dy, dz, _] = d.to_array();
    rows[0] += w * F4::splat(dx);
    rows[1] += w * F4::splat(dy);
    rows[2] += w * F4::splat(dz);
    d * F4::splat(w.to_array()[3])
}

/// The centre sum adds its f32 partial sums (two members each, one per
/// accumulator: one more rounding of the size of the f32 products μ d
/// themselves) in f64. The goals' momentum balance rests on this sum (see
/// `ClusterFit`), so it stays at two members although partial sums of
/// eight saved 0.2 ms per step on the 39.3K-particle SM-block.
#[inline(always)]
fn flush(s: &mut Vec3<f64>, even: F4, odd: F4) {
    *s += xyz(even + odd).cast::<f64>();
}

/// The moment sums of one cluster: `member` indexes the points of `flat`
/// (`[x, y, z, ...]`), `weighted` is `(μq, μ)` per member, `o` the first
/// member's position. Pairs of members come as chunks of two, so the loop
/// bounds-checks nothing but the positions' loads.
pub(crate) fn moments(flat: &[f32], member: &[u32], weighted: &[F4], o: Vec3<f32>) -> Moments {
    let o = f4(o, 0.0);
    let (mut even, mut odd) = ([F4::default(); 3], [F4::default(); 3]);
    let mut s = Vec3::zero();
    let n = member.len().min(weighted.len());
    let (mut mpairs, mut wpairs) = (member[..n].chunks_exact(2), weighted[..n].chunks_exact(2));
    for (m, w) in (&mut mpairs).zip(&mut wpairs) {
        let pa = moment_term(load4(flat, m[0] as usize), o, w[0], &mut even);
        let pb = moment_term(load4(flat, m[1] as usize), o, w[1], &mut odd);
        flush(&mut s, pa, pb);
    }
    if let (&[a], &[wa]) = (mpairs.remainder(), wpairs.remainder()) {
        let pa = moment_term(load4(flat, a as usize), o, wa, &mut even);
        flush(&mut s, pa, F4::default());
    }
    Moments {
        rows: [even[0] + odd[0], even[1] + odd[1], even[2] + odd[2]],
        s,
    }
}

/// What the goal pass reads besides the positions.
pub(crate) struct GoalPass<'a> {
    /// Memberships' offsets per particle (`Memberships::offset`).
    pub offset: &'a [u32],
    /// Inverse masses (0: kinematic, stays).
    pub w: &'a [f32],
    /// Memberships in particle order.
    pub goal: &'a [GoalEntry],
    /// Goal blocks per cluster.
    pub block: &'a [GoalBlock],
    /// Over-relaxation ω.
    pub sor: f32,
}

/// Spec §1.3 step 7a for the particles `start..start + xs.len()`: each
/// moves by `ω Σ K (g − x) / n` over its n memberships.
pub(crate) fn apply_chunk(xs: &mut [Vec3<f32>], start: usize, pass: &GoalPass<'_>) {
    for (j, x) in xs.iter_mut().enumerate() {
        let i = start + j;
        let (a, b) = (pass.offset[i] as usize, pass.offset[i + 1] as usize);
        if a == b || pass.w[i] == 0.0 {
            continue;
        }
        *x += goal_sum(&pass.goal[a..b], pass.block, *x) * (pass.sor / (b - a) as f32);
    }
}

/// `Σ K (g − x)` over one particle's memberships `goal`.
#[inline(always)]
pub(crate) fn goal_sum(goal: &[GoalEntry], block: &[GoalBlock], x: Vec3<f32>) -> Vec3<f32> {
    let x = f4(x, 0.0);
    let (mut even, mut odd) = (F4::default(), F4::default());
    let mut pairs = goal.chunks_exact(2);
    for p in &mut pairs {
        even += goal_term(&block[p[0].cluster as usize], &p[0], x);
        odd += goal_term(&block[p[1].cluster as usize], &p[1], x);
    }
    if let [e] = pairs.remainder() {
        even += goal_term(&block[e.cluster as usize], e, x);
    }
    xyz(even + odd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::Rng;

    /// Both sums against plain f64 sums, for every member count from 0 to
    /// 17 (even, odd, with and without a pending partial sum).
    #[test]
    fn kernels_match_f64_sums() {
        let mut rng = Rng::new(11);
        let xs: Vec<Vec3<f32>> = (0..64)
            .map(|_| rng.vec(1.0).cast::<f32>() + Vec3::splat(3.0))
            .collect();
        let flat: &[f32] = bytemuck::cast_slice(&xs);
        let blocks: Vec<GoalBlock> = (0..9)
            .map(|_| {
                let c = |rng: &mut Rng| f4(rng.vec(1.0).cast::<f32>(), 0.0);
                GoalBlock {
                    cols: [c(&mut rng), c(&mut rng), c(&mut rng), c(&mut rng)],
                    anchor: f4(rng.vec(1.0).cast::<f32>() + Vec3::splat(3.0), 0.7),
                }
            })
            .collect();
        for n in 0..18usize {
            // The last point (index 63) is among the members: its load has no next point.
            let member: Vec<u32> = (0..n).map(|k| ((k * 37 + 63) % 64) as u32).collect();
            let weighted: Vec<F4> = (0..n)
                .map(|_| {
                    let mu = 0.1 + rng.vec(0.05).x.abs() as f32;
                    f4(rng.vec(0.4).cast::<f32>() * mu, mu)
                })
                .collect();
            let goal: Vec<GoalEntry> = (0..n)
                .map(|k| {
                    let q = rng.vec(0.4).cast::<f32>();
                    GoalEntry {
                        q: [q.x, q.y, q.z],
                        cluster: (k % 9) as u32,
                    }
                })
                .collect();
            let o = xs[member.first().copied().unwrap_or(0) as usize];
            let m = moments(flat, &member, &weighted, o);
            let mut s = Vec3::<f64>::zero();
            let mut rows = [Vec3::<f64>::zero(); 3];
            for (&i, w) in member.iter().zip(&weighted) {
                let d = (xs[i as usize] - o).cast::<f64>();
                let [qx, qy, qz, mu] = w.to_array().map(f64::from);
                s += d * mu;
                for (k, row) in rows.iter_mut().enumerate() {
                    *row += Vec3::new(qx, qy, qz) * d[k];
                }
            }
            assert!((m.s - s).norm() < 1e-5, "n={n}: {:?} vs {s:?}", m.s);
            for (k, (got, want)) in m.rows.iter().zip(&rows).enumerate() {
                let got = xyz(*got).cast::<f64>();
                assert!((got - *want).norm() < 1e-5, "n={n}: row {k} {got:?} vs {want:?}");
            }
            let x = xs[7];
            let g = goal_sum(&goal, &blocks, x).cast::<f64>();
            let mut want = Vec3::<f64>::zero();
            for e in &goal {
                let b = &blocks[e.cluster as usize];
                let k = f64::from(b.anchor.to_array()[3]);
                let col = |j: usize| xyz(b.cols[j]).cast::<f64>();
                let anchor = xyz(b.anchor).cast::<f64>();
                want += col(0) * f64::from(e.q[0])
                    + col(1) * f64::from(e.q[1])
                    + col(2) * f64::from(e.q[2])
                    + col(3)
                    + (anchor - x.cast::<f64>()) * k;
            }
            assert!(
                (g - want).norm() < 1e-5 * (1.0 + want.norm()),
                "n={n}: {g:?} vs {want:?}"
            );
        }
    }
}
