// Step 2 (solver.rs `stress`, spec §3.3): the stress pre-pass at tⁿ.
// (i) V⁰ τ = V⁰ P(F) Fᵀ; (iii) P̃ on the element frame: S_p from its normal
// columns, corner forces from its tangent columns; (ii) corner forces
// gathered onto vertices through the vertex → element lists, in element
// order (no atomics).

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(5) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> pforce: array<ParticleForce>;
@group(0) @binding(14) var<storage, read> f: array<mat3x3<f32>>;
@group(0) @binding(15) var<storage, read> d: array<vec4<f32>>;
@group(0) @binding(16) var<storage, read> tangents: array<vec4<f32>>;
@group(0) @binding(17) var<storage, read> elements: array<Element>;
@group(0) @binding(19) var<storage, read> volume: array<f32>;
@group(0) @binding(20) var<storage, read> vol_material: array<u32>;
@group(0) @binding(21) var<storage, read> vol_materials: array<PackedMaterial>;
@group(0) @binding(22) var<storage, read> codim_materials: array<PackedMaterial>;
@group(0) @binding(23) var<storage, read_write> elem_forces: array<vec4<f32>>;
@group(0) @binding(24) var<storage, read> vertex_offsets: array<u32>;
// e * 4 + corner
@group(0) @binding(25) var<storage, read> vertex_elems: array<u32>;

const ZERO3 = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));

@compute @workgroup_size(64)
fn stress_volume(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_index(gid, nwg);
    if i >= params.vol_end - params.vol_start {
        return;
    }
    let p = params.vol_start + i;
    let mat = vol_materials[vol_material[i]];
    pforce[p] = ParticleForce(volume_kirchhoff(mat, f[i]) * volume[p], vec4<f32>(0.0));
}

@compute @workgroup_size(64)
fn stress_elements(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = thread_index(gid, nwg);
    if e >= params.elem_end - params.elem_start {
        return;
    }
    let el = elements[e];
    let p = params.elem_start + e;
    let vol_p = volume[p];
    let ft = element_ft(e, el);
    let mat = codim_materials[el.v.w >> 8u];
    var s = ZERO3;
    var f0 = vec3<f32>(0.0);
    var f1 = vec3<f32>(0.0);
    var f2 = vec3<f32>(0.0);
    let pr = codim_piola(mat, ft);
    if pr.ok != 0u {
        let pk = pr.P;
        if (params.flags & 2u) != 0u {
            // ablation (spec E6 a): the whole Kirchhoff stress acts through ∇w
            s = pk * transpose(ft) * vol_p;
        } else if (el.v.w & 0xffu) == 2u {
            // G = V P̃[:, 0:2] Dm⁻ᵀ: G₀ = V (a P₀ + b P₁), G₁ = V c P₁
            let g0 = (pk[0] * el.dm.x + pk[1] * el.dm.y) * vol_p;
            let g1 = pk[1] * (el.dm.z * vol_p);
            f0 = g0 + g1;
            f1 = -g0;
            f2 = -g1;
            s = outer3(pk[2], d[2u * e].xyz) * vol_p;
        } else {
            let g0 = pk[0] * (vol_p * el.dm.x);
            f0 = g0;
            f1 = -g0;
            s = (outer3(pk[1], d[2u * e].xyz) + outer3(pk[2], d[2u * e + 1u].xyz)) * vol_p;
        }
    }
    pforce[p] = ParticleForce(s, vec4<f32>(0.0));
    elem_forces[3u * e] = vec4<f32>(f0, 0.0);
    elem_forces[3u * e + 1u] = vec4<f32>(f1, 0.0);
    elem_forces[3u * e + 2u] = vec4<f32>(f2, 0.0);
}

@compute @workgroup_size(64)
fn gather_forces(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = thread_index(gid, nwg);
    if i >= params.vert_end - params.vert_start {
        return;
    }
    var acc = vec3<f32>(0.0);
    for (var k = vertex_offsets[i]; k < vertex_offsets[i + 1u]; k++) {
        let ec = vertex_elems[k];
        acc += elem_forces[3u * (ec >> 2u) + (ec & 3u)].xyz;
    }
    pforce[params.vert_start + i] = ParticleForce(ZERO3, vec4<f32>(acc, 0.0));
}
