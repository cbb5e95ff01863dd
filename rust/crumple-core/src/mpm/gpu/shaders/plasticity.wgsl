// Step 9 (solver.rs `plasticity`, spec §3.10, §5): volumetric plasticity
// (sand, goo) and the codimensional return map of every element, with the
// return-map events counted per workgroup and added to the stats block.

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(5) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> stats: array<atomic<u32>>;
@group(0) @binding(14) var<storage, read_write> f: array<mat3x3<f32>>;
@group(0) @binding(15) var<storage, read_write> d: array<vec4<f32>>;
@group(0) @binding(16) var<storage, read> tangents: array<vec4<f32>>;
@group(0) @binding(17) var<storage, read> elements: array<Element>;
@group(0) @binding(20) var<storage, read> vol_material: array<u32>;
@group(0) @binding(21) var<storage, read> vol_materials: array<PackedMaterial>;
@group(0) @binding(22) var<storage, read> codim_materials: array<PackedMaterial>;
@group(0) @binding(26) var<storage, read_write> q: array<f32>;

@compute @workgroup_size(64)
fn plasticity_volume(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_index(gid, nwg);
    if i >= params.vol_end - params.vol_start || atomicLoad(&stats[ST_OVERFLOW]) != 0u {
        return;
    }
    let r = volume_plasticity(vol_materials[vol_material[i]], f[i], q[i], params.dt);
    f[i] = r.F;
    q[i] = r.q;
}

var<workgroup> wg_events: array<atomic<u32>, 5>;

@compute @workgroup_size(64)
fn return_map(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) t: u32,
              @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_index(gid, nwg);
    let live = e < params.elem_end - params.elem_start && atomicLoad(&stats[ST_OVERFLOW]) == 0u;
    if live {
        let el = elements[e];
        let r = codim_return_map(codim_materials[el.v.w >> 8u], element_ft(e, el));
        atomicAdd(&wg_events[min(r.event, 4u)], 1u);
        if (el.v.w & 0xffu) == 2u {
            d[2u * e] = vec4<f32>(r.F[2], 0.0);
        } else {
            d[2u * e] = vec4<f32>(r.F[1], 0.0);
            d[2u * e + 1u] = vec4<f32>(r.F[2], 0.0);
        }
    }
    workgroupBarrier();
    if t < 5u {
        let n = atomicLoad(&wg_events[t]);
        if n > 0u {
            atomicAdd(&stats[ST_EVENTS + t], n);
        }
    }
}
