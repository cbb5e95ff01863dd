// QR with a proper-rotation Q: the twin of `math/qr.rs` `qr3` (spec mpm_anisotropic §4.1, §9 A2).

// `a = Q R`: Q ∈ SO(3) (columns q1, q2, q3 = q1 × q2), R upper triangular, r11, r22 ≥ 0, r33 signed.
struct Qr3 {
    Q: mat3x3<f32>,
    R: mat3x3<f32>,
}

// `unit_and_norm`: `ok = false` is the CPU's `None` (zero or non-finite vector).
struct CmUnitNorm {
    u: vec3<f32>,
    n: f32,
    ok: bool,
}

// math/qr.rs `unit_and_norm`: v / |v| and |v|, dividing by the largest component first.
fn cm_unit_and_norm(v: vec3<f32>) -> CmUnitNorm {
    if (!cm_vec_is_finite(v)) {
        return CmUnitNorm(vec3<f32>(0.0), 0.0, false);
    }
    let m = cm_max_abs3(v);
    if (m <= 0.0) {
        return CmUnitNorm(vec3<f32>(0.0), 0.0, false);
    }
    let u = vec3<f32>(v.x / m, v.y / m, v.z / m);
    let n = cm_norm(u);
    return CmUnitNorm(u * (1.0 / n), n * m, true);
}

// math/qr.rs `robust_norm`.
fn cm_robust_norm(v: vec3<f32>) -> f32 {
    let m = cm_max_abs3(v);
    if (m > 0.0 && cm_is_finite(m)) {
        return cm_norm(vec3<f32>(v.x / m, v.y / m, v.z / m)) * m;
    }
    return m;
}

// math/qr.rs `orthogonal_unit`: the axis least aligned with the unit vector u (lowest index on
// ties), minus its u component, normalised.
fn cm_orthogonal_unit(u: vec3<f32>) -> vec3<f32> {
    let a = abs(u);
    var k = 2u;
    if (a.x <= a.y && a.x <= a.z) {
        k = 0u;
    } else if (a.y <= a.z) {
        k = 1u;
    }
    var e = vec3<f32>(0.0);
    e[k] = 1.0;
    e = e - u * u[k];
    return e * (1.0 / cm_norm(e));
}

// math/qr.rs `qr3`: Gram–Schmidt on columns 1–2 with Kahan–Parlett re-orthogonalisation (at most
// CM_REORTH_PASSES extra passes), q3 = q1 × q2 so r33 = q3·c3 carries the sign of det a. Degenerate
// columns complete the basis instead of producing NaN (same fallbacks as the CPU).
fn qr3(a: mat3x3<f32>) -> Qr3 {
    let c1 = a[0];
    let c2 = a[1];
    let c3 = a[2];

    var q1: vec3<f32>;
    var r11: f32;
    let un1 = cm_unit_and_norm(c1);
    if (un1.ok) {
        q1 = un1.u;
        r11 = un1.n;
    } else {
        let un2 = cm_unit_and_norm(c2);
        if (un2.ok) {
            q1 = cm_orthogonal_unit(un2.u);
        } else {
            q1 = vec3<f32>(1.0, 0.0, 0.0);
        }
        r11 = cm_norm(c1);
    }

    var r12 = cm_dot(q1, c2);
    var w = c2 - q1 * r12;
    var prev = cm_robust_norm(c2);
    var clean = false;
    for (var it = 0u; it < CM_REORTH_PASSES; it++) {
        let n = cm_robust_norm(w);
        if (n + n >= prev) {
            clean = true;
            break;
        }
        let corr = cm_dot(q1, w);
        r12 += corr;
        w -= q1 * corr;
        prev = n;
    }

    var q2: vec3<f32>;
    var r22: f32;
    let un = cm_unit_and_norm(w);
    if (un.ok && clean) {
        q2 = un.u;
        r22 = un.n;
    } else if (cm_vec_is_finite(w)) {
        // w is zero or rounding noise of c2 along q1: any unit vector orthogonal to q1.
        q2 = cm_orthogonal_unit(q1);
        r22 = 0.0;
    } else {
        q2 = cm_orthogonal_unit(q1);
        r22 = cm_norm(w);
    }

    let q3 = cm_cross(q1, q2);
    // CPU R rows [[r11, r12, q1·c3], [0, r22, q2·c3], [0, 0, q3·c3]], stored here by columns.
    return Qr3(
        mat3x3<f32>(q1, q2, q3),
        mat3x3<f32>(
            vec3<f32>(r11, 0.0, 0.0),
            vec3<f32>(r12, r22, 0.0),
            vec3<f32>(cm_dot(q1, c3), cm_dot(q2, c3), cm_dot(q3, c3)),
        ),
    );
}
