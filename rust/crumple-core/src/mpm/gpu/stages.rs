//! The MPM stage shaders: their sources (generated prelude + libraries +
//! stage file), their constants, and their compiled pipelines with layouts
//! read from the shaders themselves.
//!
//! One WGSL file per stage, named like its CPU twin in
//! [`crate::mpm::solver`] (`bin`, `grid_build` = `SparseGrid::rebuild`,
//! `stress`, `p2g`, `grid_update`, `g2p`, `advect`, `plasticity`). The
//! libraries a stage needs are the twins of CPU folders: `math/` and
//! `collide/` ([`crate::gpu::wgsl`]) and `mpm/constitutive/` plus
//! `mpm/material.rs` ([`CONSTITUTIVE`]).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use crate::error::Result;
use crate::gpu::GpuContext;
pub(super) use crate::gpu::stage::{StageModule, Stages};
use crate::gpu::wgsl::{COLLIDE_WGSL, MATH_WGSL, Prelude, concat, shared_prelude};
use crate::mpm::constitutive::{DEG_TO_RAD, LOG_CLAMP, ReturnEvent, SQRT_2_3};

use super::materials::{
    CODIM_KIND_CURVE, CODIM_KIND_SURFACE, VOLUME_KIND_ELASTIC, VOLUME_KIND_GOO, VOLUME_KIND_SAND,
};

/// The constitutive library: the twins of `mpm/constitutive/*.rs` (one
/// WGSL file each) and of `mpm/material.rs` (the dispatch on the packed
/// material kind). Needs [`MATH_WGSL`].
pub const CONSTITUTIVE: [&str; 8] = [
    include_str!("shaders/constitutive/mod.wgsl"),
    include_str!("shaders/constitutive/corotated.wgsl"),
    include_str!("shaders/constitutive/hencky.wgsl"),
    include_str!("shaders/constitutive/sand.wgsl"),
    include_str!("shaders/constitutive/goo.wgsl"),
    include_str!("shaders/constitutive/surface.wgsl"),
    include_str!("shaders/constitutive/curve.wgsl"),
    include_str!("shaders/material.wgsl"),
];

const COMMON: &str = include_str!("shaders/mpm_common.wgsl");
const ELEMENTS: &str = include_str!("shaders/elements.wgsl");
const HASH: &str = include_str!("shaders/hash.wgsl");

/// Slots of the per-step stats block (`array<atomic<u32>>`), reset by the
/// host before each step and read back after it.
pub(super) mod stat {
    /// Bits of the largest |v| (non-negative floats order like their bits).
    pub const MAX_SPEED: usize = 0;
    /// Lowest particle outside the domain (`u32::MAX`: none).
    pub const BAD_DOMAIN: usize = 1;
    /// Lowest particle with a non-finite x or v (`u32::MAX`: none).
    pub const BAD_FINITE: usize = 2;
    /// Active blocks this step.
    pub const BLOCKS: usize = 3;
    /// Bit 0: more active blocks than allocated (the step is a no-op);
    /// bit 1: a particle left the domain.
    pub const OVERFLOW: usize = 4;
    /// Five slots from here: return-map events by `ReturnEvent` discriminant.
    pub const EVENTS: usize = 5;
    /// Active blocks in use: min(BLOCKS, capacity).
    pub const NUM_BLOCKS: usize = 10;
    /// Words in the block.
    pub const WORDS: usize = 16;
}

/// Empty hash slot / missing block (`hash.wgsl`, `grid_build.wgsl`).
const NO_BLOCK: u32 = u32::MAX;

