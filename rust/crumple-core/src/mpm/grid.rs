//! Sparse background grid (spec §10.2): 4×4×4-node blocks, allocated only
//! where particles are, rebuilt every step.
//!
//! Particles are keyed by the block of their stencil's lowest node. A
//! particle whose lowest node lies in block `b` touches only nodes of blocks
//! `b + {0,1}³` (4 nodes per block, at most 4 nodes of stencil per axis), so
//! the active set is the particle blocks plus their `+1` neighbours, and the
//! scatter can be made deterministic without atomics by colouring particle
//! blocks by the parity of their coordinates: blocks of one colour are at
//! least two blocks apart, so their write sets never overlap. Colours run one
//! after another, blocks of a colour in parallel, particles of a block in
//! sorted order. The sum seen by every node is then independent of the
//! thread count (spec U9).
//!
//! Memory follows the occupied region: a block index is found by binary
//! search in the sorted list of active block keys, never through a dense
//! table over the domain.

use crate::math::{Real, Vec3};
use rayon::prelude::*;

/// Nodes per block edge.
pub const BLOCK: usize = 4;
/// Nodes per block.
pub const BLOCK_NODES: usize = BLOCK * BLOCK * BLOCK;
/// Bits of one block coordinate in a key: at most 1024 blocks (4096 nodes) per axis.
pub const KEY_BITS: u32 = 10;
/// Largest number of nodes per axis a grid may have.
pub const MAX_NODES_PER_AXIS: usize = (1 << KEY_BITS) * BLOCK;
/// Marks a missing neighbour block.
pub const NO_BLOCK: u32 = u32::MAX;

/// Block key of block coordinates (each < 2^KEY_BITS).
#[inline]
pub fn block_key(b: [u32; 3]) -> u32 {
    b[0] | (b[1] << KEY_BITS) | (b[2] << (2 * KEY_BITS))
}

/// Block coordinates of a key.
#[inline]
pub fn key_coords(k: u32) -> [u32; 3] {
    let m = (1 << KEY_BITS) - 1;
    [k & m, (k >> KEY_BITS) & m, k >> (2 * KEY_BITS)]
}

/// Index of node `(a, b, c)` (each `0..4`) inside its block.
#[inline]
pub fn local_index(a: usize, b: usize, c: usize) -> usize {
    (a * BLOCK + b) * BLOCK + c
}

/// Per-node data: mass (kg) and momentum (kg·m/s), which the grid update
/// turns into velocity (m/s) in place.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Node<T> {
    pub mass: T,
    pub mv: Vec3<T>,
}

/// The sparse grid and its per-step particle binning. All buffers are kept
/// between steps, so once warmed up a step allocates nothing unless the
/// occupied region grows.
#[derive(Clone, Debug)]
pub struct SparseGrid<T> {
    /// `(key, particle)` pairs sorted by key then particle index.
    pairs: Vec<(u32, u32)>,
    /// Candidate active keys (scratch).
    candidates: Vec<u32>,
    /// Sorted keys of the active blocks.
    pub block_keys: Vec<u32>,
    /// `particle_offsets[b]..particle_offsets[b+1]` indexes `order` for the
    /// particles keyed to active block `b` (empty for halo-only blocks).
    pub particle_offsets: Vec<u32>,
    /// Particles sorted by block key (then index).
    pub order: Vec<u32>,
    /// Active block index of each particle (the block of its lowest stencil node).
    pub particle_block: Vec<u32>,
    /// For each active block, the active block index of `b + (i, j, k)` with
    /// `i, j, k ∈ {0, 1}`, at position `i*4 + j*2 + k` ([`NO_BLOCK`] if absent,
    /// which only happens for halo-only blocks).
    pub neighbours: Vec<[u32; 8]>,
    /// Particle blocks of each of the 8 parity colours.
    pub colours: [Vec<u32>; 8],
    /// Node data, block-major: node `l` of block `b` is `nodes[b * 64 + l]`.
    pub nodes: Vec<Node<T>>,
}

impl<T> Default for SparseGrid<T> {
    fn default() -> Self {
        Self {
            pairs: Vec::new(),
            candidates: Vec::new(),
            block_keys: Vec::new(),
            particle_offsets: Vec::new(),
            order: Vec::new(),
            particle_block: Vec::new(),
            neighbours: Vec::new(),
            colours: Default::default(),
            nodes: Vec::new(),
        }
    }
}

