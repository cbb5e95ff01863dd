// Spec shape_matching §4 and §8.1, the twin of `end_of_step` and `plastic_update` in
// `pbd/plasticity.rs` and of `orientations` in `pbd/skin.rs`: once per step, one thread per
// cluster refits on the final positions, flags degenerate clusters, and moves the volume-preserving
// share of the elastic stretch beyond yield into F_P (per-step clamp, optional cap, hardening);
// then one thread per particle averages its clusters' sign-aligned rotations.

@group(0) @binding(0) var<uniform> params: PbdParams;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> cl_offset: array<u32>;
@group(0) @binding(3) var<storage, read> member: array<u32>;
@group(0) @binding(4) var<storage, read> rest_mu: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> clusters: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> quat: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> m_offset: array<u32>;
@group(0) @binding(8) var<storage, read> m_cluster: array<u32>;
@group(0) @binding(9) var<storage, read_write> pq: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;

// `degenerate_from` (spec §3.5) on A_qq's eigenvalues `e`, for a cluster big enough and finite.
fn degenerate_from(e: vec3<f32>) -> bool {
    return !(e.x > PBD_DEGENERATE_RATIO * abs(e.z)) || !(e.z > 0.0);
}

// `thin_from` (plasticity.rs, THIN_EXTENT) on A_qq's eigenvalues `e`: a rest shape about one
// particle layer thick (RMS extent along A_qq's weakest axis under THIN_EXTENT spacings; d_pp
// is the spacing).
fn thin_from(e: vec3<f32>, mass: f32) -> bool {
    let t = PBD_THIN_EXTENT * params.d_pp;
    return !(min(min(e.x, e.y), e.z) >= t * t * mass);
}

// `elastic_stretch` (spec §4.2 eq. 5).
fn elastic_stretch(r: mat3x3<f32>, apq: mat3x3<f32>, aqq: mat3x3<f32>) -> mat3x3<f32> {
    let rt_apq = cm_mul(transpose(r), apq);
    let spq = (rt_apq + transpose(rt_apq)) * 0.5;
    let eig = cm_sym_eigen3(aqq);
    let v = eig.vectors;
    let lam = eig.values;
    let floor = 1e-12 * abs(lam.x + lam.y + lam.z);
    var m = cm_mul(cm_mul(transpose(v), spq), v);
    for (var j = 0u; j < 3u; j++) {
        for (var k = 0u; k < 3u; k++) {
            m[k][j] *= 2.0 / max(max(lam[j] + lam[k], floor), PBD_MIN_POSITIVE);
        }
    }
    return cm_mul(cm_mul(v, m), transpose(v));
}

