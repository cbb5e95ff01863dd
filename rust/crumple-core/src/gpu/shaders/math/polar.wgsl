// Polar rotation by scaled Newton iteration: the twin of `math/polar.rs` `polar_rotation`.

// math/polar.rs `polar_rotation`: scaled Newton X ← ½(γX + cof(X)/(γ det X)), γ = |det X|^(-1/3),
// stopping at a change ≤ 16ε; inverted, nearly singular (det ≤ 1e-3·max|a|³), non-finite or
// non-converging input falls back to the SVD rotation.
fn cm_polar_rotation(a: mat3x3<f32>) -> mat3x3<f32> {
    let scale = cm_mat_max_abs(a);
    if (!cm_is_finite(scale) || scale <= 0.0) {
        return cm_polar3_rotation(a);
    }
    let det = cm_det(a);
    if (!cm_is_finite(det) || det <= CM_POLAR_DET_FLOOR * scale * scale * scale) {
        return cm_polar3_rotation(a);
    }
    var x = a;
    var d = det;
    for (var it = 0u; it < CM_POLAR_MAX_ITERS; it++) {
        let gamma = cm_exp(cm_ln(abs(d)) * CM_MINUS_THIRD);
        let next = (x * gamma + cm_cofactor(x) * (1.0 / (gamma * d))) * 0.5;
        let change = cm_mat_max_abs(next - x);
        x = next;
        if (change <= CM_POLAR_TOL) {
            return x;
        }
        d = cm_det(x);
        if (!cm_is_finite(d) || d <= 0.0) {
            break;
        }
    }
    return cm_polar3_rotation(a);
}
