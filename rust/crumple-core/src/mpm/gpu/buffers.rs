//! The device memory of the GPU MPM backend: every buffer a stage binds,
//! its upload from the host model and state, its download, and the copy of
//! the state taken at the start of each step for rollback.
//!
//! Layouts: vectors are `vec4<f32>` (w carries the mass or damping where
//! noted), matrices `mat3x3<f32>` column-major (the CPU `Mat3` is row-major),
//! records as documented in the stage files.

use std::sync::Arc;

use bytemuck::Pod;

use crate::collide::Collider;
use crate::error::{Error, Result};
use crate::gpu::colliders::{collider_sdf_words, collider_sdf_words_len, pack_collider};
use crate::gpu::{GpuBuffer, GpuContext};
use crate::math::{Mat3, Real, Vec3};
use crate::mpm::model::{Model, State};
use crate::mpm::solver::Pin;

use super::materials::{pack_codim_material, pack_volume_material};
use super::stages::stat;

/// Mirrors `StepParams` in `mpm_common.wgsl` (144 bytes; checked against
/// naga's layout of the shader in the tests).
pub(super) use super::step_params::StepParams;

pub(super) fn v4<T: Real>(v: Vec3<T>, w: f32) -> [f32; 4] {
    [v.x.to_f64() as f32, v.y.to_f64() as f32, v.z.to_f64() as f32, w]
}

/// Row-major CPU matrix → WGSL `mat3x3<f32>` storage (columns padded to vec4).
fn m12<T: Real>(m: &Mat3<T>) -> [f32; 12] {
    let e = |i: usize, j: usize| m.m[i][j].to_f64() as f32;
    [
        e(0, 0),
        e(1, 0),
        e(2, 0),
        0.0,
        e(0, 1),
        e(1, 1),
        e(2, 1),
        0.0,
        e(0, 2),
        e(1, 2),
        e(2, 2),
        0.0,
    ]
}

fn from_m12<T: Real>(a: &[f32; 12]) -> Mat3<T> {
    let mut m = Mat3::zero();
    for i in 0..3 {
        for j in 0..3 {
            m.m[i][j] = T::from_f64(f64::from(a[4 * j + i]));
        }
    }
    m
}

fn from_v4<T: Real>(a: &[f32; 4]) -> Vec3<T> {
    Vec3::new(
        T::from_f64(f64::from(a[0])),
        T::from_f64(f64::from(a[1])),
        T::from_f64(f64::from(a[2])),
    )
}

pub(super) struct Buffers {
    pub(super) values: GpuBuffer<u32>,
    pub(super) keys: GpuBuffer<u32>,
    pub(super) hash_keys: GpuBuffer<u32>,
    pub(super) flags: GpuBuffer<u32>,
    pub(super) hash_vals: GpuBuffer<u32>,
    pub(super) hash_ranges: GpuBuffer<u32>,
    pub(super) blocks: GpuBuffer<[u32; 4]>,
    pub(super) x: GpuBuffer<[f32; 4]>,
    pub(super) v: GpuBuffer<[f32; 4]>,
    pub(super) c: GpuBuffer<[f32; 12]>,
    pub(super) pforce: GpuBuffer<[f32; 16]>,
    pub(super) nodes: GpuBuffer<[f32; 4]>,
    pub(super) colliders: GpuBuffer<[f32; 32]>,
    pub(super) collider_sdf: GpuBuffer<f32>,
    pub(super) grad_v: GpuBuffer<[f32; 12]>,
    pub(super) f: GpuBuffer<[f32; 12]>,
    pub(super) d: GpuBuffer<[f32; 4]>,
    pub(super) tangents: GpuBuffer<[f32; 4]>,
    pub(super) elements: GpuBuffer<[u32; 8]>,
    /// `Pin` in advect.wgsl: target xyz, vertex index (u32), velocity xyz, 0.
    pub(super) pins: GpuBuffer<[u32; 8]>,
    pub(super) volume: GpuBuffer<f32>,
    pub(super) vol_material: GpuBuffer<u32>,
    pub(super) vol_materials: GpuBuffer<[f32; 16]>,
    pub(super) codim_materials: GpuBuffer<[f32; 16]>,
    pub(super) elem_forces: GpuBuffer<[f32; 4]>,
    pub(super) vertex_offsets: GpuBuffer<u32>,
    pub(super) vertex_elems: GpuBuffer<u32>,
    pub(super) q: GpuBuffer<f32>,
}

