// Steps 4–5 (solver.rs `grid_update`, spec §3.5–3.6): node velocity with
// gravity, slip domain walls, then every collider in order (the response of
// collide/response.rs, ported in colliders.wgsl).

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(3) var<storage, read> blocks: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read_write> nodes: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;
@group(0) @binding(11) var<storage, read> colliders: array<PackedCollider>;
@group(0) @binding(12) var<storage, read> collider_sdf: array<f32>;

@compute @workgroup_size(64)
fn grid_update(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_group(wid, nwg);
    if b >= atomicLoad(&stats[ST_NUM_BLOCKS]) || atomicLoad(&stats[ST_OVERFLOW]) != 0u {
        return;
    }
    let idx = b * 64u + t;
    let node = nodes[idx];
    // empty, or a subnormal mass whose inverse would overflow (solver.rs)
    if node.w < 1.17549435e-38 {
        nodes[idx] = vec4<f32>(0.0, 0.0, 0.0, node.w);
        return;
    }
    var vel = node.xyz * (1.0 / node.w) + params.gravity * params.dt;
    let bc = key_coords(blocks[b].x);
    let ijk = bc * 4u + vec3<u32>(t / 16u, (t / 4u) % 4u, t % 4u);
    for (var a = 0u; a < 3u; a++) {
        if (ijk[a] < params.pad && vel[a] < 0.0) || (ijk[a] > params.wall_hi[a] && vel[a] > 0.0) {
            vel[a] = 0.0;
        }
    }
    if params.n_colliders > 0u {
        let xw = params.lower + vec3<f32>(ijk) * params.dx;
        for (var i = 0u; i < params.n_colliders; i++) {
            vel = collider_response(colliders[i], xw, vel);
        }
    }
    nodes[idx] = vec4<f32>(vel, node.w);
}
