// Collider queries and the boundary response of the MPM grid update, in f32:
// the GPU twin of `collide::Collider::query` followed by
// `collide::boundary_response` (spec §3.6), as the CPU `grid_update` in
// `mpm/solver.rs` applies them to each grid node, collider after collider.
//
// This is a library: no bindings and no entry points. It is concatenated
// with the shader that uses it, which must declare the node-value array of
// mesh colliders under this exact name (bind a 1-element buffer when no
// collider is a mesh):
//
//     var<storage, read> collider_sdf: array<f32>;
//
// The one public function is `collider_response`; the struct
// `PackedCollider` is the record written by `pack_collider` in
// `mpm/gpu/colliders.rs`. Every other name starts with `co_` / `CO_`.
//
// Record layout (32 f32 = 8 vec4; the collider's *current* pose, i.e. after
// `Collider::advance_to`; integers are stored as exactly representable f32
// values, never as bit patterns, so no denormal flushing can touch them):
//
//   v[0] = (translation.xyz, kind)   kind: 0 plane, 1 sphere, 2 box,
//                                          3 capsule, 4 cylinder, 5 mesh
//   v[1] = (rotation column 0, mode) mode: 0 sticky, 1 slip, 2 separate
//   v[2] = (rotation column 1, friction μ)
//   v[3] = (rotation column 2, 0)
//   v[4] = (linear velocity of the origin, mesh offset div 65536)
//   v[5] = (angular velocity, world frame, mesh offset mod 65536)
//   v[6], v[7] = shape parameters, local frame (unused entries 0):
//     plane     v[6].xyz = point on the plane, v[7].xyz = unit outward normal
//     sphere    v[6].x = radius
//     box       v[6].xyz = half extents
//     capsule   v[6].x = half height of the core segment, v[6].y = radius
//     cylinder  v[6].x = radius, v[6].y = half height
//     mesh      v[6].xyz = grid lower corner, v[6].w = dx,
//               v[7].xyz = nodes per axis (each ≥ 2); node values are
//               collider_sdf[offset + i + nx·(j + ny·k)]

struct PackedCollider {
    v: array<vec4<f32>, 8>,
}

const CO_KIND_PLANE: u32 = 0u;
const CO_KIND_SPHERE: u32 = 1u;
const CO_KIND_BOX: u32 = 2u;
const CO_KIND_CAPSULE: u32 = 3u;
const CO_KIND_CYLINDER: u32 = 4u;
const CO_KIND_MESH: u32 = 5u;

const CO_MODE_STICKY: u32 = 0u;
const CO_MODE_SLIP: u32 = 1u;

// `collide::sdf::FALLBACK_NORMAL`: +y where a gradient is undefined.
const CO_FALLBACK_NORMAL: vec3<f32> = vec3<f32>(0.0, 1.0, 0.0);

// `collide::box_shape::side`: −1 for negative values, +1 otherwise (zero and
// −0 count as positive, so degenerate points pick the + side as on the CPU).
fn co_side(x: f32) -> f32 {
    return select(1.0, -1.0, x < 0.0);
}

// Each shape answers (outward unit normal, signed distance) packed as
// vec4(n.xyz, φ) for a point p in its local frame; the CPU evaluates
// `Sdf::distance` and `Sdf::normal` separately on the same local point,
// which is the same arithmetic.

// `Plane::distance` / `Plane::normal`: (p − point)·n, normal n everywhere.
fn co_plane(p: vec3<f32>, point: vec3<f32>, n: vec3<f32>) -> vec4<f32> {
    return vec4<f32>(n, dot(p - point, n));
}

// `Sphere`: |p| − r; normal p/|p|, +y at the centre (try_normalize(0)).
fn co_sphere(p: vec3<f32>, radius: f32) -> vec4<f32> {
    let len = length(p);
    var n = CO_FALLBACK_NORMAL;
    if (len > 0.0) {
        n = p / len;
    }
    return vec4<f32>(n, len - radius);
}

// `BoxShape`: exact box SDF. Outside (max q > 0) the normal points from the
// nearest surface point (face, edge or corner): normalize(max(q, 0) ∘ sign p).
// Inside it is the normal of the nearest face; ties go to the first of x, y,
// z, and a zero coordinate to the + side, exactly as the CPU.
fn co_box(p: vec3<f32>, h: vec3<f32>) -> vec4<f32> {
    let q = abs(p) - h;
    let qmax = max(max(q.x, q.y), q.z);
    let m = max(q, vec3<f32>(0.0));
    let phi = length(m) + min(qmax, 0.0);
    let s = vec3<f32>(co_side(p.x), co_side(p.y), co_side(p.z));
    var n: vec3<f32>;
    if (qmax > 0.0) {
        // m ≠ 0 here, so normalize_or_zero is normalize.
        n = normalize(m * s);
    } else if (q.x >= q.y && q.x >= q.z) {
        n = vec3<f32>(s.x, 0.0, 0.0);
    } else if (q.y >= q.z) {
        n = vec3<f32>(0.0, s.y, 0.0);
    } else {
        n = vec3<f32>(0.0, 0.0, s.z);
    }
    return vec4<f32>(n, phi);
}