/// All device memory of one simulation and what the host keeps to fill it
/// without allocating in the step loop.
pub(super) struct Device {
    ctx: Arc<GpuContext>,
    pub(super) bufs: Buffers,
    pub(super) params: wgpu::Buffer,
    colours: Vec<wgpu::Buffer>,
    pub(super) stats: wgpu::Buffer,
    pub(super) stats_read: wgpu::Buffer,
    pub(super) indirect: wgpu::Buffer,
    /// Allocated active blocks (node buffer = capacity × 64 nodes).
    pub(super) block_capacity: usize,
    /// Slots of the block hash table (a power of two ≥ 2 × capacity).
    pub(super) hash_slots: usize,
    /// Particles uploaded.
    pub(super) n: usize,
    /// Set when a buffer was reallocated or resized: bind groups bind whole
    /// buffers, so the recorded plan must be rebuilt.
    pub(super) rebind: bool,
    /// Identity of each collider's distance grid (its `Arc` address, 0 for
    /// analytic shapes) as uploaded; the grids are re-uploaded only when this
    /// list changes, not when a collider moves.
    sdf_ids: Vec<usize>,
    sdf_ids_now: Vec<usize>,
    collider_recs: Vec<[f32; 32]>,
    pin_recs: Vec<[u32; 8]>,
    /// The particle state at the start of the step in progress, on the
    /// device (one buffer per state buffer, same size): a diverged step is
    /// undone by copying it back, as the CPU backend restores its host copy.
    backup: Vec<wgpu::Buffer>,
}

pub(super) fn raw_buffer(
    ctx: &GpuContext,
    bytes: u64,
    usage: wgpu::BufferUsages,
    label: &str,
) -> Result<wgpu::Buffer> {
    ctx.capture(&format!("allocating {label}"), || {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(16),
            usage,
            mapped_at_creation: false,
        })
    })
}

/// Uploads `data`, or one zeroed element when it is empty: a binding of a
/// struct array must hold at least one element, and the kernels never read
/// past the counts in `StepParams`.
pub(super) fn put<T: Pod>(buf: &mut GpuBuffer<T>, data: &[T]) -> Result<()> {
    if data.is_empty() {
        buf.upload(&[T::zeroed()])
    } else {
        buf.upload(data)
    }
}

