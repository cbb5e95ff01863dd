// Shared prelude of every MPM stage (spec mpm_anisotropic.md §3, §10.2):
// the per-step parameter block, the stats block, the sparse-grid lookups and
// the B-spline stencil. Stage files are concatenated after this one.
//
// Layouts on the device: vectors are vec4<f32> (w unused), matrices are
// WGSL mat3x3<f32> (column-major; the host converts from the row-major CPU
// Mat3 on upload), grid nodes are vec4<f32> (xyz = momentum, then velocity
// after the grid update; w = mass).

struct StepParams {
    lower: vec3<f32>,
    dx: f32,
    inv_dx: f32,
    dt: f32,
    // APIC 𝔇⁻¹ (4/h² quadratic, 3/h² cubic, spec §3.1)
    d_inv: f32,
    // nodes per stencil axis: 3 (quadratic) or 4 (cubic)
    kernel_k: u32,
    gravity: vec3<f32>,
    // 1: MLS-MPM transfer (spec §9 A15), 0: APIC
    mls: u32,
    // particle bounds in grid units (solver.rs ParticleBounds)
    hi: vec3<f32>,
    lo: f32,
    // domain walls: node index < pad or > wall_hi (solver.rs grid_update)
    wall_hi: vec3<u32>,
    pad: u32,
    // block hash table: slots − 1 (a power of two minus one)
    hash_mask: u32,
    // clamp target above `lo` (out_of_domain = clamp)
    lo_clamp: f32,
    hash_pad1: u32,
    n_particles: u32,
    vol_start: u32,
    vol_end: u32,
    vert_start: u32,
    vert_end: u32,
    elem_start: u32,
    elem_end: u32,
    // bit 0: enslave elements, bit 1: eulerian tangents, bit 2: run the codim return map
    flags: u32,
    n_colliders: u32,
    n_pins: u32,
    block_capacity: u32,
    // 1: clamp escaped particles back into the domain
    clamp: u32,
    // stencil shift of the bin key: 0.5 quadratic, 1 cubic
    kernel_shift: f32,
}

// The stats slots (`ST_*`, an `array<atomic<u32>>` reset by the host before each step) and
// `NO_BLOCK` come from the generated prelude (`mpm/gpu/stages.rs` `mpm_prelude`).

fn grid_units(x: vec3<f32>) -> vec3<f32> {
    return (x - params.lower) * params.inv_dx;
}

// Block key of block coordinates, as on the CPU (grid.rs `block_key`):
// 10 bits per axis, z highest, so keys sort like the CPU's block list.
fn block_key(b: vec3<u32>) -> u32 {
    return b.x | (b.y << 10u) | (b.z << 20u);
}

fn key_coords(k: u32) -> vec3<u32> {
    return vec3<u32>(k & 1023u, (k >> 10u) & 1023u, k >> 20u);
}

// First slot of key k in the block hash table (an integer mix, so that
// neighbouring blocks spread over the table; open addressing, linear probing).
fn hash_slot(k: u32) -> u32 {
    var x = k;
    x ^= x >> 16u;
    x *= 0x7feb352du;
    x ^= x >> 15u;
    x *= 0x846ca68bu;
    x ^= x >> 16u;
    return x & params.hash_mask;
}

// The B-spline stencil of a particle (kernel.rs Stencil::quadratic/cubic),
// same operations in the same order.
struct Stencil {
    base: vec3<i32>,
    frac: vec3<f32>,
    w: array<vec3<f32>, 4>,   // w[k] = (w_x[k], w_y[k], w_z[k])
    dw: array<vec3<f32>, 4>,
}

fn stencil(xi: vec3<f32>) -> Stencil {
    var s: Stencil;
    let inv_h = params.inv_dx;
    if params.kernel_k == 3u {
        let b = vec3<i32>(floor(xi - vec3<f32>(0.5)));
        let f = xi - vec3<f32>(b);
        s.base = b;
        s.frac = f;
        let d0 = vec3<f32>(1.5) - f;
        let d1 = f - vec3<f32>(1.0);
        let d2 = f - vec3<f32>(0.5);
        s.w[0] = 0.5 * d0 * d0;
        s.w[1] = vec3<f32>(0.75) - d1 * d1;
        s.w[2] = 0.5 * d2 * d2;
        s.w[3] = vec3<f32>(0.0);
        s.dw[0] = -d0 * inv_h;
        s.dw[1] = -2.0 * d1 * inv_h;
        s.dw[2] = d2 * inv_h;
        s.dw[3] = vec3<f32>(0.0);
    } else {
        let b = vec3<i32>(floor(xi - vec3<f32>(1.0)));
        let f = xi - vec3<f32>(b);
        s.base = b;
        s.frac = f;
        let two_thirds = vec3<f32>(2.0 / 3.0);
        let o0 = vec3<f32>(2.0) - f;
        let r1 = f - vec3<f32>(1.0);
        let t2 = vec3<f32>(2.0) - f;
        let o3 = f - vec3<f32>(1.0);
        s.w[0] = (1.0 / 6.0) * o0 * o0 * o0;
        s.w[1] = 0.5 * r1 * r1 * r1 - r1 * r1 + two_thirds;
        s.w[2] = 0.5 * t2 * t2 * t2 - t2 * t2 + two_thirds;
        s.w[3] = (1.0 / 6.0) * o3 * o3 * o3;
        s.dw[0] = -0.5 * o0 * o0 * inv_h;
        s.dw[1] = (1.5 * r1 * r1 - 2.0 * r1) * inv_h;
        s.dw[2] = (2.0 * t2 - 1.5 * t2 * t2) * inv_h;
        s.dw[3] = 0.5 * o3 * o3 * inv_h;
    }
    return s;
}

fn is_finite3(v: vec3<f32>) -> bool {
    // On the bits: WGSL lets a compiler assume floats are finite, so
    // `x - x == 0.0` may be folded to true. An all-ones exponent is inf/NaN.
    let e = bitcast<vec3<u32>>(v) & vec3<u32>(0x7f800000u);
    return all(e != vec3<u32>(0x7f800000u));
}

// Index of an invocation of a 64-wide dispatch laid out in two dimensions
// (`gpu/dispatch.rs` `dispatch_2d`: x up to the device limit, then y).
fn thread_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 64u;
}

// What a particle's stress and mesh forces leave for P2G (stress.wgsl writes,
// p2g.wgsl reads).
struct ParticleForce {
    // V τ (type i) or S_p (type iii) acting through ∇w; zero for vertices
    s: mat3x3<f32>,
    // mesh force f_q on vertices (xyz), zero otherwise
    f: vec4<f32>,
}

fn linear_group(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x;
}
