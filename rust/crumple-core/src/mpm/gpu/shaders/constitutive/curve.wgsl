// Yarn and hair (codimension 2): the twin of `mpm/constitutive/curve.rs` (spec §4.2, §4.4, §5.2, §5.5).

// constitutive/curve.rs `curve_piola` (`curve_a_and_grad` + `piola_from_a`, spec §4.2, §4.4).
fn cm_curve_piola(m: PackedMaterial, f: mat3x3<f32>) -> CodimPiola {
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
    let r32 = qr.R[1][2];
    let r33 = qr.R[2][2];
    // `cross_strain(cross_block(r))`: signed SVD of R_3 = [[r22, r23], [r32, r33]], clamped logs.
    let svd = cm_svd2_signed(vec4<f32>(r22, r23, r32, r33));
    let sb0 = max(svd.sigma1, CM_LOG_CLAMP);
    let sb1 = max(svd.sigma2, CM_LOG_CLAMP);
    let e0 = cm_ln(sb0);
    let e1 = cm_ln(sb1);
    let tr = e0 + e1;
    let tau0 = 2.0 * mu * e0 + lambda * tr;
    let tau1 = 2.0 * mu * e1 + lambda * tr;
    let dh0 = tau0 / sb0;
    let dh1 = tau1 / sb1;
    let grad = cm_svd2_recompose(svd, dh0, dh1);
    let u = cm_rot2(svd.phi);
    let d0 = dh0 * svd.sigma1;
    let d1 = dh1 * svd.sigma2;
    let t00 = d0 * u.x * u.x + d1 * u.y * u.y;
    let t01 = d0 * u.x * u.z + d1 * u.y * u.w;
    let t11 = d0 * u.z * u.z + d1 * u.w * u.w;
    let a00 = k * (r11 - 1.0) * r11 + g * (r12 * r12 + r13 * r13);
    let a01 = g * (r22 * r12 + r23 * r13);
    let a02 = g * r33 * r13;
    // Last row of R̃⁻¹A: (γ r13, ∂h/∂r23, ∂h/∂r33) = (γ r13, grad[0][1], grad[1][1]).
    let g3 = vec3<f32>(g * r13, grad.y, grad.w);
    let p = cm_piola_from_a(qr, vec3<f32>(a00, a01, a02), vec3<f32>(a01, t00, t01), g3);
    return CodimPiola(p, 1u);
}

// constitutive/curve.rs `curve_return_map` with `curve_project_r` (spec §5.2, §5.5): step 1 the
// cross-section Drucker–Prager (tension reset, projection, clamp rebuild, inverted rebuild),
// step 2 fibre friction with the projected R_3. Event priority Inverted > Tension > Slide >
// Elastic; the tangent column of F̃ never changes.
fn cm_curve_return_map(m: PackedMaterial, f: mat3x3<f32>) -> CodimReturn {
    let qr = qr3(f);
    if (cm_qr_unusable(qr, m.v[2].x) || !cm_mat_is_finite(f)) {
        return CodimReturn(f, CM_EVENT_DEGENERATE);
    }
    let mu = m.v[0].y;
    let lambda = m.v[0].z;
    let g = m.v[0].w;
    let alpha = m.v[1].y;
    let beta = m.v[1].z;
    let coef = m.v[1].w; // (λ + μ)/μ, host-computed
    let r12 = qr.R[1][0];
    let r13 = qr.R[2][0];
    let r22 = qr.R[1][1];
    let r23 = qr.R[2][1];
    let r32 = qr.R[1][2];
    let r33 = qr.R[2][2];

    let r3_hat = vec4<f32>(r22, r23, r32, r33);
    let svd = cm_svd2_signed(r3_hat);
    let e_hat = vec2<f32>(cm_ln(max(svd.sigma1, CM_LOG_CLAMP)), cm_ln(max(svd.sigma2, CM_LOG_CLAMP)));
    let inverted = svd.sigma2 < 0.0;
    let clamped = svd.sigma1 < CM_LOG_CLAMP || svd.sigma2 < CM_LOG_CLAMP;
    let tr = e_hat.x + e_hat.y;

    // Step 1: cross-section.
    var event = CM_EVENT_ELASTIC;
    var eps = e_hat;
    if (tr >= 0.0) {
        eps = vec2<f32>(0.0);
        event = CM_EVENT_TENSION;
    } else if (mu > 0.0) {
        let e_norm = abs(e_hat.x - e_hat.y) / CM_SQRT2;
        let dgamma = e_norm + coef * tr * alpha;
        if (dgamma > 0.0 && e_norm > 0.0) {
            let shift = dgamma / e_norm;
            let half_tr = 0.5 * tr;
            eps = vec2<f32>(e_hat.x - shift * (e_hat.x - half_tr), e_hat.y - shift * (e_hat.y - half_tr));
            event = CM_EVENT_SLIDE;
        }
    }
    var r3 = r3_hat;
    if (!(event == CM_EVENT_ELASTIC && !clamped)) {
        if (event == CM_EVENT_ELASTIC) {
            event = CM_EVENT_SLIDE; // clamp-only change of a collapsed cross-section
        }
        r3 = cm_svd2_recompose(svd, cm_exp(eps.x), cm_exp(eps.y));
    }
    if (inverted) {
        event = CM_EVENT_INVERTED;
    }

    // Step 2: friction along the fibre, with the projected R_3.
    let t1 = r12;
    let t2 = r13;
    let big_t = 2.0 * (mu + lambda) * (eps.x + eps.y);
    let rt = vec2<f32>(r3.x * t1 + r3.y * t2, r3.z * t1 + r3.w * t2);
    let sh = g * cm_hypot(rt.x, rt.y);
    var n12 = t1;
    var n13 = t2;
    if (sh > 0.0 && sh + 0.5 * beta * big_t > 0.0) {
        let s = max(-beta * big_t / (2.0 * sh), 0.0);
        n12 = s * t1;
        n13 = s * t2;
        if (event == CM_EVENT_ELASTIC) {
            event = CM_EVENT_SLIDE;
        }
    }
    if (event == CM_EVENT_ELASTIC) {
        return CodimReturn(f, event);
    }
    // Projected R columns 1 and 2 (CPU rows [[r11, n12, n13], [·, r3_00, r3_01], [·, r3_10, r3_11]]).
    var out = f;
    out[1] = cm_mul_vec(qr.Q, vec3<f32>(n12, r3.x, r3.z));
    out[2] = cm_mul_vec(qr.Q, vec3<f32>(n13, r3.y, r3.w));
    return CodimReturn(out, event);
}
