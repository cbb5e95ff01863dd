// Step 1, continued (grid.rs `SparseGrid::rebuild`): the active blocks are the
// particle blocks and their +1 neighbours.
//
// The CPU finds a block by binary search in its sorted key list. Here the
// active blocks live in a hash table (open addressing, linear probing, at
// most half full) of key + 1 per slot, filled with atomic compare-exchange:
// memory follows the occupied region (12 bytes per slot, 2 slots per active
// block, against 1 KiB of node data per block), a lookup is about one load,
// and nothing is read back. The slot a key lands in can depend on the order
// of concurrent inserts, and with it the active numbering; no sum depends on
// that numbering (P2G adds per node in colour and particle order), so
// results stay bitwise reproducible.

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(27) var<storage, read_write> keys: array<u32>;
// key + 1 per slot, 0 = empty (cleared by the host before every step)
@group(0) @binding(28) var<storage, read_write> hash_keys: array<atomic<u32>>;
// per active block: (key, first sorted particle, end, 0)
@group(0) @binding(3) var<storage, read_write> blocks: array<u32>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;
// indirect dispatch arguments over the active blocks (x, y, 1): a buffer of
// its own, since a dispatch may not use one buffer as INDIRECT and as storage
@group(0) @binding(30) var<storage, read_write> indirect: array<u32>;
// occupied-slot flags, then (after the scan) the active index of each slot
@group(0) @binding(29) var<storage, read_write> flags: array<u32>;
@group(0) @binding(4) var<storage, read_write> hash_vals: array<u32>;
// per slot: (first sorted particle, end) of the block's particles; 0, 0 for
// halo-only blocks (cleared by the host before every step)
@group(0) @binding(31) var<storage, read_write> hash_ranges: array<u32>;

// Inserts key k (if absent) and returns its slot, or NO_BLOCK when the
// table is full.
fn insert(k: u32) -> u32 {
    var h = hash_slot(k);
    for (var i = 0u; i <= params.hash_mask; i++) {
        let r = atomicCompareExchangeWeak(&hash_keys[h], 0u, k + 1u);
        if r.exchanged || r.old_value == k + 1u {
            return h;
        }
        if r.old_value == 0u {
            // a spurious failure of the weak exchange: retry the same slot
            continue;
        }
        h = (h + 1u) & params.hash_mask;
    }
    atomicOr(&stats[ST_OVERFLOW], 1u); // table full: grow and redo the step
    return NO_BLOCK;
}

// Inserts the block of every particle and its 7 upper neighbours, and
// records each particle block's range of sorted particles [start, end) in
// its slot: the first particle of a run writes the start, the last the end
// (distinct scalars, so no lookup is needed later; halo-only blocks keep
// the cleared 0, 0).
@compute @workgroup_size(64)
fn mark(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_index(gid, nwg);
    if i >= params.n_particles || (atomicLoad(&stats[ST_OVERFLOW]) & 2u) != 0u {
        return;
    }
    let k = keys[i];
    let head = i == 0u || keys[i - 1u] != k;
    let tail = i + 1u == params.n_particles || keys[i + 1u] != k;
    if !head && !tail {
        return;
    }
    let h = insert(k);
    if h != NO_BLOCK {
        if head {
            hash_ranges[2u * h] = i;
        }
        if tail {
            hash_ranges[2u * h + 1u] = i + 1u;
        }
    }
    if head {
        let b = key_coords(k);
        for (var n = 1u; n < 8u; n++) {
            _ = insert(block_key(b + vec3<u32>(n >> 2u, (n >> 1u) & 1u, n & 1u)));
        }
    }
}

// flags[s] = slot s occupied; flags[slots] = 0 (the scan's total lands there).
@compute @workgroup_size(64)
fn flag(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = thread_index(gid, nwg);
    if s > params.hash_mask + 1u {
        return;
    }
    if s == params.hash_mask + 1u {
        flags[s] = 0u;
    } else {
        flags[s] = select(0u, 1u, atomicLoad(&hash_keys[s]) != 0u);
    }
}

// After the scan, flags[s] is the number of occupied slots before s and
// flags[slots] their total: the active index of slot s. Writes the active
// list with each block's particle range, the slot → index map, the count
// and the indirect dispatch over active blocks.
@compute @workgroup_size(64)
fn compact(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = thread_index(gid, nwg);
    let slots = params.hash_mask + 1u;
    if s >= slots {
        return;
    }
    let here = flags[s];
    let k1 = atomicLoad(&hash_keys[s]);
    if k1 != 0u && here < params.block_capacity {
        blocks[4u * here] = k1 - 1u;
        blocks[4u * here + 1u] = hash_ranges[2u * s];
        blocks[4u * here + 2u] = hash_ranges[2u * s + 1u];
        blocks[4u * here + 3u] = 0u;
    }
    hash_vals[s] = here;
    if s == slots - 1u {
        let total = flags[slots];
        atomicStore(&stats[ST_BLOCKS], total);
        if total > params.block_capacity {
            atomicOr(&stats[ST_OVERFLOW], 1u);
        }
        // Indirect dispatch over active blocks: 65535 groups per row at most.
        let n = min(total, params.block_capacity);
        let cols = min(max(n, 1u), 65535u);
        indirect[0] = cols;
        indirect[1] = (n + cols - 1u) / cols;
        indirect[2] = 1u;
        atomicStore(&stats[ST_NUM_BLOCKS], n);
    }
}
