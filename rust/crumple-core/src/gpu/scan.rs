//! Exclusive prefix sum of `u32` (wrapping): the CPU twin and the GPU stage
//! `shaders/scan_exclusive_u32.wgsl`.
//!
//! Addition modulo 2^32 is associative, so every grouping of the sums gives
//! the same bits: the two backends agree exactly whatever their blocking.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use super::dispatch::{Dispatch, dispatch_2d};
use super::uniforms::UniformSlots;
use super::{GpuBuffer, GpuContext};
use crate::error::{Error, Result};

/// Chunk length of the CPU scan. Fixed (not derived from the thread count)
/// so the work split is the same on every machine; 64 Ki values (256 KiB)
/// stay in a core's L2 between the two sweeps.
pub const SCAN_CHUNK: usize = 1 << 16;

/// CPU twin of the GPU scan: replaces `data[i]` by the wrapping sum of
/// `data[..i]` and returns the wrapping sum of all values.
///
/// Chunks of [`SCAN_CHUNK`] are summed in parallel, the chunk sums scanned
/// serially, then each chunk scanned in parallel from its offset.
pub fn scan_exclusive_u32(data: &mut [u32]) -> u32 {
    if data.len() <= SCAN_CHUNK {
        return scan_serial(data, 0);
    }
    let mut offsets: Vec<u32> = data
        .par_chunks(SCAN_CHUNK)
        .map(|c| c.iter().fold(0u32, |a, &x| a.wrapping_add(x)))
        .collect();
    let total = scan_serial(&mut offsets, 0);
    data.par_chunks_mut(SCAN_CHUNK)
        .zip(offsets.par_iter())
        .for_each(|(chunk, &start)| {
            scan_serial(chunk, start);
        });
    total
}

fn scan_serial(data: &mut [u32], start: u32) -> u32 {
    let mut running = start;
    for x in data {
        let v = *x;
        *x = running;
        running = running.wrapping_add(v);
    }
    running
}

pub(crate) const SHADER_NAME: &str = "scan_exclusive_u32";
pub(crate) const SHADER: &str = include_str!("shaders/scan_exclusive_u32.wgsl");
/// Elements per workgroup; equals `BLOCK_SIZE` in the shader.
pub(crate) const BLOCK_SIZE: u32 = 2048;
/// Parameter slots: one per level. With 2048-element blocks a u32 length
/// needs at most 4 levels (2^32 → 2^21 → 2^10, one block).
const LEVEL_SLOTS: u32 = 8;

/// Mirrors `ScanParams` in the shader.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ScanParams {
    n: u32,
    num_blocks: u32,
    use_offsets: u32,
    _pad: u32,
}

/// GPU exclusive prefix sum, in place on a device buffer.
///
/// Owns the block-sum buffers of every level and reuses them: a call on an
/// array no longer than any before it allocates nothing on the device.
pub struct GpuScan {
    ctx: Arc<GpuContext>,
    reduce: wgpu::ComputePipeline,
    scan: wgpu::ComputePipeline,
    /// Block sums of levels 1, 2, ... (level 0 is the caller's data).
    levels: Vec<GpuBuffer<u32>>,
    /// Bound as `block_sums` at the top level, where the shader ignores it.
    unused_sums: GpuBuffer<u32>,
    params: UniformSlots,
    max_groups_per_dim: u32,
    /// Device copy used by [`GpuScan::scan_exclusive_u32_host`].
    host_data: Option<GpuBuffer<u32>>,
}

impl std::fmt::Debug for GpuScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuScan")
            .field("levels", &self.levels)
            .finish_non_exhaustive()
    }
}

