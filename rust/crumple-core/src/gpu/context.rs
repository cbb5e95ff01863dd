//! The wgpu device shared by every GPU stage: adapter choice, limits, error
//! capture and the compute-pipeline cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::error::{Error, Result};

/// What `crumple info` and backend resolution need to know about an adapter,
/// as plain strings so the Python binding can pass them on unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterSummary {
    /// Adapter name as the driver reports it, e.g. `"llvmpipe (LLVM 15.0.6, 256 bits)"`.
    pub name: String,
    /// wgpu's device type: `"DiscreteGpu"`, `"IntegratedGpu"`, `"VirtualGpu"`, `"Cpu"` or `"Other"`.
    pub device_type: String,
    /// Graphics API in use: `"vulkan"`, `"metal"` or `"dx12"`.
    pub backend: String,
    /// Driver name, e.g. `"llvmpipe"` (may be empty on some platforms).
    pub driver: String,
    /// Driver version string, e.g. `"Mesa 22.3.6 (LLVM 15.0.6)"` (may be empty).
    pub driver_info: String,
}

impl AdapterSummary {
    fn from_info(info: &wgpu::AdapterInfo) -> Self {
        Self {
            name: info.name.clone(),
            device_type: format!("{:?}", info.device_type),
            backend: info.backend.to_str().to_owned(),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
        }
    }

    /// True for a software rasterizer running on the CPU (Mesa lavapipe, WARP,
    /// SwiftShader). Such an adapter is correct but usually slower than the
    /// rayon backend, which matters when resolving `backend="auto"`.
    pub fn is_software(&self) -> bool {
        self.device_type == "Cpu"
    }
}

/// How to get an adapter, appended to every "no adapter" message.
const NO_ADAPTER_HINT: &str = "install a GPU driver with Vulkan (Linux, Windows), Metal (macOS) or \
     DX12 (Windows) support; on a machine without a GPU install Mesa's software Vulkan driver \
     lavapipe (Debian/Ubuntu: `apt-get install mesa-vulkan-drivers`), or use backend=\"cpu\"";

/// The wgpu device, its queue and the compiled pipelines.
///
/// Creating a device costs tens to hundreds of milliseconds (a software
/// adapter compiles every pipeline on the CPU), so one context is shared per
/// process through [`GpuContext::shared`] and stages keep their pipelines and
/// buffers across steps.
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    summary: AdapterSummary,
    limits: wgpu::Limits,
    modules: Mutex<HashMap<&'static str, wgpu::ShaderModule>>,
    pipelines: Mutex<HashMap<(&'static str, &'static str), wgpu::ComputePipeline>>,
    /// Errors raised outside any error scope (wgpu's default handler panics;
    /// ours records them so the next [`GpuContext::check`] returns them).
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// Set by the device-lost callback; once set every operation fails.
    lost: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.summary)
            .finish_non_exhaustive()
    }
}

static SHARED: OnceLock<std::result::Result<Arc<GpuContext>, String>> = OnceLock::new();

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the map or the
    // message list half-updated, so a poisoned lock is still safe to use.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn new_instance() -> wgpu::Instance {
    // `with_env` lets users pick a backend or enable validation through
    // wgpu's documented variables (WGPU_BACKEND, WGPU_VALIDATION) without
    // a crumple-specific switch.
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env())
}

fn request(
    instance: &wgpu::Instance,
    power_preference: wgpu::PowerPreference,
    force_fallback_adapter: bool,
) -> std::result::Result<wgpu::Adapter, String> {
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference,
        force_fallback_adapter,
        compatible_surface: None,
        apply_limit_buckets: false,
    }))
    .map_err(|e| e.to_string())
}

fn is_cpu(adapter: &wgpu::Adapter) -> bool {
    adapter.get_info().device_type == wgpu::DeviceType::Cpu
}

/// Adapters to try, best first: a hardware adapter, then a software one.
/// Both are returned so that a hardware adapter whose device cannot be
/// created (broken driver, limits) still leaves the software one. Errs with
/// a message that says how to get an adapter when there is none.
fn candidate_adapters(instance: &wgpu::Instance) -> std::result::Result<Vec<wgpu::Adapter>, String> {
    let mut out = Vec::new();
    // wgpu ranks CPU adapters last for HighPerformance, so a Cpu answer here
    // means there is no hardware adapter; it is still the software candidate.
    let first = request(instance, wgpu::PowerPreference::HighPerformance, false);
    let first_error = match first {
        Ok(a) => {
            out.push(a);
            String::new()
        }
        Err(e) => e,
    };
    if !out.iter().any(is_cpu) {
        if let Ok(a) = request(instance, wgpu::PowerPreference::None, true) {
            out.push(a);
        } else {
            // Some drivers do not flag themselves as fallback adapters; take
            // any CPU device the instance can see.
            let all = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
            out.extend(all.into_iter().find(is_cpu));
        }
    }
    if out.is_empty() {
        Err(format!("no GPU adapter found ({first_error}); {NO_ADAPTER_HINT}"))
    } else {
        Ok(out)
    }
}

