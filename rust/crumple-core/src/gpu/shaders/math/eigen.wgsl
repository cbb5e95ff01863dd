// Jacobi rotation helpers of `math/eigen.rs`, used by the one-sided Jacobi SVD (`svd.wgsl`).

// math/eigen.rs `jacobi_rotation`: (c, s, t) of the rotation zeroing g in [[a, g], [g, b]].
fn cm_jacobi_rotation(a: f32, b: f32, g: f32) -> vec3<f32> {
    let zeta = (b - a) / (2.0 * g);
    var t: f32;
    if (abs(zeta) > CM_JACOBI_BIG) {
        t = 0.5 / zeta;
    } else {
        let sgn = select(-1.0, 1.0, zeta >= 0.0);
        t = sgn / (abs(zeta) + sqrt(1.0 + zeta * zeta));
    }
    let c = 1.0 / sqrt(1.0 + t * t);
    return vec3<f32>(c, c * t, t);
}

// math/eigen.rs `rotate_cols`: column p ← c·xp − s·xq, column q ← s·xp + c·xq.
fn cm_rotate_cols(m: ptr<function, mat3x3<f32>>, p: u32, q: u32, c: f32, s: f32) {
    let xp = (*m)[p];
    let xq = (*m)[q];
    (*m)[p] = c * xp - s * xq;
    (*m)[q] = s * xp + c * xq;
}

// math/eigen.rs `swap_cols_proper`: swap columns i, j and negate the new column j (det unchanged).
fn cm_swap_cols_proper(m: ptr<function, mat3x3<f32>>, i: u32, j: u32) {
    let xi = (*m)[i];
    (*m)[i] = (*m)[j];
    (*m)[j] = -xi;
}

// `sym_eigen3`: eigenvalues ascending and a proper orthonormal frame of the symmetric part of a, by
// cyclic Jacobi on the matrix scaled by its largest entry. Non-finite input gives NaN eigenvalues;
// the zero matrix gives (0, I).
struct CmSymEigen3 {
    values: vec3<f32>,
    vectors: mat3x3<f32>,
}

fn cm_sym_eigen3(a: mat3x3<f32>) -> CmSymEigen3 {
    let sym = (a + transpose(a)) * 0.5;
    var q = cm_identity();
    if (!cm_mat_is_finite(sym)) {
        let nan = cm_nan_like(0.0);
        return CmSymEigen3(vec3<f32>(nan, nan, nan), q);
    }
    let scale = cm_mat_max_abs(sym);
    if (scale <= 0.0) {
        return CmSymEigen3(vec3<f32>(0.0), q);
    }
    // Symmetric, so WGSL's column-major m[p][r] is the CPU's m[p][r] too.
    var m = mat3x3<f32>(sym[0] / scale, sym[1] / scale, sym[2] / scale);
    let floor = CM_EPSILON * CM_EPSILON;
    for (var sweep = 0u; sweep < CM_MAX_SWEEPS; sweep++) {
        var rotated = false;
        // The pairs (p, r) = (0, 1), (0, 2), (1, 2).
        for (var pair = 0u; pair < 3u; pair++) {
            let p = select(0u, 1u, pair == 2u);
            let r = select(2u, 1u, pair == 0u);
            let app = m[p][p];
            let arr = m[r][r];
            let apr = m[p][r];
            if (abs(apr) <= CM_EPSILON * sqrt(abs(app) * abs(arr)) || abs(apr) <= floor) {
                continue;
            }
            rotated = true;
            let cst = cm_jacobi_rotation(app, arr, apr);
            let c = cst.x;
            let s = cst.y;
            let t = cst.z;
            let k = 3u - p - r;
            let akp = m[k][p];
            let akr = m[k][r];
            let nkp = c * akp - s * akr;
            let nkr = s * akp + c * akr;
            m[k][p] = nkp;
            m[p][k] = nkp;
            m[k][r] = nkr;
            m[r][k] = nkr;
            m[p][p] = app - t * apr;
            m[r][r] = arr + t * apr;
            m[p][r] = 0.0;
            m[r][p] = 0.0;
            cm_rotate_cols(&q, p, r, c, s);
        }
        if (!rotated) {
            break;
        }
    }
    var d = vec3<f32>(m[0][0], m[1][1], m[2][2]);
    // Three-element sorting network, ascending: (0, 1), (1, 2), (0, 1).
    for (var step = 0u; step < 3u; step++) {
        let i = select(0u, 1u, step == 1u);
        let j = i + 1u;
        if (d[j] < d[i]) {
            let di = d[i];
            d[i] = d[j];
            d[j] = di;
            cm_swap_cols_proper(&q, i, j);
        }
    }
    return CmSymEigen3(d * scale, q);
}
