// Hencky (logarithmic) strain elasticity: the twin of `mpm/constitutive/hencky.rs` (spec §4.6).

// constitutive/hencky.rs `hencky_strain`: ε_i = ln max(|σ_i|, 1e-4) and the signed clamped σ̄_i.
struct CmHencky {
    eps: vec3<f32>,
    sbar: vec3<f32>,
}

fn cm_hencky_strain(sigma: vec3<f32>) -> CmHencky {
    var eps: vec3<f32>;
    var sbar: vec3<f32>;
    for (var i = 0u; i < 3u; i++) {
        let s = max(abs(sigma[i]), CM_LOG_CLAMP);
        eps[i] = cm_ln(s);
        sbar[i] = select(s, -s, sigma[i] < 0.0);
    }
    return CmHencky(eps, sbar);
}

// constitutive/hencky.rs `hencky_piola`: P = U diag((2μ ε_i + λ tr ε)/σ̄_i) Vᵀ.
fn cm_hencky_piola(f: mat3x3<f32>, mu: f32, lambda: f32) -> mat3x3<f32> {
    let d = svd3(f);
    let h = cm_hencky_strain(d.sigma);
    let tr = h.eps.x + h.eps.y + h.eps.z;
    let s = (2.0 * mu * h.eps + lambda * tr) / h.sbar;
    return cm_recompose(d, s);
}
