// Step 1, continued (grid.rs `SparseGrid::rebuild`): the active blocks are the
// particle blocks and their +1 neighbours, numbered in key order.
//
// The CPU finds blocks by binary search in the sorted key list. Here a dense
// table with one u32 per block of the domain maps a block to its active index
// (NO_BLOCK when inactive): for a 256³-cell domain that is 262 144 words (1 MiB),
// against 1 KiB of node data per active block, so memory still follows the
// occupied region while lookups cost one load. The table is cleared, marked,
// scanned (exclusive prefix sum, the Foundation's GpuScan) and compacted
// every step: nothing is read back.

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(27) var<storage, read_write> keys: array<u32>;
@group(0) @binding(28) var<storage, read_write> marks: array<atomic<u32>>;
// per active block: (dense index, first sorted particle, end, 0)
@group(0) @binding(3) var<storage, read_write> blocks: array<vec4<u32>>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;
// indirect dispatch arguments over the active blocks (x, y, 1): a buffer of
// its own, since a dispatch may not use one buffer as INDIRECT and as storage
@group(0) @binding(30) var<storage, read_write> indirect: array<u32>;
@group(0) @binding(29) var<storage, read_write> scanned: array<u32>;
@group(0) @binding(4) var<storage, read_write> table: array<u32>;

fn thread_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 64u;
}

// Marks the block of every particle and its 7 upper neighbours (sorted keys:
// only the first particle of each run marks).
@compute @workgroup_size(64)
fn mark(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_index(gid, nwg);
    if i >= params.n_particles {
        return;
    }
    let k = keys[i];
    if i > 0u && keys[i - 1u] == k {
        return;
    }
    let b = dense_coords(k);
    for (var n = 0u; n < 8u; n++) {
        let o = vec3<u32>(n >> 2u, (n >> 1u) & 1u, n & 1u);
        atomicStore(&marks[dense_index(b + o)], 1u);
    }
}

// After the scan, scanned[d] is the number of active blocks before block d
// and scanned[dense] their total. Writes the active list, clears the
// per-block particle ranges and fills the lookup table (NO_BLOCK: inactive).
@compute @workgroup_size(64)
fn compact(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let d = thread_index(gid, nwg);
    let dense = params.table_dim.x * params.table_dim.y * params.table_dim.z;
    if d >= dense {
        return;
    }
    let here = scanned[d];
    let next = scanned[d + 1u];
    if next != here && here < params.block_capacity {
        blocks[here] = vec4<u32>(d, 0u, 0u, 0u);
        table[d] = here;
    } else {
        table[d] = NO_BLOCK;
    }
    if d == dense - 1u {
        atomicStore(&stats[ST_BLOCKS], next);
        if next > params.block_capacity {
            atomicOr(&stats[ST_OVERFLOW], 1u);
        }
        // Indirect dispatch over active blocks: 65535 groups per row at most.
        let n = min(next, params.block_capacity);
        let cols = min(max(n, 1u), 65535u);
        indirect[0] = cols;
        indirect[1] = (n + cols - 1u) / cols;
        indirect[2] = 1u;
        atomicStore(&stats[ST_NUM_BLOCKS], n);
    }
}

// Particle ranges per active block: sorted entries [start, end).
@compute @workgroup_size(64)
fn ranges(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_index(gid, nwg);
    if i >= params.n_particles || atomicLoad(&stats[ST_OVERFLOW]) != 0u {
        return;
    }
    let k = keys[i];
    let b = table[k];
    if i == 0u || keys[i - 1u] != k {
        blocks[b].y = i;
    }
    if i + 1u == params.n_particles || keys[i + 1u] != k {
        blocks[b].z = i + 1u;
    }
}
