//! Point-in-closed-mesh test by ray parity.
//!
//! Why ray parity and not the generalized winding number: the winding number
//! costs a solid angle per face per query (O(F) without a hierarchy), and the
//! samplers ask millions of queries; a vertical ray only meets the few faces
//! whose xy-projection covers the query, which a 2D bin grid finds in O(1).
//! Parity also does not care about face winding, so a closed mesh loaded
//! with inconsistent orientation still has a well-defined inside.
//!
//! Robustness: a ray through an edge or a vertex must cross exactly one of
//! the faces sharing it. Each edge's side test is computed once per edge in
//! a canonical vertex order (smaller index first), so the two faces sharing
//! it see the same number with opposite meaning, and an exact zero is broken
//! by a symbolic perturbation of the query point, `p + (δ, δ²)`, which is a
//! real point and so is on exactly one side of every edge. Faces whose
//! projection has zero area (vertical walls) are skipped: the ray slides
//! along them, and the faces beside them decide.

use super::{MeshError, TriMesh};
use crate::Result;
use crate::math::Vec3;

/// An inside/outside oracle for a closed triangle mesh (positions in m).
///
/// Built once from a [`TriMesh`] (which it copies, so it outlives the mesh)
/// and queried with [`Self::contains`]. Points exactly on the surface may be
/// classified either way.
#[derive(Clone, Debug)]
pub struct MeshInside {
    vertices: Vec<Vec3<f64>>,
    faces: Vec<[u32; 3]>,
    lower: Vec3<f64>,
    upper: Vec3<f64>,
    volume: f64,
    bins: [usize; 2],
    bin_offsets: Vec<u32>,
    bin_faces: Vec<u32>,
}

/// Most bins per axis: beyond ~10⁶ bins the grid costs more memory than it
/// saves time on any mesh one would sample.
const MAX_BINS_PER_AXIS: usize = 1024;

impl MeshInside {
    /// Builds the oracle. Errors with [`MeshError::NotClosed`] naming the
    /// first open edge if the mesh is not closed: inside is undefined there.
    pub fn new(mesh: &TriMesh) -> Result<Self> {
        if let Some((a, b, count)) = mesh.first_open_edge() {
            return Err(MeshError::NotClosed { a, b, count }.into());
        }
        Ok(Self::from_closed(mesh.vertices().to_vec(), mesh.faces().to_vec()))
    }

    /// Builds the oracle of a surface the caller knows to be closed (same
    /// connectivity as a mesh that passed [`Self::new`]), without the
    /// [`TriMesh`] checks: a deforming surface may pass through sliver
    /// triangles that a new input mesh would be refused for, and the parity
    /// test does not mind them (the shape-matching re-sampling, spec
    /// shape_matching §8.7, rebuilds one every step).
    pub fn from_closed(vertices: Vec<Vec3<f64>>, faces: Vec<[u32; 3]>) -> Self {
        let mut lower = Vec3::splat(f64::INFINITY);
        let mut upper = Vec3::splat(f64::NEG_INFINITY);
        for v in &vertices {
            lower = lower.component_min(*v);
            upper = upper.component_max(*v);
        }
        let o = vertices.first().copied().unwrap_or(Vec3::zero());
        let volume: f64 = faces
            .iter()
            .map(|f| {
                let [a, b, c] = f.map(|i| vertices[i as usize] - o);
                a.dot(b.cross(c)) / 6.0
            })
            .sum();
        let extent = upper - lower;
        // About one face per bin, with the bins' aspect following the box's.
        let target = faces.len().clamp(1, MAX_BINS_PER_AXIS * MAX_BINS_PER_AXIS) as f64;
        let (wx, wy) = (extent.x.max(f64::MIN_POSITIVE), extent.y.max(f64::MIN_POSITIVE));
        let nx = ((target * wx / wy).sqrt().round() as usize).clamp(1, MAX_BINS_PER_AXIS);
        let ny = ((target / nx as f64).round() as usize).clamp(1, MAX_BINS_PER_AXIS);
        let mut me = Self {
            vertices,
            faces,
            lower,
            upper,
            volume: volume.abs(),
            bins: [nx, ny],
            bin_offsets: Vec::new(),
            bin_faces: Vec::new(),
        };
        me.fill_bins();
        me
    }

