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
    let chunks = n.div_ceil(REDUCE_CHUNK);
    let partial: Vec<f64> = (0..chunks)
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
        .collect();
    partial.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_sum_is_thread_count_independent() {
        let f = |i: usize| ((i as f64) * 0.37).sin() * 1e-3 + 1.0 / (i as f64 + 1.0);
        let n = 100_003;
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let a = one.install(|| ordered_sum(n, f));
        let b = two.install(|| ordered_sum(n, f));
        assert_eq!(a.to_bits(), b.to_bits());
        assert!(a.is_finite() && a > 0.0);
    }
}
