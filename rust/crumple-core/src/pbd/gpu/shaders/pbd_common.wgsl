// What every shape-matching stage shares: the step's parameter block (written by
// `pbd/gpu/params.rs`, whose size test reads this struct through naga), the packed per-cluster
// record, and the row-major 3×3 loads. Particles are vec4(position, inverse mass w).
//
// Cluster record (`CL_STRIDE` vec4 per cluster, `pbd/gpu/device.rs`):
//   [0..3) F_P rows; F_P row 0 .w = current yield ε_γ, row 1 .w = degenerate (0/1)
//   [3..6) Qsum rows
//   6      (Σμq, Σμ)
//   7      (K, flow rate ν, hardening κ, ‖F_P‖ cap)
// Fit record (`FIT_STRIDE` vec4 per cluster, this iteration's goal transform):
//   [0..3) T = R F_P rows, 3 = (c − T q̄, K)

struct PbdParams {
    gravity: vec3<f32>,
    h: f32,
    keep: f32,
    vmax: f32,
    d_pp: f32,
    d_pw: f32,
    margin: f32,
    mu_s_pp: f32,
    mu_k_pp: f32,
    static_ratio: f32,
    sor: f32,
    n: u32,
    n_clusters: u32,
    n_colliders: u32,
    capacity: u32,
    rotation_iterations: u32,
    end_rotation_iterations: u32,
    fit: u32,
    dt: f32,
    capped: u32,
    cell: f32,
    pad: u32,
}

fn rows_to_mat(r0: vec4<f32>, r1: vec4<f32>, r2: vec4<f32>) -> mat3x3<f32> {
    return transpose(mat3x3<f32>(r0.xyz, r1.xyz, r2.xyz));
}

// Row i of m (WGSL matrices are column-major).
fn mat_row(m: mat3x3<f32>, i: u32) -> vec3<f32> {
    return vec3<f32>(m[0][i], m[1][i], m[2][i]);
}

// `Mat3::outer(a, b)` = a bᵀ.
fn outer(a: vec3<f32>, b: vec3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(a * b.x, a * b.y, a * b.z);
}

// `Mat3::try_inverse(f32::MIN_POSITIVE)`: cofactorᵀ / det, or `ok = false`.
struct MaybeInverse {
    m: mat3x3<f32>,
    ok: bool,
}

fn try_inverse(a: mat3x3<f32>) -> MaybeInverse {
    let det = cm_det(a);
    if (abs(det) <= PBD_MIN_POSITIVE || !cm_is_finite(det)) {
        return MaybeInverse(cm_identity(), false);
    }
    return MaybeInverse(transpose(cm_cofactor(a)) * (1.0 / det), true);
}

// Linear index of a 2-D dispatch of 64-wide workgroups.
fn linear_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 64u;
}

// `rotation_source` (spec §3.3): A_pq for the rigid fit, a degenerate cluster or a singular A_qq,
// else A_pq A_qq⁻¹.
fn rotation_source(fit: u32, apq: mat3x3<f32>, aqq: mat3x3<f32>, degenerate: bool) -> mat3x3<f32> {
    if (fit == PBD_FIT_RIGID || degenerate) {
        return apq;
    }
    let inv = try_inverse(aqq);
    if (!inv.ok) {
        return apq;
    }
    return cm_mul(apq, inv.m);
}
