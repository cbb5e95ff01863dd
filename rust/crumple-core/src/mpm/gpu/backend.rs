//! The MPM step on the device: buffers, pipelines and the recorded step.
//!
//! One WGSL file per stage, named like its CPU twin in [`crate::mpm::solver`]
//! (`bin`, `grid_build` = `SparseGrid::rebuild`, `stress`, `p2g`,
//! `grid_update`, `g2p`, `advect`, `plasticity`). A step is one command
//! buffer; state stays on the device and comes back only through
//! [`GpuMpm::download`]. The host reads back a 64-byte stats block per step:
//! the largest speed (the CFL rule of spec §3.2 needs it to choose the next
//! Δt), the first particle outside the domain or non-finite (the errors the
//! CPU reports), the number of active blocks (so the node buffer grows when
//! particles spread: a step that needs more blocks than allocated is a no-op
//! on the device and is re-run after growing) and the return-map events.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, mpsc};

use bytemuck::{Pod, Zeroable};

use crate::collide::Collider;
use crate::error::{Error, Result};
use crate::gpu::dispatch::{Dispatch, dispatch_2d};
use crate::gpu::radix_sort::SortPlan;
use crate::gpu::{GpuBuffer, GpuContext, GpuRadixSort, GpuScan};
use crate::math::{Mat3, Real, Vec3};
use crate::mpm::model::{Model, State};
use crate::mpm::params::{Kernel, OutOfDomain, SolverParams, Transfer};
use crate::mpm::solver::Pin;

use super::colliders::{COLLIDERS_WGSL, collider_sdf_words, pack_collider};
use super::materials::{CONSTITUTIVE_WGSL, pack_codim_material, pack_volume_material};

const COMMON: &str = include_str!("shaders/mpm_common.wgsl");
const ELEMENTS: &str = include_str!("shaders/elements.wgsl");

/// Storage buffers the largest stage binds at once (`stress.wgsl`).
pub const STORAGE_BUFFERS_NEEDED: u32 = 13;

/// The stage files and the libraries each one needs, in concatenation order.
fn stage_source(name: &str) -> &'static str {
    static SOURCES: OnceLock<BTreeMap<&'static str, String>> = OnceLock::new();
    let all = SOURCES.get_or_init(|| {
        let mut m = BTreeMap::new();
        let mut add = |name: &'static str, parts: &[&str]| {
            let mut s = String::from(COMMON);
            for p in parts {
                s.push('\n');
                s.push_str(p);
            }
            m.insert(name, s);
        };
        add("bin", &[include_str!("shaders/bin.wgsl")]);
        add("grid_build", &[include_str!("shaders/grid_build.wgsl")]);
        add(
            "stress",
            &[CONSTITUTIVE_WGSL, ELEMENTS, include_str!("shaders/stress.wgsl")],
        );
        add(
            "p2g",
            &[
                include_str!("shaders/hash.wgsl"),
                include_str!("shaders/p2g.wgsl"),
            ],
        );
        add(
            "grid_update",
            &[COLLIDERS_WGSL, include_str!("shaders/grid_update.wgsl")],
        );
        add(
            "g2p",
            &[
                include_str!("shaders/hash.wgsl"),
                include_str!("shaders/g2p.wgsl"),
            ],
        );
        add("advect", &[ELEMENTS, include_str!("shaders/advect.wgsl")]);
        add(
            "plasticity",
            &[
                CONSTITUTIVE_WGSL,
                ELEMENTS,
                include_str!("shaders/plasticity.wgsl"),
            ],
        );
        m
    });
    all.get(name).map(String::as_str).unwrap_or("")
}

/// Names of the stage modules, for validation tests.
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

/// The full WGSL source of stage `name` (prelude and libraries included).
pub fn stage_wgsl(name: &str) -> &'static str {
    stage_source(name)
}

/// How a binding is declared in a stage's source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BindKind {
    Uniform,
    ReadOnly,
    ReadWrite,
}

