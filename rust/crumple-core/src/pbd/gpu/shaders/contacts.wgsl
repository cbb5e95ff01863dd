// Spec shape_matching §1.3 steps 3–5, 7b and 7c, the twin of `pbd/contacts.rs`: a hashed uniform
// grid on the predicted positions (keys sorted by the shared radix sort, cells found by binary
// search), neighbour lists of other bodies' particles in ascending index order, particle–world
// candidates as a bit mask per particle, and the two Jacobi projections with Coulomb friction.
// The particle–particle projection reads `xs` and writes `xs_b`; the world projection reads
// `xs_b` and writes `xs`, so each iterate is a pure function of the previous one.

@group(0) @binding(0) var<uniform> params: PbdParams;
@group(0) @binding(1) var<storage, read_write> xs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> xs_b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> body: array<u32>;
@group(0) @binding(5) var<storage, read_write> keys: array<u32>;
@group(0) @binding(6) var<storage, read_write> vals: array<u32>;
@group(0) @binding(7) var<storage, read_write> neighbors: array<u32>;
@group(0) @binding(8) var<storage, read_write> ncount: array<u32>;
@group(0) @binding(9) var<storage, read_write> wmask: array<u32>;
@group(0) @binding(10) var<storage, read> colliders: array<PackedCollider>;
@group(0) @binding(11) var<storage, read> collider_sdf: array<f32>;
@group(0) @binding(12) var<storage, read_write> stats: array<atomic<u32>>;

fn cell_of(p: vec3<f32>) -> vec3<i32> {
    return vec3<i32>(floor(p / params.cell));
}

// Spec §14.3's hash, kept to PBD_KEY_BITS bits (the radix sort sorts that many). Colliding cells
// only add candidates, which the distance test and the duplicate check drop.
fn cell_key(c: vec3<i32>) -> u32 {
    let u = bitcast<vec3<u32>>(c);
    return ((u.x * 73856093u) ^ (u.y * 19349663u) ^ (u.z * 83492791u)) & PBD_KEY_MASK;
}

@compute @workgroup_size(64)
fn cell_keys(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    keys[i] = cell_key(cell_of(xs[i].xyz));
    vals[i] = i;
}

// First index of the sorted keys whose key is ≥ k.
fn lower_bound(k: u32) -> u32 {
    var lo = 0u;
    var hi = params.n;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (keys[mid] < k) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

@compute @workgroup_size(64)
fn find_neighbors(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    let xi = xs[i].xyz;
    let bi = body[i];
    let c = cell_of(xi);
    // params.cell is the search reach d_pp + δ_m (`GpuParams::new`).
    let reach2 = params.cell * params.cell;
    let base = i * params.capacity;
    var found = 0u;
    for (var dz = -1; dz <= 1; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var dx = -1; dx <= 1; dx++) {
                let k = cell_key(c + vec3<i32>(dx, dy, dz));
                for (var e = lower_bound(k); e < params.n && keys[e] == k; e++) {
                    let j = vals[e];
                    if (j == i || body[j] == bi) {
                        continue;
                    }
                    let d = xs[j].xyz - xi;
                    if (dot(d, d) >= reach2 || found >= params.capacity) {
                        continue;
                    }
                    // Insert in ascending order; a j seen twice (two cells with one key) once.
                    var at = found;
                    while (at > 0u && neighbors[base + at - 1u] > j) {
                        at--;
                    }
                    if (at > 0u && neighbors[base + at - 1u] == j) {
                        continue;
                    }
                    for (var m = found; m > at; m--) {
                        neighbors[base + m] = neighbors[base + m - 1u];
                    }
                    neighbors[base + at] = j;
                    found++;
                }
            }
        }
    }
    ncount[i] = found;
    atomicAdd(&stats[ST_PARTICLE_CONTACTS], found);
}

@compute @workgroup_size(64)
fn world_candidates(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    var mask = 0u;
    if (xs[i].w != 0.0) {
        let reach = params.d_pw + params.margin;
        for (var s = 0u; s < params.n_colliders; s++) {
            if (collider_contact(colliders[s], xs[i].xyz).w < reach) {
                mask = mask | (1u << s);
            }
        }
    }
    wmask[i] = mask;
    atomicAdd(&stats[ST_WORLD_CONTACTS], countOneBits(mask));
}

// Position-level Coulomb friction (`friction` in `pbd/contacts.rs`).
fn friction(ut: vec3<f32>, pen: f32, mu_s: f32, mu_k: f32) -> vec3<f32> {
    let t = cm_norm(ut);
    if (t < mu_s * pen) {
        return ut;
    } else if (t > 0.0) {
        return ut * min(mu_k * pen / t, 1.0);
    }
    return vec3<f32>(0.0);
}

@compute @workgroup_size(64)
fn project_particles(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    let pi = xs[i];
    let wi = pi.w;
    let count = ncount[i];
    if (wi == 0.0 || count == 0u) {
        xs_b[i] = pi;
        return;
    }
    let xi = pi.xyz;
    let tiny = 1e-6 * params.d_pp;
    var d = vec3<f32>(0.0);
    var used = 0u;
    for (var k = 0u; k < count; k++) {
        let j = neighbors[i * params.capacity + k];
        let pj = xs[j];
        let wj = pj.w;
        let diff = xi - pj.xyz;
        let dist = cm_norm(diff);
        if (dist >= params.d_pp || dist < tiny || wi + wj == 0.0) {
            continue;
        }
        let nrm = diff * (1.0 / dist);
        let pen = params.d_pp - dist;
        let share = wi / (wi + wj);
        d += nrm * (share * pen);
        let u = (xi - x[i].xyz) - (pj.xyz - x[j].xyz);
        let ut = u - nrm * dot(u, nrm);
        d -= friction(ut, pen, params.mu_s_pp, params.mu_k_pp) * share;
        used++;
    }
    if (used > 0u) {
        xs_b[i] = vec4<f32>(xi + d * (params.sor / f32(used)), wi);
    } else {
        xs_b[i] = pi;
    }
}

@compute @workgroup_size(64)
fn project_world(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= params.n) {
        return;
    }
    let pi = xs_b[i];
    let mask = wmask[i];
    if (mask == 0u) {
        xs[i] = pi;
        return;
    }
    let xi = pi.xyz;
    let x0 = x[i].xyz;
    var d = vec3<f32>(0.0);
    var used = 0u;
    for (var s = 0u; s < params.n_colliders; s++) {
        if ((mask & (1u << s)) == 0u) {
            continue;
        }
        let c = colliders[s];
        let contact = collider_contact(c, xi);
        let pen = params.d_pw - contact.w;
        if (!(pen > 0.0)) {
            continue;
        }
        let nrm = contact.xyz;
        d += nrm * pen;
        let surface = collider_velocity(c, x0) * params.h;
        let u = (xi - x0) - surface;
        let ut = u - nrm * dot(u, nrm);
        let mu_k = c.v[2].w;
        let mode = u32(c.v[1].w);
        if (mode == CO_MODE_STICKY) {
            d -= ut;
        } else if (mode == CO_MODE_SEPARATE) {
            d -= friction(ut, pen, mu_k * params.static_ratio, mu_k);
        }
        used++;
    }
    if (used > 0u) {
        xs[i] = vec4<f32>(xi + d * (params.sor / f32(used)), pi.w);
    } else {
        xs[i] = pi;
    }
}
