// Fixed corotated elasticity: the twin of `mpm/constitutive/corotated.rs` (spec §4.6).

// constitutive/corotated.rs `corotated_piola`: P = 2μ(F − R) + λ(J − 1) cof(F).
fn cm_corotated_piola(f: mat3x3<f32>, mu: f32, lambda: f32) -> mat3x3<f32> {
    let r = cm_polar_rotation(f);
    let j = cm_det(f);
    return (f - r) * (2.0 * mu) + cm_cofactor(f) * (lambda * (j - 1.0));
}