/// `(binding, kind)` of every `@group(0) @binding(N) var<…>` in `source`:
/// the pipeline layout lists each binding the file declares, so every entry
/// point of a file shares one bind group.
fn declared_bindings(source: &str) -> Vec<(u32, BindKind)> {
    let mut out = BTreeMap::new();
    for line in source.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("@group(0) @binding(") else {
            continue;
        };
        let Some((num, decl)) = rest.split_once(')') else {
            continue;
        };
        let Ok(b) = num.parse::<u32>() else { continue };
        let kind = if decl.contains("var<uniform>") {
            BindKind::Uniform
        } else if decl.contains("read_write") {
            BindKind::ReadWrite
        } else {
            BindKind::ReadOnly
        };
        out.insert(b, kind);
    }
    out.into_iter().collect()
}

/// One compiled stage file: its layout and pipelines by entry point.
struct StageModule {
    layout: wgpu::BindGroupLayout,
    bindings: Vec<(u32, BindKind)>,
    pipelines: BTreeMap<&'static str, wgpu::ComputePipeline>,
}

impl StageModule {
    fn new(ctx: &GpuContext, name: &'static str, entries: &[&'static str]) -> Result<Self> {
        let source = stage_source(name);
        let bindings = declared_bindings(source);
        let storage = bindings.iter().filter(|b| b.1 != BindKind::Uniform).count() as u32;
        let limit = ctx.limits().max_storage_buffers_per_shader_stage;
        if storage > limit {
            return Err(Error::Backend(format!(
                "the MPM stage {name} binds {storage} storage buffers but '{}' allows {limit} per \
                 shader stage; use backend=\"cpu\" on this adapter",
                ctx.adapter_info().name
            )));
        }
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
            .iter()
            .map(|&(binding, kind)| wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match kind {
                        BindKind::Uniform => wgpu::BufferBindingType::Uniform,
                        BindKind::ReadOnly => wgpu::BufferBindingType::Storage { read_only: true },
                        BindKind::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let device = ctx.device();
        let what = format!("compiling the MPM stage {name}.wgsl");
        let module = ctx.capture(&what, || {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            })
        })?;
        let layout = ctx.capture(&what, || {
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(name),
                entries: &layout_entries,
            })
        })?;
        let pl = ctx.capture(&what, || {
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(name),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            })
        })?;
        let mut pipelines = BTreeMap::new();
        for &entry in entries {
            let p = ctx.capture(&format!("creating the MPM pipeline {name}::{entry}"), || {
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: Some(&pl),
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: wgpu::PipelineCompilationOptions::default(),
                    cache: None,
                })
            })?;
            pipelines.insert(entry, p);
        }
        Ok(Self {
            layout,
            bindings,
            pipelines,
        })
    }
}

/// Compiled stages per context. The entry holds a weak reference, so a
/// dropped context's entry is recognised (and pruned) even if a new context
/// is later allocated at the same address.
type StageCache = std::sync::Mutex<Vec<(std::sync::Weak<GpuContext>, Arc<Stages>)>>;

/// All stage modules, compiled once per context.
struct Stages {
    modules: BTreeMap<&'static str, StageModule>,
}

impl Stages {
    fn get(ctx: &Arc<GpuContext>) -> Result<Arc<Stages>> {
        static CACHE: OnceLock<StageCache> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut guard = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        guard.retain(|(w, _)| w.strong_count() > 0);
        if let Some((_, s)) = guard
            .iter()
            .find(|(w, _)| w.upgrade().is_some_and(|c| Arc::ptr_eq(&c, ctx)))
        {
            return Ok(Arc::clone(s));
        }
        let mut modules = BTreeMap::new();
        let specs: [(&'static str, &[&'static str]); 8] = [
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
        for (name, entries) in specs {
            modules.insert(name, StageModule::new(ctx, name, entries)?);
        }
        let s = Arc::new(Stages { modules });
        guard.push((Arc::downgrade(ctx), Arc::clone(&s)));
        Ok(s)
    }
}

