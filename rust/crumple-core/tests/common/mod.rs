//! Helpers shared by the integration tests that need a GPU.

use std::io::Write;
use std::sync::{Arc, Once};

use crumple_core::gpu::GpuContext;

/// The shared context, printing its adapter once; `None` (with a SKIPPED
/// line) without one, unless `CRUMPLE_REQUIRE_GPU=1` makes that a failure.
pub fn gpu() -> Option<Arc<GpuContext>> {
    static PRINT_ADAPTER: Once = Once::new();
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
