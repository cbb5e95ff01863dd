//! A refittable bounding-volume hierarchy over axis-aligned boxes.
//!
//! Cloth keeps its topology, so the hierarchy is built once (median split of
//! box centres along the longest axis) and then only refitted: mesh-local
//! patches stay compact in space however the sheet folds, because edges
//! barely stretch. That is the usual choice for cloth (Bridson, Fedkiw and
//! Anderson 2002, §4) and keeps every call O(n). The tree is rebuilt only
//! when refitting has made it much looser than it was when built (see
//! [`REBUILD_RATIO`]).
//!
//! `collide::bvh` answers closest-point queries over a static mesh; this one
//! answers box-overlap queries over boxes that change every call, so the two
//! do not share code.

use crate::math::Vec3;
use rayon::prelude::*;

/// Leaves hold at most this many primitives.
const LEAF_SIZE: usize = 4;

/// Rebuild when the summed surface area of the nodes (relative to the root)
/// exceeds this multiple of its value right after the last build. Crumpling
/// legitimately raises the ratio a little, so it must not be too tight; a
/// rebuild of 40K triangles costs a few milliseconds.
const REBUILD_RATIO: f64 = 2.0;

/// Below this many primitives the per-primitive box pass runs sequentially.
const PAR_MIN: usize = 2048;

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Aabb {
    pub(super) lo: Vec3<f64>,
    pub(super) hi: Vec3<f64>,
}

impl Aabb {
    /// The box that contains nothing (the identity of [`Aabb::union`]).
    pub(super) fn empty() -> Self {
        Self {
            lo: Vec3::splat(f64::INFINITY),
            hi: Vec3::splat(f64::NEG_INFINITY),
        }
    }

    pub(super) fn point(p: Vec3<f64>) -> Self {
        Self { lo: p, hi: p }
    }

    #[inline]
    pub(super) fn grow(mut self, p: Vec3<f64>) -> Self {
        self.lo = self.lo.component_min(p);
        self.hi = self.hi.component_max(p);
        self
    }

    #[inline]
    pub(super) fn union(self, o: Self) -> Self {
        Self {
            lo: self.lo.component_min(o.lo),
            hi: self.hi.component_max(o.hi),
        }
    }

    #[inline]
    pub(super) fn padded(self, r: f64) -> Self {
        Self {
            lo: self.lo - Vec3::splat(r),
            hi: self.hi + Vec3::splat(r),
        }
    }

    /// Closed-interval overlap: touching boxes overlap, so contacts exactly
    /// at the padding distance are not lost.
    #[inline]
    pub(super) fn overlaps(&self, o: &Self) -> bool {
        self.lo.x <= o.hi.x
            && o.lo.x <= self.hi.x
            && self.lo.y <= o.hi.y
            && o.lo.y <= self.hi.y
            && self.lo.z <= o.hi.z
            && o.lo.z <= self.hi.z
    }

    fn half_area(&self) -> f64 {
        let d = (self.hi - self.lo).component_max(Vec3::zero());
        d.x * d.y + d.y * d.z + d.z * d.x
    }

    fn centre(&self) -> Vec3<f64> {
        (self.lo + self.hi) * 0.5
    }
}

#[derive(Clone, Copy, Debug)]
struct Node {
    bounds: Aabb,
    /// Leaf: first index into `order`; inner: index of the left child (the
    /// right child follows it). Children always come after their parent, so
    /// a reverse sweep over `nodes` refits bottom-up.
    start: u32,
    /// Number of primitives of a leaf; 0 for an inner node.
    count: u32,
}

/// Box hierarchy over `len` primitives identified by `0..len`.
#[derive(Default)]
pub(super) struct Bvh {
    nodes: Vec<Node>,
    /// Primitive ids in leaf order.
    order: Vec<u32>,
    /// `boxes[i]` is the box of primitive `order[i]` (leaf ranges are
    /// contiguous, which keeps leaf tests cache friendly).
    boxes: Vec<Aabb>,
    /// Node-area ratio right after the last build.
    built_cost: f64,
    /// Build scratch: (node, begin, end).
    stack: Vec<(u32, u32, u32)>,
    centres: Vec<Vec3<f64>>,
    /// Number of builds so far (for tests and statistics).
    builds: usize,
}

impl Bvh {
    /// Refits the hierarchy to the boxes `box_of(id)` of `len` primitives,
    /// building it first if it has never been built for `len` primitives or
    /// has become too loose.
    pub(super) fn update<F>(&mut self, len: usize, box_of: F)
    where
        F: Fn(usize) -> Aabb + Sync,
    {
        if self.order.len() != len || self.nodes.is_empty() && len > 0 {
            self.build(len, &box_of);
            return;
        }
        if len == 0 {
            return;
        }
        let order = &self.order;
        if len >= PAR_MIN {
            self.boxes
                .par_iter_mut()
                .zip(order.par_iter())
                .for_each(|(b, &id)| *b = box_of(id as usize));
        } else {
            for (b, &id) in self.boxes.iter_mut().zip(order.iter()) {
                *b = box_of(id as usize);
            }
        }
        let cost = self.refit_nodes();
        if cost > REBUILD_RATIO * self.built_cost {
            self.build(len, &box_of);
        }
    }

