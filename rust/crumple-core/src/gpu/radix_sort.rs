//! Stable sort of (u32 key, u32 value) pairs by key: the CPU twin and the
//! GPU stage `shaders/radix_sort_pairs_u32.wgsl`.
//!
//! Both sort stably on `key & mask`, where `mask` keeps the low `key_bits`
//! bits. A stable sort's output is unique, so the backends agree exactly
//! even though they use different digit widths (8 bits on the CPU, where a
//! 256-bucket histogram is cheap; 4 bits on the GPU, see the shader).

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use super::dispatch::{Dispatch, dispatch_2d};
use super::uniforms::UniformSlots;
use super::{GpuBuffer, GpuContext, GpuScan};
use crate::error::{Error, Result};

/// Chunk length of the CPU sort: histograms and scatters run per chunk in
/// parallel. Fixed (not derived from the thread count) so the work split is
/// the same everywhere; 64 Ki pairs keep 256 write streams per chunk long
/// enough to be cache friendly.
pub const RADIX_SORT_CHUNK: usize = 1 << 16;

const CPU_DIGIT_BITS: u32 = 8;
const CPU_RADIX: usize = 1 << CPU_DIGIT_BITS;

/// The mask of the low `key_bits` bits (`None` means all 32).
fn key_mask(key_bits: Option<u32>) -> Result<u32> {
    match key_bits.unwrap_or(32) {
        32 => Ok(u32::MAX),
        b if b < 32 => Ok((1u32 << b) - 1),
        b => Err(Error::InvalidInput(format!(
            "radix_sort_pairs_u32: key_bits must be between 0 and 32, got {b}"
        ))),
    }
}

fn check_lengths(keys: usize, values: usize) -> Result<()> {
    if keys == values {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "radix_sort_pairs_u32: {keys} keys but {values} values; pass one value per key"
        )))
    }
}

/// CPU twin of the GPU sort: sorts `keys` stably by `key & mask` (the low
/// `key_bits` bits, all 32 when `None`) and applies the same permutation to
/// `values`. Sorting on fewer bits is faster when keys are known to be small
/// (e.g. cell indices); higher bits are then ignored, not checked.
///
/// LSD radix sort with 8-bit digits. Each pass counts digits per chunk of
/// [`RADIX_SORT_CHUNK`] pairs in parallel, lays the output out digit-major
/// (all chunks' pairs of digit 0, then digit 1, ...; chunks in order within
/// a digit), and scatters each chunk in parallel into its own sub-slices.
/// A pass whose digit is the same for every pair is skipped: a stable sort
/// on a constant digit is the identity.
///
/// Allocates one scratch copy of the pairs per call.
pub fn radix_sort_pairs_u32(keys: &mut [u32], values: &mut [u32], key_bits: Option<u32>) -> Result<()> {
    let mask = key_mask(key_bits)?;
    check_lengths(keys.len(), values.len())?;
    let n = keys.len();
    if n <= 1 || mask == 0 {
        return Ok(());
    }
    let bits = 32 - mask.leading_zeros();
    let mut tmp_keys = vec![0u32; n];
    let mut tmp_values = vec![0u32; n];
    let mut in_input = true;
    for shift in (0..bits).step_by(CPU_DIGIT_BITS as usize) {
        let moved = if in_input {
            scatter_pass(keys, values, &mut tmp_keys, &mut tmp_values, shift, mask)
        } else {
            scatter_pass(&tmp_keys, &tmp_values, keys, values, shift, mask)
        };
        if moved {
            in_input = !in_input;
        }
    }
    if !in_input {
        keys.copy_from_slice(&tmp_keys);
        values.copy_from_slice(&tmp_values);
    }
    Ok(())
}

