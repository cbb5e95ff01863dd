//! Tests of `backend.rs` (kept out of the source file).

use super::*;

/// Every stage parses and validates with naga (no device needed).
#[test]
fn stage_shaders_validate() {
    let mut failures = Vec::new();
    for name in STAGES {
        let src = stage_wgsl(name);
        match naga::front::wgsl::parse_str(src) {
            Err(e) => failures.push(format!("{name}.wgsl: {}", e.emit_to_string(src))),
            Ok(module) => {
                if let Err(e) = naga::valid::Validator::new(
                    naga::valid::ValidationFlags::all(),
                    naga::valid::Capabilities::empty(),
                )
                .validate(&module)
                {
                    failures.push(format!("{name}.wgsl: {}", e.emit_to_string(src)));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A grid larger than one binding is refused with the reason (a device
/// limit), before anything is allocated.
#[test]
fn a_grid_beyond_the_device_limits_is_a_backend_error() {
    let Some(ctx) = crate::gpu::test_context() else {
        return;
    };
    let model = Model::<f32>::default();
    let state = State::<f32>::default();
    let mut gpu = GpuMpm::new(&ctx, &model, &state).unwrap();
    let err = gpu.grow(1 << 40).unwrap_err();
    assert!(matches!(err, Error::Backend(_)), "{err}");
    assert!(err.to_string().contains("sparse grid needs"), "{err}");
}

#[test]
fn bindings_are_parsed_with_their_access() {
    let b = declared_bindings(stage_wgsl("p2g"));
    assert!(b.contains(&(0, BindKind::Uniform)));
    assert!(b.contains(&(2, BindKind::ReadOnly)));
    assert!(b.contains(&(9, BindKind::ReadWrite)));
    assert!(b.len() >= 10);
}
