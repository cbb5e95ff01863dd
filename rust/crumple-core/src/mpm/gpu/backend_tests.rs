//! Tests of `backend.rs` (kept out of the source file).

use super::*;
use crate::mpm::gpu::stages::stage_wgsl;

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
    let err = gpu.dev.grow(1 << 40).unwrap_err();
    assert!(matches!(err, Error::Backend(_)), "{err}");
    assert!(err.to_string().contains("sparse grid needs"), "{err}");
}

fn wgsl_layout(stage: &str, name: &str) -> (u32, Vec<(String, u32)>) {
    crate::gpu::wgsl::struct_layout(stage_wgsl(stage), name)
}

/// Rust ↔ WGSL layouts: `StepParams` field by field, and the packed records
/// the buffers hold (`Pin`, `Element`, `PackedCollider`, `PackedMaterial`)
/// by size, so a field added on one side only fails here instead of
/// shifting every value after it on the device.
#[test]
fn rust_mirrors_match_the_wgsl_layouts() {
    use core::mem::{offset_of, size_of};
    let (size, members) = wgsl_layout("advect", "StepParams");
    assert_eq!(size as usize, size_of::<StepParams>(), "StepParams size");
    macro_rules! offsets {
        ($($f:ident),* $(,)?) => { vec![$((stringify!($f), offset_of!(StepParams, $f))),*] };
    }
    let rust = offsets!(
        lower,
        dx,
        inv_dx,
        dt,
        d_inv,
        kernel_k,
        gravity,
        mls,
        hi,
        lo,
        wall_hi,
        pad,
        hash_mask,
        lo_clamp,
        hash_pad1,
        n_particles,
        vol_start,
        vol_end,
        vert_start,
        vert_end,
        elem_start,
        elem_end,
        flags,
        n_colliders,
        n_pins,
        block_capacity,
        clamp,
        kernel_shift,
    );
    assert_eq!(
        members.len(),
        rust.len(),
        "StepParams has {} members in WGSL",
        members.len()
    );
    for ((wname, woff), (rname, roff)) in members.iter().zip(&rust) {
        assert_eq!(
            (wname.as_str(), *woff as usize),
            (*rname, *roff),
            "StepParams member"
        );
    }
    assert_eq!(
        wgsl_layout("advect", "Pin").0 as usize,
        size_of::<[u32; 8]>(),
        "Pin record"
    );
    assert_eq!(
        wgsl_layout("stress", "Element").0 as usize,
        size_of::<[u32; 8]>(),
        "Element record"
    );
    assert_eq!(
        wgsl_layout("grid_update", "PackedCollider").0 as usize,
        size_of::<[f32; 32]>(),
        "collider record"
    );
    assert_eq!(
        wgsl_layout("stress", "PackedMaterial").0 as usize,
        size_of::<[f32; 16]>(),
        "material record"
    );
}
