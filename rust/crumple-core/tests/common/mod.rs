//! Helpers shared by the integration tests that need a GPU.

use std::sync::Arc;

use crumple_core::gpu::GpuContext;

/// The shared context (see `crumple_core::gpu::test_context`): `None` with a
/// SKIPPED line without an adapter, unless `CRUMPLE_REQUIRE_GPU=1`.
pub fn gpu() -> Option<Arc<GpuContext>> {
    crumple_core::gpu::test_context()
}