// `Capsule` along local y: distance to the core segment minus the radius;
// normal from the nearest segment point (the caps are its ends), and on the
// segment itself ±y at or beyond its ends, +x beside it.
fn co_capsule(p: vec3<f32>, half_height: f32, radius: f32) -> vec4<f32> {
    let y = clamp(p.y, -half_height, half_height);
    let o = vec3<f32>(p.x, p.y - y, p.z);
    let len = length(o);
    var n: vec3<f32>;
    if (len > 0.0) {
        n = o / len;
    } else if (abs(p.y) >= half_height) {
        n = vec3<f32>(0.0, co_side(p.y), 0.0);
    } else {
        n = vec3<f32>(1.0, 0.0, 0.0);
    }
    return vec4<f32>(n, len - radius);
}

// `Cylinder` along local y (`Cylinder::parts`, `distance`, `normal`): dr past
// the side, dy past the cap. Outside both: from the rim (radial·dr + up·dy,
// normalised); past only the side: radial; past only a cap, or inside with
// the cap nearer or tied: ±y (up); else radial (+x on the axis).
fn co_cylinder(p: vec3<f32>, radius: f32, half_height: f32) -> vec4<f32> {
    let rho = length(p.xz);
    var radial = vec3<f32>(1.0, 0.0, 0.0);
    if (rho > 0.0) {
        radial = vec3<f32>(p.x / rho, 0.0, p.z / rho);
    }
    let dr = rho - radius;
    let dy = abs(p.y) - half_height;
    let phi = min(max(dr, dy), 0.0) + length(vec2<f32>(max(dr, 0.0), max(dy, 0.0)));
    let up = vec3<f32>(0.0, co_side(p.y), 0.0);
    var n: vec3<f32>;
    if (dr > 0.0 && dy > 0.0) {
        n = normalize(radial * dr + up * dy);
    } else if (dr > 0.0) {
        n = radial;
    } else if (dy > 0.0 || dy >= dr) {
        n = up;
    } else {
        n = radial;
    }
    return vec4<f32>(n, phi);
}

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

// `Shape` dispatch (`Sdf for Shape`). An unknown kind answers "far outside"
// (no contact), so a corrupt record leaves velocities alone.
fn co_shape(c: PackedCollider, p: vec3<f32>) -> vec4<f32> {
    switch (u32(c.v[0].w)) {
        case CO_KIND_PLANE: {
            return co_plane(p, c.v[6].xyz, c.v[7].xyz);
        }
        case CO_KIND_SPHERE: {
            return co_sphere(p, c.v[6].x);
        }
        case CO_KIND_BOX: {
            return co_box(p, c.v[6].xyz);
        }
        case CO_KIND_CAPSULE: {
            return co_capsule(p, c.v[6].x, c.v[6].y);
        }
        case CO_KIND_CYLINDER: {
            return co_cylinder(p, c.v[6].x, c.v[6].y);
        }
        case CO_KIND_MESH: {
            return co_mesh(c, p);
        }
        default: {
            return vec4<f32>(CO_FALLBACK_NORMAL, 1.0);
        }
    }
}

// `collide::boundary_response`, line for line: sticky takes the collider
// velocity; slip removes the approaching normal part of v − v_co; separate
// applies Coulomb friction μ while approaching (stuck inside the cone).
fn co_boundary_response(v: vec3<f32>, v_co: vec3<f32>, n: vec3<f32>, mode: u32, friction: f32) -> vec3<f32> {
    let v_rel = v - v_co;
    let v_n = dot(v_rel, n);
    if (mode == CO_MODE_STICKY) {
        return v_co;
    }
    if (!(v_n < 0.0)) {
        // Separating (or NaN): the CPU's `if v_n < 0 … else v`.
        return v;
    }
    if (mode == CO_MODE_SLIP) {
        return v_rel - n * v_n + v_co;
    }
    let mu = max(friction, 0.0);
    let v_t = v_rel - n * v_n;
    let t = length(v_t);
    if (t <= -mu * v_n) {
        return v_co;
    }
    return v_t + v_t * (mu * v_n / t) + v_co;
}

// `Collider::query` then `boundary_response`: world point x → local frame
// (Rᵀ(x − translation), `Collider::to_local`); if φ ≤ 0 the world normal is
// R n and the surface velocity `Collider::velocity`: v_lin + ω × (x − c) with
// c the current translation (the rotation centre). Returns v unchanged when
// φ > 0 (or φ is NaN, which `phi <= margin` also rejects).
fn collider_response(c: PackedCollider, x: vec3<f32>, v: vec3<f32>) -> vec3<f32> {
    let r0 = c.v[1].xyz;
    let r1 = c.v[2].xyz;
    let r2 = c.v[3].xyz;
    let d = x - c.v[0].xyz;
    let local = vec3<f32>(dot(r0, d), dot(r1, d), dot(r2, d));
    let s = co_shape(c, local);
    if (!(s.w <= 0.0)) {
        return v;
    }
    let n = r0 * s.x + r1 * s.y + r2 * s.z;
    let v_co = c.v[4].xyz + cross(c.v[5].xyz, d);
    return co_boundary_response(v, v_co, n, u32(c.v[1].w), c.v[2].w);
}
