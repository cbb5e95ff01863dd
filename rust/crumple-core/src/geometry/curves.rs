//! Strands (hair, yarn, rods) as polylines packed into one point array.

use crate::math::Vec3;
use crate::{Result, invalid};
use core::ops::Range;

/// A segment shorter than this times the diagonal of the points' bounding
/// box counts as zero length. Relative, so the test is unit-free; 1e-12
/// only catches coincident points (up to rounding), never a fine but real
/// discretization.
pub const MIN_SEGMENT_RATIO: f64 = 1e-12;

/// A set of strands stored CSR-style: strand `s` is
/// `points[offsets[s]..offsets[s + 1]]` (positions in meters), consecutive
/// points joined by segments.
///
/// One flat array instead of a `Vec` per strand because that is what numpy
/// and the GPU exchange, and what an MPM particle list wants.
#[derive(Clone, Debug, PartialEq)]
pub struct Curves {
    points: Vec<Vec3<f64>>,
    offsets: Vec<u32>,
}

impl Curves {
    /// Validates and builds a strand set.
    ///
    /// `offsets` has one entry per strand plus one: it starts at 0, increases
    /// by at least 2 per strand (a strand needs one segment), and ends at
    /// `points.len()`. Points must be finite and no segment may have zero
    /// length (see [`MIN_SEGMENT_RATIO`]). `i64` offsets so a negative value
    /// from Python is reported, not wrapped. Errors are
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) naming the strand
    /// and point.
    pub fn new(points: Vec<Vec3<f64>>, offsets: &[i64]) -> Result<Self> {
        let n = points.len();
        if n > u32::MAX as usize {
            return invalid!("curves have {n} points; at most {} fit 32-bit indices", u32::MAX);
        }
        if offsets.len() < 2 {
            return invalid!(
                "curve offsets must hold at least 2 entries (0 and the number of points, {n}), got {} \
                 entries; a curve set needs at least one strand",
                offsets.len()
            );
        }
        if offsets[0] != 0 {
            return invalid!("curve offsets must start at 0, got offsets[0] = {}", offsets[0]);
        }
        for (s, w) in offsets.windows(2).enumerate() {
            let count = w[1].saturating_sub(w[0]);
            if count < 2 {
                return invalid!(
                    "strand {s} spans offsets[{s}] = {} to offsets[{}] = {}, i.e. {} points; offsets must \
                     increase and every strand needs at least 2 points",
                    w[0],
                    s + 1,
                    w[1],
                    count
                );
            }
            if w[1] > n as i64 {
                return invalid!(
                    "strand {s} ends at offsets[{}] = {}, past the {n} points; the last offset must equal \
                     the number of points",
                    s + 1,
                    w[1]
                );
            }
        }
        let last = offsets[offsets.len() - 1];
        if last != n as i64 {
            return invalid!(
                "curve offsets end at {last} but there are {n} points; the last offset must equal the \
                 number of points"
            );
        }
        let offsets: Vec<u32> = offsets.iter().map(|&o| o as u32).collect();

        let strand_of = |p: usize| offsets.partition_point(|&o| o as usize <= p) - 1;
        if let Some(p) = points.iter().position(|q| !q.is_finite()) {
            let s = strand_of(p);
            return invalid!(
                "point {p} (strand {s}, point {} of the strand) has a non-finite coordinate; remove NaN/inf \
                 values",
                p - offsets[s] as usize
            );
        }
        let first = points[0];
        let (lo, hi) = points.iter().fold((first, first), |(lo, hi), &q| {
            (lo.component_min(q), hi.component_max(q))
        });
        let min_len = MIN_SEGMENT_RATIO * (hi - lo).norm();
        for (s, w) in offsets.windows(2).enumerate() {
            for p in w[0] as usize..w[1] as usize - 1 {
                if (points[p + 1] - points[p]).norm() <= min_len {
                    return invalid!(
                        "strand {s} has a zero-length segment between points {p} and {} (they coincide); \
                         remove the repeated point",
                        p + 1
                    );
                }
            }
        }
        Ok(Self { points, offsets })
    }

    /// All points (m), strand after strand.
    pub fn points(&self) -> &[Vec3<f64>] {
        &self.points
    }

    /// CSR offsets, length `num_strands + 1`.
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// Number of strands.
    pub fn num_strands(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Total number of points.
    pub fn num_points(&self) -> usize {
        self.points.len()
    }

    /// Total number of segments (points minus strands).
    pub fn num_segments(&self) -> usize {
        self.points.len() - self.num_strands()
    }

    /// Point index range of strand `s`, or `None` if out of range.
    pub fn strand(&self, s: usize) -> Option<Range<usize>> {
        let a = *self.offsets.get(s)? as usize;
        let b = *self.offsets.get(s + 1)? as usize;
        Some(a..b)
    }

    /// Points of strand `s`, or `None` if out of range.
    pub fn strand_points(&self, s: usize) -> Option<&[Vec3<f64>]> {
        self.strand(s).map(|r| &self.points[r])
    }

    /// All segments as point index pairs `[i, i + 1]`, strand after strand
    /// (the order the rod and MPM solvers index segment state by).
    pub fn segments(&self) -> Vec<[u32; 2]> {
        let mut out = Vec::with_capacity(self.num_segments());
        for w in self.offsets.windows(2) {
            out.extend((w[0]..w[1] - 1).map(|i| [i, i + 1]));
        }
        out
    }

    /// Length (m) of each strand.
    pub fn strand_lengths(&self) -> Vec<f64> {
        self.offsets
            .windows(2)
            .map(|w| {
                let p = &self.points[w[0] as usize..w[1] as usize];
                p.windows(2).map(|s| (s[1] - s[0]).norm()).sum()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    fn line(n: usize, y: f64) -> Vec<Vec3<f64>> {
        (0..n).map(|i| Vec3::new(i as f64 * 0.1, y, 0.0)).collect()
    }

    fn err(r: Result<Curves>) -> String {
        match r {
            Err(Error::InvalidInput(m)) => m,
            other => panic!("expected InvalidInput, got {other:?}"),
        }
    }

    #[test]
    fn two_strands() {
        let mut p = line(3, 0.0);
        p.extend(line(4, 1.0));
        let c = Curves::new(p, &[0, 3, 7]).unwrap();
        assert_eq!((c.num_strands(), c.num_points(), c.num_segments()), (2, 7, 5));
        assert_eq!(c.strand(1), Some(3..7));
        assert_eq!(c.strand(2), None);
        assert_eq!(c.strand_points(0).unwrap().len(), 3);
        assert_eq!(c.segments(), vec![[0, 1], [1, 2], [3, 4], [4, 5], [5, 6]]);
        let l = c.strand_lengths();
        assert!((l[0] - 0.2).abs() < 1e-15 && (l[1] - 0.3).abs() < 1e-15);
    }

    #[test]
    fn bad_offsets_name_the_strand() {
        let p = line(6, 0.0);
        assert!(err(Curves::new(p.clone(), &[0])).contains("at least one strand"));
        assert!(err(Curves::new(p.clone(), &[1, 6])).contains("start at 0"));
        let m = err(Curves::new(p.clone(), &[0, 3, 4, 6]));
        assert!(m.contains("strand 1") && m.contains("at least 2 points"), "{m}");
        let m = err(Curves::new(p.clone(), &[0, 4, 2, 6]));
        assert!(m.contains("strand 1") && m.contains("increase"), "{m}");
        let m = err(Curves::new(p.clone(), &[0, -2, 6]));
        assert!(m.contains("strand 0"), "{m}");
        let m = err(Curves::new(p.clone(), &[0, 3, 5]));
        assert!(m.contains("end at 5") && m.contains("6 points"), "{m}");
        let m = err(Curves::new(p.clone(), &[0, 3, 8]));
        assert!(m.contains("strand 1") && m.contains("past"), "{m}");
        assert!(err(Curves::new(vec![], &[0, 0])).contains("strand 0"));
    }

    #[test]
    fn nan_and_zero_length_name_the_strand() {
        let mut p = line(6, 0.0);
        p[4].y = f64::NAN;
        let m = err(Curves::new(p, &[0, 2, 6]));
        assert!(
            m.contains("point 4") && m.contains("strand 1") && m.contains("point 2 of"),
            "{m}"
        );
        let mut p = line(6, 0.0);
        p[4] = p[3];
        let m = err(Curves::new(p, &[0, 2, 6]));
        assert!(m.contains("strand 1") && m.contains("points 3 and 4"), "{m}");
        // Across a strand boundary, coincident points are fine.
        let mut p = line(4, 0.0);
        p[2] = p[1];
        assert!(Curves::new(p, &[0, 2, 4]).is_ok());
    }
}
