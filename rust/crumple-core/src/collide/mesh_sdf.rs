//! Signed distance grid sampled from a closed triangle mesh.

use super::Sdf;
use super::mesh_check::{check_mesh, pseudonormals};
use super::mesh_sampling::{self, Grid};
use super::sdf::FALLBACK_NORMAL;
use crate::math::Vec3;
use crate::validate;
use crate::{Result, invalid};

/// Largest grid accepted (nodes): 2²⁶ nodes are 512 MiB of `f64`.
const MAX_NODES: usize = 1 << 26;

/// A signed distance field stored on a regular grid of nodes
/// `lower + (i, j, k)·dx` (meters, local frame), with `values` x-fastest:
/// index `i + nx·(j + ny·k)`. Lets any closed mesh (a bowl, a mannequin,
/// a robot link) act as a collider at the cost of one sampling pass.
///
/// Inside the grid, distance is trilinear in the node values and the
/// normal is the trilinear interpolation of central-difference node
/// gradients (continuous across cells). Outside, distance is the distance
/// to the grid box plus the value at the nearest box point, so far points
/// still see the object in the right direction.
#[derive(Clone, PartialEq)]
pub struct MeshSdf {
    lower: Vec3<f64>,
    dx: f64,
    resolution: [usize; 3],
    values: Vec<f64>,
}

