//! GPU plumbing: the wgpu context, persistent buffers and the data-parallel
//! primitives the solvers build on (prefix sum, stable radix sort).
//!
//! Every GPU stage is one WGSL file under `shaders/` with a CPU (rayon) twin
//! of the same name computing the same result; tests compare the two
//! exactly. Shaders are embedded with `include_str!` and validated by naga in
//! `cargo test` (`tests/gpu_primitives.rs`).
//!
//! - [`GpuContext`]: adapter choice (hardware first, else a software adapter
//!   such as Mesa lavapipe), device, queue, pipeline cache, errors as
//!   [`crate::Error::Backend`]. [`GpuContext::shared`] is the process-wide
//!   instance; [`probe`] names the adapter without creating a device.
//! - [`GpuBuffer`]: a typed device array; read back only on request.
//! - [`scan_exclusive_u32`] / [`GpuScan`]: exclusive prefix sum of u32.
//! - [`radix_sort_pairs_u32`] / [`GpuRadixSort`]: stable sort of
//!   (u32 key, u32 value) pairs.
//! - [`wgsl`]: the WGSL twins of `math/` and `collide/` (one file per CPU
//!   file, under `shaders/math/` and `shaders/collide/`), the prelude of
//!   constants generated from the Rust side, and binding reflection.
//! - [`colliders`]: the GPU record of a collider.

mod buffer;
pub mod colliders;
mod context;
pub(crate) mod dispatch;
pub mod radix_sort;
pub mod scan;
pub(crate) mod stage;
pub(crate) mod uniforms;
pub mod wgsl;

pub use buffer::GpuBuffer;
pub(crate) use buffer::read_mapped_u32s;
pub use context::{AdapterSummary, GpuContext, probe};
pub use radix_sort::{GpuRadixSort, radix_sort_pairs_u32};
pub use scan::{GpuScan, scan_exclusive_u32};

/// Test support: runs `pipeline` once over `threads` invocations
/// (workgroups of 64) with `bindings` bound in order to group 0, bindings
/// 0, 1, 2, …, and waits for it. Panics on a GPU error (tests only).
#[cfg(test)]
pub(crate) fn run_test_entry(
    ctx: &GpuContext,
    label: &str,
    pipeline: &wgpu::ComputePipeline,
    bindings: Vec<wgpu::BindingResource<'_>>,
    threads: usize,
) {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = bindings
        .into_iter()
        .enumerate()
        .map(|(i, resource)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource,
        })
        .collect();
    let bind_group = ctx
        .capture(label, || {
            ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            })
        })
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let mut encoder = ctx.encoder(label);
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups((threads as u32).div_ceil(64), 1, 1);
    }
    ctx.submit_and_wait(label, encoder)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
}

/// The shared context for GPU tests (the crate's own and the integration
/// tests'), printing its adapter once, or `None` (with a SKIPPED line) when
/// there is no adapter. With `CRUMPLE_REQUIRE_GPU=1` a missing adapter fails
/// the test instead, so CI cannot pass without running them. Not API.
#[doc(hidden)]
pub fn test_context() -> Option<std::sync::Arc<GpuContext>> {
    use std::io::Write;
    static PRINT_ADAPTER: std::sync::Once = std::sync::Once::new();
    match GpuContext::shared() {
        Ok(ctx) => {
            PRINT_ADAPTER.call_once(|| {
                let a = ctx.adapter_info();
                // Straight to the stderr handle: libtest captures `eprintln!`
                // of passing tests, and this line must show in every run.
                let _ = writeln!(
                    std::io::stderr(),
                    "GPU adapter: {} ({}, {}, driver {} {})",
                    a.name,
                    a.device_type,
                    a.backend,
                    a.driver,
                    a.driver_info
                );
            });
            Some(ctx)
        }
        Err(e) => {
            assert!(
                std::env::var("CRUMPLE_REQUIRE_GPU").as_deref() != Ok("1"),
                "CRUMPLE_REQUIRE_GPU=1 but no GPU adapter: {e}"
            );
            let _ = writeln!(std::io::stderr(), "SKIPPED: no GPU adapter: {e}");
            None
        }
    }
}
