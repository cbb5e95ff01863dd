//! A refittable bounding-volume hierarchy over axis-aligned boxes, and the
//! simultaneous traversal of two trees (or of one tree with itself) that
//! lists overlapping primitive pairs.
//!
//! Cloth keeps its topology, so the hierarchy is built once (median split of
//! primitive centres along the longest axis) and then only refitted:
//! mesh-local patches stay compact in space however the sheet folds, because
//! edges barely stretch. That is the usual choice for cloth (Bridson, Fedkiw
//! and Anderson 2002, §4) and keeps every call O(n). The tree is rebuilt
//! only when refitting has made it much looser than it was when built (see
//! [`REBUILD_RATIO`]).
//!
//! Pairs are found by descending node pairs (a bounding-volume test tree)
//! rather than one query per primitive: the top of the tree is visited once
//! per node pair instead of once per primitive, which matters when, as in a
//! crumpled sheet, every primitive has dozens of neighbours in range.
//!
//! `collide::bvh` answers closest-point queries over a static mesh; this one
//! answers overlap queries over boxes that change every call, so the two do
//! not share code.

use crate::math::Vec3;
use rayon::prelude::*;

/// Leaves hold at most this many primitives.
const LEAF_SIZE: usize = 4;

/// Rebuild when the summed surface area of the nodes (relative to the root)
/// exceeds this multiple of its value right after the last build. Crumpling
/// legitimately raises the ratio a little, so it must not be too tight; a
/// rebuild of 40K triangles costs a few milliseconds.
const REBUILD_RATIO: f64 = 2.0;

/// Independent node pairs a traversal is split into for parallelism.
const SEEDS: usize = 128;

/// Below this many primitives the per-primitive box pass runs sequentially.
const PAR_MIN: usize = 2048;

/// `out[k] = f(k)` for every slot, in parallel once there are enough boxes
/// to pay for it (each slot is written by one task: the same for any thread count).
fn fill_boxes(out: &mut [Aabb], f: impl Fn(usize) -> Aabb + Sync) {
    if out.len() >= PAR_MIN {
        out.par_iter_mut().enumerate().for_each(|(k, b)| *b = f(k));
    } else {
        for (k, b) in out.iter_mut().enumerate() {
            *b = f(k);
        }
    }
}

/// An axis-aligned box (also the eol remesher's prefilter).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Aabb {
    pub(crate) lo: Vec3<f64>,
    pub(crate) hi: Vec3<f64>,
}

impl Aabb {
    /// The box that contains nothing (the identity of [`Aabb::union`]).
    pub(super) fn empty() -> Self {
        Self {
            lo: Vec3::splat(f64::INFINITY),
            hi: Vec3::splat(f64::NEG_INFINITY),
        }
    }

    pub(crate) fn point(p: Vec3<f64>) -> Self {
        Self { lo: p, hi: p }
    }

