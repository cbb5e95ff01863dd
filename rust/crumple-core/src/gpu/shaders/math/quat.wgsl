// Quaternions of `math/quat.rs`, stored as vec4(w, x, y, z) (the CPU's field order), and
// Müller et al.'s rotation extraction (`extract_rotation`), in the CPU's operation order.

// `Quat::to_mat3`: the CPU's rows, assembled as WGSL columns.
fn cm_quat_to_mat3(q: vec4<f32>) -> mat3x3<f32> {
    let w = q.x;
    let x = q.y;
    let y = q.z;
    let z = q.w;
    let r0 = vec3<f32>(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y));
    let r1 = vec3<f32>(2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x));
    let r2 = vec3<f32>(2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y));
    return transpose(mat3x3<f32>(r0, r1, r2));
}

// Hamilton product `a · b` (apply b first).
fn cm_quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.x * b.x - a.y * b.y - a.z * b.z - a.w * b.w,
        a.x * b.y + a.y * b.x + a.z * b.w - a.w * b.z,
        a.x * b.z - a.y * b.w + a.z * b.x + a.w * b.y,
        a.x * b.w + a.y * b.z - a.z * b.y + a.w * b.x,
    );
}

// `Quat::normalize`: the identity for a zero or non-finite length.
fn cm_quat_normalize(q: vec4<f32>) -> vec4<f32> {
    let n = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    if (n > 0.0 && cm_is_finite(n)) {
        return q * (1.0 / n);
    }
    return vec4<f32>(1.0, 0.0, 0.0, 0.0);
}

// `Quat::from_axis_angle` (unit axis).
fn cm_quat_from_axis_angle(axis: vec3<f32>, angle: f32) -> vec4<f32> {
    let h = angle * 0.5;
    let s = sin(h);
    return vec4<f32>(cos(h), axis.x * s, axis.y * s, axis.z * s);
}

// `extract_rotation(a, q, max_iter)`: warm-started from q, stops once |ω| < the tolerance (or ω is
// not finite, which keeps q).
fn cm_extract_rotation(a: mat3x3<f32>, q_in: vec4<f32>, max_iter: u32) -> vec4<f32> {
    var q = q_in;
    for (var it = 0u; it < max_iter; it++) {
        let r = cm_quat_to_mat3(q);
        let num = cross(r[0], a[0]) + cross(r[1], a[1]) + cross(r[2], a[2]);
        let den = abs(dot(r[0], a[0]) + dot(r[1], a[1]) + dot(r[2], a[2])) + CM_EXTRACT_GUARD;
        let omega = num * (1.0 / den);
        let angle = cm_norm(omega);
        if (!(angle >= CM_EXTRACT_ROTATION_TOL)) {
            break;
        }
        q = cm_quat_normalize(cm_quat_mul(cm_quat_from_axis_angle(omega * (1.0 / angle), angle), q));
    }
    return q;
}