impl Device {
    /// Empty buffers on `ctx`, sized by the first [`Device::upload`].
    pub(super) fn new(ctx: &Arc<GpuContext>) -> Result<Self> {
        let z = |label: &str| GpuBuffer::<u32>::zeroed(ctx, 0, label);
        let bufs = Buffers {
            values: z("mpm order")?,
            keys: z("mpm keys")?,
            hash_keys: z("mpm block hash keys")?,
            flags: z("mpm block hash flags")?,
            hash_vals: z("mpm block hash values")?,
            hash_ranges: z("mpm block hash ranges")?,
            blocks: GpuBuffer::zeroed(ctx, 0, "mpm blocks")?,
            x: GpuBuffer::zeroed(ctx, 0, "mpm x")?,
            v: GpuBuffer::zeroed(ctx, 0, "mpm v")?,
            c: GpuBuffer::zeroed(ctx, 0, "mpm C")?,
            pforce: GpuBuffer::zeroed(ctx, 0, "mpm stress")?,
            nodes: GpuBuffer::zeroed(ctx, 0, "mpm nodes")?,
            colliders: GpuBuffer::zeroed(ctx, 0, "mpm colliders")?,
            collider_sdf: GpuBuffer::zeroed(ctx, 0, "mpm collider sdf")?,
            grad_v: GpuBuffer::zeroed(ctx, 0, "mpm grad v")?,
            f: GpuBuffer::zeroed(ctx, 0, "mpm F")?,
            d: GpuBuffer::zeroed(ctx, 0, "mpm d")?,
            tangents: GpuBuffer::zeroed(ctx, 0, "mpm tangents")?,
            elements: GpuBuffer::zeroed(ctx, 0, "mpm elements")?,
            pins: GpuBuffer::zeroed(ctx, 0, "mpm pins")?,
            volume: GpuBuffer::zeroed(ctx, 0, "mpm volume")?,
            vol_material: z("mpm volume material")?,
            vol_materials: GpuBuffer::zeroed(ctx, 0, "mpm volume materials")?,
            codim_materials: GpuBuffer::zeroed(ctx, 0, "mpm codim materials")?,
            elem_forces: GpuBuffer::zeroed(ctx, 0, "mpm element forces")?,
            vertex_offsets: z("mpm vertex offsets")?,
            vertex_elems: z("mpm vertex elements")?,
            q: GpuBuffer::zeroed(ctx, 0, "mpm q")?,
        };
        let uniform = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
        let align = u64::from(ctx.limits().min_uniform_buffer_offset_alignment).max(16);
        let mut colours = Vec::with_capacity(8);
        for c in 0..8u32 {
            let b = raw_buffer(ctx, align, uniform, "mpm colour")?;
            ctx.queue().write_buffer(&b, 0, bytemuck::bytes_of(&[c, 0, 0, 0]));
            colours.push(b);
        }
        Ok(Self {
            ctx: Arc::clone(ctx),
            bufs,
            params: raw_buffer(
                ctx,
                std::mem::size_of::<StepParams>() as u64,
                uniform,
                "mpm params",
            )?,
            colours,
            stats: raw_buffer(
                ctx,
                (stat::WORDS * 4) as u64,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                "mpm stats",
            )?,
            stats_read: raw_buffer(
                ctx,
                (stat::WORDS * 4) as u64,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                "mpm stats readback",
            )?,
            indirect: raw_buffer(
                ctx,
                16,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
                "mpm indirect",
            )?,
            block_capacity: 0,
            hash_slots: 0,
            n: 0,
            rebind: true,
            sdf_ids: vec![usize::MAX],
            sdf_ids_now: Vec::new(),
            collider_recs: Vec::new(),
            pin_recs: Vec::new(),
            backup: Vec::new(),
        })
    }

    /// Uploads the whole model and state (after the host changed either).
    pub(super) fn upload<T: Real>(&mut self, model: &Model<T>, state: &State<T>) -> Result<()> {
        let n = model.num_particles();
        let b = &mut self.bufs;
        let xs: Vec<[f32; 4]> = (0..n)
            .map(|p| v4(state.x[p], model.mass[p].to_f64() as f32))
            .collect();
        put(&mut b.x, &xs)?;
        let vs: Vec<[f32; 4]> = (0..n)
            .map(|p| v4(state.v[p], model.damping[p].to_f64() as f32))
            .collect();
        put(&mut b.v, &vs)?;
        put(&mut b.c, &state.c.iter().map(m12).collect::<Vec<_>>())?;
        put(&mut b.f, &state.f.iter().map(m12).collect::<Vec<_>>())?;
        put(
            &mut b.q,
            &state.q.iter().map(|q| q.to_f64() as f32).collect::<Vec<_>>(),
        )?;
        let ds: Vec<[f32; 4]> = state
            .d
            .iter()
            .flat_map(|d| [v4(d[0], 0.0), v4(d[1], 0.0)])
            .collect();
        put(&mut b.d, &ds)?;
        let ts: Vec<[f32; 4]> = state
            .tangents
            .iter()
            .flat_map(|d| [v4(d[0], 0.0), v4(d[1], 0.0)])
            .collect();
        put(&mut b.tangents, &ts)?;
        put(
            &mut b.volume,
            &model.volume.iter().map(|v| v.to_f64() as f32).collect::<Vec<_>>(),
        )?;
        put(
            &mut b.vol_material,
            &model
                .vol_material
                .iter()
                .map(|&m| u32::from(m))
                .collect::<Vec<_>>(),
        )?;
        let cast_f32 = |x: T| x.to_f64() as f32;
        let vm: Vec<[f32; 16]> = model
            .volume_materials
            .iter()
            .map(|m| pack_volume_material(&cast_volume(m, cast_f32)))
            .collect();
        put(&mut b.vol_materials, &vm)?;
        let cm: Vec<[f32; 16]> = model
            .codim_materials
            .iter()
            .map(|m| pack_codim_material(&cast_codim(m)))
            .collect();
        put(&mut b.codim_materials, &cm)?;
        let els: Vec<[u32; 8]> = model
            .elements
            .iter()
            .map(|e| {
                let f = |x: T| (x.to_f64() as f32).to_bits();
                [
                    e.vertices[0],
                    e.vertices[1],
                    e.vertices[2],
                    u32::from(e.dim) | (u32::from(e.material) << 8),
                    f(e.dm_inv[0]),
                    f(e.dm_inv[1]),
                    f(e.dm_inv[2]),
                    0,
                ]
            })
            .collect();
        put(&mut b.elements, &els)?;
        put(&mut b.vertex_offsets, &model.vertex_offsets)?;
        let ve: Vec<u32> = model
            .vertex_elems
            .iter()
            .map(|&(e, c)| e * 4 + u32::from(c))
            .collect();
        put(&mut b.vertex_elems, &ve)?;
        // scratch sized by the particle count
        let ne = model.elements.len();
        for buf in [&mut b.values, &mut b.keys] {
            put(buf, &vec![0u32; n])?;
        }
        put(&mut b.pforce, &vec![[0f32; 16]; n])?;
        put(&mut b.grad_v, &vec![[0f32; 12]; n])?;
        put(&mut b.elem_forces, &vec![[0f32; 4]; 3 * ne])?;
        self.n = n;
        self.rebind = true;
        if self.block_capacity == 0 {
            // first guess: every particle in its own block with its halo, capped
            self.grow(n.clamp(64, 1 << 16))?;
        }
        Ok(())
    }