impl MeshSdf {
    /// Samples the signed distance of a closed triangle mesh (`vertices` in
    /// meters, local frame; `faces` index triples wound consistently, either
    /// way round) on a grid of spacing `dx` meters covering the mesh bounds
    /// plus `padding_cells` cells on every side.
    ///
    /// Nodes within 3 cells of the surface get the exact distance to the
    /// nearest triangle (through a bounding-volume hierarchy), signed by the
    /// angle-weighted pseudonormal of the nearest feature, which is correct
    /// for any closed, consistently oriented mesh. Farther nodes get the
    /// distance to the nearest triangle found by closest-triangle
    /// propagation (fast sweeping), with the sign carried along: exact in
    /// most nodes, otherwise over by a few hundredths of `dx`. Build time
    /// grows with the number of nodes and of surface cells (65³ nodes from
    /// 2k triangles: well under a second).
    ///
    /// Errors: `MeshError` on non-finite vertices, bad indices, degenerate
    /// faces, edges without exactly two faces (open or non-manifold meshes)
    /// and inconsistent winding; `InvalidInput` on a bad `dx` or a grid over
    /// 2²⁶ nodes.
    pub fn from_mesh(
        vertices: &[Vec3<f64>],
        faces: &[[u32; 3]],
        dx: f64,
        padding_cells: usize,
    ) -> Result<MeshSdf> {
        validate::positive("dx", dx)?;
        let tris = check_mesh(vertices, faces)?;
        let normals = pseudonormals(vertices.len(), faces, &tris)?;

        let mut lo = Vec3::splat(f64::INFINITY);
        let mut hi = Vec3::splat(f64::NEG_INFINITY);
        for t in &tris {
            for &v in t {
                lo = lo.component_min(v);
                hi = hi.component_max(v);
            }
        }
        let mut resolution = [0usize; 3];
        for (a, r) in resolution.iter_mut().enumerate() {
            let cells = ((hi[a] - lo[a]) / dx).ceil().max(1.0) + 2.0 * padding_cells as f64;
            if cells >= MAX_NODES as f64 {
                return invalid!(
                    "MeshSdf grid would need {cells} cells along axis {a}, more than the limit of {MAX_NODES} \
                     nodes in total; increase dx (currently {dx}) or reduce padding_cells ({padding_cells})"
                );
            }
            *r = cells as usize + 1;
        }
        let total = resolution
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n))
            .unwrap_or(usize::MAX);
        if total > MAX_NODES {
            return invalid!(
                "MeshSdf grid would have {}×{}×{} nodes, more than the limit of {MAX_NODES}; \
                 increase dx (currently {dx}) or reduce padding_cells ({padding_cells})",
                resolution[0],
                resolution[1],
                resolution[2]
            );
        }
        let grid = Grid {
            lower: lo - Vec3::splat(dx * padding_cells as f64),
            dx,
            resolution,
        };
        let values = mesh_sampling::sample(&grid, &tris, faces, &normals);
        let lower = grid.lower;
        Ok(MeshSdf {
            lower,
            dx,
            resolution,
            values,
        })
    }

    /// A grid from precomputed node values (e.g. loaded from a file):
    /// nodes at `lower + (i, j, k)·dx` (meters), `resolution` ≥ 2 nodes per
    /// axis, `values` (meters, negative inside) x-fastest.
    pub fn from_grid(lower: Vec3<f64>, dx: f64, resolution: [usize; 3], values: Vec<f64>) -> Result<MeshSdf> {
        validate::finite_vec("lower", lower)?;
        validate::positive("dx", dx)?;
        if resolution.iter().any(|&n| n < 2) {
            return invalid!("resolution must be at least 2 nodes per axis, got {resolution:?}");
        }
        let total = resolution.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
        if total != Some(values.len()) {
            return invalid!(
                "values has {} entries but resolution {resolution:?} needs their product; pass one value per node, x fastest",
                values.len()
            );
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return invalid!(
                "values[{i}] = {} is not finite; pass finite signed distances",
                values[i]
            );
        }
        Ok(MeshSdf {
            lower,
            dx,
            resolution,
            values,
        })
    }

    /// Position of node (0, 0, 0), meters.
    pub fn lower(&self) -> Vec3<f64> {
        self.lower
    }
    /// Position of the last node, meters.
    pub fn upper(&self) -> Vec3<f64> {
        self.lower
            + Vec3::new(
                (self.resolution[0] - 1) as f64,
                (self.resolution[1] - 1) as f64,
                (self.resolution[2] - 1) as f64,
            ) * self.dx
    }
    /// Node spacing, meters.
    pub fn dx(&self) -> f64 {
        self.dx
    }
    /// Nodes per axis.
    pub fn resolution(&self) -> [usize; 3] {
        self.resolution
    }
    /// Node values, meters, x-fastest (index `i + nx·(j + ny·k)`).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    #[inline]
    fn at(&self, i: usize, j: usize, k: usize) -> f64 {
        self.values[i + self.resolution[0] * (j + self.resolution[1] * k)]
    }

    /// Central-difference gradient at a node (one-sided on the grid faces).
    fn node_gradient(&self, idx: [usize; 3]) -> Vec3<f64> {
        let mut g = Vec3::zero();
        for a in 0..3 {
            let (mut lo, mut hi) = (idx, idx);
            lo[a] = idx[a].saturating_sub(1);
            hi[a] = (idx[a] + 1).min(self.resolution[a] - 1);
            let span = (hi[a] - lo[a]) as f64 * self.dx;
            g[a] = (self.at(hi[0], hi[1], hi[2]) - self.at(lo[0], lo[1], lo[2])) / span;
        }
        g
    }

    /// Clamps `p` into the grid box: the cell, fractional position in it,
    /// and the offset `p − clamp(p)`.
    fn locate(&self, p: Vec3<f64>) -> ([usize; 3], Vec3<f64>, Vec3<f64>) {
        let q = p.component_max(self.lower).component_min(self.upper());
        let mut cell = [0usize; 3];
        let mut frac = Vec3::zero();
        for a in 0..3 {
            let u = (q[a] - self.lower[a]) / self.dx;
            let i = (u.floor().max(0.0) as usize).min(self.resolution[a] - 2);
            cell[a] = i;
            frac[a] = (u - i as f64).clamp(0.0, 1.0);
        }
        (cell, frac, p - q)
    }

    /// Trilinear weights and node indices of a cell's corners.
    fn corners(cell: [usize; 3], f: Vec3<f64>) -> [([usize; 3], f64); 8] {
        let mut out = [([0usize; 3], 0.0); 8];
        for (c, o) in out.iter_mut().enumerate() {
            let b = [c & 1, (c >> 1) & 1, (c >> 2) & 1];
            let mut w = 1.0;
            for a in 0..3 {
                w *= if b[a] == 1 { f[a] } else { 1.0 - f[a] };
            }
            *o = ([cell[0] + b[0], cell[1] + b[1], cell[2] + b[2]], w);
        }
        out
    }

    fn interpolated_distance(&self, cell: [usize; 3], f: Vec3<f64>, offset: Vec3<f64>) -> f64 {
        let mut d = 0.0;
        for (idx, w) in Self::corners(cell, f) {
            d += w * self.at(idx[0], idx[1], idx[2]);
        }
        d + offset.norm()
    }

    fn interpolated_normal(&self, cell: [usize; 3], f: Vec3<f64>, offset: Vec3<f64>) -> Vec3<f64> {
        let mut g = Vec3::zero();
        for (idx, w) in Self::corners(cell, f) {
            g += self.node_gradient(idx) * w;
        }
        if let Some(out) = offset.try_normalize(0.0) {
            for a in 0..3 {
                if offset[a] != 0.0 {
                    g[a] = 0.0;
                }
            }
            g += out;
        }
        g.try_normalize(0.0)
            .filter(|n| n.is_finite())
            .unwrap_or(FALLBACK_NORMAL)
    }
}