/// Mirrors `StepParams` in `mpm_common.wgsl` (144 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct StepParams {
    lower: [f32; 3],
    dx: f32,
    inv_dx: f32,
    dt: f32,
    d_inv: f32,
    kernel_k: u32,
    gravity: [f32; 3],
    mls: u32,
    hi: [f32; 3],
    lo: f32,
    wall_hi: [u32; 3],
    pad: u32,
    hash_mask: u32,
    lo_clamp: f32,
    hash_pad1: u32,
    n_particles: u32,
    vol_start: u32,
    vol_end: u32,
    vert_start: u32,
    vert_end: u32,
    elem_start: u32,
    elem_end: u32,
    flags: u32,
    n_colliders: u32,
    n_pins: u32,
    block_capacity: u32,
    clamp: u32,
    kernel_shift: f32,
}

/// Indices of the stats block (see `mpm_common.wgsl`).
const ST_MAX_SPEED: usize = 0;
const ST_BAD_DOMAIN: usize = 1;
const ST_BAD_FINITE: usize = 2;
const ST_BLOCKS: usize = 3;
const ST_OVERFLOW: usize = 4;
const ST_EVENTS: usize = 5;
const STATS_WORDS: usize = 16;

/// What one device step reports back.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Largest particle speed after the step, m/s.
    pub max_speed: f64,
    /// Active blocks of the sparse grid.
    pub active_blocks: u32,
    /// Return-map events by [`crate::mpm::ReturnEvent`] discriminant.
    pub events: [u32; 5],
}

/// Why a device step did not complete.
#[derive(Debug)]
pub enum StepOutcome {
    /// The step ran.
    Done(StepStats),
    /// Particle `p` is outside the domain; nothing moved.
    OutsideDomain(usize),
}

fn v4<T: Real>(v: Vec3<T>, w: f32) -> [f32; 4] {
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

/// The device copy of an MPM model and state, and the step.
pub struct GpuMpm {
    ctx: Arc<GpuContext>,
    stages: Arc<Stages>,
    params: wgpu::Buffer,
    colours: Vec<wgpu::Buffer>,
    stats: wgpu::Buffer,
    stats_read: wgpu::Buffer,
    indirect: wgpu::Buffer,
    sort: GpuRadixSort,
    scan: GpuScan,
    bufs: Buffers,
    /// Allocated active blocks (node buffer = capacity × 64 nodes).
    block_capacity: usize,
    /// Slots of the block hash table (a power of two ≥ 2 × capacity).
    hash_slots: usize,
    key_bits: u32,
    n: usize,
    counts: (usize, usize, usize, usize),
    /// Recorded plans, rebuilt when a buffer is reallocated.
    plan: Option<Plan>,
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

impl std::fmt::Debug for GpuMpm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuMpm")
            .field("adapter", &self.ctx.adapter_info().name)
            .field("particles", &self.n)
            .field("block_capacity", &self.block_capacity)
            .finish_non_exhaustive()
    }
}

struct Buffers {
    values: GpuBuffer<u32>,
    keys: GpuBuffer<u32>,
    hash_keys: GpuBuffer<u32>,
    flags: GpuBuffer<u32>,
    hash_vals: GpuBuffer<u32>,
    hash_ranges: GpuBuffer<u32>,
    blocks: GpuBuffer<[u32; 4]>,
    x: GpuBuffer<[f32; 4]>,
    v: GpuBuffer<[f32; 4]>,
    c: GpuBuffer<[f32; 12]>,
    pforce: GpuBuffer<[f32; 16]>,
    nodes: GpuBuffer<[f32; 4]>,
    colliders: GpuBuffer<[f32; 32]>,
    collider_sdf: GpuBuffer<f32>,
    grad_v: GpuBuffer<[f32; 12]>,
    f: GpuBuffer<[f32; 12]>,
    d: GpuBuffer<[f32; 4]>,
    tangents: GpuBuffer<[f32; 4]>,
    elements: GpuBuffer<[u32; 8]>,
    /// `Pin` in advect.wgsl: target xyz, vertex index (u32), velocity xyz, 0.
    pins: GpuBuffer<[u32; 8]>,
    volume: GpuBuffer<f32>,
    vol_material: GpuBuffer<u32>,
    vol_materials: GpuBuffer<[f32; 16]>,
    codim_materials: GpuBuffer<[f32; 16]>,
    elem_forces: GpuBuffer<[f32; 4]>,
    vertex_offsets: GpuBuffer<u32>,
    vertex_elems: GpuBuffer<u32>,
    q: GpuBuffer<f32>,
}

