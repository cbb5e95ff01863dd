// Spec shape_matching §3 and §1.3 step 7a, the twin of `fit_clusters` and `apply_goals` in
// `pbd/shape_match.rs`: one thread per cluster sums its members about the first member's position
// (spec §14.4: relative sums, so nothing cancels at large coordinates) and fits R by warm-started
// Müller iterations; then one thread per particle gathers its clusters' goals through the reverse
// map. Nothing scatters, so the result does not depend on scheduling. f32 where the CPU keeps the
// centre in f64: parity within the spec's f32 tolerance, not bitwise.

@group(0) @binding(0) var<uniform> params: PbdParams;
@group(0) @binding(1) var<storage, read_write> xs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> cl_offset: array<u32>;
@group(0) @binding(3) var<storage, read> member: array<u32>;
@group(0) @binding(4) var<storage, read> rest_mu: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> clusters: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> quat: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> fit: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> m_offset: array<u32>;
@group(0) @binding(9) var<storage, read> m_rest: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> m_cluster: array<u32>;

@compute @workgroup_size(64)
fn fit_clusters(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = linear_index(gid, nwg);
    if (c >= params.n_clusters) {
        return;
    }
    let start = cl_offset[c];
    let end = cl_offset[c + 1u];
    let base = c * PBD_CL_STRIDE;
    let fp = rows_to_mat(clusters[base], clusters[base + 1u], clusters[base + 2u]);
    let qsum = rows_to_mat(clusters[base + 3u], clusters[base + 4u], clusters[base + 5u]);
    let sums = clusters[base + 6u];
    let k = clusters[base + 7u].x;
    let degenerate = clusters[base + 1u].w != 0.0;
    var o = vec3<f32>(0.0);
    if (end > start) {
        o = xs[member[start]].xyz;
    }
    var s = vec3<f32>(0.0);
    var m = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    for (var e = start; e < end; e++) {
        let rq = rest_mu[e];
        let d = (xs[member[e]].xyz - o) * rq.w;
        s += d;
        m += outer(d, rq.xyz);
    }
    let mass = sums.w;
    let inv = select(0.0, 1.0 / mass, mass > 0.0);
    let co = s * inv;
    let b = m - outer(co, sums.xyz);
    let apq = cm_mul(b, transpose(fp));
    let aqq = cm_mul(cm_mul(fp, qsum), transpose(fp));
    let q = cm_extract_rotation(rotation_source(params.fit, apq, aqq, degenerate), quat[c], params.rotation_iterations);
    quat[c] = q;
    let t = cm_mul(cm_quat_to_mat3(q), fp);
    let qbar = sums.xyz * inv;
    let centre = o + co - cm_mul_vec(t, qbar);
    let f = c * PBD_FIT_STRIDE;
    fit[f] = vec4<f32>(mat_row(t, 0u), 0.0);
    fit[f + 1u] = vec4<f32>(mat_row(t, 1u), 0.0);
    fit[f + 2u] = vec4<f32>(mat_row(t, 2u), 0.0);
    fit[f + 3u] = vec4<f32>(centre, k);
}

@compute @workgroup_size(64)
fn apply_goals(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    let start = m_offset[i];
    let end = m_offset[i + 1u];
    let p = xs[i];
    if (end == start || p.w == 0.0) {
        return;
    }
    var d = vec3<f32>(0.0);
    for (var e = start; e < end; e++) {
        let f = m_cluster[e] * PBD_FIT_STRIDE;
        let q = m_rest[e].xyz;
        let t = rows_to_mat(fit[f], fit[f + 1u], fit[f + 2u]);
        let ck = fit[f + 3u];
        d += (cm_mul_vec(t, q) + (ck.xyz - p.xyz)) * ck.w;
    }
    xs[i] = vec4<f32>(p.xyz + d * (params.sor / f32(end - start)), p.w);
}
