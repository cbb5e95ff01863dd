//! Filling a region with points: a regular lattice, or Poisson-disk samples.
//!
//! Both are deterministic: the lattice trivially, Poisson disk for a given
//! `seed` through [`SplitMix64`] and a fixed visiting order.

use super::Region;
use super::params::budget;
use super::rng::SplitMix64;
use crate::Result;
use crate::math::Vec3;
use crate::validate::positive;

/// Candidates Bridson's algorithm tries around an active sample before
/// retiring it; 30 is the paper's value, a good balance of density and cost.
pub const POISSON_TRIES: usize = 30;

/// Regular cubic lattice points `spacing` (m) apart inside `region`.
///
/// The lattice is centered on the region's bounding box with
/// `n = ceil(extent / spacing)` points per axis (at least 1), so when the
/// extent is a multiple of the spacing the points are cell centers, half a
/// spacing from each face, and a box holds exactly `volume / spacing³`
/// points: each point stands for one `spacing³` cell, which is what MPM
/// particle volumes assume. Order: x fastest, then y, then z.
pub fn sample_lattice(region: &Region<'_>, spacing: f64) -> Result<Vec<Vec3<f64>>> {
    region.validate()?;
    let s = positive("spacing", spacing)?;
    let (lo, hi) = region.bounds();
    let center = (lo + hi) * 0.5;
    let extent = hi - lo;
    // The small slack keeps an extent that is a multiple of the spacing up to
    // rounding (1.0 / 0.1 = 10.000000000000002) from gaining a point.
    let count = |e: f64| ((e / s - 1e-9).ceil().max(1.0)).min(u32::MAX as f64) as usize;
    let n = [count(extent.x), count(extent.y), count(extent.z)];
    budget("sample_lattice", &n)?;
    let mut out = Vec::new();
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let offset = Vec3::new(
                    i as f64 - 0.5 * (n[0] - 1) as f64,
                    j as f64 - 0.5 * (n[1] - 1) as f64,
                    k as f64 - 0.5 * (n[2] - 1) as f64,
                );
                let p = center + offset * s;
                if region.contains(p) {
                    out.push(p);
                }
            }
        }
    }
    Ok(out)
}

/// Background grid of Bridson's algorithm: cells of side `r/√3`, so a cell
/// holds at most one sample and a conflict is within two cells.
struct DiskGrid {
    lower: Vec3<f64>,
    cell: f64,
    dims: [usize; 3],
    slots: Vec<u32>,
}

const EMPTY: u32 = u32::MAX;

impl DiskGrid {
    fn coord(&self, p: Vec3<f64>) -> [usize; 3] {
        let mut c = [0usize; 3];
        for (a, slot) in c.iter_mut().enumerate() {
            let t = ((p[a] - self.lower[a]) / self.cell).floor().max(0.0) as usize;
            *slot = t.min(self.dims[a] - 1);
        }
        c
    }

    fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    /// No existing sample closer than `r` (its own cell must be free too, so
    /// a cell never holds two samples even at the rounding edge).
    fn far_enough(&self, samples: &[Vec3<f64>], p: Vec3<f64>, r2: f64) -> bool {
        let c = self.coord(p);
        if self.slots[self.index(c)] != EMPTY {
            return false;
        }
        let range = |a: usize| c[a].saturating_sub(2)..(c[a] + 3).min(self.dims[a]);
        for z in range(2) {
            for y in range(1) {
                for x in range(0) {
                    let s = self.slots[self.index([x, y, z])];
                    if s != EMPTY && (samples[s as usize] - p).norm_squared() < r2 {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// Poisson-disk samples inside `region`: no two closer than `radius` (m),
/// and (nearly) no room left for another one.
///
/// Bridson 2007, "Fast Poisson disk sampling in arbitrary dimensions": a
/// background grid of cell side `radius/√3`, an active list, and up to
/// [`POISSON_TRIES`] candidates drawn uniformly from the spherical shell
/// `[radius, 2·radius]` around an active sample. One addition: instead of a
/// single random start, every grid cell is visited in order and, if it is
/// empty, one random point in it is tried as a new start. This restarts the
/// front in parts of the region it cannot reach (several components, thin
/// necks) and fills gaps the random front left, at the cost of one extra
/// candidate per cell. The result depends only on the region, `radius` and
/// `seed`.
pub fn sample_poisson_disk(region: &Region<'_>, radius: f64, seed: u64) -> Result<Vec<Vec3<f64>>> {
    region.validate()?;
    let r = positive("radius", radius)?;
    let (lo, hi) = region.bounds();
    let cell = r / 3f64.sqrt();
    let dim = |e: f64| ((e / cell).ceil().max(1.0)).min(u32::MAX as f64) as usize;
    let extent = hi - lo;
    let dims = [dim(extent.x), dim(extent.y), dim(extent.z)];
    let num_cells = budget("sample_poisson_disk", &dims)?;
    let mut grid = DiskGrid {
        lower: lo,
        cell,
        dims,
        slots: vec![EMPTY; num_cells],
    };
    let mut rng = SplitMix64::new(seed);
    let mut samples: Vec<Vec3<f64>> = Vec::new();
    let mut active: Vec<u32> = Vec::new();
    let r2 = r * r;

    let add = |p: Vec3<f64>, grid: &mut DiskGrid, samples: &mut Vec<Vec3<f64>>, active: &mut Vec<u32>| {
        let c = grid.coord(p);
        let i = grid.index(c);
        grid.slots[i] = samples.len() as u32;
        active.push(samples.len() as u32);
        samples.push(p);
    };

    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                if grid.slots[grid.index([x, y, z])] != EMPTY {
                    continue;
                }
                let u = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64());
                let start = lo + (Vec3::new(x as f64, y as f64, z as f64) + u) * cell;
                if !region.contains(start) || !grid.far_enough(&samples, start, r2) {
                    continue;
                }
                add(start, &mut grid, &mut samples, &mut active);
                while !active.is_empty() {
                    let slot = rng.next_below(active.len());
                    let center = samples[active[slot] as usize];
                    let mut placed = false;
                    for _ in 0..POISSON_TRIES {
                        let q = center + shell_offset(&mut rng, r);
                        if region.contains(q) && grid.far_enough(&samples, q, r2) {
                            add(q, &mut grid, &mut samples, &mut active);
                            placed = true;
                            break;
                        }
                    }
                    if !placed {
                        active.swap_remove(slot);
                    }
                }
            }
        }
    }
    Ok(samples)
}

/// Uniform random point of the shell `r ≤ |d| ≤ 2r` (uniform in volume,
/// as Bridson prescribes): a direction by rejection from the unit cube,
/// radius by inverting the shell's volume fraction.
fn shell_offset(rng: &mut SplitMix64, r: f64) -> Vec3<f64> {
    let dir = loop {
        let v = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) * 2.0 - Vec3::splat(1.0);
        let n2 = v.norm_squared();
        if n2 > 1e-12 && n2 <= 1.0 {
            break v * (1.0 / n2.sqrt());
        }
    };
    let u = rng.next_f64();
    dir * (r * (1.0 + 7.0 * u).cbrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::geometry::{MeshInside, torus_mesh, uv_sphere};
    use core::f64::consts::PI;

    fn boxed() -> Region<'static> {
        Region::Box {
            lower: Vec3::new(-0.2, 0.1, 0.3),
            upper: Vec3::new(0.8, 0.6, 1.1),
        }
    }

    #[test]
    fn lattice_in_box_is_exact() {
        let pts = sample_lattice(&boxed(), 0.1).unwrap();
        assert_eq!(pts.len(), 10 * 5 * 8);
        assert!(pts.iter().all(|&p| boxed().contains(p)));
        // Cell centers: the first point is half a spacing in from the corner.
        assert!((pts[0] - Vec3::new(-0.15, 0.15, 0.35)).norm() < 1e-12);
        let expected = boxed().volume() / 1e-3;
        assert!((pts.len() as f64 - expected).abs() < 1e-6);
    }

    #[test]
    fn lattice_in_sphere_and_mesh_counts_match_volume() {
        let c = Vec3::new(0.5, 0.5, 0.5);
        let s = 0.02;
        let ball = Region::Sphere {
            center: c,
            radius: 0.3,
        };
        let pts = sample_lattice(&ball, s).unwrap();
        assert!(pts.iter().all(|p| (*p - c).norm() <= 0.3));
        let ratio = pts.len() as f64 / (ball.volume() / s.powi(3));
        assert!((ratio - 1.0).abs() < 0.02, "sphere: {ratio}");

        let torus = torus_mesh(c, 0.3, 0.1, 64, 32).unwrap();
        let inside = MeshInside::new(&torus).unwrap();
        let region = Region::Mesh(&inside);
        let pts = sample_lattice(&region, s).unwrap();
        assert!(pts.iter().all(|&p| inside.contains(p)));
        // Within the tube, up to the polygonal surface's deviation.
        for p in &pts {
            let rho = ((p.x - c.x).powi(2) + (p.z - c.z).powi(2)).sqrt();
            assert!(((rho - 0.3).powi(2) + (p.y - c.y).powi(2)).sqrt() <= 0.1 + 1e-9);
        }
        let ratio = pts.len() as f64 / (region.volume() / s.powi(3));
        assert!((ratio - 1.0).abs() < 0.03, "torus: {ratio}");
    }

    #[test]
    fn lattice_rejects_bad_input() {
        assert!(
            matches!(sample_lattice(&boxed(), 0.0), Err(Error::InvalidInput(m)) if m.contains("spacing"))
        );
        assert!(matches!(sample_lattice(&boxed(), 1e-6), Err(Error::InvalidInput(m)) if m.contains("limit")));
        let flat = Region::Box {
            lower: Vec3::zero(),
            upper: Vec3::new(1.0, 0.0, 1.0),
        };
        assert!(matches!(sample_lattice(&flat, 0.1), Err(Error::InvalidInput(m)) if m.contains("lower")));
        let ball = Region::Sphere {
            center: Vec3::zero(),
            radius: f64::NAN,
        };
        assert!(matches!(sample_lattice(&ball, 0.1), Err(Error::InvalidInput(m)) if m.contains("radius")));
    }

    fn min_pair_distance2(pts: &[Vec3<f64>]) -> f64 {
        let mut best = f64::INFINITY;
        for i in 0..pts.len() {
            for j in i + 1..pts.len() {
                best = best.min((pts[i] - pts[j]).norm_squared());
            }
        }
        best
    }

    #[test]
    fn poisson_in_box_is_separated_dense_and_deterministic() {
        let r = 0.05;
        let pts = sample_poisson_disk(&boxed(), r, 42).unwrap();
        assert!(pts.iter().all(|&p| boxed().contains(p)));
        assert!(min_pair_distance2(&pts) >= r * r);
        // Volume fraction of disjoint balls of radius r/2: a maximal sampling
        // in 3D reaches about 0.3 (random sequential adsorption jams at 0.38);
        // far below means holes, above is impossible without overlaps.
        let fraction = pts.len() as f64 * (PI / 6.0) * r.powi(3) / boxed().volume();
        assert!(fraction > 0.22 && fraction < 0.42, "fraction {fraction}");
        // No hole bigger than the disk: every probe has a sample within 2r.
        let mut rng = SplitMix64::new(99);
        let (lo, hi) = boxed().bounds();
        for _ in 0..2000 {
            let u = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64());
            let q = lo + (hi - lo).component_mul(u);
            let d2 = pts
                .iter()
                .map(|p| (*p - q).norm_squared())
                .fold(f64::INFINITY, f64::min);
            assert!(d2 < 4.0 * r * r, "hole around {q:?}");
        }
        assert_eq!(pts, sample_poisson_disk(&boxed(), r, 42).unwrap());
        assert_ne!(pts, sample_poisson_disk(&boxed(), r, 43).unwrap());
    }

