//! Shared helpers of the unit and integration tests (not API): the random
//! draws every test uses, on the crate's one generator, and the thread-pool
//! harness of the determinism tests (CPU results must not depend on the
//! thread count). Compiled into the library, small and dependency-free, so
//! the integration tests under `tests/` can use it as well.

use core::fmt::Debug;

use crate::geometry::SplitMix64;
use crate::math::{Mat3, Vec3};

/// The crate's generator ([`SplitMix64`]) with the draws the tests use. The
/// same seed gives the same stream everywhere.
#[derive(Clone, Debug)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(SplitMix64::new(seed))
    }

    /// The next raw 64-bit draw.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)`.
    pub fn unit_f64(&mut self) -> f64 {
        self.0.next_f64()
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.0.next_f64()
    }

    /// Uniform in `[-1, 1)`.
    pub fn sym(&mut self) -> f64 {
        2.0 * self.0.next_f64() - 1.0
    }

    /// Each component uniform in `[-amp, amp)`.
    pub fn vec(&mut self, amp: f64) -> Vec3<f64> {
        Vec3::new(self.sym(), self.sym(), self.sym()) * amp
    }

    /// Columns drawn by [`vec`](Self::vec)`(scale)`.
    pub fn mat(&mut self, scale: f64) -> Mat3<f64> {
        Mat3::from_cols(self.vec(scale), self.vec(scale), self.vec(scale))
    }

    /// Uniform in the box `[lo, hi)`.
    pub fn point(&mut self, lo: Vec3<f64>, hi: Vec3<f64>) -> Vec3<f64> {
        Vec3::new(
            self.uniform(lo.x, hi.x),
            self.uniform(lo.y, hi.y),
            self.uniform(lo.z, hi.z),
        )
    }

    /// Uniform on the unit sphere (rejection from the cube).
    pub fn unit(&mut self) -> Vec3<f64> {
        loop {
            let v = self.point(Vec3::splat(-1.0), Vec3::splat(1.0));
            let n = v.norm();
            if n > 0.1 && n <= 1.0 {
                return v * (1.0 / n);
            }
        }
    }

    /// A rotation about a random axis by an angle uniform in `[-π, π)`.
    pub fn rotation(&mut self) -> Mat3<f64> {
        let axis = loop {
            if let Some(a) = self.vec(1.0).try_normalize(0.1) {
                break a;
            }
        };
        Mat3::from_axis_angle(axis, core::f64::consts::PI * self.sym())
    }
}

/// Runs `f` on a rayon pool of `threads` threads.
pub fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool for a test")
        .install(f)
}

/// Runs `f` on pools of 1, 2 and 3 threads, asserts that the results are
/// equal (compare bit patterns, for example with [`bits`], to make "equal"
/// mean bitwise) and returns the one-thread result.
#[track_caller]
pub fn same_across_threads<R: PartialEq + Debug + Send>(f: impl Fn() -> R + Sync) -> R {
    let one = in_pool(1, &f);
    for threads in [2, 3] {
        let other = in_pool(threads, &f);
        assert!(
            one == other,
            "the result with {threads} threads differs from the one-thread result"
        );
    }
    one
}

/// The bit patterns of `points`, for bitwise comparisons.
pub fn bits(points: &[Vec3<f64>]) -> Vec<[u64; 3]> {
    points
        .iter()
        .map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()])
        .collect()
}

/// Largest absolute component over `points`.
pub fn max_abs(points: &[Vec3<f64>]) -> f64 {
    points.iter().map(|p| p.abs().max_element()).fold(0.0, f64::max)
}

/// Largest absolute component of `a − b`, pairwise.
pub fn max_diff(a: &[Vec3<f64>], b: &[Vec3<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (*p - *q).abs().max_element())
        .fold(0.0, f64::max)
}

/// Whether `faces` are closed and consistently oriented: every directed
/// edge a → b is used by one face, and its twin b → a by another (so every
/// edge has exactly two faces, traversed in opposite directions).
pub fn closed_and_oriented(faces: &[[u32; 3]]) -> bool {
    let mut e: Vec<(u32, u32)> = faces
        .iter()
        .flat_map(|t| (0..3).map(move |k| (t[k], t[(k + 1) % 3])))
        .collect();
    e.sort_unstable();
    e.windows(2).all(|w| w[0] != w[1]) && e.iter().all(|&(a, b)| e.binary_search(&(b, a)).is_ok())
}
