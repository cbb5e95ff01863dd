// Step 1 (solver.rs `bin`, spec §10.2): the block key of every particle (the
// block of its lowest stencil node, packed as on the CPU) and the domain
// check. The sort value is the particle index, so a stable sort orders by
// (block, index) as on the CPU.

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(5) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> v: array<vec4<f32>>;
@group(0) @binding(27) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> values: array<u32>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;

@compute @workgroup_size(64)
fn bin(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = thread_index(gid, nwg);
    if p >= params.n_particles {
        return;
    }
    var xi = grid_units(x[p].xyz);
    var vp = v[p].xyz;
    var outside = !is_finite3(xi);
    let finite = !outside;
    for (var a = 0u; a < 3u; a++) {
        if !(xi[a] >= params.lo && xi[a] <= params.hi[a]) {
            outside = true;
            if params.clamp != 0u && finite {
                // a margin inside the lower bound (solver.rs `bin`)
                xi[a] = clamp(xi[a], params.lo_clamp, params.hi[a]);
                if (xi[a] == params.lo_clamp && vp[a] < 0.0) || (xi[a] == params.hi[a] && vp[a] > 0.0) {
                    vp[a] = 0.0;
                }
            }
        }
    }
    if outside && params.clamp != 0u && finite {
        x[p] = vec4<f32>(params.lower + xi * params.dx, x[p].w);
        v[p] = vec4<f32>(vp, v[p].w);
        xi = grid_units(x[p].xyz);
        outside = false;
    }
    if outside {
        atomicMin(&stats[ST_BAD_DOMAIN], p);
        // later stages skip the step; the host removes, clamps or reports
        atomicOr(&stats[ST_OVERFLOW], 2u);
        keys[p] = 0u;
    } else {
        let b = vec3<u32>(max(floor(xi - vec3<f32>(params.kernel_shift)), vec3<f32>(0.0))) >> vec3<u32>(2u);
        keys[p] = block_key(b);
    }
    values[p] = p;
}
