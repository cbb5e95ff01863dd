// Shared pieces of the per-particle constitutive models: the twin of `mpm/constitutive/mod.rs`
// (spec mpm_anisotropic §4, §5). The model files beside it (`corotated`, `hencky`, `sand`, `goo`,
// `surface`, `curve`) are the twins of the CPU files of the same names; `material.wgsl` dispatches
// on the packed material kind like `mpm/material.rs`.
//
// Codimensional elements (type iii, spec §4.1–§4.4, §5.1, §5.2) work on the QR factor R̃ of
// F̃ = Q R̃; CPU entries r_ij (one-based, row-major) are WGSL R[j-1][i-1].

// Plastic projection of a volumetric particle: the new F^E and hardening state q.
struct VolumePlastic {
    F: mat3x3<f32>,
    q: f32,
}

// First Piola–Kirchhoff stress in the rest frame; ok = 0 where the CPU returns None (degenerate).
struct CodimPiola {
    P: mat3x3<f32>,
    ok: u32,
}

// Return-mapped F̃ and the `ReturnEvent` discriminant (CM_EVENT_*).
struct CodimReturn {
    F: mat3x3<f32>,
    event: u32,
}

// constitutive/mod.rs `drucker_prager_alpha`: sqrt(2/3)·2 sin Φ/(3 − sin Φ).
fn cm_drucker_prager_alpha(friction_angle_rad: f32) -> f32 {
    let s = cm_sincos(friction_angle_rad).x;
    return CM_SQRT_2_3 * 2.0 * s / (3.0 - s);
}

// constitutive/mod.rs `qr_unusable`: !(r11 ≥ eps && r22 ≥ eps) or a non-finite R̃.
fn cm_qr_unusable(qr: Qr3, eps: f32) -> bool {
    return !(qr.R[0][0] >= eps && qr.R[1][1] >= eps) || !cm_mat_is_finite(qr.R);
}

// constitutive/mod.rs `piola_from_a`: P̃ = Q Yᵀ with Y = R̃⁻¹A by back-substitution, the last row
// of Y given analytically as g3 (no 1/r33). Only rows 0 and 1 of the symmetric A are read.
fn cm_piola_from_a(qr: Qr3, a_row0: vec3<f32>, a_row1: vec3<f32>, g3: vec3<f32>) -> mat3x3<f32> {
    let r11 = qr.R[0][0];
    let r12 = qr.R[1][0];
    let r13 = qr.R[2][0];
    let r22 = qr.R[1][1];
    let r23 = qr.R[2][1];
    let y2 = g3;
    let y1 = (a_row1 - r23 * y2) / r22;
    let y0 = (a_row0 - r12 * y1 - r13 * y2) / r11;
    // P[i][j] = Σ_k Q[i][k] Y[j][k]: column j of P is Q·y_j.
    return mat3x3<f32>(cm_mul_vec(qr.Q, y0), cm_mul_vec(qr.Q, y1), cm_mul_vec(qr.Q, y2));
}