    pub(super) fn grow(&mut self, blocks: usize) -> Result<()> {
        let max_nodes = self.ctx.max_binding_elements(16) as usize;
        if blocks.saturating_mul(64) > max_nodes {
            return Err(Error::Backend(format!(
                "the sparse grid needs {blocks} blocks of 64 nodes, more than '{}' can bind in one \
                 buffer ({max_nodes} nodes); use a larger dx or backend=\"cpu\"",
                self.ctx.adapter_info().name
            )));
        }
        self.bufs.nodes.resize_uninit(blocks * 64)?;
        self.bufs.blocks.resize_uninit(blocks)?;
        // at most half full while the active blocks fit the capacity
        let slots = (2 * blocks).next_power_of_two().max(64);
        put(&mut self.bufs.hash_keys, &vec![0u32; slots])?;
        put(&mut self.bufs.hash_vals, &vec![0u32; slots])?;
        put(&mut self.bufs.hash_ranges, &vec![0u32; 2 * slots])?;
        put(&mut self.bufs.flags, &vec![0u32; slots + 1])?;
        self.hash_slots = slots;
        self.block_capacity = blocks;
        self.rebind = true;
        Ok(())
    }

    /// Total mass on the grid nodes of the last step (kg), summed in node order.
    pub(super) fn grid_mass(&self, active_blocks: usize) -> Result<f64> {
        let nodes = self.bufs.nodes.read()?;
        let n = (active_blocks * 64).min(nodes.len());
        Ok(nodes[..n].iter().map(|a| f64::from(a[3]).max(0.0)).sum())
    }

    /// Reads the state back into `state` (positions, velocities, C, F, q, d, tangents).
    pub(super) fn download<T: Real>(&self, state: &mut State<T>) -> Result<()> {
        let b = &self.bufs;
        let x = b.x.read()?;
        let v = b.v.read()?;
        let c = b.c.read()?;
        for p in 0..self.n {
            state.x[p] = from_v4(&x[p]);
            state.v[p] = from_v4(&v[p]);
            state.c[p] = from_m12(&c[p]);
        }
        let f = b.f.read()?;
        for (dst, src) in state.f.iter_mut().zip(&f) {
            *dst = from_m12(src);
        }
        let q = b.q.read()?;
        for (dst, src) in state.q.iter_mut().zip(&q) {
            *dst = T::from_f64(f64::from(*src));
        }
        let d = b.d.read()?;
        let t = b.tangents.read()?;
        for (e, (dd, tt)) in state.d.iter_mut().zip(state.tangents.iter_mut()).enumerate() {
            *dd = [from_v4(&d[2 * e]), from_v4(&d[2 * e + 1])];
            *tt = [from_v4(&t[2 * e]), from_v4(&t[2 * e + 1])];
        }
        Ok(())
    }

