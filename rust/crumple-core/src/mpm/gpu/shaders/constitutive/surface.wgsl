// Cloth (codimension 1): the twin of `mpm/constitutive/surface.rs` (spec §4.2, §4.3, §5.1).

// constitutive/surface.rs `in_plane_rotation`: (cos θ, sin θ) of θ = atan2(−r12, r11 + r22).
fn cm_in_plane_rotation(r11: f32, r12: f32, r22: f32) -> vec2<f32> {
    let x = r11 + r22;
    let y = -r12;
    let n = cm_hypot(x, y);
    if (n > 0.0) {
        return vec2<f32>(x / n, y / n);
    }
    return vec2<f32>(1.0, 0.0);
}

// constitutive/surface.rs `normal_energy(k, r33).1`: f'(r33) = −k(1 − r33)² for r33 ≤ 1, else 0.
fn cm_surface_normal_force(k: f32, r33: f32) -> f32 {
    if (r33 <= 1.0) {
        let d = 1.0 - r33;
        return -k * d * d;
    }
    return 0.0;
}

// constitutive/surface.rs `surface_piola` (`surface_a` + `piola_from_a`, spec §4.2, §4.3).
fn cm_surface_piola(m: PackedMaterial, f: mat3x3<f32>) -> CodimPiola {
    let qr = qr3(f);
    if (cm_qr_unusable(qr, m.v[2].x)) {
        return CodimPiola(mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0)), 0u);
    }
    let mu = m.v[0].y;
    let lambda = m.v[0].z;
    let g = m.v[0].w;
    let k = m.v[1].x;
    let r11 = qr.R[0][0];
    let r12 = qr.R[1][0];
    let r13 = qr.R[2][0];
    let r22 = qr.R[1][1];
    let r23 = qr.R[2][1];
    let r33 = qr.R[2][2];
    let cs = cm_in_plane_rotation(r11, r12, r22);
    let c = cs.x;
    let s = cs.y;
    let two_mu = 2.0 * mu;
    let jin = r11 * r22;
    let vol = lambda * (jin - 1.0) * jin;
    let t00 = two_mu * ((r11 - c) * r11 + (r12 + s) * r12) + vol;
    let t01 = two_mu * (r12 + s) * r22;
    let t11 = two_mu * (r22 - c) * r22 + vol;
    let a02 = g * r33 * r13;
    let a12 = g * r33 * r23;
    let a00 = t00 + g * r13 * r13;
    let a01 = t01 + g * r13 * r23;
    let a11 = t11 + g * r23 * r23;
    let g3 = vec3<f32>(g * r13, g * r23, cm_surface_normal_force(k, r33));
    let p = cm_piola_from_a(qr, vec3<f32>(a00, a01, a02), vec3<f32>(a01, a11, a12), g3);
    return CodimPiola(p, 1u);
}

// constitutive/surface.rs `surface_return_map(.., clamp_inverted = false)` with
// `surface_project_r` (spec §5.1): tension r33 > 1 → (0, 0, 1); inverted r33 < 0 → shear zeroed;
// else Coulomb cone γ|s| ≤ c_F k (1 − r33)². Only the normal column of F̃ changes.
fn cm_surface_return_map(m: PackedMaterial, f: mat3x3<f32>) -> CodimReturn {
    let qr = qr3(f);
    if (cm_qr_unusable(qr, m.v[2].x) || !cm_mat_is_finite(f)) {
        return CodimReturn(f, CM_EVENT_DEGENERATE);
    }
    let g = m.v[0].w;
    let k = m.v[1].x;
    let c_f = m.v[1].y;
    let r13 = qr.R[2][0];
    let r23 = qr.R[2][1];
    let r33 = qr.R[2][2];
    var n = vec3<f32>(r13, r23, r33); // projected (r13, r23, r33)
    var event = CM_EVENT_ELASTIC;
    if (r33 > 1.0) {
        n = vec3<f32>(0.0, 0.0, 1.0);
        event = CM_EVENT_TENSION;
    } else if (r33 < 0.0) {
        n = vec3<f32>(0.0, 0.0, r33);
        event = CM_EVENT_INVERTED;
    } else if (g != 0.0) {
        let ff = g * cm_hypot(r13, r23);
        let d = 1.0 - r33;
        let limit = c_f * k * d * d;
        if (ff > limit) {
            let s = limit / ff;
            n = vec3<f32>(s * r13, s * r23, r33);
            event = CM_EVENT_SLIDE;
        }
    }
    if (event == CM_EVENT_ELASTIC) {
        return CodimReturn(f, event);
    }
    var out = f;
    out[2] = cm_mul_vec(qr.Q, n);
    return CodimReturn(out, event);
}
