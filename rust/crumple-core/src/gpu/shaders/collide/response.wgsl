// The one boundary response of every solver: the twin of `collide/response.rs` (spec
// mpm_anisotropic §3.6).

// `collide::boundary_response`, line for line: sticky takes the collider
// velocity; slip removes the approaching normal part of v − v_co; separate
// applies Coulomb friction μ while approaching (stuck inside the cone).
fn co_boundary_response(v: vec3<f32>, v_co: vec3<f32>, n: vec3<f32>, mode: u32, friction: f32) -> vec3<f32> {
    let v_rel = v - v_co;
    let v_n = dot(v_rel, n);
    if (mode == CO_MODE_STICKY) {
        return v_co;
    }
    if (!(v_n < 0.0)) {
        // Separating (or NaN): the CPU's `if v_n < 0 … else v`.
        return v;
    }
    if (mode == CO_MODE_SLIP) {
        return v_rel - n * v_n + v_co;
    }
    let mu = max(friction, 0.0);
    let v_t = v_rel - n * v_n;
    let t = length(v_t);
    if (t <= -mu * v_n) {
        return v_co;
    }
    return v_t + v_t * (mu * v_n / t) + v_co;
}
