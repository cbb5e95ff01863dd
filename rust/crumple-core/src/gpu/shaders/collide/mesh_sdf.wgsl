// Mesh colliders on a signed-distance grid: the twin of `collide/mesh_sdf.rs`. The node values
// live in `collider_sdf`, which the shader that includes this library declares.

// `MeshSdf::at`: node value, x fastest.
fn co_mesh_value(base: u32, res: vec3<u32>, idx: vec3<u32>) -> f32 {
    return collider_sdf[base + idx.x + res.x * (idx.y + res.y * idx.z)];
}

// `MeshSdf::node_gradient`: central differences, one-sided on grid faces.
fn co_mesh_node_gradient(base: u32, res: vec3<u32>, dx: f32, idx: vec3<u32>) -> vec3<f32> {
    var g = vec3<f32>(0.0);
    for (var a = 0u; a < 3u; a = a + 1u) {
        var lo = idx;
        var hi = idx;
        if (idx[a] > 0u) {
            lo[a] = idx[a] - 1u;
        }
        hi[a] = min(idx[a] + 1u, res[a] - 1u);
        let span = f32(hi[a] - lo[a]) * dx;
        g[a] = (co_mesh_value(base, res, hi) - co_mesh_value(base, res, lo)) / span;
    }
    return g;
}

// `MeshSdf` (`locate`, `corners`, `interpolated_distance`,
// `interpolated_normal`): clamp p into the grid box; distance = trilinear
// node values + |p − clamp(p)|; normal = trilinear central-difference node
// gradients with the components along which p lies outside the box replaced
// by the outward offset direction, normalised (+y if zero). The normal is
// only evaluated where φ ≤ 0, the only place `collider_response` uses it.
fn co_mesh(c: PackedCollider, p: vec3<f32>) -> vec4<f32> {
    let lower = c.v[6].xyz;
    let dx = c.v[6].w;
    let res = vec3<u32>(c.v[7].xyz);
    let base = u32(c.v[4].w) * 65536u + u32(c.v[5].w);
    let upper = lower + vec3<f32>(res - vec3<u32>(1u)) * dx;
    let q = min(max(p, lower), upper);
    let u = (q - lower) / dx;
    let cell = min(vec3<u32>(max(floor(u), vec3<f32>(0.0))), res - vec3<u32>(2u));
    let f = clamp(u - vec3<f32>(cell), vec3<f32>(0.0), vec3<f32>(1.0));
    let offset = p - q;

    // Trilinear weights in the CPU's order (`MeshSdf::corners`).
    var w: array<f32, 8>;
    for (var k = 0u; k < 8u; k = k + 1u) {
        var wk = 1.0;
        wk = wk * select(1.0 - f.x, f.x, (k & 1u) != 0u);
        wk = wk * select(1.0 - f.y, f.y, (k & 2u) != 0u);
        wk = wk * select(1.0 - f.z, f.z, (k & 4u) != 0u);
        w[k] = wk;
    }
    var d = 0.0;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let idx = cell + vec3<u32>(k & 1u, (k >> 1u) & 1u, (k >> 2u) & 1u);
        d = d + w[k] * co_mesh_value(base, res, idx);
    }
    let olen = length(offset);
    d = d + olen;
    if (!(d <= 0.0)) {
        // No contact (`query` only evaluates the normal for φ ≤ 0): skip
        // the 48 reads of the gradient.
        return vec4<f32>(CO_FALLBACK_NORMAL, d);
    }
    var g = vec3<f32>(0.0);
    for (var k = 0u; k < 8u; k = k + 1u) {
        let idx = cell + vec3<u32>(k & 1u, (k >> 1u) & 1u, (k >> 2u) & 1u);
        g = g + co_mesh_node_gradient(base, res, dx, idx) * w[k];
    }
    if (olen > 0.0) {
        g = select(g, vec3<f32>(0.0), offset != vec3<f32>(0.0));
        g = g + offset / olen;
    }
    let glen = length(g);
    var n = CO_FALLBACK_NORMAL;
    if (glen > 0.0) {
        n = g / glen;
    }
    return vec4<f32>(n, d);
}