    /// Bin coordinate of `x` along axis `a`; monotone in `x`, which is what
    /// guarantees a query lands in a bin its covering faces were put in.
    fn bin(&self, a: usize, x: f64) -> usize {
        let t = (x - self.lower[a]) / (self.upper[a] - self.lower[a]).max(f64::MIN_POSITIVE);
        ((t * self.bins[a] as f64).floor().max(0.0) as usize).min(self.bins[a] - 1)
    }

    fn fill_bins(&mut self) {
        let [nx, ny] = self.bins;
        // Widen each face's box a little so a query within rounding of an
        // edge still finds both faces that share it.
        let pad = 1e-9 * (self.upper - self.lower).max_element();
        let ranges: Vec<[usize; 4]> = self
            .faces
            .iter()
            .map(|t| {
                let p = t.map(|i| self.vertices[i as usize]);
                let lo = p[0].component_min(p[1]).component_min(p[2]);
                let hi = p[0].component_max(p[1]).component_max(p[2]);
                [
                    self.bin(0, lo.x - pad),
                    self.bin(0, hi.x + pad),
                    self.bin(1, lo.y - pad),
                    self.bin(1, hi.y + pad),
                ]
            })
            .collect();
        let mut offsets = vec![0u32; nx * ny + 1];
        for r in &ranges {
            for j in r[2]..=r[3] {
                for i in r[0]..=r[1] {
                    offsets[j * nx + i + 1] += 1;
                }
            }
        }
        for b in 0..nx * ny {
            offsets[b + 1] += offsets[b];
        }
        let mut cursor = offsets.clone();
        let mut faces = vec![0u32; offsets[nx * ny] as usize];
        for (f, r) in ranges.iter().enumerate() {
            for j in r[2]..=r[3] {
                for i in r[0]..=r[1] {
                    let c = &mut cursor[j * nx + i];
                    faces[*c as usize] = f as u32;
                    *c += 1;
                }
            }
        }
        self.bin_offsets = offsets;
        self.bin_faces = faces;
    }

    /// Axis-aligned bounds `(lower, upper)` of the mesh (m).
    pub fn bounds(&self) -> (Vec3<f64>, Vec3<f64>) {
        (self.lower, self.upper)
    }

    /// Enclosed volume (m³): |signed volume|, exact when the mesh is
    /// consistently oriented.
    pub fn volume(&self) -> f64 {
        self.volume
    }

    /// Whether `p` is inside the mesh: the number of faces a ray from `p`
    /// toward +z crosses is odd.
    pub fn contains(&self, p: Vec3<f64>) -> bool {
        if !(p.x >= self.lower.x
            && p.x <= self.upper.x
            && p.y >= self.lower.y
            && p.y <= self.upper.y
            && p.z >= self.lower.z
            && p.z <= self.upper.z)
        {
            return false;
        }
        let b = self.bin(1, p.y) * self.bins[0] + self.bin(0, p.x);
        let range = self.bin_offsets[b] as usize..self.bin_offsets[b + 1] as usize;
        let crossings = self.bin_faces[range]
            .iter()
            .filter(|&&f| self.ray_crosses(f as usize, p))
            .count();
        crossings % 2 == 1
    }

    /// Whether the +z ray from `p` crosses face `f` (see the module docs).
    fn ray_crosses(&self, f: usize, p: Vec3<f64>) -> bool {
        let t = self.faces[f];
        let q = t.map(|i| self.vertices[i as usize]);
        let area2 = orient2d(q[0], q[1], q[2]);
        if area2 == 0.0 {
            return false;
        }
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let (lo, hi) = if a < b { (a, b) } else { (b, a) };
            let left = left_of(self.vertices[lo as usize], self.vertices[hi as usize], p);
            // The face's interior is left of its directed edge a → b when the
            // projection is counter-clockwise; flip for hi → lo and for clockwise.
            if left != ((a == lo) == (area2 > 0.0)) {
                return false;
            }
        }
        // Height of the face's plane above p, by barycentric weights.
        let w0 = orient2d(p, q[1], q[2]);
        let w1 = orient2d(q[0], p, q[2]);
        let w2 = orient2d(q[0], q[1], p);
        let z = (w0 * q[0].z + w1 * q[1].z + w2 * q[2].z) / area2;
        z > p.z
    }
}