    /// Uploads the colliders' current poses (and their SDF grids when the
    /// set changed).
    pub(super) fn upload_colliders(&mut self, colliders: &[Collider]) -> Result<()> {
        let words: usize = colliders.iter().map(collider_sdf_words_len).sum();
        let mut recs = std::mem::take(&mut self.collider_recs);
        recs.clear();
        let mut off = 0usize;
        for c in colliders {
            let o = u32::try_from(off).map_err(|_| {
                Error::Backend(
                    "the mesh colliders' distance grids hold more than 2³² values; coarsen them or use \
                     backend=\"cpu\""
                        .to_owned(),
                )
            })?;
            recs.push(pack_collider(c, o)?);
            off += collider_sdf_words_len(c);
        }
        let mut ids = std::mem::take(&mut self.sdf_ids_now);
        ids.clear();
        ids.extend(colliders.iter().map(|c| match c.shape() {
            crate::collide::Shape::Mesh(m) => Arc::as_ptr(m) as usize,
            _ => 0,
        }));
        let changed = ids != self.sdf_ids;
        self.sdf_ids_now = ids;
        if changed {
            self.sdf_ids.clone_from(&self.sdf_ids_now);
            let mut all = Vec::with_capacity(words);
            for c in colliders {
                all.extend(collider_sdf_words(c));
            }
            // bind groups bind `len` elements: a new length needs a new plan
            let old_cap = (self.bufs.collider_sdf.capacity(), self.bufs.collider_sdf.len());
            put(&mut self.bufs.collider_sdf, &all)?;
            if (self.bufs.collider_sdf.capacity(), self.bufs.collider_sdf.len()) != old_cap {
                self.rebind = true;
            }
        }
        // bind groups bind `len` elements: a new length needs a new plan
        let old_cap = (self.bufs.colliders.capacity(), self.bufs.colliders.len());
        let r = put(&mut self.bufs.colliders, &recs);
        self.collider_recs = recs;
        r?;
        if (self.bufs.colliders.capacity(), self.bufs.colliders.len()) != old_cap {
            self.rebind = true;
        }
        Ok(())
    }

    pub(super) fn upload_pins(&mut self, pins: &[Pin], t_new: f64) -> Result<()> {
        // reused between steps: the step loop does not allocate
        let mut recs = std::mem::take(&mut self.pin_recs);
        recs.clear();
        recs.extend(pins.iter().map(|p| {
            let x = p.position(t_new);
            let f = |v: f64| (v as f32).to_bits();
            [f(x.x), f(x.y), f(x.z), p.vertex, f(p.v.x), f(p.v.y), f(p.v.z), 0]
        }));
        // bind groups bind `len` elements: a new length needs a new plan
        let old_cap = (self.bufs.pins.capacity(), self.bufs.pins.len());
        let r = put(&mut self.bufs.pins, &recs);
        self.pin_recs = recs;
        r?;
        if (self.bufs.pins.capacity(), self.bufs.pins.len()) != old_cap {
            self.rebind = true;
        }
        Ok(())
    }

