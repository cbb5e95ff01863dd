// The twin of `collide/capsule.rs`.

// `Capsule` along local y: distance to the core segment minus the radius;
// normal from the nearest segment point (the caps are its ends), and on the
// segment itself ±y at or beyond its ends, +x beside it.
fn co_capsule(p: vec3<f32>, half_height: f32, radius: f32) -> vec4<f32> {
    let y = clamp(p.y, -half_height, half_height);
    let o = vec3<f32>(p.x, p.y - y, p.z);
    let len = length(o);
    var n: vec3<f32>;
    if (len > 0.0) {
        n = o / len;
    } else if (abs(p.y) >= half_height) {
        n = vec3<f32>(0.0, co_side(p.y), 0.0);
    } else {
        n = vec3<f32>(1.0, 0.0, 0.0);
    }
    return vec4<f32>(n, len - radius);
}