/// Twice the signed area of the xy-projection of triangle `(a, b, c)`.
fn orient2d(a: Vec3<f64>, b: Vec3<f64>, c: Vec3<f64>) -> f64 {
    (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
}

/// Whether the xy-projection of `p` is left of the line `a → b`, with an
/// exact zero broken as for `p + (δ, δ²)`, δ → 0⁺.
fn left_of(a: Vec3<f64>, b: Vec3<f64>, p: Vec3<f64>) -> bool {
    let d = orient2d(a, b, p);
    if d != 0.0 {
        return d > 0.0;
    }
    // orient2d(a, b, p + (δ, δ²)) = d − (b.y − a.y) δ + (b.x − a.x) δ².
    if b.y != a.y { b.y < a.y } else { b.x > a.x }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::geometry::rng::SplitMix64;
    use crate::geometry::{box_mesh, grid_mesh, torus_mesh, uv_sphere};

    #[test]
    fn open_mesh_is_rejected() {
        let m = grid_mesh((1.0, 1.0), (2, 2), Vec3::zero(), 1).unwrap();
        match MeshInside::new(&m) {
            Err(Error::Mesh(MeshError::NotClosed { a: 0, b: 1, count: 1 })) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rays_through_vertices_and_edges() {
        // A 2×2×2-subdivided unit box has vertices and edges at x, y ∈ {−½, 0, ½}:
        // queries there send the ray exactly through vertices and along edges.
        let m = box_mesh(Vec3::zero(), Vec3::splat(0.5), [2, 2, 2]).unwrap();
        let inside = MeshInside::new(&m).unwrap();
        for x in [-0.5f64, -0.25, 0.0, 0.25, 0.5] {
            for y in [-0.5f64, -0.25, 0.0, 0.25, 0.5] {
                for z in [-0.75f64, -0.25, 0.0, 0.3, 0.75] {
                    let p = Vec3::new(x, y, z);
                    let on_surface = x.abs() == 0.5 || y.abs() == 0.5;
                    if on_surface {
                        continue;
                    }
                    assert_eq!(inside.contains(p), z.abs() < 0.5, "{p:?}");
                }
            }
        }
        assert!((inside.volume() - 1.0).abs() < 1e-14);
    }

    #[test]
    fn sphere_and_torus_match_analytic_shape() {
        let c = Vec3::new(0.1, 0.2, -0.3);
        let sphere = uv_sphere(c, 0.5, 24, 48).unwrap();
        let torus = torus_mesh(c, 0.6, 0.2, 64, 32).unwrap();
        let s_in = MeshInside::new(&sphere).unwrap();
        let t_in = MeshInside::new(&torus).unwrap();
        let mut rng = SplitMix64::new(3);
        let mut counts = [0usize; 2];
        for _ in 0..20_000 {
            let p = c + Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) * 2.0 - Vec3::splat(1.0);
            // Signed distances; skip a band the polygonal surfaces may cut.
            let ds = (p - c).norm() - 0.5;
            let rho = ((p.x - c.x).powi(2) + (p.z - c.z).powi(2)).sqrt();
            let dt = ((rho - 0.6).powi(2) + (p.y - c.y).powi(2)).sqrt() - 0.2;
            if ds.abs() > 0.01 {
                assert_eq!(s_in.contains(p), ds < 0.0, "sphere at {p:?}");
                counts[0] += usize::from(ds < 0.0);
            }
            if dt.abs() > 0.01 {
                assert_eq!(t_in.contains(p), dt < 0.0, "torus at {p:?}");
                counts[1] += usize::from(dt < 0.0);
            }
        }
        // Both shapes were actually probed inside.
        assert!(counts[0] > 1000 && counts[1] > 500, "{counts:?}");
    }

    #[test]
    fn inverted_winding_does_not_matter() {
        let m = uv_sphere(Vec3::zero(), 1.0, 8, 16).unwrap();
        let (v, f) = m.into_parts();
        let flipped: Vec<[i64; 3]> = f
            .iter()
            .map(|t| [t[0] as i64, t[2] as i64, t[1] as i64])
            .collect();
        let m = TriMesh::new(v, &flipped).unwrap();
        assert!(m.signed_volume() < 0.0);
        let inside = MeshInside::new(&m).unwrap();
        assert!(inside.contains(Vec3::new(0.1, 0.2, 0.3)));
        assert!(!inside.contains(Vec3::new(0.1, 0.2, 1.3)));
        assert!(inside.volume() > 0.0);
    }
}
