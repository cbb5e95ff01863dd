//! Strand generators: root grids, straight strands, helices (lengths in m).
//!
//! Split into "where do strands start" ([`grid_roots`]) and "what shape is
//! each strand" ([`straight_curves`], [`helix_curves`]) so any root layout
//! (a grid, points sampled on a scalp mesh, a user's array) combines with
//! any shape.

use super::Curves;
use super::params::{budget, plane_basis};
use crate::math::Vec3;
use crate::validate::{at_least, direction as unit_direction, finite_vec, positive};
use crate::{Result, invalid};
use core::f64::consts::PI;

/// A `counts.0 × counts.1` grid of root points `spacing` apart, centered on
/// `center`, in the plane through `center` orthogonal to `axis_dir`.
///
/// The in-plane axes `(e1, e2)` satisfy `e1 × e2 = axis` (for the y axis:
/// `e1 = +z`, `e2 = +x`). Root `(i, j)` has index `j * counts.0 + i` and
/// position `center + (i − (counts.0−1)/2) spacing e1 + (j − (counts.1−1)/2) spacing e2`.
pub fn grid_roots(
    center: Vec3<f64>,
    axis_dir: Vec3<f64>,
    counts: (usize, usize),
    spacing: f64,
) -> Result<Vec<Vec3<f64>>> {
    finite_vec("center", center)?;
    let a = unit_direction("axis_dir", axis_dir)?;
    let n0 = at_least("counts[0]", counts.0, 1)?;
    let n1 = at_least("counts[1]", counts.1, 1)?;
    let s = positive("spacing", spacing)?;
    budget("grid_roots", &[n0, n1])?;
    let (e1, e2) = plane_basis(a);
    let mut roots = Vec::with_capacity(n0 * n1);
    for j in 0..n1 {
        for i in 0..n0 {
            let u = (i as f64 - 0.5 * (n0 - 1) as f64) * s;
            let w = (j as f64 - 0.5 * (n1 - 1) as f64) * s;
            roots.push(center + e1 * u + e2 * w);
        }
    }
    Ok(roots)
}

fn check_roots(roots: &[Vec3<f64>]) -> Result<()> {
    if roots.is_empty() {
        return invalid!("roots must hold at least one point, got none");
    }
    match roots.iter().position(|r| !r.is_finite()) {
        Some(i) => invalid!("root {i} has a non-finite coordinate; remove NaN/inf values"),
        None => Ok(()),
    }
}

/// One straight strand per root, from the root along `direction`, of length
/// `length` (m) split into `segments` (≥ 1) equal segments.
///
/// Strand `s` starts at `roots[s]` (its point 0, the one a solver usually
/// pins) and has `segments + 1` points.
pub fn straight_curves(
    roots: &[Vec3<f64>],
    direction: Vec3<f64>,
    length: f64,
    segments: usize,
) -> Result<Curves> {
    check_roots(roots)?;
    let d = unit_direction("direction", direction)?;
    let len = positive("length", length)?;
    let m = at_least("segments", segments, 1)?;
    budget("straight_curves", &[roots.len(), m.saturating_add(1)])?;
    let mut points = Vec::with_capacity(roots.len() * (m + 1));
    let mut offsets = Vec::with_capacity(roots.len() + 1);
    offsets.push(0i64);
    for &r in roots {
        points.extend((0..=m).map(|k| r + d * (len * k as f64 / m as f64)));
        offsets.push(points.len() as i64);
    }
    Curves::new(points, &offsets)
}

