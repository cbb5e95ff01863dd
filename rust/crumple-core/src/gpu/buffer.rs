//! Typed persistent storage buffers: state lives on the device across steps
//! and comes back to the host only when asked.

use std::marker::PhantomData;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use bytemuck::Pod;

use super::GpuContext;
use crate::error::{Error, Result};

/// A device array of `len` values of `T`, usable as a storage buffer and as a
/// copy source and destination.
///
/// The allocation (`capacity`) only grows: [`GpuBuffer::upload`] of a shorter
/// array reuses it, so per-step uploads do not allocate.
pub struct GpuBuffer<T: Pod> {
    ctx: Arc<GpuContext>,
    buffer: wgpu::Buffer,
    len: usize,
    capacity: usize,
    _marker: PhantomData<T>,
}

impl<T: Pod> std::fmt::Debug for GpuBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .finish()
    }
}

/// Bytes to allocate for `len` values: at least 4 and a multiple of 4,
/// because wgpu rejects empty bindings and copies of unaligned sizes.
fn padded_bytes<T>(len: usize) -> Result<u64> {
    let bytes = len
        .checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| Error::InvalidInput(format!("array of {len} elements is too large")))?;
    Ok((bytes.max(4) as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT))
}

impl<T: Pod> GpuBuffer<T> {
    /// A buffer of `len` zeros.
    pub fn zeroed(ctx: &Arc<GpuContext>, len: usize, label: &str) -> Result<Self> {
        let buffer = allocate::<T>(ctx, len, label)?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            buffer,
            len,
            capacity: len,
            _marker: PhantomData,
        })
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(ctx: &Arc<GpuContext>, data: &[T], label: &str) -> Result<Self> {
        let mut b = Self::zeroed(ctx, data.len(), label)?;
        b.upload(data)?;
        Ok(b)
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of values the allocation can hold without growing.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The context the buffer belongs to.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// The underlying wgpu buffer (storage, copy source and destination).
    pub fn raw(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// Replaces the contents with `data` (the length becomes `data.len()`).
    /// Reallocates only when `data` is longer than the capacity; the write is
    /// queued and happens before the next submission.
    pub fn upload(&mut self, data: &[T]) -> Result<()> {
        self.resize_uninit(data.len())?;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        if bytes.is_empty() {
            return Ok(());
        }
        let ctx = Arc::clone(&self.ctx);
        ctx.capture("uploading a buffer", || {
            if bytes.len().is_multiple_of(4) {
                ctx.queue().write_buffer(&self.buffer, 0, bytes);
            } else {
                // Queue writes must be 4-byte multiples; pad the tail.
                let mut padded = bytes.to_vec();
                padded.resize(bytes.len().next_multiple_of(4), 0);
                ctx.queue().write_buffer(&self.buffer, 0, &padded);
            }
        })
    }

    /// Sets the length to `len`, growing the allocation if needed. Contents
    /// are unspecified after growing (callers overwrite them).
    pub(crate) fn resize_uninit(&mut self, len: usize) -> Result<()> {
        if len > self.capacity {
            self.buffer = allocate::<T>(&self.ctx, len, "crumple buffer")?;
            self.capacity = len;
        }
        self.len = len;
        Ok(())
    }

    /// Copies the values back to the host through a staging buffer and
    /// waits for them. This is the only path from device to host.
    pub fn read(&self) -> Result<Vec<T>> {
        if self.len == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(vec![T::zeroed(); self.len]);
        }
        let ctx = &self.ctx;
        let bytes = (self.len * std::mem::size_of::<T>()) as u64;
        let padded = bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let staging = ctx.capture("allocating a readback buffer", || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("crumple readback"),
                size: padded,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        let mut encoder = ctx.encoder("readback");
        encoder.copy_buffer_to_buffer(&self.buffer, 0, &staging, 0, padded);
        ctx.submit_and_wait("reading back a buffer", encoder)?;

        map_and_wait(
            ctx,
            &staging,
            "mapping a readback buffer",
            Duration::from_secs(120),
        )?;
        let out = {
            let view = staging
                .get_mapped_range(..)
                .map_err(|e| Error::Backend(format!("reading a mapped buffer failed: {e}")))?;
            // `pod_collect_to_vec` copies, so the mapped bytes need not be
            // aligned for T.
            let mut v: Vec<T> = bytemuck::pod_collect_to_vec(&view[..bytes as usize]);
            v.truncate(self.len);
            v
        };
        staging.unmap();
        Ok(out)
    }

    /// Binding of the first `len` values, for bind groups.
    pub(crate) fn binding(&self) -> wgpu::BindingResource<'_> {
        let bytes = padded_bytes::<T>(self.len).unwrap_or(4);
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.buffer,
            offset: 0,
            size: wgpu::BufferSize::new(bytes.min(self.buffer.size())),
        })
    }
}

/// Maps all of `buffer` (a `MAP_READ` buffer whose copy was submitted) for
/// reading and waits for it, polling the device; `what` names the operation
/// in errors. The map callback runs inside *some* thread's device poll: when
/// several threads share the device (tests, Python threads), another
/// thread's poll may deliver it just after ours returned, so this polls and
/// waits for the callback together, until `limit`.
pub(crate) fn map_and_wait(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    what: &str,
    limit: Duration,
) -> Result<()> {
    let (tx, rx) = mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |r| {
        // The receiver outlives the poll below; a failed send is impossible.
        let _ = tx.send(r);
    });
    let deadline = Instant::now() + limit;
    loop {
        ctx.wait(what)?;
        match rx.recv_timeout(Duration::from_millis(2)) {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => return Err(Error::Backend(format!("{what} failed: {e}"))),
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
            Err(_) => {
                return Err(Error::Backend(format!(
                    "{what} did not complete within {} s (device lost?)",
                    limit.as_secs()
                )));
            }
        }
    }
}

/// Reads `out.len()` u32 words from the start of `buffer` (a `MAP_READ`
/// buffer whose copy was submitted): [`map_and_wait`], copy, unmap. A
/// solver's per-step stats block comes back this way, through a buffer made
/// once, so a step allocates nothing to read it.
pub(crate) fn read_mapped_u32s(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    out: &mut [u32],
    what: &str,
    limit: Duration,
) -> Result<()> {
    map_and_wait(ctx, buffer, what, limit)?;
    {
        let view = buffer
            .slice(..)
            .get_mapped_range()
            .map_err(|e| Error::Backend(format!("{what} failed: {e}")))?;
        out.copy_from_slice(bytemuck::cast_slice(&view[..out.len() * 4]));
    }
    buffer.unmap();
    Ok(())
}

fn allocate<T>(ctx: &GpuContext, len: usize, label: &str) -> Result<wgpu::Buffer> {
    let size = padded_bytes::<T>(len)?;
    if size > ctx.limits().max_buffer_size {
        return Err(Error::Backend(format!(
            "{label}: {size} bytes exceed the GPU's largest buffer ({} bytes on '{}'); \
             reduce the problem size or use backend=\"cpu\"",
            ctx.limits().max_buffer_size,
            ctx.adapter_info().name
        )));
    }
    ctx.capture(&format!("allocating {size} bytes for {label}"), || {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    })
}