/// Summary only: the node values can be millions of numbers.
impl std::fmt::Debug for MeshSdf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeshSdf")
            .field("lower", &self.lower)
            .field("dx", &self.dx)
            .field("resolution", &self.resolution)
            .finish_non_exhaustive()
    }
}

impl Sdf for MeshSdf {
    fn distance(&self, p: Vec3<f64>) -> f64 {
        let (cell, f, offset) = self.locate(p);
        self.interpolated_distance(cell, f, offset)
    }
    fn normal(&self, p: Vec3<f64>) -> Vec3<f64> {
        let (cell, f, offset) = self.locate(p);
        self.interpolated_normal(cell, f, offset)
    }
    fn distance_and_normal(&self, p: Vec3<f64>) -> (f64, Vec3<f64>) {
        let (cell, f, offset) = self.locate(p);
        (
            self.interpolated_distance(cell, f, offset),
            self.interpolated_normal(cell, f, offset),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::{Rng, TestMesh, box_mesh, icosphere, torus, uv_sphere, winding_number};
    use crate::collide::{BoxShape, Sphere};

    fn build(m: &TestMesh, dx: f64, pad: usize) -> MeshSdf {
        MeshSdf::from_mesh(&m.vertices, &m.faces, dx, pad).unwrap()
    }

    /// Compares against an analytic SDF at random points in the grid:
    /// distance within `tol`, and normal direction where the analytic
    /// field is smooth (more than `2·dx` from `kink`).
    fn compare(sdf: &MeshSdf, exact: &impl Sdf, tol: f64, kink: impl Fn(Vec3<f64>) -> f64, seed: u64) {
        let mut rng = Rng::new(seed);
        let mut worst = 0.0_f64;
        for _ in 0..3000 {
            let p = rng.point(sdf.lower(), sdf.upper());
            let (d, n) = sdf.distance_and_normal(p);
            let e = exact.distance(p);
            worst = worst.max((d - e).abs());
            assert!((d - e).abs() < tol, "{p:?}: grid {d} vs exact {e}");
            assert!((n.norm() - 1.0).abs() < 1e-12);
            if kink(p) > 2.0 * sdf.dx() {
                let ne = exact.normal(p);
                assert!(n.dot(ne) > 0.95, "{p:?}: normal {n:?} vs exact {ne:?}");
            }
        }
        assert!(worst > 0.0);
    }

    #[test]
    fn uv_sphere_grid_matches_sphere_sdf() {
        let c = Vec3::new(0.1, -0.2, 0.3);
        let r = 0.4;
        let m = uv_sphere(c, r, 48, 24);
        assert!(m.faces.len() > 2000);
        let dx = 2.0 * r / 56.0;
        let start = std::time::Instant::now();
        let sdf = build(&m, dx, 4);
        let elapsed = start.elapsed();
        assert!(
            sdf.resolution().iter().all(|&n| n == 65),
            "{:?}",
            sdf.resolution()
        );
        println!("MeshSdf 65³ from {} triangles: {elapsed:?}", m.faces.len());
        let exact = Sphere::new(r).unwrap();
        struct Shifted(Sphere, Vec3<f64>);
        impl Sdf for Shifted {
            fn distance(&self, p: Vec3<f64>) -> f64 {
                self.0.distance(p - self.1)
            }
            fn normal(&self, p: Vec3<f64>) -> Vec3<f64> {
                Sdf::normal(&self.0, p - self.1)
            }
        }
        compare(&sdf, &Shifted(exact, c), dx, |p| (p - c).norm(), 50);
        // Node values: exact up to the faceting of the mesh (sagitta ≤ r(1 − cos(π/24))).
        let sag = r * (1.0 - (std::f64::consts::PI / 24.0).cos());
        let [nx, ny, _] = sdf.resolution();
        for (idx, &v) in sdf.values().iter().enumerate() {
            let (i, j, k) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
            let p = sdf.lower() + Vec3::new(i as f64, j as f64, k as f64) * dx;
            let e = (p - c).norm() - r;
            assert!(v - e >= -1e-12 && v - e <= sag + 1e-12, "node {p:?}: {v} vs {e}");
        }
    }

    #[test]
    fn icosphere_grid_matches_sphere_sdf_and_far_field() {
        let m = icosphere(Vec3::zero(), 0.5, 4);
        let dx = 0.02;
        let sdf = build(&m, dx, 3);
        compare(&sdf, &Sphere::new(0.5).unwrap(), dx, |p| p.norm(), 51);
        // Outside the grid: distance to the box plus the boundary value.
        let far = Vec3::new(3.0, 0.0, 0.0);
        let d = sdf.distance(far);
        assert!((d - 2.5).abs() < dx, "{d}");
        assert!((sdf.normal(far) - Vec3::new(1.0, 0.0, 0.0)).norm() < 1e-3);
        let corner = Vec3::splat(2.0);
        assert!((sdf.distance(corner) - (corner.norm() - 0.5)).abs() < 0.2);
        assert!(sdf.normal(corner).dot(corner * (1.0 / corner.norm())) > 0.9);
        // Inverted winding gives the same field: bit for bit up to rounding
        // in the exact band, up to the propagation error beyond it.
        let flipped: Vec<[u32; 3]> = m.faces.iter().map(|f| [f[0], f[2], f[1]]).collect();
        let sdf2 = MeshSdf::from_mesh(&m.vertices, &flipped, dx, 3).unwrap();
        for (&a, &b) in sdf.values().iter().zip(sdf2.values()) {
            let tol = if a.abs() < 2.0 * dx { 1e-12 } else { 0.1 * dx };
            assert!((a - b).abs() < tol, "{a} vs {b}");
        }
    }

    #[test]
    fn box_grid_matches_box_sdf() {
        let h = Vec3::new(0.4, 0.25, 0.3);
        let m = box_mesh(Vec3::zero(), h);
        let dx = 0.025;
        let sdf = build(&m, dx, 4);
        let exact = BoxShape::new(h).unwrap();
        // Kinks of the box SDF: the medial surface inside; outside it is smooth
        // (normal direction changes fast only near edges and corners).
        let kink = |p: Vec3<f64>| {
            let q = p.abs() - h;
            if q.max_element() > 0.0 {
                q.component_max(Vec3::zero()).norm()
            } else {
                let mut s = [q.x, q.y, q.z];
                s.sort_by(f64::total_cmp);
                (s[2] - s[1]) / 2.0_f64.sqrt()
            }
        };
        compare(&sdf, &exact, dx, kink, 52);
        // Grid nodes hold the exact box distance (the mesh is the box).
        let [nx, ny, _] = sdf.resolution();
        for (idx, &v) in sdf.values().iter().enumerate() {
            let (i, j, k) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
            let p = sdf.lower() + Vec3::new(i as f64, j as f64, k as f64) * dx;
            assert!(
                (v - exact.distance(p)).abs() < 1e-12,
                "node {p:?}: {v} vs {}",
                exact.distance(p)
            );
        }
    }

    #[test]
    fn rotated_box_grid_nodes_are_exact() {
        // A rotated box: nodes do not line up with faces, edges or corners.
        let h = Vec3::new(0.3, 0.2, 0.25);
        let r = crate::math::Mat3::from_axis_angle(Vec3::new(1.0, 2.0, 2.0) * (1.0 / 3.0), 0.7);
        let t = Vec3::new(0.05, -0.1, 0.02);
        let mut m = box_mesh(Vec3::zero(), h);
        for v in &mut m.vertices {
            *v = r * *v + t;
        }
        let sdf = build(&m, 0.02, 3);
        let exact = BoxShape::new(h).unwrap();
        let [nx, ny, _] = sdf.resolution();
        for (idx, &v) in sdf.values().iter().enumerate() {
            let (i, j, k) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
            let p = sdf.lower() + Vec3::new(i as f64, j as f64, k as f64) * 0.02;
            let e = exact.distance(r.transpose() * (p - t));
            assert!((v - e).abs() < 1e-12, "node {p:?}: {v} vs {e}");
        }
    }

    #[test]
    fn torus_grid_signs_match_winding_number() {
        // Non-convex: the sign must be right in the hole and on the saddle.
        let (big, small) = (0.5, 0.2);
        let m = torus(big, small, 48, 24);
        let dx = 0.04;
        let sdf = build(&m, dx, 2);
        let [nx, ny, _] = sdf.resolution();
        let mut checked = 0;
        for (idx, &v) in sdf.values().iter().enumerate() {
            let (i, j, k) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
            let p = sdf.lower() + Vec3::new(i as f64, j as f64, k as f64) * dx;
            let exact = (p.x.hypot(p.z) - big).hypot(p.y) - small;
            assert!((v - exact).abs() < 0.01, "node {p:?}: {v} vs {exact}");
            if v.abs() > 1e-9 {
                let inside = winding_number(&m, p) > 0.5;
                assert_eq!(v < 0.0, inside, "node {p:?}: {v}");
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn from_mesh_rejects_open_and_bad_meshes() {
        let m = box_mesh(Vec3::zero(), Vec3::splat(0.5));
        let open = &m.faces[..11];
        let e = MeshSdf::from_mesh(&m.vertices, open, 0.1, 1).unwrap_err();
        assert!(
            matches!(e, crate::Error::Mesh(_)) && e.to_string().contains("not closed"),
            "{e}"
        );
        let mut twisted = m.faces.clone();
        twisted[0] = [twisted[0][0], twisted[0][2], twisted[0][1]];
        let e = MeshSdf::from_mesh(&m.vertices, &twisted, 0.1, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("consistently oriented"), "{e}");
        let mut bad = m.faces.clone();
        bad[3][1] = 99;
        let e = MeshSdf::from_mesh(&m.vertices, &bad, 0.1, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("99"), "{e}");
        let mut nonmanifold = m.faces.clone();
        nonmanifold.push([0, 4, 7]);
        assert!(MeshSdf::from_mesh(&m.vertices, &nonmanifold, 0.1, 1).is_err());
        let mut nan = m.vertices.clone();
        nan[2].y = f64::NAN;
        assert!(MeshSdf::from_mesh(&nan, &m.faces, 0.1, 1).is_err());
        let e = MeshSdf::from_mesh(&m.vertices, &m.faces, 0.0, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dx"), "{e}");
        let e = MeshSdf::from_mesh(&m.vertices, &m.faces, 1e-5, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("increase dx"), "{e}");
        assert!(MeshSdf::from_mesh(&[], &[], 0.1, 1).is_err());
        let mut flat = m.vertices.clone();
        flat[1] = flat[0];
        assert!(MeshSdf::from_mesh(&flat, &m.faces, 0.1, 1).is_err());
    }

    #[test]
    fn from_grid_round_trips_and_validates() {
        let m = box_mesh(Vec3::zero(), Vec3::splat(0.5));
        let sdf = build(&m, 0.1, 2);
        let copy =
            MeshSdf::from_grid(sdf.lower(), sdf.dx(), sdf.resolution(), sdf.values().to_vec()).unwrap();
        assert_eq!(copy, sdf);
        let shown = format!("{sdf:?}");
        assert!(shown.contains("resolution") && shown.len() < 300, "{shown}");
        assert!(MeshSdf::from_grid(Vec3::zero(), 0.1, [2, 2, 2], vec![0.0; 7]).is_err());
        assert!(MeshSdf::from_grid(Vec3::zero(), 0.1, [1, 2, 2], vec![0.0; 4]).is_err());
        assert!(MeshSdf::from_grid(Vec3::zero(), 0.1, [2, 2, 2], vec![f64::NAN; 8]).is_err());
        assert!(MeshSdf::from_grid(Vec3::zero(), 0.1, [usize::MAX, 2, 2], vec![]).is_err());
    }
}
