//! Sampling a closed mesh's signed distance on a grid: exact in a narrow
//! band around the surface, closest-triangle propagation beyond it.

use super::bvh::Bvh;
use super::mesh_check::Pseudonormals;
use super::triangle::{self, Feature};
use crate::math::Vec3;
use rayon::prelude::*;

/// Nodes within this many cells of the surface get the exact distance.
/// Must exceed √3 so that no grid edge or cell diagonal between a node
/// outside the band and any neighbour crosses the surface (the sign
/// propagation below relies on it); 3 also covers the penetration depths
/// that matter for collisions.
pub(crate) const EXACT_BAND_CELLS: f64 = 3.0;

/// Band nodes are evaluated in chunks of this many; the BVH hint restarts at
/// each chunk, so results do not depend on the number of threads.
const CHUNK: usize = 1024;

const NONE: u32 = u32::MAX;

/// A regular grid: node `(i, j, k)` at `lower + (i, j, k)·dx`, x fastest.
pub(crate) struct Grid {
    pub(crate) lower: Vec3<f64>,
    pub(crate) dx: f64,
    pub(crate) resolution: [usize; 3],
}

impl Grid {
    fn node(&self, i: usize, j: usize, k: usize) -> Vec3<f64> {
        self.lower + Vec3::new(i as f64, j as f64, k as f64) * self.dx
    }
    fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.resolution[0] * (j + self.resolution[1] * k)
    }
    fn coords(&self, idx: usize) -> (usize, usize, usize) {
        let [nx, ny, _] = self.resolution;
        (idx % nx, (idx / nx) % ny, idx / (nx * ny))
    }
    /// Node index range along `axis` covering `[lo, hi]` (conservatively).
    fn span(&self, axis: usize, lo: f64, hi: f64) -> (usize, usize) {
        let n = self.resolution[axis];
        let a = ((lo - self.lower[axis]) / self.dx).floor().max(0.0);
        let b = ((hi - self.lower[axis]) / self.dx).ceil().min((n - 1) as f64);
        (a as usize, b.max(a) as usize)
    }
}

/// Marks every node whose distance to the mesh may be at most
/// [`EXACT_BAND_CELLS`]`·dx`: inside a triangle's bounding box grown by
/// the band and within the band of the triangle's plane. Conservative: all
/// nodes truly within the band are marked (some farther ones too).
fn mark_band(grid: &Grid, tris: &[[Vec3<f64>; 3]], normals: &[Vec3<f64>]) -> Vec<bool> {
    let band = EXACT_BAND_CELLS * grid.dx * (1.0 + 1e-9);
    let total = grid.resolution.iter().product();
    let mut marked = vec![false; total];
    for (t, n) in tris.iter().zip(normals) {
        let lo = t[0].component_min(t[1]).component_min(t[2]) - Vec3::splat(band);
        let hi = t[0].component_max(t[1]).component_max(t[2]) + Vec3::splat(band);
        let (i0, i1) = grid.span(0, lo.x, hi.x);
        let (j0, j1) = grid.span(1, lo.y, hi.y);
        let (k0, k1) = grid.span(2, lo.z, hi.z);
        for k in k0..=k1 {
            for j in j0..=j1 {
                for i in i0..=i1 {
                    if (grid.node(i, j, k) - t[0]).dot(*n).abs() <= band {
                        marked[grid.index(i, j, k)] = true;
                    }
                }
            }
        }
    }
    marked
}

/// Signed distance at every node of `grid` (meters, negative inside).
///
/// 1. Band nodes (see [`mark_band`]): exact distance to the nearest
///    triangle through the BVH, signed by the angle-weighted pseudonormal
///    of the nearest feature (vertex, edge or face), which is exact for a
///    closed, consistently oriented mesh (Bærentzen & Aanæs 2005).
/// 2. Other nodes: closest-triangle propagation by fast sweeping (as in
///    Bridson's `makelevelset3`): each node tries the nearest triangles of
///    its upwind neighbours in eight sweep orders, twice. The result is the
///    exact distance to some triangle — in practice the nearest one. The
///    sign is copied from the neighbour the triangle came from: no segment
///    between such a node and a neighbour crosses the surface, since the
///    node is farther than √3·dx from it.
///
/// Exact nearest-triangle queries far from the surface are slow (every
/// triangle of a sphere is nearly equidistant from its center); the band
/// keeps build time near-linear in the number of surface cells.
pub(crate) fn sample(
    grid: &Grid,
    tris: &[[Vec3<f64>; 3]],
    faces: &[[u32; 3]],
    normals: &Pseudonormals,
) -> Vec<f64> {
    let total: usize = grid.resolution.iter().product();
    let marked = mark_band(grid, tris, &normals.face);
    let band: Vec<usize> = (0..total).filter(|&i| marked[i]).collect();
    drop(marked);

    let bvh = Bvh::build(tris);
    let mut exact = vec![(0.0, 0u32); band.len()];
    exact
        .par_chunks_mut(CHUNK)
        .zip(band.par_chunks(CHUNK))
        .for_each(|(out, idx)| {
            let mut hint = 0;
            for (o, &n) in out.iter_mut().zip(idx) {
                let (i, j, k) = grid.coords(n);
                let p = grid.node(i, j, k);
                let c = bvh.closest(tris, p, hint);
                hint = c.face;
                let pseudo = match c.feature {
                    Feature::Face => normals.face[c.face],
                    Feature::Edge(e) => normals.edge[c.face][e as usize],
                    Feature::Vertex(v) => normals.vertex[faces[c.face][v as usize] as usize],
                };
                let d = c.dist2.sqrt();
                *o = (
                    if (p - c.point).dot(pseudo) < 0.0 { -d } else { d },
                    c.face as u32,
                );
            }
        });

    let mut dist = vec![f64::INFINITY; total];
    let mut tri = vec![NONE; total];
    let mut inside = vec![false; total];
    let mut fixed = vec![false; total];
    for (&n, &(d, t)) in band.iter().zip(&exact) {
        dist[n] = d.abs();
        tri[n] = t;
        inside[n] = d < 0.0;
        fixed[n] = true;
    }
    if band.len() < total {
        let mut state = Sweep {
            grid,
            tris,
            dist: &mut dist,
            tri: &mut tri,
            inside: &mut inside,
            fixed: &fixed,
        };
        for _ in 0..2 {
            for s in [
                [1, 1, 1],
                [-1, -1, -1],
                [1, 1, -1],
                [-1, -1, 1],
                [1, -1, 1],
                [-1, 1, -1],
                [1, -1, -1],
                [-1, 1, 1],
            ] {
                state.sweep(s);
            }
        }
    }
    dist.iter()
        .zip(&inside)
        .map(|(&d, &ins)| if ins { -d } else { d })
        .collect()
}