    #[inline]
    pub(crate) fn grow(mut self, p: Vec3<f64>) -> Self {
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
    pub(crate) fn padded(self, r: f64) -> Self {
        Self {
            lo: self.lo - Vec3::splat(r),
            hi: self.hi + Vec3::splat(r),
        }
    }

    /// Closed-interval overlap: touching boxes overlap, so contacts exactly
    /// at the padding distance are not lost.
    #[inline(always)]
    pub(crate) fn overlaps(&self, o: &Self) -> bool {
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
    /// A second set of boxes over the same tree ([`Bvh::update_alt`]):
    /// per primitive in leaf order, and per node.
    alt: Vec<Aabb>,
    alt_bounds: Vec<Aabb>,
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
    /// has become too loose. Builds split at the primitives' `centre_of(id)`
    /// (not the box centres: a box may be empty or padded one-sidedly).
    pub(super) fn update<C, F>(&mut self, len: usize, centre_of: C, box_of: F)
    where
        C: Fn(usize) -> Vec3<f64> + Sync,
        F: Fn(usize) -> Aabb + Sync,
    {
        if self.order.len() != len || self.nodes.is_empty() && len > 0 {
            self.build(len, &centre_of, &box_of);
            return;
        }
        if len == 0 {
            return;
        }
        let order = &self.order;
        fill_boxes(&mut self.boxes, |k| box_of(order[k] as usize));
        let cost = self.refit_nodes();
        if cost > REBUILD_RATIO * self.built_cost {
            self.build(len, &centre_of, &box_of);
        }
    }

    /// Median split of the box centres along their longest extent.
    /// Deterministic: ties are broken by primitive id.
    fn build<C, F>(&mut self, len: usize, centre_of: &C, box_of: &F)
    where
        C: Fn(usize) -> Vec3<f64> + Sync,
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
        fill_boxes(&mut self.boxes, box_of);
        self.centres.clear();
        self.centres.extend((0..len).map(centre_of));
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

    /// Fits the second box set to `box_of(id)` on the current tree (call
    /// after [`Bvh::update`]; never rebuilds). Used by [`Pairing::Cross`].
    pub(super) fn update_alt<F>(&mut self, box_of: F)
    where
        F: Fn(usize) -> Aabb + Sync,
    {
        let order = &self.order;
        self.alt.resize(order.len(), Aabb::empty());
        fill_boxes(&mut self.alt, |k| box_of(order[k] as usize));
        self.alt_bounds.resize(self.nodes.len(), Aabb::empty());
        for i in (0..self.nodes.len()).rev() {
            let n = self.nodes[i];
            let s = n.start as usize;
            self.alt_bounds[i] = if n.count > 0 {
                self.alt[s..s + n.count as usize]
                    .iter()
                    .fold(Aabb::empty(), |a, b| a.union(*b))
            } else {
                self.alt_bounds[s].union(self.alt_bounds[s + 1])
            };
        }
    }

    /// Per-node values computed bottom-up: `leaf(ids)` for a leaf's
    /// primitives, `merge(left, right)` for an inner node. Feeds the node
    /// predicates of [`Pairing::seeds`] (the dirty flags of a CCD pass).
    pub(super) fn fold_nodes<T, L, M>(&self, out: &mut Vec<T>, leaf: L, merge: M)
    where
        T: Copy + Default,
        L: Fn(&[u32]) -> T,
        M: Fn(T, T) -> T,
    {
        out.clear();
        out.resize(self.nodes.len(), T::default());
        for i in (0..self.nodes.len()).rev() {
            let n = self.nodes[i];
            out[i] = if n.count > 0 {
                let s = n.start as usize;
                leaf(&self.order[s..s + n.count as usize])
            } else {
                merge(out[n.start as usize], out[n.start as usize + 1])
            };
        }
    }

    /// Primitive ids in leaf order.
    pub(super) fn order(&self) -> &[u32] {
        &self.order
    }

    /// Box of the primitive at leaf-order position `p`.
    #[inline]
    pub(super) fn prim_box(&self, p: usize) -> &Aabb {
        &self.boxes[p]
    }

    #[inline(always)]
    fn is_leaf(&self, i: u32) -> bool {
        self.nodes[i as usize].count > 0
    }

    #[inline(always)]
    fn bounds(&self, i: u32) -> &Aabb {
        &self.nodes[i as usize].bounds
    }

    #[inline(always)]
    fn leaf_range(&self, i: u32) -> core::ops::Range<usize> {
        let n = self.nodes[i as usize];
        n.start as usize..(n.start + n.count) as usize
    }

    /// Calls `visit(id, box)` for every primitive whose box overlaps `q`, in
    /// a fixed traversal order. `stack` is caller-owned scratch.
    #[cfg(test)]
    pub(super) fn query<F: FnMut(u32, &Aabb)>(&self, q: &Aabb, stack: &mut Vec<u32>, mut visit: F) {
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
                        visit(id, b);
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

/// Which primitive pairs a traversal reports.
#[derive(Clone, Copy)]
pub(super) enum Pairing<'a> {
    /// `(i, j)`, `i` from the first tree and `j` from the second, boxes
    /// overlapping.
    Two(&'a Bvh, &'a Bvh),
    /// Unordered pairs of distinct primitives of one tree, boxes
    /// overlapping, each once.
    Own(&'a Bvh),
    /// Unordered pairs of one tree where each one's second box
    /// ([`Bvh::update_alt`]) overlaps the other's box, each once. Both
    /// conditions also prune node pairs, which a two-tree traversal could
    /// only check one way.
    Cross(&'a Bvh),
}

impl<'a> Pairing<'a> {
    #[inline(always)]
    fn trees(&self) -> (&'a Bvh, &'a Bvh) {
        match *self {
            Pairing::Two(a, b) => (a, b),
            Pairing::Own(a) | Pairing::Cross(a) => (a, a),
        }
    }

    #[inline(always)]
    fn symmetric(&self) -> bool {
        !matches!(self, Pairing::Two(..))
    }

    #[inline(always)]
    fn nodes_meet(&self, i: u32, j: u32) -> bool {
        match *self {
            Pairing::Two(a, b) => a.bounds(i).overlaps(b.bounds(j)),
            Pairing::Own(a) => a.bounds(i).overlaps(a.bounds(j)),
            Pairing::Cross(a) => {
                a.alt_bounds[i as usize].overlaps(a.bounds(j))
                    && a.alt_bounds[j as usize].overlaps(a.bounds(i))
            }
        }
    }

    /// Primitives at leaf-order positions `p` (first tree), `q` (second).
    #[inline(always)]
    fn prims_meet(&self, p: usize, q: usize) -> bool {
        match *self {
            Pairing::Two(a, b) => a.boxes[p].overlaps(&b.boxes[q]),
            Pairing::Own(a) => a.boxes[p].overlaps(&a.boxes[q]),
            Pairing::Cross(a) => a.alt[p].overlaps(&a.boxes[q]) && a.alt[q].overlaps(&a.boxes[p]),
        }
    }

    /// Whether the primitive at position `p` can meet anything in node `j`.
    #[inline(always)]
    fn prim_meets_node(&self, p: usize, j: u32) -> bool {
        match *self {
            Pairing::Two(a, b) => a.boxes[p].overlaps(b.bounds(j)),
            Pairing::Own(a) => a.boxes[p].overlaps(a.bounds(j)),
            Pairing::Cross(a) => {
                a.alt[p].overlaps(a.bounds(j)) && a.boxes[p].overlaps(&a.alt_bounds[j as usize])
            }
        }
    }

    /// The independent node pairs a traversal is split into, expanded
    /// breadth first to a fixed count (so independent of the thread count)
    /// for the caller to process in parallel with [`Pairing::descend`].
    /// Node pairs failing `keep(i, j)` (a conservative test on per-node
    /// data, see [`Bvh::fold_nodes`]) are skipped.
    pub(super) fn seeds<K: Fn(u32, u32) -> bool>(
        &self,
        keep: &K,
        seeds: &mut Vec<(u32, u32)>,
        next: &mut Vec<(u32, u32)>,
    ) {
        seeds.clear();
        let (a, b) = self.trees();
        if a.nodes.is_empty() || b.nodes.is_empty() {
            return;
        }
        seeds.push((0, 0));
        for _ in 0..32 {
            if seeds.len() >= SEEDS || seeds.iter().all(|&(i, j)| a.is_leaf(i) && b.is_leaf(j)) {
                break;
            }
            next.clear();
            for &(i, j) in seeds.iter() {
                if a.is_leaf(i) && b.is_leaf(j) {
                    self.push_if(keep, (i, j), next);
                } else {
                    self.split(keep, (i, j), next);
                }
            }
            std::mem::swap(seeds, next);
        }
    }

    /// Emits the primitive pairs below the node pair `seed`, depth first,
    /// in a fixed order.
    /// `emit(i, j, p, q)` gets the two primitive ids and their positions in
    /// leaf order ([`Bvh::order`]), so callers can keep per-primitive data
    /// in leaf order, where the traversal reads it nearly sequentially.
    pub(super) fn descend<K: Fn(u32, u32) -> bool, F: FnMut(u32, u32, usize, usize)>(
        &self,
        keep: &K,
        seed: (u32, u32),
        stack: &mut Vec<(u32, u32)>,
        mut emit: F,
    ) {
        let (a, b) = self.trees();
        stack.clear();
        self.push_if(keep, seed, stack);
        while let Some((i, j)) = stack.pop() {
            if !(a.is_leaf(i) && b.is_leaf(j)) {
                self.split(keep, (i, j), stack);
                continue;
            }
            let rj = b.leaf_range(j);
            for p in a.leaf_range(i) {
                if !self.prim_meets_node(p, j) {
                    continue;
                }
                // Within one leaf of a single tree, each pair once.
                let from = if self.symmetric() && i == j {
                    p + 1
                } else {
                    rj.start
                };
                for q in from..rj.end {
                    if self.prims_meet(p, q) {
                        emit(a.order[p], b.order[q], p, q);
                    }
                }
            }
        }
    }

    /// Pushes the children pairs of `(i, j)` that may hold pairs: for a
    /// single tree, `(i, i)` becomes `(l, l), (l, r), (r, r)`; otherwise the
    /// node with the larger box is split (the other one if it is a leaf).
    #[inline]
    fn split<K: Fn(u32, u32) -> bool>(&self, keep: &K, (i, j): (u32, u32), out: &mut Vec<(u32, u32)>) {
        let (a, b) = self.trees();
        if self.symmetric() && i == j {
            let l = a.nodes[i as usize].start;
            self.push_if(keep, (l, l), out);
            self.push_if(keep, (l, l + 1), out);
            self.push_if(keep, (l + 1, l + 1), out);
            return;
        }
        let split_a = !a.is_leaf(i) && (b.is_leaf(j) || a.bounds(i).half_area() >= b.bounds(j).half_area());
        if split_a {
            let l = a.nodes[i as usize].start;
            self.push_if(keep, (l, j), out);
            self.push_if(keep, (l + 1, j), out);
        } else {
            let l = b.nodes[j as usize].start;
            self.push_if(keep, (i, l), out);
            self.push_if(keep, (i, l + 1), out);
        }
    }

    #[inline(always)]
    fn push_if<K: Fn(u32, u32) -> bool>(&self, keep: &K, (i, j): (u32, u32), out: &mut Vec<(u32, u32)>) {
        if self.nodes_meet(i, j) && keep(i, j) {
            out.push((i, j));
        }
    }
}

#[cfg(test)]
#[path = "bvh_tests.rs"]
mod tests;
