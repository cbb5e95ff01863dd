// The twin of `collide/cylinder.rs`.

// `Cylinder` along local y (`Cylinder::parts`, `distance`, `normal`): dr past
// the side, dy past the cap. Outside both: from the rim (radial·dr + up·dy,
// normalised); past only the side: radial; past only a cap, or inside with
// the cap nearer or tied: ±y (up); else radial (+x on the axis).
fn co_cylinder(p: vec3<f32>, radius: f32, half_height: f32) -> vec4<f32> {
    let rho = length(p.xz);
    var radial = vec3<f32>(1.0, 0.0, 0.0);
    if (rho > 0.0) {
        radial = vec3<f32>(p.x / rho, 0.0, p.z / rho);
    }
    let dr = rho - radius;
    let dy = abs(p.y) - half_height;
    let phi = min(max(dr, dy), 0.0) + length(vec2<f32>(max(dr, 0.0), max(dy, 0.0)));
    let up = vec3<f32>(0.0, co_side(p.y), 0.0);
    var n: vec3<f32>;
    if (dr > 0.0 && dy > 0.0) {
        n = normalize(radial * dr + up * dy);
    } else if (dr > 0.0) {
        n = radial;
    } else if (dy > 0.0 || dy >= dr) {
        n = up;
    } else {
        n = radial;
    }
    return vec4<f32>(n, phi);
}
