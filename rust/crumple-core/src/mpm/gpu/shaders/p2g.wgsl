// Step 3 (solver.rs `p2g`, spec §3.4 fused form): APIC/MLS particle-to-grid
// transfer with the stress and mesh forces folded in.
//
// Scatter without float atomics, in the CPU's exact summation order. The CPU
// colours particle blocks by coordinate parity; blocks of one colour write
// disjoint node sets (b + {0,1}³), colours run one after another and a block's
// particles add in sorted order. Here one dispatch per colour runs one
// workgroup per particle block, and each thread *gathers* for 8 nodes (node
// `t` of each of the 8 target blocks): it walks the block's particles in
// sorted order and adds those whose stencil covers its node. Every node thus
// sees the same additions in the same order as on the CPU (runs are bitwise
// reproducible, and differ from the CPU only where the compiler contracts
// a*b+c into an FMA). The cost is the walk: each particle is tested by the
// 64 threads of its workgroup (one test covers a thread's 8 nodes, since a
// stencil reaches at most one of them per axis), of which 27 (quadratic) or
// 64 (cubic) threads add something — about 2.4× (1×) more tests than
// contributions, each test a few integer operations on workgroup memory. Fixed-point atomics would avoid the walk but change
// every sum by the quantisation (2⁻³² of the chosen range), which breaks
// bitwise parity with the CPU; we prefer parity (spec U9).

@group(0) @binding(0) var<uniform> params: StepParams;
struct Colour {
    colour: u32,
}
@group(0) @binding(1) var<uniform> pass_colour: Colour;
@group(0) @binding(2) var<storage, read> order: array<u32>;
@group(0) @binding(3) var<storage, read> blocks: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> hash_vals: array<u32>;
@group(0) @binding(28) var<storage, read> hash_keys: array<u32>;
@group(0) @binding(5) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> c: array<mat3x3<f32>>;
@group(0) @binding(8) var<storage, read> pforce: array<ParticleForce>;
@group(0) @binding(9) var<storage, read_write> nodes: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;

// What every node thread needs of one particle, computed once per workgroup.
struct Pre {
    base: vec3<i32>,
    m: f32,
    frac: vec3<f32>,
    no_stress: u32,
    w: array<vec3<f32>, 4>,
    dw: array<vec3<f32>, 4>,
    bu: vec3<f32>,
    mc0: vec3<f32>,
    mc1: vec3<f32>,
    mc2: vec3<f32>,
    s0: vec3<f32>,
    s1: vec3<f32>,
    s2: vec3<f32>,
}

const CHUNK: u32 = 32u;
var<workgroup> pre: array<Pre, CHUNK>;
var<workgroup> wg_count: u32;
var<workgroup> wg_start: u32;

fn local_coords(l: u32) -> vec3<u32> {
    return vec3<u32>(l / 16u, (l / 4u) % 4u, l % 4u);
}

@compute @workgroup_size(64)
fn clear_nodes(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_group(wid, nwg);
    if b >= atomicLoad(&stats[ST_NUM_BLOCKS]) || atomicLoad(&stats[ST_OVERFLOW]) != 0u {
        return;
    }
    nodes[b * 64u + t] = vec4<f32>(0.0);
}

fn prepare(p: u32) -> Pre {
    var r: Pre;
    let xp = x[p];
    let st = stencil(grid_units(xp.xyz));
    let m = xp.w;
    let pf = pforce[p];
    let s_dt = pf.s * params.dt;
    var mc: mat3x3<f32>;
    if params.mls != 0u {
        mc = (c[p] * m - s_dt * params.d_inv) * params.dx;
    } else {
        mc = c[p] * (m * params.dx);
    }
    r.base = st.base;
    r.m = m;
    r.frac = st.frac;
    r.no_stress = select(0u, 1u, p >= params.vert_start && p < params.vert_end);
    r.w = st.w;
    r.dw = st.dw;
    r.bu = v[p].xyz * m + pf.f.xyz * params.dt;
    r.mc0 = mc[0];
    r.mc1 = mc[1];
    r.mc2 = mc[2];
    r.s0 = s_dt[0];
    r.s1 = s_dt[1];
    r.s2 = s_dt[2];
    return r;
}

