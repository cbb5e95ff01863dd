//! A uniform grid over particle positions for the re-sampling and
//! cluster-building queries (radius up to one cell): sorted `(cell, index)`
//! keys, scanned over the 27 cells around a query. Results come in
//! ascending index order, so every query is deterministic.

use rayon::prelude::*;

use crate::math::Vec3;

/// A grid of cell size `h` over a set of points.
#[derive(Clone, Debug, Default)]
pub struct Grid {
    h: f32,
    keys: Vec<(u64, u32)>,
}

const BITS: u32 = 21;
const BIAS: i64 = 1 << (BITS - 1);

/// The cell of `x` in a grid of cell size `h`.
pub(super) fn cell(x: Vec3<f32>, h: f32) -> [i64; 3] {
    [
        (x.x / h).floor() as i64,
        (x.y / h).floor() as i64,
        (x.z / h).floor() as i64,
    ]
}

/// 21 bits per axis (cells within ±2²⁰ of the origin, far beyond any scene
/// at the spec's spacings); outside that range keys wrap, which only adds
/// candidates that the distance tests then drop.
pub(super) fn key(c: [i64; 3]) -> u64 {
    let m = (1u64 << BITS) - 1;
    let k = |v: i64| ((v + BIAS) as u64) & m;
    (k(c[2]) << (2 * BITS)) | (k(c[1]) << BITS) | k(c[0])
}

impl Grid {
    /// The grid of `points` (those where `keep` holds) with cells of `h`.
    pub fn build(&mut self, points: &[Vec3<f32>], h: f32, keep: impl Fn(usize) -> bool) {
        self.h = h;
        self.keys.clear();
        self.keys.extend(
            (0..points.len())
                .filter(|&i| keep(i))
                .map(|i| (key(cell(points[i], h)), i as u32)),
        );
        // Unique (cell, index) keys: the parallel sort gives the same order.
        self.keys.par_sort_unstable();
    }

    /// No point was kept.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Calls `f(j)` for every kept point in the 27 cells around `x`: cell by
    /// cell in (z, y, x) order, ascending `j` within a cell.
    pub(super) fn scan(&self, x: Vec3<f32>, mut f: impl FnMut(u32)) {
        self.scan_until(x, |j| {
            f(j);
            false
        });
    }

    /// Calls `f(j)` for the kept points in the 27 cells around `x` until it
    /// returns true; returns whether it did. x is the key's lowest field,
    /// so the three cells along x of each (y, z) row are consecutive keys:
    /// one binary search per row, nine in all.
    fn scan_until(&self, x: Vec3<f32>, mut f: impl FnMut(u32) -> bool) -> bool {
        let c = cell(x, self.h);
        for dz in -1..=1 {
            for dy in -1..=1 {
                let lo = key([c[0] - 1, c[1] + dy, c[2] + dz]);
                let hi = key([c[0] + 1, c[1] + dy, c[2] + dz]);
                if hi < lo {
                    // The row wraps the 21-bit x field (far outside any
                    // scene): fall back to one search per cell.
                    for dx in -1..=1 {
                        let k = key([c[0] + dx, c[1] + dy, c[2] + dz]);
                        let start = self.keys.partition_point(|e| e.0 < k);
                        for &(kk, j) in &self.keys[start..] {
                            if kk != k {
                                break;
                            }
                            if f(j) {
                                return true;
                            }
                        }
                    }
                    continue;
                }
                let start = self.keys.partition_point(|e| e.0 < lo);
                for &(kk, j) in &self.keys[start..] {
                    if kk > hi {
                        break;
                    }
                    if f(j) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Calls `f(j)` for every kept point `j` with `|points[j] − x| < radius`
    /// (`radius ≤ h`), in ascending `j`; `out` is scratch.
    pub fn within(&self, points: &[Vec3<f32>], x: Vec3<f32>, radius: f32, out: &mut Vec<u32>) {
        out.clear();
        let r2 = radius * radius;
        self.scan(x, |j| {
            if (points[j as usize] - x).norm_squared() < r2 {
                out.push(j);
            }
        });
        out.sort_unstable();
    }

    /// Whether a kept point lies closer than `radius` (≤ h) to `x`; stops at
    /// the first one found.
    pub fn any_within(&self, points: &[Vec3<f32>], x: Vec3<f32>, radius: f32) -> bool {
        let r2 = radius * radius;
        self.scan_until(x, |j| (points[j as usize] - x).norm_squared() < r2)
    }

    /// The nearest kept point other than `skip` within `radius` (ties: the lower index).
    pub fn nearest(
        &self,
        points: &[Vec3<f32>],
        x: Vec3<f32>,
        radius: f32,
        skip: usize,
    ) -> Option<(u32, f32)> {
        let mut best: Option<(u32, f32)> = None;
        self.scan(x, |j| {
            if j as usize == skip {
                return;
            }
            let d = (points[j as usize] - x).norm();
            if d < radius && best.is_none_or(|(bj, bd)| d < bd || (d == bd && j < bj)) {
                best = Some((j, d));
            }
        });
        best
    }
}
