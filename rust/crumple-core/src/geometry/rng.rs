//! A tiny deterministic random number generator for sampling.
//!
//! Sampling must give the same points for the same seed on every platform
//! and every release, so results and checkpoints are reproducible. A
//! hand-written SplitMix64 (Steele, Lea, Flood 2014) guarantees that without
//! a runtime dependency whose stream might change between versions; its
//! statistical quality is ample for jittering sample positions.

/// SplitMix64: 64 bits of state, a Weyl sequence passed through a mixing
/// function. Every seed, including 0, gives a good stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose stream is fully determined by `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits (every representable multiple
    /// of 2⁻⁵³), so it never returns 1.0.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `[0, n)` for `n > 0` (0 when `n == 0`). Uses the
    /// multiply-high reduction, whose bias (< n / 2⁶⁴) is irrelevant here.
    pub fn next_below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // Published test vector for seed 1234567 (Rosetta Code,
        // "Pseudo-random numbers/Splitmix64"), which matches Vigna's C code.
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn uniform_moments() {
        let mut r = SplitMix64::new(7);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| r.next_f64()).collect();
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
        assert!((var - 1.0 / 12.0).abs() < 0.002, "{var}");
        let mut counts = [0usize; 5];
        for _ in 0..n {
            counts[r.next_below(5)] += 1;
        }
        assert!(
            counts
                .iter()
                .all(|&c| (c as f64 - n as f64 / 5.0).abs() < 0.03 * n as f64),
            "{counts:?}"
        );
    }
}
