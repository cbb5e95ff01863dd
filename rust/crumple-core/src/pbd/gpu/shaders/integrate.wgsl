// Spec shape_matching §1.3 steps 1–2 and 8, the twin of the integration closures of
// `pbd/solver.rs`: external forces, damping, speed clamp and prediction; then velocities from the
// positions. One thread per particle; each reads and writes only its own entries.

@group(0) @binding(0) var<uniform> params: PbdParams;
@group(0) @binding(1) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> v: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> xs: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> target_x: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> stats: array<atomic<u32>>;

@compute @workgroup_size(64)
fn predict(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    let w = x[i].w;
    if (w == 0.0) {
        // Kinematic: the prescribed target.
        xs[i] = vec4<f32>(target_x[i].xyz, 0.0);
        return;
    }
    var vi = (v[i].xyz + params.gravity * params.h) * params.keep;
    let s = cm_norm(vi);
    if (s > params.vmax) {
        vi = vi * (params.vmax / s);
    }
    v[i] = vec4<f32>(vi, 0.0);
    xs[i] = vec4<f32>(x[i].xyz + vi * params.h, w);
}

@compute @workgroup_size(64)
fn finish(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    let inv = 1.0 / params.h;
    let p = xs[i].xyz;
    let vi = (p - x[i].xyz) * inv;
    v[i] = vec4<f32>(vi, 0.0);
    x[i] = vec4<f32>(p, x[i].w);
    if (!(cm_vec_is_finite(p) && cm_vec_is_finite(vi))) {
        atomicMin(&stats[ST_BAD_FINITE], i);
    }
}

// The contact counters describe the last sub-step, as on the CPU (`solver.rs` assigns them in
// each sub-step): cleared before each sub-step's candidate search. One thread.
@compute @workgroup_size(64)
fn reset_counts(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x == 0u) {
        atomicStore(&stats[ST_PARTICLE_CONTACTS], 0u);
        atomicStore(&stats[ST_WORLD_CONTACTS], 0u);
    }
}