/// Cheap check used by `crumple info`: which adapter [`GpuContext::shared`]
/// would use, without creating a device. `None` when there is none.
pub fn probe() -> Option<AdapterSummary> {
    if let Some(Ok(ctx)) = SHARED.get() {
        return Some(ctx.summary.clone());
    }
    let instance = new_instance();
    candidate_adapters(&instance)
        .ok()
        .and_then(|c| c.into_iter().next())
        .map(|a| AdapterSummary::from_info(&a.get_info()))
}

fn request_device(
    adapter: &wgpu::Adapter,
) -> std::result::Result<(wgpu::Device, wgpu::Queue), wgpu::RequestDeviceError> {
    let available = adapter.limits();
    // WebGPU's defaults are enough for every kernel (256 invocations and
    // 16 KiB of workgroup memory per group) and keep the code portable;
    // older hardware that cannot meet them gets the downlevel set.
    let mut required = if wgpu::Limits::default().check_limits(&available) {
        wgpu::Limits::default()
    } else {
        wgpu::Limits::downlevel_defaults()
    };
    // Spec §10.3: the default 128 MiB storage binding caps arrays at 32M
    // u32; ask for all the adapter offers so large scenes fit.
    required.max_storage_buffer_binding_size = available.max_storage_buffer_binding_size;
    // The MPM stages bind up to 13 storage buffers (mpm/gpu/backend.rs
    // STORAGE_BUFFERS_NEEDED); WebGPU's default is 8. Ask for up to 16 where
    // the adapter has them (desktop Vulkan, Metal and DX12 all do); with
    // fewer, the MPM GPU backend reports the limit instead of failing here.
    required.max_storage_buffers_per_shader_stage = available
        .max_storage_buffers_per_shader_stage
        .min(16)
        .max(required.max_storage_buffers_per_shader_stage);
    required.max_buffer_size = available.max_buffer_size;
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("crumple"),
        required_features: wgpu::Features::empty(),
        required_limits: required,
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    }))
}

