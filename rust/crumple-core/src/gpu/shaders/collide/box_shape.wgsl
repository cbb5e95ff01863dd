// The twin of `collide/box_shape.rs`.

// `collide::box_shape::side`: −1 for negative values, +1 otherwise (zero and
// −0 count as positive, so degenerate points pick the + side as on the CPU).
fn co_side(x: f32) -> f32 {
    return select(1.0, -1.0, x < 0.0);
}

// `BoxShape`: exact box SDF. Outside (max q > 0) the normal points from the
// nearest surface point (face, edge or corner): normalize(max(q, 0) ∘ sign p).
// Inside it is the normal of the nearest face; ties go to the first of x, y,
// z, and a zero coordinate to the + side, exactly as the CPU.
fn co_box(p: vec3<f32>, h: vec3<f32>) -> vec4<f32> {
    let q = abs(p) - h;
    let qmax = max(max(q.x, q.y), q.z);
    let m = max(q, vec3<f32>(0.0));
    let phi = length(m) + min(qmax, 0.0);
    let s = vec3<f32>(co_side(p.x), co_side(p.y), co_side(p.z));
    var n: vec3<f32>;
    if (qmax > 0.0) {
        // m ≠ 0 here, so normalize_or_zero is normalize.
        n = normalize(m * s);
    } else if (q.x >= q.y && q.x >= q.z) {
        n = vec3<f32>(s.x, 0.0, 0.0);
    } else if (q.y >= q.z) {
        n = vec3<f32>(0.0, s.y, 0.0);
    } else {
        n = vec3<f32>(0.0, 0.0, s.z);
    }
    return vec4<f32>(n, phi);
}
