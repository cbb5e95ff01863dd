// Exclusive prefix sum of u32 with wrapping addition (the CPU twin is
// `gpu::scan::scan_exclusive_u32`; results are equal bit for bit because
// addition modulo 2^32 is associative).
//
// Reduce-then-scan over blocks of BLOCK_SIZE elements, applied level by level
// (see scan.rs): `reduce_blocks` writes one sum per block into the next
// level, the host recursion scans that level, then `scan_blocks` scans each
// block and adds its block's offset. This reads the data twice and writes it
// once, against twice each for scan-then-add.
//
// 256 invocations is WebGPU's default maxComputeInvocationsPerWorkgroup.
// Eight elements per invocation (2048 per block): on lavapipe going from 4
// to 8 cut the time by 30% (half the workgroups, so half the barriers), and
// the block tile plus scan scratch stay at 9 KiB of the 16 KiB default
// workgroup memory (16 per invocation would not fit).

struct ScanParams {
    // Elements at this level.
    n: u32,
    // ceil(n / BLOCK_SIZE): workgroups that have work (the 2-D grid may have more).
    num_blocks: u32,
    // 1 when `block_sums` holds the scanned sums of this level's blocks,
    // 0 at the top level (a single block, nothing to add).
    use_offsets: u32,
    _pad: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const ITEMS_PER_INVOCATION: u32 = 8u;
const BLOCK_SIZE: u32 = 2048u;
// sqrt(WORKGROUP_SIZE): segment length and count of the raking scan.
const SEGMENTS: u32 = 16u;

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_sums: array<u32>;

var<workgroup> tile: array<u32, BLOCK_SIZE>;
var<workgroup> partial: array<u32, WORKGROUP_SIZE>;
var<workgroup> segment_sums: array<u32, SEGMENTS>;
var<workgroup> workgroup_total: u32;

// Linear block index of a workgroup in a grid of up to 65535 x 65535 groups.
fn block_index(group: vec3<u32>, groups: vec3<u32>) -> u32 {
    return group.x + group.y * groups.x;
}

// Exclusive scan of one value per invocation across the workgroup. Returns
// (exclusive prefix, workgroup total). Must be called from uniform control
// flow, once per dispatch (it does not wait before `partial` is reused).
//
// Raking in two levels of 16 (16 x 16 = WORKGROUP_SIZE): 16 invocations scan
// 16 values each serially, one invocation scans the 16 segment sums. That is
// three barriers where a Hillis-Steele scan needs sixteen; barriers dominate
// on software adapters (lavapipe switches coroutines at each one), and on
// hardware the 32 serial steps cost about as much as 8 barrier-separated ones.
fn workgroup_exclusive_scan(lid: u32, value: u32) -> vec2<u32> {
    partial[lid] = value;
    workgroupBarrier();
    if (lid < SEGMENTS) {
        var running = 0u;
        for (var j = 0u; j < SEGMENTS; j += 1u) {
            let idx = lid * SEGMENTS + j;
            let v = partial[idx];
            partial[idx] = running;
            running += v;
        }
        segment_sums[lid] = running;
    }
    workgroupBarrier();
    if (lid == 0u) {
        var running = 0u;
        for (var j = 0u; j < SEGMENTS; j += 1u) {
            let v = segment_sums[j];
            segment_sums[j] = running;
            running += v;
        }
        workgroup_total = running;
    }
    workgroupBarrier();
    return vec2<u32>(partial[lid] + segment_sums[lid / SEGMENTS], workgroup_total);
}

@compute @workgroup_size(256)
fn reduce_blocks(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = block_index(group, groups);
    if (block >= params.num_blocks) {
        return;
    }
    let base = block * BLOCK_SIZE;
    var sum = 0u;
    // Strided (coalesced) reads: the order of terms does not matter for a sum.
    for (var k = 0u; k < ITEMS_PER_INVOCATION; k += 1u) {
        let i = base + k * WORKGROUP_SIZE + lid;
        if (i < params.n) {
            sum += data[i];
        }
    }
    let scan = workgroup_exclusive_scan(lid, sum);
    if (lid == 0u) {
        block_sums[block] = scan.y;
    }
}

@compute @workgroup_size(256)
fn scan_blocks(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = block_index(group, groups);
    if (block >= params.num_blocks) {
        return;
    }
    let base = block * BLOCK_SIZE;
    // Coalesced load into workgroup memory, then each invocation scans four
    // consecutive elements serially.
    for (var k = 0u; k < ITEMS_PER_INVOCATION; k += 1u) {
        let j = k * WORKGROUP_SIZE + lid;
        let i = base + j;
        var v = 0u;
        if (i < params.n) {
            v = data[i];
        }
        tile[j] = v;
    }
    workgroupBarrier();
    let first = lid * ITEMS_PER_INVOCATION;
    var sum = 0u;
    for (var k = 0u; k < ITEMS_PER_INVOCATION; k += 1u) {
        sum += tile[first + k];
    }
    let scan = workgroup_exclusive_scan(lid, sum);
    var running = scan.x;
    if (params.use_offsets != 0u) {
        running += block_sums[block];
    }
    for (var k = 0u; k < ITEMS_PER_INVOCATION; k += 1u) {
        let v = tile[first + k];
        tile[first + k] = running;
        running += v;
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS_PER_INVOCATION; k += 1u) {
        let j = k * WORKGROUP_SIZE + lid;
        let i = base + j;
        if (i < params.n) {
            data[i] = tile[j];
        }
    }
}
