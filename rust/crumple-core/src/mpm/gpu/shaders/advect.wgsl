// Steps 7–8 and pins (solver.rs `advect`, spec §3.8–3.9, A17): positions,
// F ← (I + Δt∇v)F for type (i), kinematic pins, the normal columns
// d ← (I + Δt∇v)d and barycentre enslaving of type (iii); then the checks the
// host reads back (largest speed, first non-finite particle).

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(5) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> v: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> c: array<mat3x3<f32>>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;
@group(0) @binding(13) var<storage, read> grad_v: array<mat3x3<f32>>;
@group(0) @binding(14) var<storage, read_write> f: array<mat3x3<f32>>;
// per element: d[2e], d[2e+1] (spec §2.3 normal columns), the same for tangents
@group(0) @binding(15) var<storage, read_write> d: array<vec4<f32>>;
@group(0) @binding(16) var<storage, read_write> tangents: array<vec4<f32>>;
@group(0) @binding(17) var<storage, read> elements: array<Element>;
struct Pin {
    // target position at the end of the step
    x: vec3<f32>,
    // index into the vertex range
    vertex: u32,
    v: vec4<f32>,
}
@group(0) @binding(18) var<storage, read> pins: array<Pin>;

fn ok() -> bool {
    return atomicLoad(&stats[ST_OVERFLOW]) == 0u;
}

@compute @workgroup_size(64)
fn advect_particles(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = thread_index(gid, nwg);
    let upto = select(params.elem_end, params.vert_end, (params.flags & 1u) != 0u);
    if p >= upto || !ok() {
        return;
    }
    let xp = x[p];
    x[p] = vec4<f32>(xp.xyz + v[p].xyz * params.dt, xp.w);
    if p >= params.vol_start && p < params.vol_end {
        let i = p - params.vol_start;
        let id = mat3x3<f32>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
        f[i] = (id + grad_v[p] * params.dt) * f[i];
    }
}

@compute @workgroup_size(64)
fn apply_pins(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_index(gid, nwg);
    if i >= params.n_pins || !ok() {
        return;
    }
    let pin = pins[i];
    let p = params.vert_start + pin.vertex;
    x[p] = vec4<f32>(pin.x, x[p].w);
    v[p] = vec4<f32>(pin.v.xyz, v[p].w);
    c[p] = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
}

@compute @workgroup_size(64)
fn advect_elements(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_index(gid, nwg);
    if e >= params.elem_end - params.elem_start || !ok() {
        return;
    }
    let el = elements[e];
    let dim = el.v.w & 0xffu;
    let id = mat3x3<f32>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
    let g = id + grad_v[params.elem_start + e] * params.dt;
    d[2u * e] = vec4<f32>(g * d[2u * e].xyz, 0.0);
    if dim == 1u {
        d[2u * e + 1u] = vec4<f32>(g * d[2u * e + 1u].xyz, 0.0);
    }
    if (params.flags & 2u) != 0u {
        tangents[2u * e] = vec4<f32>(g * tangents[2u * e].xyz, 0.0);
        if dim == 2u {
            tangents[2u * e + 1u] = vec4<f32>(g * tangents[2u * e + 1u].xyz, 0.0);
        }
    }
    if (params.flags & 1u) == 0u {
        return; // moved with its own velocity in advect_particles
    }
    let vs = params.vert_start;
    let p = params.elem_start + e;
    if dim == 1u {
        x[p] = vec4<f32>((x[vs + el.v.x].xyz + x[vs + el.v.y].xyz) * 0.5, x[p].w);
    } else {
        let third = 1.0 / 3.0;
        x[p] = vec4<f32>((x[vs + el.v.x].xyz + x[vs + el.v.y].xyz + x[vs + el.v.z].xyz) * third, x[p].w);
    }
}

// solver.rs `check_finite` and sim.rs `max_speed`: the host reads both back.
@compute @workgroup_size(64)
fn check(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = thread_index(gid, nwg);
    if p >= params.n_particles || !ok() {
        return;
    }
    let vp = v[p].xyz;
    if !(is_finite3(x[p].xyz) && is_finite3(vp)) {
        atomicMin(&stats[ST_BAD_FINITE], p);
        return;
    }
    atomicMax(&stats[ST_MAX_SPEED], bitcast<u32>(length(vp)));
}