impl GpuScan {
    /// Compiles (or fetches from the context's cache) the two pipelines.
    pub fn new(ctx: &Arc<GpuContext>) -> Result<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            reduce: ctx.pipeline(SHADER_NAME, SHADER, "reduce_blocks")?,
            scan: ctx.pipeline(SHADER_NAME, SHADER, "scan_blocks")?,
            levels: Vec::new(),
            unused_sums: GpuBuffer::zeroed(ctx, 1, "scan unused sums")?,
            params: UniformSlots::new(ctx, LEVEL_SLOTS, "scan params")?,
            max_groups_per_dim: ctx.limits().max_compute_workgroups_per_dimension,
            host_data: None,
        })
    }

    /// Lowers the per-dimension workgroup limit so tests reach the 2-D grid
    /// path with small arrays.
    #[cfg(test)]
    pub(crate) fn with_max_groups_per_dim(mut self, max: u32) -> Self {
        self.max_groups_per_dim = max;
        self
    }

    /// Exclusive prefix sum of `data` in place (wrapping), submitted and
    /// waited for; nothing is read back.
    pub fn scan_exclusive_u32(&mut self, data: &mut GpuBuffer<u32>) -> Result<()> {
        let steps = self.plan(data)?;
        if steps.is_empty() {
            return Ok(());
        }
        let ctx = Arc::clone(&self.ctx);
        let mut encoder = ctx.encoder("scan_exclusive_u32");
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("scan_exclusive_u32"),
                timestamp_writes: None,
            });
            for step in &steps {
                step.record(&mut pass);
            }
        }
        ctx.submit_and_wait("scan_exclusive_u32", encoder)
    }

    /// Uploads `data`, scans it on the GPU and reads the result back (for
    /// tests and the Python binding; device-resident callers use
    /// [`GpuScan::scan_exclusive_u32`]). The device copy is kept and reused.
    pub fn scan_exclusive_u32_host(&mut self, data: &[u32]) -> Result<Vec<u32>> {
        let mut buf = match self.host_data.take() {
            Some(mut b) => {
                b.upload(data)?;
                b
            }
            None => GpuBuffer::from_slice(&self.ctx, data, "scan host data")?,
        };
        let result = self.scan_exclusive_u32(&mut buf).and_then(|()| buf.read());
        self.host_data = Some(buf);
        result
    }

    /// The dispatches that scan `data` in place, in order; empty for an
    /// empty array. Writes this plan's parameters (they stay valid until
    /// the next call to `plan`), so the plan may be recorded many times.
    pub(crate) fn plan(&mut self, data: &GpuBuffer<u32>) -> Result<Vec<Dispatch>> {
        if !Arc::ptr_eq(data.context(), &self.ctx) {
            return Err(Error::InvalidInput(
                "scan_exclusive_u32: the buffer belongs to another GpuContext".to_owned(),
            ));
        }
        let n = data.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let max = self.ctx.max_binding_elements(4).min(u64::from(u32::MAX));
        if n as u64 > max {
            return Err(Error::Backend(format!(
                "scan_exclusive_u32: {n} elements exceed what '{}' can bind at once ({max}); \
                 use the CPU backend for this size",
                self.ctx.adapter_info().name
            )));
        }

        // Level sizes: n, ceil(n / B), ... down to one block.
        let mut sizes = vec![n as u32];
        while *sizes.last().unwrap_or(&0) > BLOCK_SIZE {
            let last = sizes[sizes.len() - 1];
            sizes.push(last.div_ceil(BLOCK_SIZE));
        }
        let top = sizes.len() - 1;
        while self.levels.len() < top {
            let len = sizes[self.levels.len() + 1] as usize;
            self.levels
                .push(GpuBuffer::zeroed(&self.ctx, len, "scan block sums")?);
        }
        for (level, buf) in self.levels.iter_mut().enumerate().take(top) {
            buf.resize_uninit(sizes[level + 1] as usize)?;
        }

        let mut reduces = Vec::with_capacity(top);
        let mut scans = Vec::with_capacity(top + 1);
        for (level, &size) in sizes.iter().enumerate() {
            let num_blocks = size.div_ceil(BLOCK_SIZE);
            let params = ScanParams {
                n: size,
                num_blocks,
                use_offsets: u32::from(level < top),
                _pad: 0,
            };
            self.params.write(&self.ctx, level as u32, &params);
            let level_data = if level == 0 { data } else { &self.levels[level - 1] };
            let sums = if level < top {
                &self.levels[level]
            } else {
                &self.unused_sums
            };
            let groups = dispatch_2d(num_blocks, self.max_groups_per_dim);
            let make = |pipeline: &wgpu::ComputePipeline| -> Result<Dispatch> {
                let bind_group = self.ctx.capture("scan_exclusive_u32 bind group", || {
                    self.ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("scan_exclusive_u32"),
                        layout: &pipeline.get_bind_group_layout(0),
                        entries: &[
                            wgpu::BindGroupEntry {
                                binding: 0,
                                resource: self.params.binding::<ScanParams>(level as u32),
                            },
                            wgpu::BindGroupEntry {
                                binding: 1,
                                resource: level_data.binding(),
                            },
                            wgpu::BindGroupEntry {
                                binding: 2,
                                resource: sums.binding(),
                            },
                        ],
                    })
                })?;
                Ok(Dispatch {
                    pipeline: pipeline.clone(),
                    bind_group,
                    groups,
                })
            };
            if level < top {
                reduces.push(make(&self.reduce)?);
            }
            scans.push(make(&self.scan)?);
        }
        // Reduce upward (level 0 first), then scan downward (top first) so
        // each level's offsets are final before it is scanned.
        scans.reverse();
        reduces.extend(scans);
        Ok(reduces)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(data: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(data.len());
        let mut s = 0u32;
        for &x in data {
            out.push(s);
            s = s.wrapping_add(x);
        }
        out
    }

    #[test]
    fn cpu_scan_matches_serial_reference_and_wraps() {
        for n in [
            0usize,
            1,
            2,
            SCAN_CHUNK - 1,
            SCAN_CHUNK,
            SCAN_CHUNK + 1,
            3 * SCAN_CHUNK + 17,
        ] {
            let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
            let mut got = data.clone();
            let total = scan_exclusive_u32(&mut got);
            assert_eq!(got, reference(&data), "n = {n}");
            let expect_total = data.iter().fold(0u32, |a, &x| a.wrapping_add(x));
            assert_eq!(total, expect_total);
        }
    }

    #[test]
    fn shader_block_size_matches_rust() {
        assert!(SHADER.contains(&format!("const BLOCK_SIZE: u32 = {BLOCK_SIZE}u;")));
    }

    /// With at most 3 workgroups per grid dimension, arrays of a few blocks
    /// already need the 2-D grid, with idle workgroups; the largest size
    /// also needs it at its second level.
    #[test]
    fn gpu_scan_2d_grid_matches_cpu() {
        let Some(ctx) = super::super::test_context() else {
            return;
        };
        let mut scan = GpuScan::new(&ctx).unwrap().with_max_groups_per_dim(3);
        let b = BLOCK_SIZE as usize;
        for n in [1, b, 4 * b + 5, 10 * b, 600 * b + 3] {
            let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
            let got = scan.scan_exclusive_u32_host(&data).unwrap();
            let mut want = data.clone();
            scan_exclusive_u32(&mut want);
            assert_eq!(got, want, "n = {n}");
        }
    }
}