    #[test]
    fn poisson_in_sphere_mesh_and_disconnected_regions() {
        let c = Vec3::new(0.0, 1.0, 0.0);
        let r = 0.04;
        let ball = Region::Sphere {
            center: c,
            radius: 0.25,
        };
        let pts = sample_poisson_disk(&ball, r, 7).unwrap();
        assert!(pts.iter().all(|p| (*p - c).norm() <= 0.25));
        assert!(min_pair_distance2(&pts) >= r * r);

        // Two separate balls in one mesh: both must be filled.
        let a = uv_sphere(Vec3::new(-0.5, 0.0, 0.0), 0.2, 16, 32).unwrap();
        let b = uv_sphere(Vec3::new(0.5, 0.0, 0.0), 0.2, 16, 32).unwrap();
        let (mut v, fa) = a.into_parts();
        let (vb, fb) = b.into_parts();
        let shift = v.len() as i64;
        v.extend(vb);
        let mut faces: Vec<[i64; 3]> = fa.iter().map(|t| t.map(i64::from)).collect();
        faces.extend(fb.iter().map(|t| t.map(|i| i64::from(i) + shift)));
        let two = crate::geometry::TriMesh::new(v, &faces).unwrap();
        assert!(two.is_closed() && two.euler_characteristic() == 4);
        let inside = MeshInside::new(&two).unwrap();
        let pts = sample_poisson_disk(&Region::Mesh(&inside), r, 5).unwrap();
        assert!(pts.iter().all(|&p| inside.contains(p)));
        assert!(min_pair_distance2(&pts) >= r * r);
        let left = pts.iter().filter(|p| p.x < 0.0).count();
        let right = pts.len() - left;
        assert!(left > 250 && right > 250, "left {left}, right {right}");
        assert_eq!(pts, sample_poisson_disk(&Region::Mesh(&inside), r, 5).unwrap());
    }
}