struct Sweep<'a> {
    grid: &'a Grid,
    tris: &'a [[Vec3<f64>; 3]],
    dist: &'a mut [f64],
    tri: &'a mut [u32],
    inside: &'a mut [bool],
    fixed: &'a [bool],
}

impl Sweep<'_> {
    /// One pass over the grid in the direction `s` (±1 per axis): each free
    /// node tries the triangles of its up to 7 upwind neighbours.
    fn sweep(&mut self, s: [i64; 3]) {
        let [nx, ny, nz] = self.grid.resolution;
        let order = |c: usize, n: usize, s: i64| if s > 0 { c } else { n - 1 - c };
        for kk in 0..nz {
            let k = order(kk, nz, s[2]);
            for jj in 0..ny {
                let j = order(jj, ny, s[1]);
                for ii in 0..nx {
                    let i = order(ii, nx, s[0]);
                    let here = self.grid.index(i, j, k);
                    if self.fixed[here] {
                        continue;
                    }
                    let p = self.grid.node(i, j, k);
                    for m in 1..8usize {
                        let off = [(m & 1) as i64, ((m >> 1) & 1) as i64, ((m >> 2) & 1) as i64];
                        let ni = i as i64 - off[0] * s[0];
                        let nj = j as i64 - off[1] * s[1];
                        let nk = k as i64 - off[2] * s[2];
                        if ni < 0 || nj < 0 || nk < 0 || ni >= nx as i64 || nj >= ny as i64 || nk >= nz as i64
                        {
                            continue;
                        }
                        let there = self.grid.index(ni as usize, nj as usize, nk as usize);
                        let t = self.tri[there];
                        if t == NONE || t == self.tri[here] {
                            continue;
                        }
                        let [a, b, c] = self.tris[t as usize];
                        let d = (p - triangle::closest_point(p, a, b, c).0).norm();
                        if d < self.dist[here] {
                            self.dist[here] = d;
                            self.tri[here] = t;
                            self.inside[here] = self.inside[there];
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod perf_tmp {
    use super::*;
    use crate::collide::mesh_check::{check_mesh, pseudonormals};
    fn run(m: &crate::collide::test_util::TestMesh, dx: f64, pad: f64, brute: bool) {
        let tris = check_mesh(&m.vertices, &m.faces).unwrap();
        let pn = pseudonormals(m.vertices.len(), &m.faces, &tris).unwrap();
        let mut lo = Vec3::splat(f64::INFINITY);
        let mut hi = -lo;
        for v in &m.vertices { lo = lo.component_min(*v); hi = hi.component_max(*v); }
        let lower = lo - Vec3::splat(pad * dx);
        let n = |a: usize| (((hi[a] - lo[a]) / dx).ceil() + 2.0 * pad) as usize + 1;
        let grid = Grid { lower, dx, resolution: [n(0), n(1), n(2)] };
        let t = std::time::Instant::now();
        let v = sample(&grid, &tris, &m.faces, &pn);
        println!("{} tris {:?}: {:?}", m.faces.len(), grid.resolution, t.elapsed());
        if brute {
            let bvh = Bvh::build(&tris);
            let mut worst: f64 = 0.0;
            let mut nbad = 0;
            for (idx, &val) in v.iter().enumerate() {
                let (i, j, k) = grid.coords(idx);
                let c = bvh.closest(&tris, grid.node(i, j, k), 0);
                let e = (val.abs() - c.dist2.sqrt()).abs();
                if e > 1e-12 { nbad += 1; }
                worst = worst.max(e);
            }
            println!("  far-field worst {worst:e} ({:.3} dx), {nbad} of {} nodes inexact", worst / dx, v.len());
        }
    }
    #[test]
    fn perf_tmp_big() {
        use crate::collide::test_util::*;
        run(&icosphere(Vec3::zero(), 0.5, 6), 1.0 / 120.0, 4.0, false);
        run(&icosphere(Vec3::zero(), 0.5, 3), 1.0 / 120.0, 30.0, false);
        run(&icosphere(Vec3::zero(), 0.5, 4), 1.0 / 60.0, 4.0, true);
        run(&torus(0.5, 0.2, 48, 24), 1.0 / 60.0, 10.0, true);
        run(&uv_sphere(Vec3::zero(), 0.5, 48, 24), 1.0 / 60.0, 10.0, true);
    }
}
