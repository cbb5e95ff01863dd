//! Bounding-volume hierarchy over triangles for exact closest-point queries
//! while sampling a mesh's signed distance grid.

use super::triangle::{self, Feature};
use crate::math::Vec3;

/// Leaves hold at most this many triangles.
const LEAF_SIZE: usize = 4;

#[derive(Clone, Copy, Debug)]
struct Node {
    lo: Vec3<f64>,
    hi: Vec3<f64>,
    /// Leaf: first index into `order`; inner: index of the left child (the
    /// right child follows it).
    start: u32,
    /// Number of triangles of a leaf; 0 for an inner node.
    count: u32,
}

/// Closest point on a mesh: the triangle, the point, its feature on that
/// triangle and the squared distance.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Closest {
    pub(crate) face: usize,
    pub(crate) point: Vec3<f64>,
    pub(crate) feature: Feature,
    pub(crate) dist2: f64,
}

/// Axis-aligned bounding boxes split at the median centroid along the
/// longest axis. Deterministic for a given input.
pub(crate) struct Bvh {
    nodes: Vec<Node>,
    order: Vec<u32>,
}

fn dist2_to_box(p: Vec3<f64>, lo: Vec3<f64>, hi: Vec3<f64>) -> f64 {
    let d = (lo - p).component_max(p - hi).component_max(Vec3::zero());
    d.norm_squared()
}

impl Bvh {
    /// Builds the hierarchy over `tris` (vertex triples).
    pub(crate) fn build(tris: &[[Vec3<f64>; 3]]) -> Bvh {
        let mut order: Vec<u32> = (0..tris.len() as u32).collect();
        let centroids: Vec<Vec3<f64>> = tris.iter().map(|t| (t[0] + t[1] + t[2]) * (1.0 / 3.0)).collect();
        let mut nodes = Vec::with_capacity(2 * tris.len() / LEAF_SIZE + 1);
        nodes.push(Node {
            lo: Vec3::zero(),
            hi: Vec3::zero(),
            start: 0,
            count: 0,
        });
        // Explicit stack of (node, range) to avoid recursion depth limits.
        let mut stack = vec![(0usize, 0usize, tris.len())];
        while let Some((node, begin, end)) = stack.pop() {
            let mut lo = Vec3::splat(f64::INFINITY);
            let mut hi = Vec3::splat(f64::NEG_INFINITY);
            let mut clo = lo;
            let mut chi = hi;
            for &t in &order[begin..end] {
                for v in tris[t as usize] {
                    lo = lo.component_min(v);
                    hi = hi.component_max(v);
                }
                clo = clo.component_min(centroids[t as usize]);
                chi = chi.component_max(centroids[t as usize]);
            }
            nodes[node].lo = lo;
            nodes[node].hi = hi;
            if end - begin <= LEAF_SIZE {
                nodes[node].start = begin as u32;
                nodes[node].count = (end - begin) as u32;
                continue;
            }
            let ext = chi - clo;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let mid = (begin + end) / 2;
            order[begin..end].select_nth_unstable_by(mid - begin, |&a, &b| {
                centroids[a as usize][axis]
                    .total_cmp(&centroids[b as usize][axis])
                    .then(a.cmp(&b))
            });
            let left = nodes.len();
            nodes.push(Node {
                lo: Vec3::zero(),
                hi: Vec3::zero(),
                start: 0,
                count: 0,
            });
            nodes.push(Node {
                lo: Vec3::zero(),
                hi: Vec3::zero(),
                start: 0,
                count: 0,
            });
            nodes[node].start = left as u32;
            nodes[node].count = 0;
            stack.push((left + 1, mid, end));
            stack.push((left, begin, mid));
        }
        Bvh { nodes, order }
    }

    /// Exact closest point on the mesh to `p`. `hint` is a triangle likely
    /// to be close (the answer for a neighbouring point); it only speeds up
    /// pruning.
    pub(crate) fn closest(&self, tris: &[[Vec3<f64>; 3]], p: Vec3<f64>, hint: usize) -> Closest {
        let eval = |f: usize| {
            let [a, b, c] = tris[f];
            let (q, feature) = triangle::closest_point(p, a, b, c);
            Closest {
                face: f,
                point: q,
                feature,
                dist2: (p - q).norm_squared(),
            }
        };
        let mut best = eval(hint.min(tris.len() - 1));
        let mut stack: Vec<u32> = Vec::with_capacity(64);
        stack.push(0);
        while let Some(n) = stack.pop() {
            let node = self.nodes[n as usize];
            if dist2_to_box(p, node.lo, node.hi) >= best.dist2 {
                continue;
            }
            if node.count > 0 {
                let s = node.start as usize;
                for &f in &self.order[s..s + node.count as usize] {
                    let c = eval(f as usize);
                    if c.dist2 < best.dist2 {
                        best = c;
                    }
                }
            } else {
                let (l, r) = (node.start, node.start + 1);
                let dl = dist2_to_box(p, self.nodes[l as usize].lo, self.nodes[l as usize].hi);
                let dr = dist2_to_box(p, self.nodes[r as usize].lo, self.nodes[r as usize].hi);
                // Push the farther child first so the nearer is visited first.
                if dl <= dr {
                    stack.push(r);
                    stack.push(l);
                } else {
                    stack.push(l);
                    stack.push(r);
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::{Rng, icosphere};

    #[test]
    fn bvh_closest_matches_brute_force() {
        let m = icosphere(Vec3::new(0.1, 0.2, 0.3), 0.7, 3);
        let tris: Vec<[Vec3<f64>; 3]> = m
            .faces
            .iter()
            .map(|f| {
                [
                    m.vertices[f[0] as usize],
                    m.vertices[f[1] as usize],
                    m.vertices[f[2] as usize],
                ]
            })
            .collect();
        let bvh = Bvh::build(&tris);
        let mut rng = Rng::new(41);
        for i in 0..300 {
            let p = rng.point(Vec3::splat(-1.5), Vec3::splat(1.5));
            let c = bvh.closest(&tris, p, i % tris.len());
            let brute = tris
                .iter()
                .map(|t| (p - triangle::closest_point(p, t[0], t[1], t[2]).0).norm_squared())
                .fold(f64::INFINITY, f64::min);
            assert_eq!(c.dist2, brute, "{p:?}");
            assert!((p - c.point).norm_squared() == c.dist2);
        }
    }
}