@compute @workgroup_size(64)
fn p2g(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
       @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_group(wid, nwg);
    if t == 0u {
        var start = 0u;
        var count = 0u;
        if b < atomicLoad(&stats[ST_NUM_BLOCKS]) && atomicLoad(&stats[ST_OVERFLOW]) == 0u {
            let blk = blocks[b];
            let bc = key_coords(blk.x);
            let colour = ((bc.x & 1u) << 2u) | ((bc.y & 1u) << 1u) | (bc.z & 1u);
            if colour == pass_colour.colour {
                start = blk.y;
                count = blk.z - blk.y;
            }
        }
        wg_start = start;
        wg_count = count;
    }
    let count = workgroupUniformLoad(&wg_count);
    if count == 0u {
        return;
    }
    let start = wg_start;
    let bc = key_coords(blocks[b].x);
    let lc = local_coords(t);
    var tgt: array<u32, 8>;
    var acc: array<vec4<f32>, 8>;
    for (var n = 0u; n < 8u; n++) {
        let o = vec3<u32>(n >> 2u, (n >> 1u) & 1u, n & 1u);
        let tb = find_block(block_key(bc + o));
        tgt[n] = tb * 64u + t;
        acc[n] = nodes[tgt[n]];
    }
    // node t of the first target block, in grid coordinates
    let g0 = vec3<i32>(bc * 4u + lc);
    let k_max = i32(params.kernel_k);
    let stress_term = params.mls == 0u;
    for (var c0 = 0u; c0 < count; c0 += CHUNK) {
        if t < CHUNK && c0 + t < count {
            pre[t] = prepare(order[start + c0 + t]);
        }
        workgroupBarrier();
        let m = min(CHUNK, count - c0);
        for (var i = 0u; i < m; i++) {
            // This thread's 8 nodes sit at g + 4·o, o ∈ {0,1}³, and a stencil
            // spans at most 4 nodes per axis, so at most one of them is
            // covered: on each axis take g if it is inside, else g + 4.
            let k0 = g0 - pre[i].base;
            let o = vec3<i32>(k0 < vec3<i32>(0));
            let k = k0 + 4 * o;
            if any(k < vec3<i32>(0)) || any(k >= vec3<i32>(k_max)) {
                continue;
            }
            let n = u32(o.x * 4 + o.y * 2 + o.z);
            let ka = u32(k.x);
            let kb = u32(k.y);
            let kc = u32(k.z);
            let frac = pre[i].frac;
            let wa = pre[i].w[ka].x;
            let dwa = pre[i].dw[ka].x;
            let wb = pre[i].w[kb].y;
            let dwb = pre[i].dw[kb].y;
            let wc = pre[i].w[kc].z;
            let dwc = pre[i].dw[kc].z;
            // same association as the CPU loop: u built axis by axis
            let ua = pre[i].bu + pre[i].mc0 * (f32(ka) - frac.x);
            let uab = ua + pre[i].mc1 * (f32(kb) - frac.y);
            let wab = wa * wb;
            let dwa_b = dwa * wb;
            let wa_dwb = wa * dwb;
            let w = wab * wc;
            let u = uab + pre[i].mc2 * (f32(kc) - frac.z);
            var dmv = u * w;
            if stress_term && pre[i].no_stress == 0u {
                dmv = u * w - (pre[i].s0 * (dwa_b * wc) + pre[i].s1 * (wa_dwb * wc) + pre[i].s2 * (wab * dwc));
            }
            acc[n] = vec4<f32>(acc[n].xyz + dmv, acc[n].w + w * pre[i].m);
        }
        workgroupBarrier();
    }
    for (var n = 0u; n < 8u; n++) {
        nodes[tgt[n]] = acc[n];
    }
}