/// The prelude of every MPM stage: the shared constants plus the material
/// kinds, return-map events, constitutive constants and stats slots, each
/// from the Rust definition the CPU uses.
pub fn mpm_prelude() -> Prelude {
    let mut p = shared_prelude();
    let ev = |e: ReturnEvent| e as u32;
    p.u32("CM_VOLUME_ELASTIC", VOLUME_KIND_ELASTIC)
        .u32("CM_VOLUME_SAND", VOLUME_KIND_SAND)
        .u32("CM_VOLUME_GOO", VOLUME_KIND_GOO)
        .u32("CM_CODIM_SURFACE", CODIM_KIND_SURFACE)
        .u32("CM_CODIM_CURVE", CODIM_KIND_CURVE)
        .u32("CM_EVENT_ELASTIC", ev(ReturnEvent::Elastic))
        .u32("CM_EVENT_TENSION", ev(ReturnEvent::Tension))
        .u32("CM_EVENT_INVERTED", ev(ReturnEvent::Inverted))
        .u32("CM_EVENT_SLIDE", ev(ReturnEvent::Slide))
        .u32("CM_EVENT_DEGENERATE", ev(ReturnEvent::Degenerate))
        // The CPU rounds these f64 constants once to T (`T::from_f64`).
        .f32("CM_LOG_CLAMP", LOG_CLAMP as f32)
        .f32("CM_SQRT_2_3", SQRT_2_3 as f32)
        .f32("CM_DEG_TO_RAD", DEG_TO_RAD as f32)
        // `T::TWO.sqrt()` of the curve cross-section norm.
        .f32("CM_SQRT2", 2.0f32.sqrt())
        .u32("ST_MAX_SPEED", stat::MAX_SPEED as u32)
        .u32("ST_BAD_DOMAIN", stat::BAD_DOMAIN as u32)
        .u32("ST_BAD_FINITE", stat::BAD_FINITE as u32)
        .u32("ST_BLOCKS", stat::BLOCKS as u32)
        .u32("ST_OVERFLOW", stat::OVERFLOW as u32)
        .u32("ST_EVENTS", stat::EVENTS as u32)
        .u32("ST_NUM_BLOCKS", stat::NUM_BLOCKS as u32)
        .u32("NO_BLOCK", NO_BLOCK);
    p
}

/// The constitutive library with its prelude and the math it calls, as
/// one WGSL source (no bindings, no entry points): what the stress and
/// plasticity stages include, and what the parity tests append their entry
/// points to.
pub fn constitutive_wgsl() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| {
        let parts: Vec<&str> = MATH_WGSL.iter().chain(&CONSTITUTIVE).copied().collect();
        concat(&mpm_prelude(), &parts)
    })
}

/// Names of the stage modules, in step order.
pub const STAGES: [&str; 8] = [
    "bin",
    "grid_build",
    "stress",
    "p2g",
    "grid_update",
    "g2p",
    "advect",
    "plasticity",
];

/// The full WGSL source of stage `name` (prelude, common block, libraries
/// and the stage file); empty for an unknown name.
pub fn stage_wgsl(name: &str) -> &'static str {
    static SOURCES: OnceLock<BTreeMap<&'static str, String>> = OnceLock::new();
    let all = SOURCES.get_or_init(|| {
        let prelude = mpm_prelude();
        let mut m = BTreeMap::new();
        let mut add = |name: &'static str, libs: &[&[&str]], stage: &str| {
            let mut parts = vec![COMMON];
            for lib in libs {
                parts.extend_from_slice(lib);
            }
            parts.push(stage);
            m.insert(name, concat(&prelude, &parts));
        };
        add("bin", &[], include_str!("shaders/bin.wgsl"));
        add("grid_build", &[], include_str!("shaders/grid_build.wgsl"));
        add(
            "stress",
            &[&MATH_WGSL, &CONSTITUTIVE, &[ELEMENTS]],
            include_str!("shaders/stress.wgsl"),
        );
        add("p2g", &[&[HASH]], include_str!("shaders/p2g.wgsl"));
        add(
            "grid_update",
            &[&COLLIDE_WGSL],
            include_str!("shaders/grid_update.wgsl"),
        );
        add("g2p", &[&[HASH]], include_str!("shaders/g2p.wgsl"));
        add("advect", &[&[ELEMENTS]], include_str!("shaders/advect.wgsl"));
        add(
            "plasticity",
            &[&MATH_WGSL, &CONSTITUTIVE, &[ELEMENTS]],
            include_str!("shaders/plasticity.wgsl"),
        );
        m
    });
    all.get(name).map(String::as_str).unwrap_or("")
}

/// The entry points of each stage, in the order a step dispatches them.
const ENTRIES: [(&str, &[&str]); 8] = [
    ("bin", &["bin"]),
    ("grid_build", &["mark", "flag", "compact"]),
    ("stress", &["stress_volume", "stress_elements", "gather_forces"]),
    ("p2g", &["clear_nodes", "p2g"]),
    ("grid_update", &["grid_update"]),
    ("g2p", &["g2p"]),
    (
        "advect",
        &["advect_particles", "apply_pins", "advect_elements", "check"],
    ),
    ("plasticity", &["plasticity_volume", "return_map"]),
];

/// The MPM stages, compiled once per context ([`crate::gpu::stage`]).
pub(super) fn stages(ctx: &Arc<GpuContext>) -> Result<Arc<Stages>> {
    Stages::get(ctx, "MPM", &ENTRIES, stage_wgsl)
}

#[cfg(test)]
#[path = "stages_tests.rs"]
mod tests;