impl<T: Real> SparseGrid<T> {
    /// Number of active blocks.
    pub fn num_blocks(&self) -> usize {
        self.block_keys.len()
    }

    /// Active block index of `key`, if active.
    #[inline]
    pub fn find(&self, key: u32) -> Option<u32> {
        self.block_keys.binary_search(&key).ok().map(|i| i as u32)
    }

    /// Rebuilds the binning from the block key of every particle and clears
    /// the node data. `keys[p]` is the key of the block holding particle
    /// `p`'s lowest stencil node; every block coordinate must be below
    /// `2^KEY_BITS − 1` so that its `+1` neighbours have keys too (the
    /// solver's domain check guarantees this).
    pub fn rebuild(&mut self, keys: &[u32]) {
        if self.pairs.len() == keys.len() {
            // Particles move at most a fraction of a cell per step, so last
            // step's order is nearly sorted for the new keys: refresh the keys
            // in place and let the sort mostly verify runs.
            self.pairs
                .par_iter_mut()
                .for_each(|pair| pair.0 = keys[pair.1 as usize]);
        } else {
            self.pairs.clear();
            self.pairs
                .extend(keys.iter().enumerate().map(|(p, &k)| (k, p as u32)));
        }
        // Pairs are unique, so an unstable sort has one possible result: the
        // order is deterministic whatever the thread count and whatever the
        // order we start from.
        self.pairs.par_sort_unstable();
        self.order.clear();
        self.order.extend(self.pairs.iter().map(|&(_, p)| p));

        // Active blocks: every particle block and its +1 neighbours.
        self.candidates.clear();
        let mut last = NO_BLOCK;
        for &(k, _) in &self.pairs {
            if k == last {
                continue;
            }
            last = k;
            let [x, y, z] = key_coords(k);
            for i in 0..2 {
                for j in 0..2 {
                    for l in 0..2 {
                        self.candidates.push(block_key([x + i, y + j, z + l]));
                    }
                }
            }
        }
        self.candidates.par_sort_unstable();
        self.candidates.dedup();
        std::mem::swap(&mut self.block_keys, &mut self.candidates);

        // Particle ranges per active block (merge of two sorted lists).
        let nb = self.block_keys.len();
        self.particle_offsets.clear();
        self.particle_offsets.reserve(nb + 1);
        let mut cursor = 0usize;
        for &bk in &self.block_keys {
            self.particle_offsets.push(cursor as u32);
            while cursor < self.pairs.len() && self.pairs[cursor].0 == bk {
                cursor += 1;
            }
        }
        self.particle_offsets.push(cursor as u32);
        self.particle_block.clear();
        self.particle_block.resize(keys.len(), 0);
        for b in 0..nb {
            for i in self.particle_offsets[b]..self.particle_offsets[b + 1] {
                self.particle_block[self.order[i as usize] as usize] = b as u32;
            }
        }

        // Neighbour table and colours.
        self.neighbours.clear();
        self.neighbours.resize(nb, [NO_BLOCK; 8]);
        let keys_sorted = &self.block_keys;
        let offsets = &self.particle_offsets;
        self.neighbours.par_iter_mut().enumerate().for_each(|(b, nbh)| {
            if offsets[b] == offsets[b + 1] {
                return; // halo-only block: nothing scatters from it
            }
            let [x, y, z] = key_coords(keys_sorted[b]);
            for i in 0..2u32 {
                for j in 0..2u32 {
                    for l in 0..2u32 {
                        let k = block_key([x + i, y + j, z + l]);
                        nbh[(i * 4 + j * 2 + l) as usize] =
                            keys_sorted.binary_search(&k).map_or(NO_BLOCK, |v| v as u32);
                    }
                }
            }
        });
        for c in &mut self.colours {
            c.clear();
        }
        for b in 0..nb {
            if offsets[b] == offsets[b + 1] {
                continue;
            }
            let [x, y, z] = key_coords(keys_sorted[b]);
            let colour = ((x & 1) << 2 | (y & 1) << 1 | (z & 1)) as usize;
            self.colours[colour].push(b as u32);
        }

        // Zero the node data in parallel: for thin sheets most of the
        // (mostly empty) blocks' memory is this clear.
        self.nodes.resize(nb * BLOCK_NODES, Node::default());
        self.nodes.truncate(nb * BLOCK_NODES);
        self.nodes.par_iter_mut().for_each(|n| *n = Node::default());
    }