/// One stable counting pass from `src` to `dst` on the 8-bit digit at
/// `shift`. Returns false (and leaves `dst` untouched) when every pair has
/// the same digit.
fn scatter_pass(
    src_keys: &[u32],
    src_values: &[u32],
    dst_keys: &mut [u32],
    dst_values: &mut [u32],
    shift: u32,
    mask: u32,
) -> bool {
    let digit = move |k: u32| (((k & mask) >> shift) as usize) & (CPU_RADIX - 1);
    let hists: Vec<[usize; CPU_RADIX]> = src_keys
        .par_chunks(RADIX_SORT_CHUNK)
        .map(|chunk| {
            let mut h = [0usize; CPU_RADIX];
            for &k in chunk {
                h[digit(k)] += 1;
            }
            h
        })
        .collect();
    let mut totals = [0usize; CPU_RADIX];
    for h in &hists {
        for (t, c) in totals.iter_mut().zip(h) {
            *t += c;
        }
    }
    if totals.contains(&src_keys.len()) {
        return false;
    }
    let key_slices = split_digit_major(dst_keys, &hists);
    let value_slices = split_digit_major(dst_values, &hists);
    src_keys
        .par_chunks(RADIX_SORT_CHUNK)
        .zip(src_values.par_chunks(RADIX_SORT_CHUNK))
        .zip(key_slices.into_par_iter().zip(value_slices))
        .for_each(|((keys, values), (mut key_out, mut value_out))| {
            let mut cursor = [0usize; CPU_RADIX];
            for (&k, &v) in keys.iter().zip(values) {
                let d = digit(k);
                let c = cursor[d];
                key_out[d][c] = k;
                value_out[d][c] = v;
                cursor[d] = c + 1;
            }
        });
    true
}

/// Cuts `out` into the digit-major regions of a counting pass and returns,
/// per chunk, its 256 destination slices (one per digit). The regions are
/// disjoint, so chunks can fill them in parallel without unsafe code.
fn split_digit_major<'a>(mut out: &'a mut [u32], hists: &[[usize; CPU_RADIX]]) -> Vec<Vec<&'a mut [u32]>> {
    let mut per_chunk: Vec<Vec<&'a mut [u32]>> =
        hists.iter().map(|_| Vec::with_capacity(CPU_RADIX)).collect();
    for d in 0..CPU_RADIX {
        for (slices, h) in per_chunk.iter_mut().zip(hists) {
            let (head, tail) = std::mem::take(&mut out).split_at_mut(h[d]);
            slices.push(head);
            out = tail;
        }
    }
    per_chunk
}

pub(crate) const SHADER_NAME: &str = "radix_sort_pairs_u32";
pub(crate) const SHADER: &str = include_str!("shaders/radix_sort_pairs_u32.wgsl");
/// Pairs per workgroup; equals `BLOCK_SIZE` in the shader.
pub(crate) const BLOCK_SIZE: u32 = 4096;
/// Bits per GPU pass; equals log2(`RADIX`) in the shader.
pub(crate) const GPU_DIGIT_BITS: u32 = 4;
const GPU_RADIX: u32 = 1 << GPU_DIGIT_BITS;
/// One parameter slot per pass (32 / 4).
const PASS_SLOTS: u32 = 32 / GPU_DIGIT_BITS;

/// Mirrors `RadixParams` in the shader.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct RadixParams {
    n: u32,
    num_blocks: u32,
    shift: u32,
    key_mask: u32,
}

/// GPU stable radix sort of (u32 key, u32 value) pairs, in place on device
/// buffers.
///
/// Owns its scratch (a second copy of keys and values, the per-block digit
/// offsets and the scan's block sums) and reuses it: sorting no more pairs
/// than any earlier call allocates nothing on the device.
pub struct GpuRadixSort {
    ctx: Arc<GpuContext>,
    count: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    scan: GpuScan,
    block_offsets: GpuBuffer<u32>,
    keys_tmp: GpuBuffer<u32>,
    values_tmp: GpuBuffer<u32>,
    params: UniformSlots,
    max_groups_per_dim: u32,
    /// Device copies used by [`GpuRadixSort::radix_sort_pairs_u32_host`].
    host_pairs: Option<(GpuBuffer<u32>, GpuBuffer<u32>)>,
}

impl std::fmt::Debug for GpuRadixSort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRadixSort")
            .field("capacity", &self.keys_tmp.capacity())
            .finish_non_exhaustive()
    }
}

/// Recorded dispatches of one device sort (see [`GpuRadixSort::plan`]).
#[derive(Default)]
pub(crate) struct SortPlan {
    steps: Vec<Dispatch>,
    /// Bytes to copy back from the scratch copy after an odd number of passes.
    copy_bytes: u64,
}

impl SortPlan {
    pub(crate) fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether the sorted pairs end in the scratch copy (odd pass count).
    pub(crate) fn needs_copy_back(&self) -> bool {
        self.copy_bytes > 0
    }

