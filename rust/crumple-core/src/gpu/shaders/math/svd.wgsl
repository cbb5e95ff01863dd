// Signed SVD and its polar rotation: the twin of `math/svd.rs` (spec mpm_anisotropic §4.6, §5.4).

// `a = U diag(sigma) Vᵀ`, U, V ∈ SO(3), σ1 ≥ σ2 ≥ |σ3|, σ3 < 0 iff det a < 0.
struct Svd3 {
    U: mat3x3<f32>,
    sigma: vec3<f32>,
    V: mat3x3<f32>,
}

// One pair (p, q) of a one-sided Jacobi sweep of `svd3`; returns whether it rotated.
fn cm_svd_pair(b: ptr<function, mat3x3<f32>>, v: ptr<function, mat3x3<f32>>, p: u32, q: u32) -> bool {
    let bp = (*b)[p];
    let bq = (*b)[q];
    let alpha = cm_norm2(bp);
    let beta = cm_norm2(bq);
    let gamma = cm_dot(bp, bq);
    if (abs(gamma) <= CM_SVD_TOL * sqrt(alpha) * sqrt(beta) || min(alpha, beta) <= CM_SVD_FLOOR) {
        return false;
    }
    let r = cm_jacobi_rotation(alpha, beta, gamma);
    cm_rotate_cols(b, p, q, r.x, r.y);
    cm_rotate_cols(v, p, q, r.x, r.y);
    return true;
}

// One comparator of the descending three-element sorting network of `svd3`.
fn cm_svd_sort_step(
    len2: ptr<function, vec3<f32>>,
    b: ptr<function, mat3x3<f32>>,
    v: ptr<function, mat3x3<f32>>,
    i: u32,
    j: u32,
) {
    if ((*len2)[j] > (*len2)[i]) {
        let li = (*len2)[i];
        (*len2)[i] = (*len2)[j];
        (*len2)[j] = li;
        cm_swap_cols_proper(b, i, j);
        cm_swap_cols_proper(v, i, j);
    }
}

// math/svd.rs `svd3`: scale by the largest entry, cyclic one-sided Jacobi (pairs (0,1), (0,2),
// (1,2), at most CM_MAX_SWEEPS sweeps, orthogonal at |γ| ≤ 2ε|b_p||b_q|, columns below ε⁴ left
// alone), sort by column length with proper swaps, `B = U R` by `qr3`, σ = diag(R) with the
// rounding fix-ups σ2 ≤ σ1, |σ3| ≤ σ2. Zero input: U = V = I, σ = 0; non-finite: σ = NaN.
fn svd3(a: mat3x3<f32>) -> Svd3 {
    let id = cm_identity();
    if (!cm_mat_is_finite(a)) {
        return Svd3(id, vec3<f32>(cm_nan_like(a[0].x)), id);
    }
    let scale = cm_mat_max_abs(a);
    if (scale <= 0.0) {
        return Svd3(id, vec3<f32>(0.0), id);
    }
    var b = mat3x3<f32>(a[0] / scale, a[1] / scale, a[2] / scale);
    var v = id;
    for (var sweep = 0u; sweep < CM_MAX_SWEEPS; sweep++) {
        var rotated = false;
        if (cm_svd_pair(&b, &v, 0u, 1u)) {
            rotated = true;
        }
        if (cm_svd_pair(&b, &v, 0u, 2u)) {
            rotated = true;
        }
        if (cm_svd_pair(&b, &v, 1u, 2u)) {
            rotated = true;
        }
        if (!rotated) {
            break;
        }
    }

    var len2 = vec3<f32>(cm_norm2(b[0]), cm_norm2(b[1]), cm_norm2(b[2]));
    cm_svd_sort_step(&len2, &b, &v, 0u, 1u);
    cm_svd_sort_step(&len2, &b, &v, 1u, 2u);
    cm_svd_sort_step(&len2, &b, &v, 0u, 1u);

    let f = qr3(b);
    let s1 = f.R[0][0];
    let s2 = min(f.R[1][1], s1);
    let s3 = min(max(f.R[2][2], -s2), s2);
    return Svd3(f.Q, vec3<f32>(s1, s2, s3) * scale, v);
}

// `Svd3::recompose`: U diag(s) Vᵀ (column k of U scaled by s[k], then the CPU matrix product).
fn cm_recompose(d: Svd3, s: vec3<f32>) -> mat3x3<f32> {
    let us = mat3x3<f32>(d.U[0] * s.x, d.U[1] * s.y, d.U[2] * s.z);
    return cm_mul(us, transpose(d.V));
}

// math/svd.rs `polar3(a).0` = U Vᵀ.
fn cm_polar3_rotation(a: mat3x3<f32>) -> mat3x3<f32> {
    let d = svd3(a);
    return cm_mul(d.U, transpose(d.V));
}