impl GpuContext {
    /// Creates a device on the best adapter: a hardware GPU if there is one,
    /// else a software adapter (Mesa lavapipe, WARP). Returns
    /// [`Error::Backend`] with a fix when there is no adapter at all.
    ///
    /// Prefer [`GpuContext::shared`]; a second device doubles driver memory
    /// and compile time.
    pub fn new() -> Result<Self> {
        // Instance and device creation call into the driver; wgpu turns some
        // driver failures into panics. Those must reach the user as an
        // unavailable backend (the CPU backend still works), not abort the
        // caller, so they are caught here.
        std::panic::catch_unwind(Self::create).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            Err(Error::Backend(format!(
                "the GPU driver failed while creating a device ({what}); update the driver or \
                 use backend=\"cpu\""
            )))
        })
    }

    fn create() -> Result<Self> {
        let instance = new_instance();
        let mut failures = Vec::new();
        for adapter in candidate_adapters(&instance).map_err(Error::Backend)? {
            let summary = AdapterSummary::from_info(&adapter.get_info());
            match request_device(&adapter) {
                Ok((device, queue)) => return Ok(Self::from_device(device, queue, summary)),
                Err(e) => failures.push(format!("'{}' ({}): {e}", summary.name, summary.device_type)),
            }
        }
        Err(Error::Backend(format!(
            "could not create a GPU device on any adapter: {}; update the driver or use \
             backend=\"cpu\"",
            failures.join("; ")
        )))
    }

    fn from_device(device: wgpu::Device, queue: wgpu::Queue, summary: AdapterSummary) -> Self {
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            lock(&sink).push(describe(&e));
        }));
        let lost = Arc::new(Mutex::new(None));
        let lost_sink = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, message| {
            *lock(&lost_sink) = Some(format!("{reason:?}: {message}"));
        });

        let limits = device.limits();
        Self {
            device,
            queue,
            summary,
            limits,
            modules: Mutex::new(HashMap::new()),
            pipelines: Mutex::new(HashMap::new()),
            uncaptured,
            lost,
        }
    }

    /// The process-wide context, created on first use. A failure is cached
    /// too: probing for a missing driver once is enough.
    pub fn shared() -> Result<Arc<GpuContext>> {
        SHARED
            .get_or_init(|| GpuContext::new().map(Arc::new).map_err(|e| e.to_string()))
            .clone()
            .map_err(Error::Backend)
    }

    /// Name, type, backend and driver of the adapter in use.
    pub fn adapter_info(&self) -> &AdapterSummary {
        &self.summary
    }

    /// The limits the device was created with (what kernels may rely on).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The wgpu device, for stages that build their own bind groups.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue every stage submits to.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// Fails with [`Error::Backend`] if the device was lost or an error was
    /// raised outside an error scope since the last check.
    pub fn check(&self) -> Result<()> {
        if let Some(reason) = lock(&self.lost).clone() {
            return Err(Error::Backend(format!(
                "GPU device lost ({reason}); the GPU backend cannot continue in this process: \
                 restart it or use backend=\"cpu\""
            )));
        }
        let mut errors = lock(&self.uncaptured);
        if !errors.is_empty() {
            let message = errors.join("; ");
            errors.clear();
            return Err(Error::Backend(format!("GPU error: {message}")));
        }
        Ok(())
    }

    /// Runs `f` inside out-of-memory, validation and internal error scopes
    /// and turns anything they catch into [`Error::Backend`] naming `what`.
    /// Scopes are per thread in wgpu, so this attributes errors to the call
    /// that caused them even when several threads share the context.
    pub fn capture<T>(&self, what: &str, f: impl FnOnce() -> T) -> Result<T> {
        self.check()?;
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = f();
        // Scopes pop in reverse order of their push.
        let errors = [
            pollster::block_on(validation.pop()),
            pollster::block_on(oom.pop()),
            pollster::block_on(internal.pop()),
        ];
        if let Some(e) = errors.into_iter().flatten().next() {
            return Err(Error::Backend(format!("{what}: {}", describe(&e))));
        }
        self.check()?;
        Ok(value)
    }

    /// The compute pipeline for `entry_point` of the WGSL module `shader`
    /// (a name, e.g. `"scan_exclusive_u32"`) with source `source`, compiled
    /// once per context and cached by (shader, entry point). The layout is
    /// derived from the shader, so bind groups use
    /// `pipeline.get_bind_group_layout(0)`.
    pub fn pipeline(
        &self,
        shader: &'static str,
        source: &'static str,
        entry_point: &'static str,
    ) -> Result<wgpu::ComputePipeline> {
        if let Some(p) = lock(&self.pipelines).get(&(shader, entry_point)) {
            return Ok(p.clone());
        }
        let module = {
            let mut modules = lock(&self.modules);
            match modules.get(shader) {
                Some(m) => m.clone(),
                None => {
                    let m = self.capture(&format!("compiling shader {shader}.wgsl"), || {
                        self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                            label: Some(shader),
                            source: wgpu::ShaderSource::Wgsl(source.into()),
                        })
                    })?;
                    modules.insert(shader, m.clone());
                    m
                }
            }
        };
        let pipeline = self.capture(&format!("creating pipeline {shader}::{entry_point}"), || {
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry_point),
                    layout: None,
                    module: &module,
                    entry_point: Some(entry_point),
                    compilation_options: wgpu::PipelineCompilationOptions::default(),
                    cache: None,
                })
        })?;
        lock(&self.pipelines).insert((shader, entry_point), pipeline.clone());
        Ok(pipeline)
    }

    /// A command encoder labelled `label`.
    pub fn encoder(&self, label: &str) -> wgpu::CommandEncoder {
        self.device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }

    /// Submits `encoder` and blocks until the GPU has finished it. Errors
    /// (validation, out of memory, device lost) come back as
    /// [`Error::Backend`]; nothing is read back.
    pub fn submit_and_wait(&self, what: &str, encoder: wgpu::CommandEncoder) -> Result<()> {
        self.capture(what, || {
            self.queue.submit([encoder.finish()]);
        })?;
        self.wait(what)
    }

    /// Blocks until all submitted work has finished.
    pub fn wait(&self, what: &str) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Backend(format!("{what}: waiting for the GPU failed: {e}")))?;
        self.check()
    }

    /// Largest number of elements of `elem_size` bytes a kernel may bind as
    /// one storage array on this device.
    pub fn max_binding_elements(&self, elem_size: usize) -> u64 {
        self.limits.max_storage_buffer_binding_size / elem_size.max(1) as u64
    }
}

fn describe(e: &wgpu::Error) -> String {
    match e {
        wgpu::Error::OutOfMemory { .. } => {
            "out of GPU memory; reduce the problem size or use backend=\"cpu\"".to_owned()
        }
        other => other.to_string(),
    }
}
