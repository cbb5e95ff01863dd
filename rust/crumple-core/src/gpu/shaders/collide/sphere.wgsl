// The twin of `collide/sphere.rs`.

// `Sphere`: |p| − r; normal p/|p|, +y at the centre (try_normalize(0)).
fn co_sphere(p: vec3<f32>, radius: f32) -> vec4<f32> {
    let len = length(p);
    var n = CO_FALLBACK_NORMAL;
    if (len > 0.0) {
        n = p / len;
    }
    return vec4<f32>(n, len - radius);
}
