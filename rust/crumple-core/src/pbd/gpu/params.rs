//! The per-step parameter block of the GPU shape-matching step: the Rust
//! mirror of `PbdParams` in `shaders/pbd_common.wgsl` (the tests check every
//! offset against naga's layout of the shader), filled from the same
//! [`LoopParams`] the CPU loop reads.

use bytemuck::{Pod, Zeroable};

use crate::pbd::model::Model;
use crate::pbd::params::RotationFit;
use crate::pbd::solver::LoopParams;

/// The code of a rotation fit in `PbdParams::fit`.
pub(crate) const fn fit_code(fit: RotationFit) -> u32 {
    match fit {
        RotationFit::Rigid => 0,
        RotationFit::Linear => 1,
    }
}

/// Mirrors `PbdParams` in `pbd_common.wgsl` (96 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuParams {
    pub(crate) gravity: [f32; 3],
    pub(crate) h: f32,
    pub(crate) keep: f32,
    pub(crate) vmax: f32,
    pub(crate) d_pp: f32,
    pub(crate) d_pw: f32,
    pub(crate) margin: f32,
    pub(crate) mu_s_pp: f32,
    pub(crate) mu_k_pp: f32,
    pub(crate) static_ratio: f32,
    pub(crate) sor: f32,
    pub(crate) n: u32,
    pub(crate) n_clusters: u32,
    pub(crate) n_colliders: u32,
    pub(crate) capacity: u32,
    pub(crate) rotation_iterations: u32,
    pub(crate) end_rotation_iterations: u32,
    pub(crate) fit: u32,
    pub(crate) dt: f32,
    pub(crate) capped: u32,
    pub(crate) cell: f32,
    pub(crate) pad: u32,
}

const _: () = assert!(std::mem::size_of::<GpuParams>() == 96);

impl GpuParams {
    /// The block for a step of `dt` s over `n` particles, `n_clusters`
    /// clusters and `n_colliders` colliders.
    pub(crate) fn new(model: &Model, dt: f64, n: usize, n_clusters: usize, n_colliders: usize) -> Self {
        let p = &model.params;
        let lp = LoopParams::new(p, dt);
        let c = lp.contact;
        Self {
            gravity: [lp.gravity.x, lp.gravity.y, lp.gravity.z],
            h: lp.h,
            keep: lp.keep,
            vmax: lp.vmax,
            d_pp: c.d_pp,
            d_pw: c.d_pw,
            margin: c.margin,
            mu_s_pp: c.mu_pp.0,
            mu_k_pp: c.mu_pp.1,
            static_ratio: c.static_ratio,
            sor: c.sor,
            n: n as u32,
            n_clusters: n_clusters as u32,
            n_colliders: n_colliders as u32,
            capacity: p.max_neighbors,
            rotation_iterations: p.rotation_iterations[0],
            end_rotation_iterations: p.rotation_iterations[1],
            fit: fit_code(p.rotation_fit),
            dt: dt as f32,
            capped: u32::from(!p.resampling),
            // The CPU's grid cell (`Contacts::find`): d_pp + δ_m.
            cell: c.d_pp + c.margin,
            pad: 0,
        }
    }
}