    /// Median split of the box centres along their longest extent.
    /// Deterministic: ties are broken by primitive id.
    fn build<F>(&mut self, len: usize, box_of: &F)
    where
        F: Fn(usize) -> Aabb + Sync,
    {
        self.builds += 1;
        self.nodes.clear();
        self.order.clear();
        self.order.extend(0..len as u32);
        self.boxes.clear();
        self.boxes.resize(len, Aabb::empty());
        if len == 0 {
            self.built_cost = 0.0;
            return;
        }
        // Boxes by primitive id first (for the centres), reordered below.
        if len >= PAR_MIN {
            self.boxes
                .par_iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b = box_of(i));
        } else {
            for (i, b) in self.boxes.iter_mut().enumerate() {
                *b = box_of(i);
            }
        }
        self.centres.clear();
        self.centres.extend(self.boxes.iter().map(Aabb::centre));
        let blank = Node {
            bounds: Aabb::empty(),
            start: 0,
            count: 0,
        };
        self.nodes.push(blank);
        self.stack.clear();
        self.stack.push((0, 0, len as u32));
        while let Some((node, begin, end)) = self.stack.pop() {
            let (b, e) = (begin as usize, end as usize);
            if e - b <= LEAF_SIZE {
                self.nodes[node as usize].start = begin;
                self.nodes[node as usize].count = end - begin;
                continue;
            }
            let mut lo = Vec3::splat(f64::INFINITY);
            let mut hi = Vec3::splat(f64::NEG_INFINITY);
            for &p in &self.order[b..e] {
                let c = self.centres[p as usize];
                lo = lo.component_min(c);
                hi = hi.component_max(c);
            }
            let ext = hi - lo;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let mid = (b + e) / 2;
            let centres = &self.centres;
            self.order[b..e].select_nth_unstable_by(mid - b, |&p, &q| {
                centres[p as usize][axis]
                    .total_cmp(&centres[q as usize][axis])
                    .then(p.cmp(&q))
            });
            let left = self.nodes.len() as u32;
            self.nodes.push(blank);
            self.nodes.push(blank);
            self.nodes[node as usize].start = left;
            self.stack.push((left + 1, mid as u32, end));
            self.stack.push((left, begin, mid as u32));
        }
        // Boxes into leaf order.
        let by_id = std::mem::take(&mut self.boxes);
        self.boxes.extend(self.order.iter().map(|&p| by_id[p as usize]));
        self.built_cost = self.refit_nodes();
    }

    /// Bottom-up node boxes from `boxes`; returns the summed half-areas of
    /// all nodes divided by the root's (a scale-free looseness measure).
    fn refit_nodes(&mut self) -> f64 {
        let mut sum = 0.0;
        for i in (0..self.nodes.len()).rev() {
            let n = self.nodes[i];
            let bounds = if n.count > 0 {
                let s = n.start as usize;
                self.boxes[s..s + n.count as usize]
                    .iter()
                    .fold(Aabb::empty(), |a, b| a.union(*b))
            } else {
                let l = n.start as usize;
                self.nodes[l].bounds.union(self.nodes[l + 1].bounds)
            };
            self.nodes[i].bounds = bounds;
            sum += bounds.half_area();
        }
        let root = self.nodes[0].bounds.half_area();
        if root > 0.0 { sum / root } else { 0.0 }
    }

    /// Calls `visit(id)` for every primitive whose box overlaps `q`, in a
    /// fixed traversal order. `stack` is caller-owned scratch.
    #[inline]
    pub(super) fn query<F: FnMut(u32)>(&self, q: &Aabb, stack: &mut Vec<u32>, mut visit: F) {
        if self.nodes.is_empty() {
            return;
        }
        stack.clear();
        stack.push(0);
        while let Some(i) = stack.pop() {
            let n = &self.nodes[i as usize];
            if !n.bounds.overlaps(q) {
                continue;
            }
            if n.count > 0 {
                let s = n.start as usize;
                let e = s + n.count as usize;
                for (b, &id) in self.boxes[s..e].iter().zip(&self.order[s..e]) {
                    if b.overlaps(q) {
                        visit(id);
                    }
                }
            } else {
                stack.push(n.start + 1);
                stack.push(n.start);
            }
        }
    }

    /// How many times the tree has been built.
    #[cfg(test)]
    pub(super) fn builds(&self) -> usize {
        self.builds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::SplitMix64;

    fn random_boxes(rng: &mut SplitMix64, n: usize) -> Vec<Aabb> {
        (0..n)
            .map(|_| {
                let p = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64());
                let s = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) * 0.05;
                Aabb { lo: p, hi: p + s }
            })
            .collect()
    }

    #[test]
    fn query_matches_brute_force_after_refit() {
        let mut rng = SplitMix64::new(3);
        let mut boxes = random_boxes(&mut rng, 3000);
        let mut bvh = Bvh::default();
        bvh.update(boxes.len(), |i| boxes[i]);
        let mut stack = Vec::new();
        for round in 0..3 {
            if round > 0 {
                // Small motion: refit only.
                for b in boxes.iter_mut() {
                    let d = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) * 0.01;
                    b.lo += d;
                    b.hi += d;
                }
                bvh.update(boxes.len(), |i| boxes[i]);
            }
            for _ in 0..200 {
                let q = random_boxes(&mut rng, 1)[0].padded(0.02);
                let mut got = Vec::new();
                bvh.query(&q, &mut stack, |id| got.push(id));
                got.sort_unstable();
                let want: Vec<u32> = (0..boxes.len() as u32)
                    .filter(|&i| boxes[i as usize].overlaps(&q))
                    .collect();
                assert_eq!(got, want);
            }
        }
        assert_eq!(bvh.builds(), 1);
        // Scrambling every box makes the old tree loose: it is rebuilt.
        let scrambled = random_boxes(&mut rng, 3000);
        bvh.update(scrambled.len(), |i| scrambled[i]);
        assert_eq!(bvh.builds(), 2);
    }
}
