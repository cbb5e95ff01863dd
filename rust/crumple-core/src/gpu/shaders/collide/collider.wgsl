// Collider queries and the boundary response of the MPM grid update, in f32:
// the GPU twin of `collide::Collider::query` followed by
// `collide::boundary_response` (spec §3.6), as the CPU `grid_update` in
// `mpm/solver/grid_update.rs` applies them to each grid node, collider after collider.
//
// This is a library: no bindings and no entry points. It is concatenated
// with the shader that uses it, which must declare the node-value array of
// mesh colliders under this exact name (bind a 1-element buffer when no
// collider is a mesh):
//
//     var<storage, read> collider_sdf: array<f32>;
//
// The public functions are `collider_response` (the MPM grid update), `collider_contact` and
// `collider_velocity` (the shape-matching contacts); the struct
// `PackedCollider` is the record written by `pack_collider` in
// `gpu/colliders.rs`. Every other name starts with `co_` / `CO_`. One file per CPU
// file of `collide/`: this one is the twin of `collider.rs` (the record, the shape dispatch and
// `Collider::query`); the shapes and `response.wgsl` beside it.
// `CO_*` constants come from the generated prelude (`gpu/wgsl.rs`).
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
//
// Each shape answers (outward unit normal, signed distance) packed as
// vec4(n.xyz, φ) for a point p in its local frame; the CPU evaluates
// `Sdf::distance` and `Sdf::normal` separately on the same local point,
// which is the same arithmetic.

struct PackedCollider {
    v: array<vec4<f32>, 8>,
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

// `Collider::contact` without the velocity: vec4(world outward normal, φ) at world point x (the
// shape-matching contacts, `pbd/contacts.rs`, read φ and the normal every iteration).
fn collider_contact(c: PackedCollider, x: vec3<f32>) -> vec4<f32> {
    let r0 = c.v[1].xyz;
    let r1 = c.v[2].xyz;
    let r2 = c.v[3].xyz;
    let d = x - c.v[0].xyz;
    let s = co_shape(c, vec3<f32>(dot(r0, d), dot(r1, d), dot(r2, d)));
    return vec4<f32>(r0 * s.x + r1 * s.y + r2 * s.z, s.w);
}

// `Collider::velocity`: v + ω × (x − translation), m/s.
fn collider_velocity(c: PackedCollider, x: vec3<f32>) -> vec3<f32> {
    return c.v[4].xyz + cross(c.v[5].xyz, x - c.v[0].xyz);
}
