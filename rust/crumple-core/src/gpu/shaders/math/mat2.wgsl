// 2×2 helpers of `math/mat2.rs` (the curve cross-section, spec mpm_anisotropic Appendix A.2).
// 2×2 matrices are vec4 (m00, m01, m10, m11).

// math/mat2.rs `Svd2`: m = rot(φ) diag(σ1, σ2) rot(θ). 2×2 matrices are vec4 (m00, m01, m10, m11).
struct CmSvd2 {
    phi: f32,
    sigma1: f32,
    sigma2: f32,
    theta: f32,
}

// math/mat2.rs `svd2_signed` (spec Appendix A.2).
fn cm_svd2_signed(m: vec4<f32>) -> CmSvd2 {
    let e = (m.x + m.w) * 0.5;
    let f = (m.x - m.w) * 0.5;
    let g = (m.z + m.y) * 0.5;
    let h = (m.z - m.y) * 0.5;
    let q = cm_hypot(e, h);
    let r = cm_hypot(f, g);
    let a1 = cm_atan2(g, f);
    let a2 = cm_atan2(h, e);
    return CmSvd2((a2 + a1) * 0.5, q + r, q - r, (a2 - a1) * 0.5);
}

// math/mat2.rs `rot2`: [[cos, −sin], [sin, cos]].
fn cm_rot2(angle: f32) -> vec4<f32> {
    let sc = cm_sincos(angle);
    return vec4<f32>(sc.y, -sc.x, sc.x, sc.y);
}

// math/mat2.rs `mat2_mul`.
fn cm_mat2_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.x * b.x + a.y * b.z,
        a.x * b.y + a.y * b.w,
        a.z * b.x + a.w * b.z,
        a.z * b.y + a.w * b.w,
    );
}

// math/mat2.rs `Svd2::recompose`: rot(φ) diag(s1, s2) rot(θ).
fn cm_svd2_recompose(d: CmSvd2, s1: f32, s2: f32) -> vec4<f32> {
    let u = cm_rot2(d.phi);
    let us = vec4<f32>(u.x * s1, u.y * s2, u.z * s1, u.w * s2);
    return cm_mat2_mul(us, cm_rot2(d.theta));
}
