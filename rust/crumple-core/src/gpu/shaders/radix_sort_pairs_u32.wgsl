// One pass of a stable LSD radix sort of (u32 key, u32 value) pairs over a
// 4-bit digit (the CPU twin is `gpu::radix_sort::radix_sort_pairs_u32`).
//
// A pass is three dispatches (see radix_sort.rs):
//   1. `radix_count`: each block of BLOCK_SIZE pairs counts its digits into
//      `block_offsets[digit * num_blocks + block]` (digit-major order).
//   2. an exclusive scan of `block_offsets` (scan_exclusive_u32.wgsl). In
//      digit-major order the prefix is "all smaller digits, then this digit in
//      earlier blocks": the output position of the block's first pair with
//      that digit.
//   3. `radix_scatter`: each pair goes to its block's offset for its digit
//      plus its rank among earlier pairs of the block with the same digit.
//
// Stability comes from the rank. Each invocation owns ITEMS_PER_INVOCATION
// consecutive pairs, so "earlier in the block" means "owned by an invocation
// with a lower index, or earlier in the same invocation". Each invocation
// counts its own digits into 16 counters packed two per u32 (16 bits each:
// a block has 4096 pairs, so no counter, prefix or total exceeds 4096 < 2^16
// and the halves never carry into each other); one workgroup scan of those
// eight words gives every invocation the count of each digit before it. The
// same packed counters, summed, give the block's histogram in `radix_count`,
// so no atomics are needed: no contention on 16 shared counters on hardware,
// and the counts are exact by construction.
//
// 4-bit digits keep the per-invocation counters to eight words; 8-bit digits
// would need 128. Eight passes sort 32-bit keys; fewer when keys are small.
// Sixteen pairs per invocation: measured on lavapipe, 4 -> 8 -> 16 items cut
// the cost of a pass by a quarter at each step (fewer workgroups, so fewer
// barriers per pair and a shorter histogram to scan); sixteen keys still fit
// in registers on hardware. Workgroup memory: 8.5 KiB of the 16 KiB default.