    /// The buffer bound to the shader variable `name` (the names the stage
    /// files declare; `order` and `values` are the same array, read-only in
    /// some stages), with `colour` selecting the P2G colour uniform.
    pub(super) fn resource(&self, name: &str, colour: usize) -> Result<wgpu::BindingResource<'_>> {
        let bufs = &self.bufs;
        fn whole(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: 0,
                size: None,
            })
        }
        Ok(match name {
            "params" => whole(&self.params),
            "pass_colour" => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &self.colours[colour],
                offset: 0,
                size: wgpu::BufferSize::new(16),
            }),
            "order" | "values" => bufs.values.binding(),
            "blocks" => bufs.blocks.binding(),
            "hash_vals" => bufs.hash_vals.binding(),
            "x" => bufs.x.binding(),
            "v" => bufs.v.binding(),
            "c" => bufs.c.binding(),
            "pforce" => bufs.pforce.binding(),
            "nodes" => bufs.nodes.binding(),
            "stats" => whole(&self.stats),
            "colliders" => bufs.colliders.binding(),
            "collider_sdf" => bufs.collider_sdf.binding(),
            "grad_v" => bufs.grad_v.binding(),
            "f" => bufs.f.binding(),
            "d" => bufs.d.binding(),
            "tangents" => bufs.tangents.binding(),
            "elements" => bufs.elements.binding(),
            "pins" => bufs.pins.binding(),
            "volume" => bufs.volume.binding(),
            "vol_material" => bufs.vol_material.binding(),
            "vol_materials" => bufs.vol_materials.binding(),
            "codim_materials" => bufs.codim_materials.binding(),
            "elem_forces" => bufs.elem_forces.binding(),
            "vertex_offsets" => bufs.vertex_offsets.binding(),
            "vertex_elems" => bufs.vertex_elems.binding(),
            "q" => bufs.q.binding(),
            "keys" => bufs.keys.binding(),
            "hash_keys" => bufs.hash_keys.binding(),
            "flags" => bufs.flags.binding(),
            "indirect" => whole(&self.indirect),
            "hash_ranges" => bufs.hash_ranges.binding(),
            other => {
                return Err(Error::Backend(format!(
                    "internal: an MPM stage declares the resource '{other}', which the backend does not have"
                )));
            }
        })
    }

    /// The buffers a step changes that make up the particle state.
    pub(super) fn state_buffers(&self) -> [&wgpu::Buffer; 7] {
        let b = &self.bufs;
        [
            b.x.raw(),
            b.v.raw(),
            b.c.raw(),
            b.f.raw(),
            b.d.raw(),
            b.tangents.raw(),
            b.q.raw(),
        ]
    }

    /// (Re)allocates the backup buffers to the state buffers' sizes.
    /// The start-of-step copies, in [`Device::state_buffers`] order.
    pub(super) fn backup(&self) -> &[wgpu::Buffer] {
        &self.backup
    }

    /// (Re)allocates the backup buffers to the state buffers' sizes.
    pub(super) fn ensure_backup(&mut self) -> Result<()> {
        let sizes: Vec<u64> = self.state_buffers().iter().map(|b| b.size()).collect();
        if self.backup.iter().map(|b| b.size()).eq(sizes.iter().copied()) {
            return Ok(());
        }
        let usage = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        self.backup = sizes
            .iter()
            .map(|&bytes| raw_buffer(&self.ctx, bytes, usage, "mpm state backup"))
            .collect::<Result<_>>()?;
        Ok(())
    }

    /// Copies the state saved at the start of the last step back (after a
    /// diverged step).
    pub(super) fn restore_backup(&self) -> Result<()> {
        let ctx = &self.ctx;
        let mut encoder = ctx.encoder("mpm rollback");
        for (dst, src) in self.state_buffers().into_iter().zip(&self.backup) {
            encoder.copy_buffer_to_buffer(src, 0, dst, 0, dst.size());
        }
        ctx.capture("restoring the MPM state", || {
            ctx.queue().submit([encoder.finish()]);
        })
    }
}

fn cast_volume<T: Real>(
    m: &crate::mpm::VolumeMaterial<T>,
    f: impl Fn(T) -> f32,
) -> crate::mpm::VolumeMaterial<f32> {
    use crate::mpm::VolumeMaterial as V;
    match m {
        V::Elastic { mu, lambda } => V::Elastic {
            mu: f(*mu),
            lambda: f(*lambda),
        },
        V::Sand(s) => V::Sand(s.cast()),
        V::Goo(g) => V::Goo(g.cast()),
    }
}

fn cast_codim<T: Real>(m: &crate::mpm::CodimMaterial<T>) -> crate::mpm::CodimMaterial<f32> {
    use crate::mpm::CodimMaterial as C;
    match m {
        C::Surface(s) => C::Surface(s.cast()),
        C::Curve(c) => C::Curve(c.cast()),
    }
}
