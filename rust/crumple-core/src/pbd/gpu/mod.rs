//! The GPU (wgpu) twin of the shape-matching solver (spec shape_matching
//! §14): the PBD loop of spec §1.3 and the end-of-step plasticity and
//! orientations run as compute shaders on state that stays on the device
//! between steps; the host reads it back only when asked (positions,
//! surfaces, checkpoints), and then skins the surfaces itself (a pure
//! function of the particles, spec §8.2).
//!
//! One WGSL file per CPU file of the same name: `integrate` (the prediction
//! and velocity closures of `solver.rs`), `contacts`, `shape_match`,
//! `plasticity` (with the orientation average of `skin.rs`). Every
//! accumulation is a gather (WGSL has no float atomics, spec §14.2), so two
//! runs are bitwise identical; against the CPU the result agrees within the
//! f32 tolerance of the parity tests (the CPU keeps cluster centres in f64).
//!
//! Re-sampling (spec §5–§6) is v1 of spec §14.1: with it on, the loop runs on
//! the device, the state comes back once per step, and plasticity, skinning
//! and re-sampling run on the host ([`crate::pbd::solver::Solver::finish_on_host`]),
//! which uploads the changed particles and clusters before the next step.

mod backend;
mod device;
mod params;

pub use backend::GpuSolver;
pub use params::GpuParams;

use std::sync::{Arc, OnceLock};

use crate::error::Result;
use crate::gpu::GpuContext;
use crate::gpu::stage::Stages;
use crate::gpu::wgsl::{COLLIDE_WGSL, MATH_WGSL, Prelude, concat, shared_prelude};

use super::params::RotationFit;
use super::plasticity::{MIN_STRETCH, STEP_CLAMP, THIN_EXTENT};
use super::shape_match::{DEGENERATE_RATIO, MIN_MEMBERS};

/// vec4 per cluster in the `clusters` record (see `pbd_common.wgsl`).
pub(crate) const CL_STRIDE: usize = 8;
/// vec4 per cluster in the `fit` record.
pub(crate) const FIT_STRIDE: usize = 4;
/// Bits of the neighbour grid's hashed cell keys (a multiple of 8, so the
/// radix sort ends in place).
pub(crate) const KEY_BITS: u32 = 24;

/// Slots of the per-step stats block (`array<atomic<u32>>`).
pub(crate) mod stat {
    /// Lowest particle with a non-finite x or v (`u32::MAX`: none).
    pub const BAD_FINITE: usize = 0;
    /// Particle–particle candidates, counted once per particle.
    pub const PARTICLE_CONTACTS: usize = 1;
    /// Particle–collider candidates.
    pub const WORLD_CONTACTS: usize = 2;
    /// Clusters whose F_P changed.
    pub const FLOWED: usize = 3;
    /// Updates the cap rejected.
    pub const CAPPED: usize = 4;
    /// Degenerate clusters.
    pub const DEGENERATE: usize = 5;
    /// Words in the block.
    pub const WORDS: usize = 8;
}

/// Every constant the shaders share with the CPU, from the Rust definitions.
fn prelude() -> Prelude {
    let mut p = shared_prelude();
    p.u32("PBD_CL_STRIDE", CL_STRIDE as u32)
        .u32("PBD_FIT_STRIDE", FIT_STRIDE as u32)
        .u32("PBD_KEY_MASK", (1u32 << KEY_BITS) - 1)
        .u32("PBD_FIT_RIGID", params::fit_code(RotationFit::Rigid))
        .u32("PBD_MIN_MEMBERS", MIN_MEMBERS as u32)
        .f32("PBD_DEGENERATE_RATIO", DEGENERATE_RATIO)
        .f32("PBD_MIN_STRETCH", MIN_STRETCH)
        .f32("PBD_THIN_EXTENT", THIN_EXTENT)
        .f32("PBD_STEP_CLAMP_LO", STEP_CLAMP.0)
        .f32("PBD_STEP_CLAMP_HI", STEP_CLAMP.1)
        .f32("PBD_MIN_POSITIVE", f32::MIN_POSITIVE)
        .u32("ST_BAD_FINITE", stat::BAD_FINITE as u32)
        .u32("ST_PARTICLE_CONTACTS", stat::PARTICLE_CONTACTS as u32)
        .u32("ST_WORLD_CONTACTS", stat::WORLD_CONTACTS as u32)
        .u32("ST_FLOWED", stat::FLOWED as u32)
        .u32("ST_CAPPED", stat::CAPPED as u32)
        .u32("ST_DEGENERATE", stat::DEGENERATE as u32);
    p
}

const COMMON: &str = include_str!("shaders/pbd_common.wgsl");

/// The stage files and their entry points, in step order.
const ENTRIES: [(&str, &[&str]); 4] = [
    ("integrate", &["reset_counts", "predict", "finish"]),
    (
        "contacts",
        &[
            "cell_keys",
            "find_neighbors",
            "world_candidates",
            "project_particles",
            "project_world",
        ],
    ),
    ("shape_match", &["fit_clusters", "apply_goals"]),
    ("plasticity", &["end_of_step", "orientations"]),
];

/// The full source of stage `name` (prelude, common block, the math
/// library, the collide library for `contacts`, the stage file); empty for an unknown name.
pub fn stage_wgsl(name: &str) -> &'static str {
    static SOURCES: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    let all = SOURCES.get_or_init(|| {
        let prelude = prelude();
        // Only `contacts` reads colliders (and declares `collider_sdf`, which the library needs).
        let stage = |name: &'static str, file: &str| {
            let mut parts = vec![COMMON];
            parts.extend_from_slice(&MATH_WGSL);
            if name == "contacts" {
                parts.extend_from_slice(&COLLIDE_WGSL);
            }
            parts.push(file);
            (name, concat(&prelude, &parts))
        };
        vec![
            stage("integrate", include_str!("shaders/integrate.wgsl")),
            stage("contacts", include_str!("shaders/contacts.wgsl")),
            stage("shape_match", include_str!("shaders/shape_match.wgsl")),
            stage("plasticity", include_str!("shaders/plasticity.wgsl")),
        ]
    });
    all.iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, s)| s.as_str())
}

/// The shape-matching stages, compiled once per context.
fn stages(ctx: &Arc<GpuContext>) -> Result<Arc<Stages>> {
    Stages::get(ctx, "shape-matching", &ENTRIES, stage_wgsl)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
