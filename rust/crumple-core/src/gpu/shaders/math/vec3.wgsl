// `Vec3` helpers of `math/vec3.rs` in the CPU's operation order.
//
// Mirroring rules (every file of this library): each formula keeps the CPU's operation order
// (`a * b * c` is `(a * b) * c`, sums left to right) and branch structure (same tests, order,
// sweep limits and tolerances); dot and cross products, determinants and matrix products are
// written out instead of using the builtins, whose evaluation order is unspecified. WGSL is
// column-major (`M[j][i]` is row i of column j) while the CPU `Mat3` is row-major, so CPU
// `m[i][j]` is WGSL `M[j][i]`. Constants (`CM_*`) come from the Rust side through the generated
// prelude (`gpu/wgsl.rs`), so both sides read one definition.

fn cm_vec_is_finite(v: vec3<f32>) -> bool {
    return cm_is_finite(v.x) && cm_is_finite(v.y) && cm_is_finite(v.z);
}

// `Vec3::dot`: x·x' + y·y' + z·z', left to right.
fn cm_dot(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

fn cm_norm2(a: vec3<f32>) -> f32 {
    return cm_dot(a, a);
}

fn cm_norm(a: vec3<f32>) -> f32 {
    return sqrt(cm_dot(a, a));
}

// `Vec3::cross`.
fn cm_cross(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

// `v.abs().max_element()`.
fn cm_max_abs3(v: vec3<f32>) -> f32 {
    let a = abs(v);
    return max(max(a.x, a.y), a.z);
}
