//! The per-step parameter block of the GPU MPM step: the Rust mirror of
//! `StepParams` in `shaders/mpm_common.wgsl`, and how it is filled from the
//! solver settings and the device's current sizes.

use bytemuck::{Pod, Zeroable};

use crate::math::Real;
use crate::mpm::model::Model;
use crate::mpm::params::{Kernel, OutOfDomain, SolverParams, Transfer};

use super::buffers::Device;

/// Mirrors `StepParams` in `mpm_common.wgsl` (144 bytes; the tests check
/// every member's offset against naga's layout of the shader).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(super) struct StepParams {
    pub(super) lower: [f32; 3],
    pub(super) dx: f32,
    pub(super) inv_dx: f32,
    pub(super) dt: f32,
    pub(super) d_inv: f32,
    pub(super) kernel_k: u32,
    pub(super) gravity: [f32; 3],
    pub(super) mls: u32,
    pub(super) hi: [f32; 3],
    pub(super) lo: f32,
    pub(super) wall_hi: [u32; 3],
    pub(super) pad: u32,
    pub(super) hash_mask: u32,
    pub(super) lo_clamp: f32,
    pub(super) hash_pad1: u32,
    pub(super) n_particles: u32,
    pub(super) vol_start: u32,
    pub(super) vol_end: u32,
    pub(super) vert_start: u32,
    pub(super) vert_end: u32,
    pub(super) elem_start: u32,
    pub(super) elem_end: u32,
    pub(super) flags: u32,
    pub(super) n_colliders: u32,
    pub(super) n_pins: u32,
    pub(super) block_capacity: u32,
    pub(super) clamp: u32,
    pub(super) kernel_shift: f32,
}

const _: () = assert!(std::mem::size_of::<StepParams>() == 144);

impl StepParams {
    /// The block for a step of `dt` seconds with `n_colliders` colliders and
    /// `n_pins` pins, on the device's current allocation.
    pub(super) fn new<T: Real>(
        model: &Model<T>,
        params: &SolverParams,
        dev: &Device,
        n_colliders: usize,
        n_pins: usize,
        dt: f64,
    ) -> Self {
        let nodes = params.nodes_per_axis();
        let pad = params.boundary_padding as u32;
        let inv_dx = 1.0 / params.dx;
        let (k, d_inv) = match params.kernel {
            Kernel::Quadratic => (3u32, 4.0f32 * (inv_dx as f32) * (inv_dx as f32)),
            Kernel::Cubic => (4u32, 3.0f32 * (inv_dx as f32) * (inv_dx as f32)),
        };
        let hi = nodes.map(|n| (n as f64 - 2.0 - 1e-3) as f32);
        Self {
            lower: [
                params.lower.x as f32,
                params.lower.y as f32,
                params.lower.z as f32,
            ],
            dx: params.dx as f32,
            inv_dx: inv_dx as f32,
            dt: dt as f32,
            d_inv,
            kernel_k: k,
            gravity: [
                params.gravity.x as f32,
                params.gravity.y as f32,
                params.gravity.z as f32,
            ],
            mls: u32::from(params.transfer == Transfer::MlsMpm),
            hi,
            lo: 1.0,
            wall_hi: nodes.map(|n| n as u32 - 1 - pad),
            pad,
            hash_mask: dev.hash_slots as u32 - 1,
            lo_clamp: crate::mpm::solver::LOWER_CLAMP_XI as f32,
            hash_pad1: 0,
            n_particles: dev.n as u32,
            vol_start: model.vol.start as u32,
            vol_end: model.vol.end as u32,
            vert_start: model.vert.start as u32,
            vert_end: model.vert.end as u32,
            elem_start: model.elem.start as u32,
            elem_end: model.elem.end as u32,
            flags: u32::from(params.enslave_elements)
                | u32::from(params.eulerian_tangents) << 1
                | u32::from(params.codim_return_map) << 2,
            n_colliders: n_colliders as u32,
            n_pins: n_pins as u32,
            block_capacity: dev.block_capacity as u32,
            clamp: u32::from(params.out_of_domain == OutOfDomain::Clamp),
            kernel_shift: if k == 3 { 0.5 } else { 1.0 },
        }
    }
}