struct Plan {
    sort: SortPlan,
    scan: Vec<Dispatch>,
    groups: BTreeMap<&'static str, wgpu::BindGroup>,
    p2g: Vec<wgpu::BindGroup>,
}

fn raw_buffer(ctx: &GpuContext, bytes: u64, usage: wgpu::BufferUsages, label: &str) -> Result<wgpu::Buffer> {
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
fn put<T: Pod>(buf: &mut GpuBuffer<T>, data: &[T]) -> Result<()> {
    if data.is_empty() {
        buf.upload(&[T::zeroed()])
    } else {
        buf.upload(data)
    }
}

fn groups_for(threads: usize, ctx: &GpuContext) -> (u32, u32) {
    let g = threads.div_ceil(64).max(1) as u32;
    dispatch_2d(g, ctx.limits().max_compute_workgroups_per_dimension)
}

impl GpuMpm {
    /// Compiles the stages (once per process) and uploads `model` and `state`.
    pub fn new<T: Real>(ctx: &Arc<GpuContext>, model: &Model<T>, state: &State<T>) -> Result<Self> {
        let stages = Stages::get(ctx)?;
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
        // Keys pack 10 bits per axis (30 bits): 8 radix passes, an even
        // number, so the sort ends in place.
        let key_bits = 30;
        let mut gpu = Self {
            ctx: Arc::clone(ctx),
            stages,
            params: raw_buffer(
                ctx,
                std::mem::size_of::<StepParams>() as u64,
                uniform,
                "mpm params",
            )?,
            colours,
            stats: raw_buffer(
                ctx,
                (STATS_WORDS * 4) as u64,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                "mpm stats",
            )?,
            stats_read: raw_buffer(
                ctx,
                (STATS_WORDS * 4) as u64,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                "mpm stats readback",
            )?,
            indirect: raw_buffer(
                ctx,
                16,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
                "mpm indirect",
            )?,
            sort: GpuRadixSort::new(ctx)?,
            scan: GpuScan::new(ctx)?,
            bufs,
            block_capacity: 0,
            hash_slots: 0,
            key_bits,
            n: 0,
            counts: (0, 0, 0, 0),
            plan: None,
            sdf_ids: vec![usize::MAX],
            sdf_ids_now: Vec::new(),
            collider_recs: Vec::new(),
            pin_recs: Vec::new(),
            backup: Vec::new(),
        };
        gpu.upload(model, state)?;
        Ok(gpu)
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> &str {
        &self.ctx.adapter_info().name
    }

    /// Uploads the whole model and state (after the host changed either).
    pub fn upload<T: Real>(&mut self, model: &Model<T>, state: &State<T>) -> Result<()> {
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
        self.counts = (model.vol.start, model.vol.end, model.vert.end, model.elem.end);
        self.plan = None;
        if self.block_capacity == 0 {
            // first guess: every particle in its own block with its halo, capped
            self.grow(n.clamp(64, 1 << 16))?;
        }
        Ok(())
    }

    fn grow(&mut self, blocks: usize) -> Result<()> {
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
        self.plan = None;
        Ok(())
    }

    /// Total mass on the grid nodes of the last step (kg), summed in node order.
    pub fn grid_mass(&self, active_blocks: usize) -> Result<f64> {
        let nodes = self.bufs.nodes.read()?;
        let n = (active_blocks * 64).min(nodes.len());
        Ok(nodes[..n].iter().map(|a| f64::from(a[3]).max(0.0)).sum())
    }

    /// Reads the state back into `state` (positions, velocities, C, F, q, d, tangents).
    pub fn download<T: Real>(&self, state: &mut State<T>) -> Result<()> {
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
    fn upload_colliders(&mut self, colliders: &[Collider]) -> Result<()> {
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
                self.plan = None;
            }
        }
        // bind groups bind `len` elements: a new length needs a new plan
        let old_cap = (self.bufs.colliders.capacity(), self.bufs.colliders.len());
        let r = put(&mut self.bufs.colliders, &recs);
        self.collider_recs = recs;
        r?;
        if (self.bufs.colliders.capacity(), self.bufs.colliders.len()) != old_cap {
            self.plan = None;
        }
        Ok(())
    }

    fn upload_pins(&mut self, pins: &[Pin], t_new: f64) -> Result<()> {
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
            self.plan = None;
        }
        Ok(())
    }

    fn binding_of(&self, b: u32, colour: usize) -> wgpu::BindingResource<'_> {
        let bufs = &self.bufs;
        fn whole(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: 0,
                size: None,
            })
        }
        match b {
            0 => whole(&self.params),
            1 => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &self.colours[colour],
                offset: 0,
                size: wgpu::BufferSize::new(16),
            }),
            2 => bufs.values.binding(),
            3 => bufs.blocks.binding(),
            4 => bufs.hash_vals.binding(),
            5 => bufs.x.binding(),
            6 => bufs.v.binding(),
            7 => bufs.c.binding(),
            8 => bufs.pforce.binding(),
            9 => bufs.nodes.binding(),
            10 => whole(&self.stats),
            11 => bufs.colliders.binding(),
            12 => bufs.collider_sdf.binding(),
            13 => bufs.grad_v.binding(),
            14 => bufs.f.binding(),
            15 => bufs.d.binding(),
            16 => bufs.tangents.binding(),
            17 => bufs.elements.binding(),
            18 => bufs.pins.binding(),
            19 => bufs.volume.binding(),
            20 => bufs.vol_material.binding(),
            21 => bufs.vol_materials.binding(),
            22 => bufs.codim_materials.binding(),
            23 => bufs.elem_forces.binding(),
            24 => bufs.vertex_offsets.binding(),
            25 => bufs.vertex_elems.binding(),
            26 => bufs.q.binding(),
            27 => bufs.keys.binding(),
            28 => bufs.hash_keys.binding(),
            29 => bufs.flags.binding(),
            30 => whole(&self.indirect),
            31 => bufs.hash_ranges.binding(),
            _ => whole(&self.stats),
        }
    }

    fn bind_group(&self, module: &StageModule, colour: usize) -> Result<wgpu::BindGroup> {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = module
            .bindings
            .iter()
            .map(|&(binding, _)| wgpu::BindGroupEntry {
                binding,
                resource: self.binding_of(binding, colour),
            })
            .collect();
        self.ctx.capture("creating an MPM bind group", || {
            self.ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("mpm"),
                layout: &module.layout,
                entries: &entries,
            })
        })
    }

    fn make_plan(&mut self) -> Result<()> {
        let sort = self
            .sort
            .plan(&self.bufs.keys, &self.bufs.values, Some(self.key_bits))?;
        if sort.needs_copy_back() {
            return Err(Error::Backend(
                "internal: the block sort must end in place".into(),
            ));
        }
        let scan = self.scan.plan(&self.bufs.flags)?;
        let mut groups = BTreeMap::new();
        for (name, module) in &self.stages.modules {
            groups.insert(*name, self.bind_group(module, 0)?);
        }
        let p2g_module = &self.stages.modules["p2g"];
        let p2g = (0..8)
            .map(|c| self.bind_group(p2g_module, c))
            .collect::<Result<Vec<_>>>()?;
        self.plan = Some(Plan {
            sort,
            scan,
            groups,
            p2g,
        });
        Ok(())
    }

    /// One step of `dt` seconds on the device (spec §3): colliders must
    /// already be advanced to `t_new`; pins are evaluated at `t_new`.
    #[allow(clippy::too_many_arguments)]
    pub fn step<T: Real>(
        &mut self,
        model: &Model<T>,
        params: &SolverParams,
        colliders: &[Collider],
        pins: &[Pin],
        dt: f64,
        t_new: f64,
    ) -> Result<StepOutcome> {
        self.upload_colliders(colliders)?;
        self.upload_pins(pins, t_new)?;
        loop {
            if self.plan.is_none() {
                self.make_plan()?;
            }
            self.ensure_backup()?;
            let stats = self.run_step(model, params, colliders.len(), pins.len(), dt)?;
            if stats[ST_OVERFLOW] & 2 != 0 {
                return Ok(StepOutcome::OutsideDomain(stats[ST_BAD_DOMAIN] as usize));
            }
            if stats[ST_OVERFLOW] & 1 != 0 {
                // The step was a no-op on the device: grow with headroom and redo it.
                let need = stats[ST_BLOCKS] as usize;
                self.grow(need + need / 2)?;
                continue;
            }
            if stats[ST_BAD_FINITE] != u32::MAX {
                self.restore_backup()?;
                return Err(Error::Diverged {
                    step: 0, // the caller fills in its step count and time
                    time: 0.0,
                    what: crate::mpm::solver::non_finite_message(model, stats[ST_BAD_FINITE] as usize),
                });
            }
            let mut events = [0u32; 5];
            events.copy_from_slice(&stats[ST_EVENTS..ST_EVENTS + 5]);
            return Ok(StepOutcome::Done(StepStats {
                max_speed: f64::from(f32::from_bits(stats[ST_MAX_SPEED])),
                active_blocks: stats[ST_BLOCKS],
                events,
            }));
        }
    }

    fn run_step<T: Real>(
        &mut self,
        model: &Model<T>,
        params: &SolverParams,
        n_colliders: usize,
        n_pins: usize,
        dt: f64,
    ) -> Result<[u32; STATS_WORDS]> {
        let ctx = Arc::clone(&self.ctx);
        let nodes = params.nodes_per_axis();
        let pad = params.boundary_padding as u32;
        let inv_dx = 1.0 / params.dx;
        let (k, d_inv) = match params.kernel {
            Kernel::Quadratic => (3u32, 4.0f32 * (inv_dx as f32) * (inv_dx as f32)),
            Kernel::Cubic => (4u32, 3.0f32 * (inv_dx as f32) * (inv_dx as f32)),
        };
        let hi = nodes.map(|n| (n as f64 - 2.0 - 1e-3) as f32);
        let sp = StepParams {
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
            hash_mask: self.hash_slots as u32 - 1,
            lo_clamp: crate::mpm::solver::LOWER_CLAMP_XI as f32,
            hash_pad1: 0,
            n_particles: self.n as u32,
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
            block_capacity: self.block_capacity as u32,
            clamp: u32::from(params.out_of_domain == OutOfDomain::Clamp),
            kernel_shift: if k == 3 { 0.5 } else { 1.0 },
        };
        let q = ctx.queue();
        q.write_buffer(&self.params, 0, bytemuck::bytes_of(&sp));
        let mut init = [0u32; STATS_WORDS];
        init[ST_BAD_DOMAIN] = u32::MAX;
        init[ST_BAD_FINITE] = u32::MAX;
        q.write_buffer(&self.stats, 0, bytemuck::cast_slice(&init));

        let Some(plan) = self.plan.as_ref() else {
            return Err(Error::Backend("internal: MPM plan missing".into()));
        };
        let m = &self.stages.modules;
        let pipe = |stage: &str, entry: &str| -> &wgpu::ComputePipeline { &m[stage].pipelines[entry] };
        let n = self.n;
        let (nvol, nvert, nelem) = (model.vol.len(), model.vert.len(), model.elem.len());
        let slots = self.hash_slots;
        let mut encoder = ctx.encoder("mpm step");
        // Keep the start of the step (device-side copy, no host sync).
        for (src, dst) in self.state_buffers().into_iter().zip(&self.backup) {
            encoder.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
        encoder.clear_buffer(self.bufs.hash_keys.raw(), 0, None);
        encoder.clear_buffer(self.bufs.hash_ranges.raw(), 0, None);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("mpm step"),
                timestamp_writes: None,
            });
            let run = |pass: &mut wgpu::ComputePass<'_>, stage: &str, entry: &str, threads: usize| {
                if threads == 0 {
                    return;
                }
                let (gx, gy) = groups_for(threads, &ctx);
                pass.set_pipeline(pipe(stage, entry));
                pass.set_bind_group(0, &plan.groups[stage], &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            };
            let indirect =
                |pass: &mut wgpu::ComputePass<'_>, stage: &str, entry: &str, bg: &wgpu::BindGroup| {
                    pass.set_pipeline(pipe(stage, entry));
                    pass.set_bind_group(0, bg, &[]);
                    pass.dispatch_workgroups_indirect(&self.indirect, 0);
                };
            run(&mut pass, "bin", "bin", n);
            plan.sort.record(&mut pass);
            run(&mut pass, "grid_build", "mark", n);
            run(&mut pass, "grid_build", "flag", slots + 1);
            for s in &plan.scan {
                s.record(&mut pass);
            }
            run(&mut pass, "grid_build", "compact", slots);
            run(&mut pass, "stress", "stress_volume", nvol);
            run(&mut pass, "stress", "stress_elements", nelem);
            run(&mut pass, "stress", "gather_forces", nvert);
            indirect(&mut pass, "p2g", "clear_nodes", &plan.groups["p2g"]);
            for bg in &plan.p2g {
                indirect(&mut pass, "p2g", "p2g", bg);
            }
            indirect(
                &mut pass,
                "grid_update",
                "grid_update",
                &plan.groups["grid_update"],
            );
            run(&mut pass, "g2p", "g2p", n);
            let moved = if params.enslave_elements {
                model.vert.end
            } else {
                model.elem.end
            };
            run(&mut pass, "advect", "advect_particles", moved);
            run(&mut pass, "advect", "apply_pins", n_pins);
            run(&mut pass, "advect", "advect_elements", nelem);
            run(&mut pass, "plasticity", "plasticity_volume", nvol);
            if params.codim_return_map {
                run(&mut pass, "plasticity", "return_map", nelem);
            }
            run(&mut pass, "advect", "check", n);
        }
        encoder.copy_buffer_to_buffer(&self.stats, 0, &self.stats_read, 0, (STATS_WORDS * 4) as u64);
        ctx.capture("submitting an MPM step", || {
            ctx.queue().submit([encoder.finish()]);
        })?;
        self.read_stats()
    }

    /// The buffers a step changes that make up the particle state.
    fn state_buffers(&self) -> [&wgpu::Buffer; 7] {
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
    fn ensure_backup(&mut self) -> Result<()> {
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
    pub fn restore_backup(&self) -> Result<()> {
        let ctx = &self.ctx;
        let mut encoder = ctx.encoder("mpm rollback");
        for (dst, src) in self.state_buffers().into_iter().zip(&self.backup) {
            encoder.copy_buffer_to_buffer(src, 0, dst, 0, dst.size());
        }
        ctx.capture("restoring the MPM state", || {
            ctx.queue().submit([encoder.finish()]);
        })
    }

    fn read_stats(&self) -> Result<[u32; STATS_WORDS]> {
        let ctx = &self.ctx;
        let slice = self.stats_read.slice(..);
        let (tx, rx) = mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
        loop {
            ctx.wait("running an MPM step")?;
            match rx.recv_timeout(std::time::Duration::from_millis(2)) {
                Ok(Ok(())) => break,
                Ok(Err(e)) => return Err(Error::Backend(format!("reading the MPM step stats failed: {e}"))),
                Err(mpsc::RecvTimeoutError::Timeout) if std::time::Instant::now() < deadline => {}
                Err(_) => {
                    return Err(Error::Backend(
                        "the MPM step did not finish within 600 s (device lost?)".to_owned(),
                    ));
                }
            }
        }
        let mut out = [0u32; STATS_WORDS];
        {
            let view = slice
                .get_mapped_range()
                .map_err(|e| Error::Backend(format!("reading the MPM step stats failed: {e}")))?;
            out.copy_from_slice(bytemuck::cast_slice(&view[..STATS_WORDS * 4]));
        }
        self.stats_read.unmap();
        Ok(out)
    }
}

fn collider_sdf_words_len(c: &Collider) -> usize {
    match c.shape() {
        crate::collide::Shape::Mesh(m) => m.values().len(),
        _ => 0,
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

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
