// Element helpers shared by the stress and plasticity stages (solver.rs
// `element_ft` / `element_f`, spec §2.3).

struct Element {
    // vertex indices (local to the vertex range), dim | material << 8
    v: vec4<u32>,
    // Dm⁻¹ = [[a, b], [0, c]] as (a, b, c, 0); segments (1/L, 0, 0, 0)
    dm: vec4<f32>,
}

fn outer3(a: vec3<f32>, b: vec3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(a * b.x, a * b.y, a * b.z);
}

// F̃ = [Ds Dm⁻¹ | d_{m+1} … d₃], or the advected tangents in the
// `eulerian_tangents` ablation.
fn element_ft(e: u32, el: Element) -> mat3x3<f32> {
    let dim = el.v.w & 0xffu;
    let d0 = d[2u * e].xyz;
    let d1 = d[2u * e + 1u].xyz;
    if (params.flags & 2u) != 0u {
        if dim == 2u {
            return mat3x3<f32>(tangents[2u * e].xyz, tangents[2u * e + 1u].xyz, d0);
        }
        return mat3x3<f32>(tangents[2u * e].xyz, d0, d1);
    }
    let vs = params.vert_start;
    let x0 = x[vs + el.v.x].xyz;
    let e1 = x[vs + el.v.y].xyz - x0;
    if dim == 2u {
        let e2 = x[vs + el.v.z].xyz - x0;
        return mat3x3<f32>(e1 * el.dm.x, e1 * el.dm.y + e2 * el.dm.z, d0);
    }
    return mat3x3<f32>(e1 * el.dm.x, d0, d1);
}
