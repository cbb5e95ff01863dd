//! A solver's stage shaders compiled once per context: one module per stage
//! file, its bind-group layout read from the source by naga
//! ([`reflect_bindings`]), one pipeline per entry point, and bind groups made
//! by looking each declared resource up by the name the shader gives it.
//! MPM (`mpm/gpu/stages.rs`) and shape matching (`pbd/gpu/mod.rs`) both
//! build on it, so a new GPU method only lists its files and entries.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use super::GpuContext;
use super::wgsl::{BindKind, Binding, reflect_bindings};
use crate::error::{Error, Result};

/// One compiled stage file: its layout, the resources it declares (from
/// naga's reflection of the source) and its pipelines by entry point.
pub(crate) struct StageModule {
    pub(crate) layout: wgpu::BindGroupLayout,
    pub(crate) bindings: Vec<Binding>,
    pub(crate) pipelines: BTreeMap<&'static str, wgpu::ComputePipeline>,
}

impl StageModule {
    /// Compiles `source` (the stage `name` of `method`, which names the
    /// solver in error messages) with a pipeline per entry of `entries`.
    pub(crate) fn new(
        ctx: &GpuContext,
        method: &str,
        name: &'static str,
        source: &str,
        entries: &[&'static str],
    ) -> Result<Self> {
        let bindings = reflect_bindings(source).map_err(|e| {
            Error::Backend(format!(
                "internal: the {method} stage {name}.wgsl does not parse: {e}"
            ))
        })?;
        let storage = bindings.iter().filter(|b| b.kind != BindKind::Uniform).count() as u32;
        let limit = ctx.limits().max_storage_buffers_per_shader_stage;
        if storage > limit {
            return Err(Error::Backend(format!(
                "the {method} stage {name} binds {storage} storage buffers but '{}' allows {limit} per \
                 shader stage; use backend=\"cpu\" on this adapter",
                ctx.adapter_info().name
            )));
        }
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
            .iter()
            .map(|b| wgpu::BindGroupLayoutEntry {
                binding: b.binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match b.kind {
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
        let what = format!("compiling the {method} stage {name}.wgsl");
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
            let p = ctx.capture(&format!("creating the {method} pipeline {name}::{entry}"), || {
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

    /// A bind group of this module, each declared resource looked up by its
    /// WGSL name with `resource`.
    pub(crate) fn bind_group<'a>(
        &self,
        ctx: &GpuContext,
        label: &str,
        mut resource: impl FnMut(&str) -> Result<wgpu::BindingResource<'a>>,
    ) -> Result<wgpu::BindGroup> {
        let entries = self
            .bindings
            .iter()
            .map(|b| {
                Ok(wgpu::BindGroupEntry {
                    binding: b.binding,
                    resource: resource(&b.name)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        ctx.capture(&format!("creating a {label} bind group"), || {
            ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout: &self.layout,
                entries: &entries,
            })
        })
    }
}

/// Compiled stages per context and method. An entry holds a weak reference
/// to its context, so a dropped context's entry is recognised (and pruned)
/// even if a new context is later allocated at the same address.
type StageCache = Mutex<Vec<(Weak<GpuContext>, &'static str, Arc<Stages>)>>;

/// All stage modules of one method, compiled once per context.
pub(crate) struct Stages {
    pub(crate) modules: BTreeMap<&'static str, StageModule>,
}

impl Stages {
    /// The stages of `method` on `ctx`: one module per `(name, entries)` of
    /// `files`, its source `source(name)`; compiled on first use and cached.
    pub(crate) fn get(
        ctx: &Arc<GpuContext>,
        method: &'static str,
        files: &[(&'static str, &[&'static str])],
        source: fn(&str) -> &'static str,
    ) -> Result<Arc<Stages>> {
        static CACHE: OnceLock<StageCache> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut guard = cache.lock().unwrap_or_else(PoisonError::into_inner);
        guard.retain(|(w, _, _)| w.strong_count() > 0);
        if let Some((_, _, s)) = guard
            .iter()
            .find(|(w, m, _)| *m == method && w.upgrade().is_some_and(|c| Arc::ptr_eq(&c, ctx)))
        {
            return Ok(Arc::clone(s));
        }
        let mut modules = BTreeMap::new();
        for &(name, entries) in files {
            modules.insert(name, StageModule::new(ctx, method, name, source(name), entries)?);
        }
        let s = Arc::new(Stages { modules });
        guard.push((Arc::downgrade(ctx), method, Arc::clone(&s)));
        Ok(s)
    }
}
