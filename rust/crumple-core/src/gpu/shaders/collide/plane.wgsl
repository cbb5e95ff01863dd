// The twin of `collide/plane.rs`.

// `Plane::distance` / `Plane::normal`: (p − point)·n, normal n everywhere.
fn co_plane(p: vec3<f32>, point: vec3<f32>, n: vec3<f32>) -> vec4<f32> {
    return vec4<f32>(n, dot(p - point, n));
}
