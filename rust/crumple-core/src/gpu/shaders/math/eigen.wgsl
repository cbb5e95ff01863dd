// Jacobi rotation helpers of `math/eigen.rs`, used by the one-sided Jacobi SVD (`svd.wgsl`).

// math/eigen.rs `jacobi_rotation`: (c, s, t) of the rotation zeroing g in [[a, g], [g, b]].
fn cm_jacobi_rotation(a: f32, b: f32, g: f32) -> vec3<f32> {
    let zeta = (b - a) / (2.0 * g);
    var t: f32;
    if (abs(zeta) > CM_JACOBI_BIG) {
        t = 0.5 / zeta;
    } else {
        let sgn = select(-1.0, 1.0, zeta >= 0.0);
        t = sgn / (abs(zeta) + sqrt(1.0 + zeta * zeta));
    }
    let c = 1.0 / sqrt(1.0 + t * t);
    return vec3<f32>(c, c * t, t);
}

// math/eigen.rs `rotate_cols`: column p ← c·xp − s·xq, column q ← s·xp + c·xq.
fn cm_rotate_cols(m: ptr<function, mat3x3<f32>>, p: u32, q: u32, c: f32, s: f32) {
    let xp = (*m)[p];
    let xq = (*m)[q];
    (*m)[p] = c * xp - s * xq;
    (*m)[q] = s * xp + c * xq;
}

// math/eigen.rs `swap_cols_proper`: swap columns i, j and negate the new column j (det unchanged).
fn cm_swap_cols_proper(m: ptr<function, mat3x3<f32>>, i: u32, j: u32) {
    let xi = (*m)[i];
    (*m)[i] = (*m)[j];
    (*m)[j] = -xi;
}
