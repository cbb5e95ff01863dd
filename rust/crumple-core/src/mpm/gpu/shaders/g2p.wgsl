// Step 6 (solver.rs `g2p`, spec §3.7, paper Eq. 2): velocity, damped affine
// matrix C (RPIC damping of its symmetric part by ν_d, stored in v.w) and the
// velocity gradient ∇v̂ (types i and iii; MLS uses the undamped C̃). Same
// loops and sums in the same order as the CPU.

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(4) var<storage, read> hash_vals: array<u32>;
@group(0) @binding(28) var<storage, read> hash_keys: array<u32>;
@group(0) @binding(5) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> v: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> c: array<mat3x3<f32>>;
@group(0) @binding(9) var<storage, read> nodes: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;
@group(0) @binding(13) var<storage, read_write> grad_v: array<mat3x3<f32>>;

@compute @workgroup_size(64)
fn g2p(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = thread_index(gid, nwg);
    if p >= params.n_particles || atomicLoad(&stats[ST_OVERFLOW]) != 0u {
        return;
    }
    let st = stencil(grid_units(x[p].xyz));
    let bc = vec3<u32>(st.base) >> vec3<u32>(2u);
    let lb = vec3<u32>(st.base) & vec3<u32>(3u);
    var nb: array<u32, 8>;
    for (var n = 0u; n < 8u; n++) {
        nb[n] = find_block(block_key(bc + vec3<u32>(n >> 2u, (n >> 1u) & 1u, n & 1u)));
    }
    let is_vertex = p >= params.vert_start && p < params.vert_end;
    let want_grad = params.mls == 0u && !is_vertex;
    let k_max = params.kernel_k;
    var vel = vec3<f32>(0.0);
    var b0 = vec3<f32>(0.0);
    var b1 = vec3<f32>(0.0);
    var b2 = vec3<f32>(0.0);
    var g0 = vec3<f32>(0.0);
    var g1 = vec3<f32>(0.0);
    var g2 = vec3<f32>(0.0);
    // Nested per-axis sums, as the CPU (solver.rs `g2p`): the innermost loop
    // gathers Σ_c wc v̂, Σ_c wc offc v̂ and Σ_c dwc v̂; the outer axes apply
    // their weights once per row.
    for (var a = 0u; a < k_max; a++) {
        let wa = st.w[a].x;
        let dwa = st.dw[a].x;
        let offa = f32(a) - st.frac.x;
        let ba = (lb.x + a) >> 2u;
        let la = (lb.x + a) & 3u;
        var sa = vec3<f32>(0.0);
        var sa_ob = vec3<f32>(0.0);
        var sa_c = vec3<f32>(0.0);
        var sa_db = vec3<f32>(0.0);
        var sa_dc = vec3<f32>(0.0);
        for (var bb = 0u; bb < k_max; bb++) {
            let wb = st.w[bb].y;
            let dwb = st.dw[bb].y;
            let offb = f32(bb) - st.frac.y;
            let row = ba * 4u + ((lb.y + bb) >> 2u) * 2u;
            let lrow = la * 16u + ((lb.y + bb) & 3u) * 4u;
            var s = vec3<f32>(0.0);
            var sc = vec3<f32>(0.0);
            var sd = vec3<f32>(0.0);
            for (var cc = 0u; cc < k_max; cc++) {
                let wc = st.w[cc].z;
                let offc = f32(cc) - st.frac.z;
                let blk = nb[row + ((lb.z + cc) >> 2u)];
                let vi = nodes[blk * 64u + lrow + ((lb.z + cc) & 3u)].xyz;
                s += vi * wc;
                sc += vi * (wc * offc);
                if want_grad {
                    sd += vi * st.dw[cc].z;
                }
            }
            sa += s * wb;
            sa_ob += s * (wb * offb);
            sa_c += sc * wb;
            if want_grad {
                sa_db += s * dwb;
                sa_dc += sd * wb;
            }
        }
        vel += sa * wa;
        b0 += sa * (wa * offa);
        b1 += sa_ob * wa;
        b2 += sa_c * wa;
        if want_grad {
            g0 += sa * dwa;
            g1 += sa_db * wa;
            g2 += sa_dc * wa;
        }
    }
    let ct = mat3x3<f32>(b0, b1, b2) * (params.d_inv * params.dx);
    let nu = v[p].w;
    let ctt = transpose(ct);
    let skew = (ct - ctt) * 0.5;
    let sym = (ct + ctt) * 0.5;
    v[p] = vec4<f32>(vel, nu);
    c[p] = skew + sym * (1.0 - nu);
    if params.mls != 0u {
        grad_v[p] = ct;
    } else {
        grad_v[p] = mat3x3<f32>(g0, g1, g2);
    }
}
