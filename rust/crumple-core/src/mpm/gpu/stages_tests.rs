//! Tests of `stages.rs`: every stage is valid WGSL, its bindings are read
//! from the source, and the generated prelude is the only place constants
//! are declared.

use super::*;
use crate::gpu::wgsl::{BindKind, reflect_bindings};

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

/// The layout comes from naga's reflection of the source: uniform,
/// read-only and read-write storage are told apart, each with its name.
#[test]
fn bindings_are_reflected_with_their_access_and_names() {
    let b = reflect_bindings(stage_wgsl("p2g")).unwrap();
    let find = |name: &str| {
        b.iter()
            .find(|x| x.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(find("params").kind, BindKind::Uniform);
    assert_eq!(find("order").kind, BindKind::ReadOnly);
    assert_eq!(find("nodes").kind, BindKind::ReadWrite);
    assert!(b.len() >= 10);
    // Binding numbers are unique within a stage and every stage uses group 0.
    for name in STAGES {
        let b = reflect_bindings(stage_wgsl(name)).unwrap();
        let mut nums: Vec<u32> = b.iter().map(|x| x.binding).collect();
        nums.dedup();
        assert_eq!(nums.len(), b.len(), "{name}: duplicate binding numbers");
    }
}

/// Stage files and the common block name the prelude's constants but never
/// declare them, and the prelude declares each name once.
#[test]
fn constants_come_only_from_the_prelude() {
    let p = mpm_prelude();
    let mut names = p.names().to_vec();
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "a constant generated twice");
    for stage in STAGES {
        let src = stage_wgsl(stage);
        let body = &src[p.as_str().len()..];
        for name in p.names() {
            assert!(
                !body.contains(&format!("const {name}")),
                "{stage} declares {name}, which the prelude generates"
            );
        }
    }
    // Every stage compiles with the prelude in front (checked above), and a
    // generated value is what the stage reads: the stats slots the host
    // decodes are the ones the shaders write.
    assert!(
        p.as_str()
            .contains(&format!("const ST_OVERFLOW: u32 = {}u;", stat::OVERFLOW))
    );
    assert!(
        p.as_str()
            .contains(&format!("const ST_EVENTS: u32 = {}u;", stat::EVENTS))
    );
}