struct RadixParams {
    // Pairs to sort.
    n: u32,
    // ceil(n / BLOCK_SIZE).
    num_blocks: u32,
    // Bit position of this pass's digit.
    shift: u32,
    // Only `key & key_mask` is sorted on (the low `key_bits` bits).
    key_mask: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const ITEMS_PER_INVOCATION: u32 = 16u;
const BLOCK_SIZE: u32 = 4096u;
const RADIX: u32 = 16u;
// sqrt(WORKGROUP_SIZE): segment length and count of the raking scan.
const SEGMENTS: u32 = 16u;

@group(0) @binding(0) var<uniform> params: RadixParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> values_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> block_offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;

// Eight packed words per invocation, as two vec4 (lo = words 0..3, hi = 4..7).
var<workgroup> packed_lo: array<vec4<u32>, WORKGROUP_SIZE>;
var<workgroup> packed_hi: array<vec4<u32>, WORKGROUP_SIZE>;
var<workgroup> segment_lo: array<vec4<u32>, SEGMENTS>;
var<workgroup> segment_hi: array<vec4<u32>, SEGMENTS>;

fn block_index(group: vec3<u32>, groups: vec3<u32>) -> u32 {
    return group.x + group.y * groups.x;
}

fn digit_of(key: u32) -> u32 {
    return ((key & params.key_mask) >> params.shift) & (RADIX - 1u);
}

@compute @workgroup_size(256)
fn radix_count(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = block_index(group, groups);
    if (block >= params.num_blocks) {
        return;
    }
    let base = block * BLOCK_SIZE;
    // Strided (coalesced) reads: the order does not matter for a count.
    var own_lo = vec4<u32>(0u);
    var own_hi = vec4<u32>(0u);
    for (var k = 0u; k < ITEMS_PER_INVOCATION; k += 1u) {
        let i = base + k * WORKGROUP_SIZE + lid;
        if (i < params.n) {
            let inc = one_hot(digit_of(keys_in[i]));
            own_lo += inc[0];
            own_hi += inc[1];
        }
    }
    packed_lo[lid] = own_lo;
    packed_hi[lid] = own_hi;
    workgroupBarrier();
    if (lid < SEGMENTS) {
        var sum_lo = vec4<u32>(0u);
        var sum_hi = vec4<u32>(0u);
        for (var j = 0u; j < SEGMENTS; j += 1u) {
            sum_lo += packed_lo[lid * SEGMENTS + j];
            sum_hi += packed_hi[lid * SEGMENTS + j];
        }
        segment_lo[lid] = sum_lo;
        segment_hi[lid] = sum_hi;
    }
    workgroupBarrier();
    if (lid < RADIX) {
        var total = 0u;
        for (var j = 0u; j < SEGMENTS; j += 1u) {
            total += field(segment_lo[j], segment_hi[j], lid);
        }
        block_offsets[lid * params.num_blocks + block] = total;
    }
}

// One in the 16-bit half of word `digit / 2` that counts `digit`, as the two
// vec4 halves of the eight words.
fn one_hot(digit: u32) -> array<vec4<u32>, 2> {
    let word = digit >> 1u;
    let bit = 1u << ((digit & 1u) * 16u);
    let lanes = vec4<u32>(0u, 1u, 2u, 3u);
    let lo = select(vec4<u32>(0u), vec4<u32>(bit), lanes == vec4<u32>(word));
    let hi = select(vec4<u32>(0u), vec4<u32>(bit), lanes + vec4<u32>(4u) == vec4<u32>(word));
    return array<vec4<u32>, 2>(lo, hi);
}

// The 16-bit counter of `digit` in the packed words (lo, hi).
fn field(lo: vec4<u32>, hi: vec4<u32>, digit: u32) -> u32 {
    let word = digit >> 1u;
    var w: u32;
    if (word < 4u) {
        w = lo[word];
    } else {
        w = hi[word - 4u];
    }
    return (w >> ((digit & 1u) * 16u)) & 0xffffu;
}

@compute @workgroup_size(256)
fn radix_scatter(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = block_index(group, groups);
    if (block >= params.num_blocks) {
        return;
    }
    // Consecutive pairs per invocation, as the rank requires. These reads
    // are not coalesced; staging the block through workgroup memory would
    // fix that on hardware, but 4096 keys alone take the whole 16 KiB.
    let first = block * BLOCK_SIZE + lid * ITEMS_PER_INVOCATION;

    var keys: array<u32, ITEMS_PER_INVOCATION>;
    var own_lo = vec4<u32>(0u);
    var own_hi = vec4<u32>(0u);
    for (var k = 0u; k < ITEMS_PER_INVOCATION; k += 1u) {
        let i = first + k;
        if (i < params.n) {
            let key = keys_in[i];
            keys[k] = key;
            let inc = one_hot(digit_of(key));
            own_lo += inc[0];
            own_hi += inc[1];
        }
    }

    // Exclusive scan of the packed counters across the workgroup, raking in
    // two levels of 16 (three barriers; see workgroup_exclusive_scan in
    // scan_exclusive_u32.wgsl for why not Hillis-Steele).
    packed_lo[lid] = own_lo;
    packed_hi[lid] = own_hi;
    workgroupBarrier();
    if (lid < SEGMENTS) {
        var run_lo = vec4<u32>(0u);
        var run_hi = vec4<u32>(0u);
        for (var j = 0u; j < SEGMENTS; j += 1u) {
            let idx = lid * SEGMENTS + j;
            let lo = packed_lo[idx];
            let hi = packed_hi[idx];
            packed_lo[idx] = run_lo;
            packed_hi[idx] = run_hi;
            run_lo += lo;
            run_hi += hi;
        }
        segment_lo[lid] = run_lo;
        segment_hi[lid] = run_hi;
    }
    workgroupBarrier();
    if (lid == 0u) {
        var run_lo = vec4<u32>(0u);
        var run_hi = vec4<u32>(0u);
        for (var j = 0u; j < SEGMENTS; j += 1u) {
            let lo = segment_lo[j];
            let hi = segment_hi[j];
            segment_lo[j] = run_lo;
            segment_hi[j] = run_hi;
            run_lo += lo;
            run_hi += hi;
        }
    }
    workgroupBarrier();
    // Counts of each digit in invocations before this one.
    var before_lo = packed_lo[lid] + segment_lo[lid / SEGMENTS];
    var before_hi = packed_hi[lid] + segment_hi[lid / SEGMENTS];

    for (var k = 0u; k < ITEMS_PER_INVOCATION; k += 1u) {
        let i = first + k;
        if (i < params.n) {
            let key = keys[k];
            let digit = digit_of(key);
            let rank = field(before_lo, before_hi, digit);
            let dest = block_offsets[digit * params.num_blocks + block] + rank;
            keys_out[dest] = key;
            values_out[dest] = values_in[i];
            let inc = one_hot(digit);
            before_lo += inc[0];
            before_hi += inc[1];
        }
    }
}
