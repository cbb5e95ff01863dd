// Drucker–Prager sand with hardening: the twin of `mpm/constitutive/sand.rs` (spec §5.4).

// constitutive/sand.rs `SandParams::alpha`: φ_q = h0 + (h1 q − h3) exp(−h2 q) degrees.
fn cm_sand_alpha(m: PackedMaterial, q: f32) -> f32 {
    let h = m.v[1];
    let phi = h.x + (h.y * q - h.w) * cm_exp(-h.z * q);
    return cm_drucker_prager_alpha(phi * CM_DEG_TO_RAD);
}

// constitutive/sand.rs `sand_return_map` (Klár et al. 2016, spec §5.4): case II expansion
// (tr ε ≥ 0) to the cone tip, case I elastic (δγ ≤ 0; F returned bit for bit unless a σ_i is
// below the 1e-4 clamp), case III projection onto the cone with q += δγ.
fn cm_sand_return_map(m: PackedMaterial, f: mat3x3<f32>, q: f32) -> VolumePlastic {
    let d = svd3(f);
    let eps = cm_hencky_strain(d.sigma).eps;
    let tr = eps.x + eps.y + eps.z;
    if (tr >= 0.0) {
        return VolumePlastic(cm_recompose(d, vec3<f32>(1.0)), q + cm_norm(eps));
    }
    let third = tr / 3.0;
    let e = eps - vec3<f32>(third);
    let e_norm = cm_norm(e);
    let alpha = cm_sand_alpha(m, q);
    let coef = m.v[2].x; // (3λ + 2μ)/(2μ), host-computed
    let dgamma = e_norm + coef * tr * alpha;
    // The CPU's `!is_positive(δγ)` also routes a NaN δγ (μ = 0) here: that is `no_flow`.
    if (m.v[2].y != 0.0 || !(dgamma > 0.0) || e_norm <= 0.0) {
        if (min(min(d.sigma.x, d.sigma.y), d.sigma.z) >= CM_LOG_CLAMP) {
            return VolumePlastic(f, q);
        }
        return VolumePlastic(cm_recompose(d, vec3<f32>(cm_exp(eps.x), cm_exp(eps.y), cm_exp(eps.z))), q);
    }
    let h = eps - e * (dgamma / e_norm);
    return VolumePlastic(cm_recompose(d, vec3<f32>(cm_exp(h.x), cm_exp(h.y), cm_exp(h.z))), q + dgamma);
}