    pub(crate) fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        for s in &self.steps {
            s.record(pass);
        }
    }

    fn copy_back(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        keys: &GpuBuffer<u32>,
        values: &GpuBuffer<u32>,
        keys_tmp: &GpuBuffer<u32>,
        values_tmp: &GpuBuffer<u32>,
    ) {
        if self.copy_bytes > 0 {
            encoder.copy_buffer_to_buffer(keys_tmp.raw(), 0, keys.raw(), 0, self.copy_bytes);
            encoder.copy_buffer_to_buffer(values_tmp.raw(), 0, values.raw(), 0, self.copy_bytes);
        }
    }
}

impl GpuRadixSort {
    /// Compiles (or fetches from the context's cache) the pipelines.
    pub fn new(ctx: &Arc<GpuContext>) -> Result<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            count: ctx.pipeline(SHADER_NAME, SHADER, "radix_count")?,
            scatter: ctx.pipeline(SHADER_NAME, SHADER, "radix_scatter")?,
            scan: GpuScan::new(ctx)?,
            block_offsets: GpuBuffer::zeroed(ctx, 0, "radix block offsets")?,
            keys_tmp: GpuBuffer::zeroed(ctx, 0, "radix keys scratch")?,
            values_tmp: GpuBuffer::zeroed(ctx, 0, "radix values scratch")?,
            params: UniformSlots::new(ctx, PASS_SLOTS, "radix params")?,
            max_groups_per_dim: ctx.limits().max_compute_workgroups_per_dimension,
            host_pairs: None,
        })
    }

    /// Lowers the per-dimension workgroup limit so tests reach the 2-D grid
    /// path with small arrays.
    #[cfg(test)]
    pub(crate) fn with_max_groups_per_dim(mut self, max: u32) -> Self {
        self.max_groups_per_dim = max;
        self.scan = self.scan.with_max_groups_per_dim(max);
        self
    }

    /// Sorts `keys` stably by `key & mask` (the low `key_bits` bits, all 32
    /// when `None`) and permutes `values` alike, on the device; submitted
    /// and waited for, nothing read back. One pass per 4 bits of
    /// `key_bits`, so small keys sort faster.
    pub fn radix_sort_pairs_u32(
        &mut self,
        keys: &mut GpuBuffer<u32>,
        values: &mut GpuBuffer<u32>,
        key_bits: Option<u32>,
    ) -> Result<()> {
        let plan = self.plan(keys, values, key_bits)?;
        if plan.is_empty() {
            return Ok(());
        }
        let ctx = Arc::clone(&self.ctx);
        let mut encoder = ctx.encoder("radix_sort_pairs_u32");
        {
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("radix_sort_pairs_u32"),
                timestamp_writes: None,
            });
            plan.record(&mut cpass);
        }
        plan.copy_back(&mut encoder, keys, values, &self.keys_tmp, &self.values_tmp);
        ctx.submit_and_wait("radix_sort_pairs_u32", encoder)
    }

    /// The dispatches that sort `keys`/`values` in place, for callers that
    /// record them into their own pass (the MPM step replays one plan every
    /// step). The plan stays valid until the next call to `plan` or to
    /// [`GpuRadixSort::radix_sort_pairs_u32`]. With an odd number of passes
    /// the result ends in the scratch copy: pass `key_bits` a multiple of 8
    /// (or call [`SortPlan::copy_back`]) to sort fully in place.
    pub(crate) fn plan(
        &mut self,
        keys: &GpuBuffer<u32>,
        values: &GpuBuffer<u32>,
        key_bits: Option<u32>,
    ) -> Result<SortPlan> {
        let mask = key_mask(key_bits)?;
        check_lengths(keys.len(), values.len())?;
        if !Arc::ptr_eq(keys.context(), &self.ctx) || !Arc::ptr_eq(values.context(), &self.ctx) {
            return Err(Error::InvalidInput(
                "radix_sort_pairs_u32: the buffers belong to another GpuContext".to_owned(),
            ));
        }
        let n = keys.len();
        if n <= 1 || mask == 0 {
            return Ok(SortPlan::default());
        }
        let max = self.ctx.max_binding_elements(4).min(u64::from(u32::MAX));
        if n as u64 > max {
            return Err(Error::Backend(format!(
                "radix_sort_pairs_u32: {n} pairs exceed what '{}' can bind at once ({max}); \
                 use the CPU backend for this size",
                self.ctx.adapter_info().name
            )));
        }
        let n = n as u32;
        let num_blocks = n.div_ceil(BLOCK_SIZE);
        let passes = (32 - mask.leading_zeros()).div_ceil(GPU_DIGIT_BITS);

        self.block_offsets
            .resize_uninit((GPU_RADIX * num_blocks) as usize)?;
        self.keys_tmp.resize_uninit(n as usize)?;
        self.values_tmp.resize_uninit(n as usize)?;
        let scan_steps = self.scan.plan(&self.block_offsets)?;
        let groups = dispatch_2d(num_blocks, self.max_groups_per_dim);

        let mut steps = Vec::with_capacity(passes as usize * (2 + scan_steps.len()));
        for pass in 0..passes {
            self.params.write(
                &self.ctx,
                pass,
                &RadixParams {
                    n,
                    num_blocks,
                    shift: pass * GPU_DIGIT_BITS,
                    key_mask: mask,
                },
            );
            // Ping-pong: even passes read the caller's buffers.
            let (src, dst) = if pass % 2 == 0 {
                ((keys, values), (&self.keys_tmp, &self.values_tmp))
            } else {
                ((&self.keys_tmp, &self.values_tmp), (keys, values))
            };
            let count = self.bind(
                &self.count,
                &[
                    (0, self.params.binding::<RadixParams>(pass)),
                    (1, src.0.binding()),
                    (3, self.block_offsets.binding()),
                ],
            )?;
            let scatter = self.bind(
                &self.scatter,
                &[
                    (0, self.params.binding::<RadixParams>(pass)),
                    (1, src.0.binding()),
                    (2, src.1.binding()),
                    (3, self.block_offsets.binding()),
                    (4, dst.0.binding()),
                    (5, dst.1.binding()),
                ],
            )?;
            // Each dispatch is its own synchronization scope in a compute
            // pass, so one pass orders count -> scan -> scatter correctly.
            steps.push(Dispatch {
                pipeline: self.count.clone(),
                bind_group: count,
                groups,
            });
            for s in &scan_steps {
                steps.push(Dispatch {
                    pipeline: s.pipeline.clone(),
                    bind_group: s.bind_group.clone(),
                    groups: s.groups,
                });
            }
            steps.push(Dispatch {
                pipeline: self.scatter.clone(),
                bind_group: scatter,
                groups,
            });
        }
        Ok(SortPlan {
            steps,
            copy_bytes: if passes % 2 == 1 { u64::from(n) * 4 } else { 0 },
        })
    }

    /// Uploads the pairs, sorts them on the GPU and reads them back (for
    /// tests and the Python binding; device-resident callers use
    /// [`GpuRadixSort::radix_sort_pairs_u32`]). The device copies are kept
    /// and reused.
    pub fn radix_sort_pairs_u32_host(
        &mut self,
        keys: &[u32],
        values: &[u32],
        key_bits: Option<u32>,
    ) -> Result<(Vec<u32>, Vec<u32>)> {
        key_mask(key_bits)?;
        check_lengths(keys.len(), values.len())?;
        let (mut k, mut v) = match self.host_pairs.take() {
            Some((mut k, mut v)) => {
                k.upload(keys)?;
                v.upload(values)?;
                (k, v)
            }
            None => (
                GpuBuffer::from_slice(&self.ctx, keys, "radix host keys")?,
                GpuBuffer::from_slice(&self.ctx, values, "radix host values")?,
            ),
        };
        let result = self
            .radix_sort_pairs_u32(&mut k, &mut v, key_bits)
            .and_then(|()| Ok((k.read()?, v.read()?)));
        self.host_pairs = Some((k, v));
        result
    }

    fn bind(
        &self,
        pipeline: &wgpu::ComputePipeline,
        entries: &[(u32, wgpu::BindingResource<'_>)],
    ) -> Result<wgpu::BindGroup> {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = entries
            .iter()
            .map(|(binding, resource)| wgpu::BindGroupEntry {
                binding: *binding,
                resource: resource.clone(),
            })
            .collect();
        self.ctx.capture("radix_sort_pairs_u32 bind group", || {
            self.ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("radix_sort_pairs_u32"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(keys: &[u32], values: &[u32], mask: u32) -> (Vec<u32>, Vec<u32>) {
        let mut idx: Vec<usize> = (0..keys.len()).collect();
        idx.sort_by_key(|&i| keys[i] & mask);
        (
            idx.iter().map(|&i| keys[i]).collect(),
            idx.iter().map(|&i| values[i]).collect(),
        )
    }

    #[test]
    fn cpu_sort_is_stable_for_masked_keys() {
        let n = 3 * RADIX_SORT_CHUNK + 11;
        let keys: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761).rotate_left(7))
            .collect();
        let values: Vec<u32> = (0..n as u32).collect();
        for key_bits in [None, Some(0), Some(1), Some(5), Some(8), Some(13), Some(31)] {
            let mask = key_mask(key_bits).unwrap();
            let (mut k, mut v) = (keys.clone(), values.clone());
            radix_sort_pairs_u32(&mut k, &mut v, key_bits).unwrap();
            assert_eq!((k, v), reference(&keys, &values, mask), "key_bits {key_bits:?}");
        }
    }

    #[test]
    fn cpu_sort_rejects_bad_input() {
        let (mut k, mut v) = (vec![1, 2, 3], vec![1, 2]);
        assert!(matches!(
            radix_sort_pairs_u32(&mut k, &mut v, None),
            Err(Error::InvalidInput(_))
        ));
        let mut v = vec![0; 3];
        assert!(matches!(
            radix_sort_pairs_u32(&mut k, &mut v, Some(33)),
            Err(Error::InvalidInput(_))
        ));
    }

    #[test]
    fn shader_constants_match_rust() {
        assert!(SHADER.contains(&format!("const BLOCK_SIZE: u32 = {BLOCK_SIZE}u;")));
        assert!(SHADER.contains(&format!("const RADIX: u32 = {GPU_RADIX}u;")));
    }

    /// With at most 3 workgroups per grid dimension, a few blocks of pairs
    /// need the 2-D grid (with idle workgroups) for the count and scatter
    /// dispatches.
    #[test]
    fn gpu_sort_2d_grid_matches_cpu() {
        let Some(ctx) = super::super::test_context() else {
            return;
        };
        let mut sorter = GpuRadixSort::new(&ctx).unwrap().with_max_groups_per_dim(3);
        let b = BLOCK_SIZE as usize;
        for (n, key_bits) in [(4 * b + 7, None), (10 * b, Some(9)), (5 * b - 1, Some(3))] {
            let keys: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(0x9E37_79B9) ^ (i >> 3))
                .collect();
            let values: Vec<u32> = (0..n as u32).collect();
            let got = sorter
                .radix_sort_pairs_u32_host(&keys, &values, key_bits)
                .unwrap();
            let (mut k, mut v) = (keys.clone(), values.clone());
            radix_sort_pairs_u32(&mut k, &mut v, key_bits).unwrap();
            assert_eq!(got, (k, v), "n = {n}, key_bits = {key_bits:?}");
        }
    }

    #[test]
    fn gpu_sort_reuses_scratch_when_size_does_not_grow() {
        let Some(ctx) = super::super::test_context() else {
            return;
        };
        let mut sorter = GpuRadixSort::new(&ctx).unwrap();
        let keys: Vec<u32> = (0..70_000u32).rev().collect();
        let values: Vec<u32> = (0..70_000u32).collect();
        sorter.radix_sort_pairs_u32_host(&keys, &values, None).unwrap();
        let scratch = |s: &GpuRadixSort| {
            (
                s.keys_tmp.raw().clone(),
                s.values_tmp.raw().clone(),
                s.block_offsets.raw().clone(),
                s.host_pairs
                    .as_ref()
                    .map(|(k, v)| (k.raw().clone(), v.raw().clone())),
            )
        };
        let before = scratch(&sorter);
        let (k, v) = sorter
            .radix_sort_pairs_u32_host(&keys[..3000], &values[..3000], Some(12))
            .unwrap();
        let (mut want_k, mut want_v) = (keys[..3000].to_vec(), values[..3000].to_vec());
        radix_sort_pairs_u32(&mut want_k, &mut want_v, Some(12)).unwrap();
        assert!(k == want_k && v == want_v);
        assert!(before == scratch(&sorter), "a smaller sort reallocated scratch");
    }
}