@compute @workgroup_size(64)
fn end_of_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = linear_index(gid, nwg);
    if (c >= params.n_clusters) {
        return;
    }
    let start = cl_offset[c];
    let end = cl_offset[c + 1u];
    let base = c * PBD_CL_STRIDE;
    let r0 = clusters[base];
    let r1 = clusters[base + 1u];
    let r2 = clusters[base + 2u];
    var fp = rows_to_mat(r0, r1, r2);
    var yield_strain = r0.w;
    let qsum = rows_to_mat(clusters[base + 3u], clusters[base + 4u], clusters[base + 5u]);
    let mat = clusters[base + 7u];
    // The sums of `ClusterFit::compute` (the CPU's `fit_sums`): one pass about the first member.
    var o = vec3<f32>(0.0);
    if (end > start) {
        o = x[member[start]].xyz;
    }
    var mass = 0.0;
    var s = vec3<f32>(0.0);
    var sq = vec3<f32>(0.0);
    var m = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    for (var e = start; e < end; e++) {
        let rq = rest_mu[e];
        let d = (x[member[e]].xyz - o) * rq.w;
        mass += rq.w;
        s += d;
        sq += rq.xyz * rq.w;
        m += outer(d, rq.xyz);
    }
    let inv = select(0.0, 1.0 / mass, mass > 0.0);
    let co = s * inv;
    let b = m - outer(co, sq);
    let apq = cm_mul(b, transpose(fp));
    let aqq = cm_mul(cm_mul(fp, qsum), transpose(fp));
    // A_qq's eigenvalues once, for both tests (`aqq_eigenvalues`).
    let small = end - start < PBD_MIN_MEMBERS || !cm_mat_is_finite(aqq);
    var e = vec3<f32>(0.0);
    if (!small) {
        e = cm_sym_eigen3(aqq).values;
    }
    let degenerate = small || degenerate_from(e);
    let q = cm_extract_rotation(rotation_source(params.fit, apq, aqq, degenerate), quat[c],
                                params.end_rotation_iterations);
    quat[c] = q;
    if (degenerate) {
        atomicAdd(&stats[ST_DEGENERATE], 1u);
    } else if (!thin_from(e, mass)) {
        let st = elastic_stretch(cm_quat_to_mat3(q), apq, aqq);
        // `plastic_update` (spec §4.2–4.5); every refusing branch leaves F_P and the yield.
        if (cm_mat_is_finite(st)) {
            let eig = cm_sym_eigen3(st);
            let lam = eig.values;
            if (min(min(lam.x, lam.y), lam.z) > PBD_MIN_STRETCH) {
                let l = vec3<f32>(cm_ln(lam.x), cm_ln(lam.y), cm_ln(lam.z));
                let strain = max(max(abs(l.x), abs(l.y)), abs(l.z));
                if (strain > yield_strain) {
                    let gamma = min(mat.y * (strain - yield_strain) / strain, 1.0);
                    if (gamma > 0.0) {
                        // |Λ| read as the determinant (spec §13 item 5).
                        let j_cbrt = cm_ln(lam.x * lam.y * lam.z) * (1.0 / 3.0);
                        let d = clamp(
                            vec3<f32>(
                                cm_exp((l.x - j_cbrt) * gamma),
                                cm_exp((l.y - j_cbrt) * gamma),
                                cm_exp((l.z - j_cbrt) * gamma),
                            ),
                            vec3<f32>(PBD_STEP_CLAMP_LO),
                            vec3<f32>(PBD_STEP_CLAMP_HI),
                        );
                        let v = eig.vectors;
                        let dm = mat3x3<f32>(v[0] * d.x, v[1] * d.y, v[2] * d.z);
                        let new_fp = cm_mul(cm_mul(dm, transpose(v)), fp);
                        let norm = sqrt(dot(new_fp[0], new_fp[0]) + dot(new_fp[1], new_fp[1]) + dot(new_fp[2], new_fp[2]));
                        if (params.capped != 0u && !(norm <= mat.w)) {
                            atomicAdd(&stats[ST_CAPPED], 1u);
                        } else {
                            fp = new_fp;
                            // Hardening as an increment (spec §4.5, §13 item 4).
                            yield_strain = yield_strain + mat.z * strain * params.dt;
                            atomicAdd(&stats[ST_FLOWED], 1u);
                        }
                    }
                }
            }
        }
    }
    clusters[base] = vec4<f32>(mat_row(fp, 0u), yield_strain);
    clusters[base + 1u] = vec4<f32>(mat_row(fp, 1u), select(0.0, 1.0, degenerate));
    clusters[base + 2u] = vec4<f32>(mat_row(fp, 2u), 0.0);
}

@compute @workgroup_size(64)
fn orientations(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    let prev = pq[i];
    var sum = vec4<f32>(0.0);
    for (var e = m_offset[i]; e < m_offset[i + 1u]; e++) {
        let qc = quat[m_cluster[e]];
        sum += qc * select(1.0, -1.0, dot(qc, prev) < 0.0);
    }
    if (length(sum) >= 1e-6) {
        pq[i] = cm_quat_normalize(sum);
    }
}