/// One right-handed helix per root, winding around a line through the root
/// parallel to `axis_dir`.
///
/// - `radius` (m) > 0: distance of the strand from its axis.
/// - `pitch` (m) > 0: rise along the axis per full turn.
/// - `turns` > 0: number of turns (need not be an integer).
/// - `points_per_turn` ≥ 3: resolution; the strand gets
///   `ceil(turns · points_per_turn)` equal-angle segments, so it ends exactly
///   after `turns` turns.
///
/// Point `k` of strand `s` is `roots[s] + radius (cos t e1 + sin t e2) +
/// pitch t / (2π) axis` with `t = 2π turns k / segments` and `(e1, e2)` as in
/// [`grid_roots`]: counter-clockwise seen from `+axis`, rising along it. The
/// root is the helix's axis point, not a strand point, so strands on a
/// [`grid_roots`] grid spaced more than `2 radius` apart never touch.
pub fn helix_curves(
    roots: &[Vec3<f64>],
    axis_dir: Vec3<f64>,
    radius: f64,
    pitch: f64,
    turns: f64,
    points_per_turn: usize,
) -> Result<Curves> {
    check_roots(roots)?;
    let a = unit_direction("axis_dir", axis_dir)?;
    let r = positive("radius", radius)?;
    let pitch = positive("pitch", pitch)?;
    let turns = positive("turns", turns)?;
    let ppt = at_least("points_per_turn", points_per_turn, 3)?;
    let segments_f = (turns * ppt as f64).ceil();
    if segments_f > super::MAX_GENERATED_POINTS as f64 {
        return invalid!("turns ({turns}) × points_per_turn ({ppt}) is too many points per strand");
    }
    let m = segments_f as usize;
    budget("helix_curves", &[roots.len(), m + 1])?;
    let (e1, e2) = plane_basis(a);
    let mut points = Vec::with_capacity(roots.len() * (m + 1));
    let mut offsets = Vec::with_capacity(roots.len() + 1);
    offsets.push(0i64);
    for &root in roots {
        for k in 0..=m {
            let t = 2.0 * PI * turns * k as f64 / m as f64;
            points.push(root + (e1 * t.cos() + e2 * t.sin()) * r + a * (pitch * t / (2.0 * PI)));
        }
        offsets.push(points.len() as i64);
    }
    Curves::new(points, &offsets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn grid_roots_are_centered_and_spaced() {
        let c = Vec3::new(0.5, 1.0, -0.2);
        let roots = grid_roots(c, Vec3::new(0.0, 2.0, 0.0), (3, 2), 0.1).unwrap();
        assert_eq!(roots.len(), 6);
        let mean = roots.iter().fold(Vec3::zero(), |s, &r| s + r) * (1.0 / 6.0);
        assert!((mean - c).norm() < 1e-15);
        assert!(roots.iter().all(|r| (r.y - c.y).abs() < 1e-15));
        assert!(((roots[1] - roots[0]).norm() - 0.1).abs() < 1e-15);
        assert!(((roots[3] - roots[0]).norm() - 0.1).abs() < 1e-15);
        assert!(matches!(
            grid_roots(c, Vec3::zero(), (3, 2), 0.1),
            Err(Error::InvalidInput(m)) if m.contains("axis_dir")
        ));
        assert!(matches!(
            grid_roots(c, Vec3::unit(1), (0, 2), 0.1),
            Err(Error::InvalidInput(m)) if m.contains("counts[0]")
        ));
    }

    #[test]
    fn straight_strands_have_requested_length() {
        let roots = vec![Vec3::zero(), Vec3::new(1.0, 0.0, 0.0)];
        let c = straight_curves(&roots, Vec3::new(0.0, -3.0, 0.0), 0.6, 6).unwrap();
        assert_eq!((c.num_strands(), c.num_points()), (2, 14));
        for (s, l) in c.strand_lengths().into_iter().enumerate() {
            assert!((l - 0.6).abs() < 1e-14);
            let p = c.strand_points(s).unwrap();
            assert_eq!(p[0], roots[s]);
            assert!((p[6] - (roots[s] + Vec3::new(0.0, -0.6, 0.0))).norm() < 1e-15);
        }
        assert!(matches!(
            straight_curves(&roots, Vec3::unit(1), -1.0, 6),
            Err(Error::InvalidInput(m)) if m.contains("length")
        ));
        assert!(matches!(
            straight_curves(&[], Vec3::unit(1), 1.0, 6),
            Err(Error::InvalidInput(m)) if m.contains("roots")
        ));
        assert!(matches!(
            straight_curves(&roots, Vec3::unit(1), 1.0, 0),
            Err(Error::InvalidInput(m)) if m.contains("segments")
        ));
    }

    #[test]
    fn helix_geometry_matches_analytic() {
        let axis = Vec3::new(1.0, 1.0, 0.0);
        let a = axis.normalize_or_zero();
        let roots = grid_roots(Vec3::new(0.0, 0.5, 0.0), axis, (2, 2), 0.05).unwrap();
        let (r, pitch, turns, ppt) = (0.01, 0.02, 2.5, 16);
        let c = helix_curves(&roots, axis, r, pitch, turns, ppt).unwrap();
        assert_eq!(c.num_strands(), 4);
        assert_eq!(c.num_points(), 4 * 41);
        // Polyline length of a helix sampled at equal angles: m chords of length
        // sqrt((2 r sin(Δt/2))² + (pitch Δt / 2π)²).
        let m = 40.0;
        let dt = 2.0 * PI * turns / m;
        let chord = ((2.0 * r * (dt / 2.0).sin()).powi(2) + (pitch * dt / (2.0 * PI)).powi(2)).sqrt();
        for (s, l) in c.strand_lengths().into_iter().enumerate() {
            assert!((l - m * chord).abs() < 1e-13, "strand {s}: {l} vs {}", m * chord);
            let p = c.strand_points(s).unwrap();
            for q in p {
                let d = *q - roots[s];
                let radial = d - a * d.dot(a);
                assert!((radial.norm() - r).abs() < 1e-14);
            }
            let rise = (p[p.len() - 1] - p[0]).dot(a);
            assert!((rise - pitch * turns).abs() < 1e-14);
            // Right-handed: (p1 − p0) × (p2 − p1) has a positive axis component.
            assert!((p[1] - p[0]).cross(p[2] - p[1]).dot(a) > 0.0);
        }
        assert!(matches!(
            helix_curves(&roots, axis, r, pitch, turns, 2),
            Err(Error::InvalidInput(m)) if m.contains("points_per_turn")
        ));
        assert!(matches!(
            helix_curves(&roots, axis, r, 0.0, turns, 8),
            Err(Error::InvalidInput(m)) if m.contains("pitch")
        ));
    }
}