    /// Position (m) of node `l` of block `b` for a grid with origin `lower` and spacing `dx`.
    #[inline]
    pub fn node_position(&self, b: usize, l: usize, lower: Vec3<T>, dx: T) -> Vec3<T> {
        let idx = self.node_coords(b, l);
        lower
            + Vec3::new(
                T::from_f64(idx[0] as f64),
                T::from_f64(idx[1] as f64),
                T::from_f64(idx[2] as f64),
            ) * dx
    }

    /// Global integer coordinates of node `l` of block `b`.
    #[inline]
    pub fn node_coords(&self, b: usize, l: usize) -> [u32; 3] {
        let [x, y, z] = key_coords(self.block_keys[b]);
        let (a, rest) = (l / (BLOCK * BLOCK), l % (BLOCK * BLOCK));
        let (bb, c) = (rest / BLOCK, rest % BLOCK);
        [x * 4 + a as u32, y * 4 + bb as u32, z * 4 + c as u32]
    }

    /// Total grid mass (kg), summed in a thread-count-independent order.
    pub fn total_mass(&self) -> f64 {
        crate::parallel::ordered_sum(self.nodes.len(), |i| self.nodes[i].mass.to_f64())
    }
}

/// A raw pointer to the node array that may be shared by the tasks of one
/// colour. SAFETY contract: tasks holding it write only nodes of blocks
/// `b + {0,1}³` for their own block `b`; blocks of one colour are two or more
/// blocks apart on some axis, so these write sets are disjoint.
#[derive(Clone, Copy)]
pub(crate) struct NodesPtr<T>(pub *mut Node<T>);
// SAFETY: see the type's contract; the pointer is only dereferenced at
// indices owned by one task at a time.
unsafe impl<T: Send> Send for NodesPtr<T> {}
unsafe impl<T: Send> Sync for NodesPtr<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        for b in [[0, 0, 0], [1, 2, 3], [1023, 0, 1022], [5, 1023, 1023]] {
            assert_eq!(key_coords(block_key(b)), b);
        }
    }

    #[test]
    fn rebuild_bins_particles_and_neighbours() {
        // Two particles in block (1,1,1), one in (5,1,1), one in (1,1,1) again out of order.
        let k1 = block_key([1, 1, 1]);
        let k5 = block_key([5, 1, 1]);
        let keys = vec![k5, k1, k1, k5, k1];
        let mut g = SparseGrid::<f32>::default();
        g.rebuild(&keys);
        // 8 blocks around each particle block, no overlap between the two groups.
        assert_eq!(g.num_blocks(), 16);
        assert_eq!(g.nodes.len(), 16 * BLOCK_NODES);
        let b1 = g.find(k1).unwrap() as usize;
        let range = g.particle_offsets[b1] as usize..g.particle_offsets[b1 + 1] as usize;
        assert_eq!(&g.order[range], &[1, 2, 4]);
        let b5 = g.find(k5).unwrap() as usize;
        let range = g.particle_offsets[b5] as usize..g.particle_offsets[b5 + 1] as usize;
        assert_eq!(&g.order[range], &[0, 3]);
        // neighbour (+1, +1, +1) of block 1 is block (2,2,2)
        let n = g.neighbours[b1][7];
        assert_eq!(key_coords(g.block_keys[n as usize]), [2, 2, 2]);
        assert_eq!(g.neighbours[b1][0] as usize, b1);
        // both particle blocks have odd x parity, y, z odd → colour 7
        assert_eq!(g.colours[7].len(), 2);
        assert!(g.colours[..7].iter().all(|c| c.is_empty()));
        // node coordinates
        assert_eq!(g.node_coords(b1, local_index(3, 2, 1)), [7, 6, 5]);
    }

    #[test]
    fn rebuild_reuses_buffers() {
        let keys: Vec<u32> = (0..1000u32).map(|i| block_key([i % 7, (i / 7) % 5, 3])).collect();
        let mut g = SparseGrid::<f64>::default();
        g.rebuild(&keys);
        let caps = (g.pairs.capacity(), g.nodes.capacity(), g.order.capacity());
        g.rebuild(&keys);
        assert_eq!(caps, (g.pairs.capacity(), g.nodes.capacity(), g.order.capacity()));
    }
}
