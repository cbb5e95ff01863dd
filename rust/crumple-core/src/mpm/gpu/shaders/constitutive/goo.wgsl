// Von Mises viscoplastic goo: the twin of `mpm/constitutive/goo.rs` (spec §4.6).

// constitutive/goo.rs `goo_return_map`: relax the deviatoric Hencky strain beyond the von Mises
// yield strain by exp(−μ dt/η) (η = 0: onto the yield surface); at or below yield, or μ ≤ 0, F is
// returned bit for bit.
fn cm_goo_return_map(m: PackedMaterial, f: mat3x3<f32>, dt: f32) -> mat3x3<f32> {
    let mu = m.v[0].y;
    if (!(mu > 0.0)) {
        return f;
    }
    let d = svd3(f);
    let eps = cm_hencky_strain(d.sigma).eps;
    let third = (eps.x + eps.y + eps.z) / 3.0;
    let e = eps - vec3<f32>(third);
    let e_norm = cm_norm(e);
    let e_yield = m.v[1].z; // sqrt(2/3) τ_Y/(2μ), host-computed
    if (!(e_norm - e_yield > 0.0)) {
        return f;
    }
    let viscosity = m.v[1].y;
    var decay = 0.0;
    if (viscosity > 0.0) {
        decay = cm_exp(-mu * dt / viscosity);
    }
    let goal = e_yield + (e_norm - e_yield) * decay;
    let scale = goal / e_norm;
    let h = vec3<f32>(third) + e * scale;
    return cm_recompose(d, vec3<f32>(cm_exp(h.x), cm_exp(h.y), cm_exp(h.z)));
}
