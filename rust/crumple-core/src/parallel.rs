//! Deterministic parallel helpers.
//!
//! CPU results must not depend on the thread count, so reductions use a fixed
//! chunking (independent of rayon's pool size) and combine the partial results
//! in chunk order. No floating-point atomics anywhere.

use rayon::prelude::*;

/// Fixed chunk length for ordered reductions. Chosen once so that the
/// summation tree is the same whatever the number of threads.
pub const REDUCE_CHUNK: usize = 4096;

/// Threads in rayon's current pool (the global one unless inside `install`).
pub fn current_num_threads() -> usize {
    rayon::current_num_threads()
}

/// Sum of `f(i)` over `0..n` with a summation order that does not depend on
/// the number of threads: chunks of [`REDUCE_CHUNK`] summed sequentially,
/// then the chunk sums added left to right.
pub fn ordered_sum<F>(n: usize, f: F) -> f64
where
    F: Fn(usize) -> f64 + Sync,
{
    ordered_sum_with(n, f, &mut Vec::new())
}

/// [`ordered_sum`] with the chunk sums kept in `partial`, whose capacity is
/// reused: no allocation once it has grown, for reductions inside a step
/// loop (the cloth solver's conjugate gradient). Same summation order.
pub fn ordered_sum_with<F>(n: usize, f: F, partial: &mut Vec<f64>) -> f64
where
    F: Fn(usize) -> f64 + Sync,
{
    let chunks = n.div_ceil(REDUCE_CHUNK);
    (0..chunks)
        .into_par_iter()
        .map(|c| {
            let lo = c * REDUCE_CHUNK;
            let hi = (lo + REDUCE_CHUNK).min(n);
            let mut s = 0.0;
            for i in lo..hi {
                s += f(i);
            }
            s
        })
        .collect_into_vec(partial);
    partial.iter().sum()
}

/// Calls `f(i, segment_i)` in parallel for the segments of `data` delimited by
/// the non-decreasing `offsets` (`segment_i = data[offsets[i]..offsets[i+1]]`).
/// Safe disjoint mutable access by recursive halving with `split_at_mut`;
/// each segment is written by exactly one task, so the result does not depend
/// on the thread count. Used where a row owns a variable-length slice (the
/// cloth solver's block rows of the system matrix).
pub fn for_each_segment_mut<T, F>(data: &mut [T], offsets: &[usize], f: &F)
where
    T: Send,
    F: Fn(usize, &mut [T]) + Sync,
{
    fn go<T: Send, F: Fn(usize, &mut [T]) + Sync>(data: &mut [T], offsets: &[usize], first: usize, f: &F) {
        let n = offsets.len() - 1;
        // Below this many segments the recursion costs more than it saves.
        if n <= 64 {
            let base = offsets[0];
            let mut rest = data;
            for i in 0..n {
                let (seg, tail) = rest.split_at_mut(offsets[i + 1] - offsets[i]);
                debug_assert!(offsets[i] >= base);
                f(first + i, seg);
                rest = tail;
            }
            return;
        }
        let mid = n / 2;
        let (lo, hi) = data.split_at_mut(offsets[mid] - offsets[0]);
        rayon::join(
            || go(lo, &offsets[..=mid], first, f),
            || go(hi, &offsets[mid..], first + mid, f),
        );
    }
    if offsets.len() < 2 {
        return;
    }
    let end = offsets[offsets.len() - 1];
    go(&mut data[offsets[0]..end], offsets, 0, f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_sum_is_thread_count_independent() {
        let f = |i: usize| ((i as f64) * 0.37).sin() * 1e-3 + 1.0 / (i as f64 + 1.0);
        let n = 100_003;
        let bits = crate::test_util::same_across_threads(|| ordered_sum(n, f).to_bits());
        let a = f64::from_bits(bits);
        assert!(a.is_finite() && a > 0.0);
    }

    #[test]
    fn segments_are_visited_once_each() {
        let offsets: Vec<usize> = (0..=300)
            .map(|i| i * (i % 5))
            .scan(0, |acc, d| {
                *acc += d;
                Some(*acc)
            })
            .collect();
        let mut data = vec![0u32; *offsets.last().unwrap()];
        for_each_segment_mut(&mut data, &offsets, &|i, seg: &mut [u32]| {
            seg.iter_mut().for_each(|v| *v += i as u32 + 1)
        });
        for i in 0..offsets.len() - 1 {
            assert!(
                data[offsets[i]..offsets[i + 1]]
                    .iter()
                    .all(|&v| v == i as u32 + 1)
            );
        }
    }
}
