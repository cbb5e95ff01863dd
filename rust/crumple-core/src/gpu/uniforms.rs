//! Per-dispatch parameter blocks in one uniform buffer.
//!
//! A multi-dispatch operation (a scan level, a radix pass) records many
//! dispatches into one submission, each with its own small parameter struct.
//! Queue writes all land before the submission runs, so every dispatch gets
//! its own slot rather than sharing one that would be overwritten.

use bytemuck::Pod;

use super::GpuContext;
use crate::error::Result;

/// `slots` parameter blocks of at most `stride` bytes each.
pub(crate) struct UniformSlots {
    buffer: wgpu::Buffer,
    stride: u64,
    slots: u32,
}

impl UniformSlots {
    /// Largest parameter struct a slot holds; every kernel's params fit.
    const MAX_PARAMS_BYTES: u64 = 64;

    pub(crate) fn new(ctx: &GpuContext, slots: u32, label: &str) -> Result<Self> {
        // Bind offsets into a uniform buffer must be multiples of this
        // device limit (256 bytes unless the device allows less).
        let stride = u64::from(ctx.limits().min_uniform_buffer_offset_alignment).max(Self::MAX_PARAMS_BYTES);
        let buffer = ctx.capture(&format!("allocating {label}"), || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: stride * u64::from(slots),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(Self {
            buffer,
            stride,
            slots,
        })
    }

    /// Queues `params` into `slot`; it is visible to the next submission.
    pub(crate) fn write<P: Pod>(&self, ctx: &GpuContext, slot: u32, params: &P) {
        debug_assert!(slot < self.slots);
        debug_assert!(std::mem::size_of::<P>() as u64 <= Self::MAX_PARAMS_BYTES);
        ctx.queue().write_buffer(
            &self.buffer,
            u64::from(slot) * self.stride,
            bytemuck::bytes_of(params),
        );
    }

    /// Binding of `slot` holding a `P`.
    pub(crate) fn binding<P: Pod>(&self, slot: u32) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.buffer,
            offset: u64::from(slot) * self.stride,
            size: wgpu::BufferSize::new(std::mem::size_of::<P>() as u64),
        })
    }
}
