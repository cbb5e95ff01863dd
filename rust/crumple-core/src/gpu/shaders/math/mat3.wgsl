// `Mat3` helpers of `math/mat3.rs` in the CPU's operation order (see `vec3.wgsl`).

// `Mat3::is_finite`.
fn cm_mat_is_finite(m: mat3x3<f32>) -> bool {
    return cm_vec_is_finite(m[0]) && cm_vec_is_finite(m[1]) && cm_vec_is_finite(m[2]);
}

// `Mat3::max_abs`.
fn cm_mat_max_abs(m: mat3x3<f32>) -> f32 {
    return max(max(cm_max_abs3(m[0]), cm_max_abs3(m[1])), cm_max_abs3(m[2]));
}

// `Mat3 * Mat3`: CPU r[i][j] = a[i][0] b[0][j] + a[i][1] b[1][j] + a[i][2] b[2][j]; column j of the
// result is a[:,0] b[0][j] + a[:,1] b[1][j] + a[:,2] b[2][j], the same sums per entry.
fn cm_mul(a: mat3x3<f32>, b: mat3x3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(
        a[0] * b[0].x + a[1] * b[0].y + a[2] * b[0].z,
        a[0] * b[1].x + a[1] * b[1].y + a[2] * b[1].z,
        a[0] * b[2].x + a[1] * b[2].y + a[2] * b[2].z,
    );
}

// `Mat3 * Vec3`: row i · v = m[i][0] v.x + m[i][1] v.y + m[i][2] v.z.
fn cm_mul_vec(m: mat3x3<f32>, v: vec3<f32>) -> vec3<f32> {
    return m[0] * v.x + m[1] * v.y + m[2] * v.z;
}

// `Mat3::determinant` = col0 · (col1 × col2).
fn cm_det(m: mat3x3<f32>) -> f32 {
    return cm_dot(m[0], cm_cross(m[1], m[2]));
}

// `Mat3::cofactor` = from_cols(c1 × c2, c2 × c0, c0 × c1).
fn cm_cofactor(m: mat3x3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(cm_cross(m[1], m[2]), cm_cross(m[2], m[0]), cm_cross(m[0], m[1]));
}

fn cm_identity() -> mat3x3<f32> {
    return mat3x3<f32>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
}
