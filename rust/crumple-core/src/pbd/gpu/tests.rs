//! Tests of the GPU shape-matching stages that need no device: every stage
//! parses and validates with naga, and the parameter block's Rust mirror
//! matches the shader's layout member by member.

use super::*;

#[test]
fn every_stage_validates() {
    for (name, _) in ENTRIES {
        let src = stage_wgsl(name);
        assert!(!src.is_empty(), "{name}");
        let module =
            naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
}

#[test]
fn params_mirror_matches_the_wgsl_layout() {
    use core::mem::{offset_of, size_of};
    let (size, members) = crate::gpu::wgsl::struct_layout(stage_wgsl("integrate"), "PbdParams");
    assert_eq!(size as usize, size_of::<GpuParams>());
    macro_rules! offsets {
        ($($f:ident),* $(,)?) => { vec![$((stringify!($f), offset_of!(GpuParams, $f))),*] };
    }
    let rust = offsets!(
        gravity,
        h,
        keep,
        vmax,
        d_pp,
        d_pw,
        margin,
        mu_s_pp,
        mu_k_pp,
        static_ratio,
        sor,
        n,
        n_clusters,
        n_colliders,
        capacity,
        rotation_iterations,
        end_rotation_iterations,
        fit,
        dt,
        capped,
        cell,
        pad,
    );
    assert_eq!(members.len(), rust.len());
    for ((wn, wo), (rn, ro)) in members.iter().zip(&rust) {
        assert_eq!((wn.as_str(), *wo as usize), (*rn, *ro));
    }
}

/// The stage files name the prelude's constants but never declare them.
#[test]
fn constants_come_only_from_the_prelude() {
    let p = prelude();
    for (name, _) in ENTRIES {
        let body = &stage_wgsl(name)[p.as_str().len()..];
        for c in p.names() {
            assert!(!body.contains(&format!("const {c}")), "{name} declares {c}");
        }
    }
}
