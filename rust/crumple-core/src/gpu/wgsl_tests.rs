//! Tests of `wgsl.rs`: exact literals, and reflection of bindings.

use super::*;

/// Every f32 constant reads back as the same bits: the literal is the exact
/// decimal value, so WGSL's conversion of it involves no rounding.
#[test]
fn float_literals_are_exact() {
    for v in [
        f32::EPSILON,
        2.0 * f32::EPSILON,
        f32::EPSILON.powi(4),
        1.0 / f32::EPSILON,
        1e-3f64 as f32,
        (-1.0f64 / 3.0) as f32,
        std::f32::consts::PI,
        f32::MIN_POSITIVE,
        f32::MAX,
        -0.0,
        0.1,
    ] {
        let s = f32_literal(v);
        assert!(s.contains('.') || s.contains('e'), "{s} would read as an integer");
        let back: f64 = s.parse().unwrap();
        assert_eq!(back, f64::from(v), "{s}");
        assert_eq!((back as f32).to_bits(), v.to_bits(), "{s}");
    }
}

#[test]
#[should_panic(expected = "finite")]
fn non_finite_constants_are_refused() {
    let _ = f32_literal(f32::NAN);
}

/// The shared prelude compiles with both libraries and declares each name once.
#[test]
fn shared_prelude_and_libraries_validate() {
    let p = shared_prelude();
    let mut names = p.names().to_vec();
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(n, names.len());
    let mut parts: Vec<&str> = MATH_WGSL.to_vec();
    parts.extend_from_slice(&COLLIDE_WGSL);
    parts.push("@group(0) @binding(0) var<storage, read> collider_sdf: array<f32>;");
    let src = concat(&p, &parts);
    let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{}", e.emit_to_string(&src)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&src)));
}

#[test]
fn reflection_reads_space_access_and_group() {
    let src = "
        struct P { a: f32 }
        @group(0) @binding(3) var<storage, read_write> out: array<f32>;
        @group(0) @binding(0) var<uniform> params: P;
        @group(0) @binding(1) var<storage, read> input: array<f32>;
        @compute @workgroup_size(1) fn main() { out[0] = input[0] + params.a; }
    ";
    let b = reflect_bindings(src).unwrap();
    let got: Vec<(u32, &str, BindKind)> = b.iter().map(|x| (x.binding, x.name.as_str(), x.kind)).collect();
    assert_eq!(
        got,
        [
            (0, "params", BindKind::Uniform),
            (1, "input", BindKind::ReadOnly),
            (3, "out", BindKind::ReadWrite)
        ]
    );
    let e = reflect_bindings("@group(1) @binding(0) var<storage, read> x: array<f32>;").unwrap_err();
    assert!(e.contains("group 1"), "{e}");
    assert!(reflect_bindings("fn (").is_err());
}
