//! The wgpu device of the GPU backend: adapter choice, limits, pipelines and the few buffer
//! helpers every kernel family shares.
//!
//! A device is built once per process ([`GpuContext::shared`]) and reused: creating one costs
//! about 50 ms on a software Vulkan driver. Every buffer a run needs is created once, in
//! [`super::f1`] and [`super::dc`]; per iteration only per-trial status travels.

use super::GpuError;
use std::sync::{Arc, OnceLock};

/// Threads per workgroup of every element-wise kernel (the shaders say the same).
pub(crate) const WORKGROUP: u32 = 256;
/// At most this many workgroups per dispatch dimension (WebGPU's limit).
pub(crate) const MAX_GROUPS: u32 = 65_535;

/// One adapter as the user sees it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AdapterSummary {
    /// The adapter's name, as the driver reports it.
    pub name: String,
    /// The graphics API wgpu runs it through (`vulkan`, `metal`, `dx12`, `gl`).
    pub backend: String,
    /// `DiscreteGpu`, `IntegratedGpu`, `VirtualGpu`, `Cpu` (a software rasteriser) or `Other`.
    pub device_type: String,
    /// The driver and its version, where it says (empty otherwise).
    pub driver: String,
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {}", self.name, self.backend, self.device_type)?;
        if !self.driver.is_empty() {
            write!(f, ", {}", self.driver)?;
        }
        write!(f, ")")
    }
}

fn summary(info: &wgpu::AdapterInfo) -> AdapterSummary {
    AdapterSummary {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend).to_lowercase(),
        device_type: format!("{:?}", info.device_type),
        driver: [info.driver.as_str(), info.driver_info.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// A device and its queue, with the limits the backend sizes its batches by.
pub struct GpuContext {
    /// The wgpu device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter it was opened on.
    pub adapter: AdapterSummary,
    /// Largest storage binding, in bytes.
    pub max_binding: u64,
    /// Largest buffer, in bytes.
    pub max_buffer: u64,
    /// Whether the device was opened with wgpu's SUBGROUP feature (the kernels that reduce
    /// over a workgroup then use subgroup operations). `CONCUR_NO_SUBGROUPS=1` turns it off.
    pub subgroups: bool,
    /// The adapter's smallest and largest subgroup sizes (WGSL's `subgroup_size` lies
    /// between them); the subgroup-per-problem JV sizes its register arrays and its
    /// problems per workgroup by them.
    pub subgroup_min: u32,
    /// The adapter's largest subgroup size (see `subgroup_min`).
    pub subgroup_max: u32,
    /// Whether the device was opened with wgpu's SUBGROUP_BARRIER (the staged subgroup JV).
    pub subgroup_barrier: bool,
    /// Whether the device was opened with timestamp queries (wgpu's TIMESTAMP_QUERY), so
    /// that the device loop's profile can time the passes of a real loop
    /// ([`crate::backend::gpu::f1::F1Gpu::profile_device`]).
    pub timestamps: bool,
    /// Workgroup memory per workgroup the device was opened with, in bytes: the adapter's
    /// own figure (NVIDIA's Vulkan driver reports 48 KiB; wgpu's default is 16 KiB).
    pub workgroup_storage: u32,
    /// Storage buffers one shader stage may bind (the adapter's figure).
    pub storage_buffers: u32,
    /// The `pick` pipeline of the device assignments, built on first use
    /// ([`super::pick::Pick`]).
    pub(crate) pick: OnceLock<wgpu::ComputePipeline>,
}

fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

/// Every adapter wgpu can see (honours `WGPU_BACKEND`).
pub fn adapters() -> Vec<AdapterSummary> {
    pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()))
        .iter()
        .map(|a| summary(&a.get_info()))
        .collect()
}

impl GpuContext {
    /// Opens a device. With `name`, the first adapter whose name contains it (ignoring case);
    /// without, wgpu's high-performance choice. Errors say what was seen, never panic.
    pub fn new(name: Option<&str>) -> Result<Self, GpuError> {
        let instance = instance();
        let adapter = match name {
            Some(want) => {
                let all = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
                let seen: Vec<String> = all.iter().map(|a| a.get_info().name).collect();
                let lower = want.to_lowercase();
                all.into_iter()
                    .find(|a| a.get_info().name.to_lowercase().contains(&lower))
                    .ok_or_else(|| GpuError::NoMatchingAdapter { want: want.to_string(), seen })?
            }
            None => pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            }))
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?,
        };
        Self::on_adapter(adapter)
    }

    /// Opens a device on `adapter`, with the limits and features the kernels use.
    pub(crate) fn on_adapter(adapter: wgpu::Adapter) -> Result<Self, GpuError> {
        let info = adapter.get_info();
        let limits = adapter.limits();
        let required = wgpu::Limits {
            max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            max_buffer_size: limits.max_buffer_size,
            max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
            ..wgpu::Limits::downlevel_defaults()
        };
        if limits.max_storage_buffers_per_shader_stage < 8 || limits.max_compute_invocations_per_workgroup < WORKGROUP {
            return Err(GpuError::Misuse(format!(
                "adapter {} allows {} storage buffers per stage and {} invocations per workgroup; the kernels need 8 and {WORKGROUP}",
                info.name, limits.max_storage_buffers_per_shader_stage, limits.max_compute_invocations_per_workgroup
            )));
        }
        let subgroups = adapter.features().contains(wgpu::Features::SUBGROUP)
            && std::env::var("CONCUR_NO_SUBGROUPS").map_or(true, |v| v.is_empty() || v == "0");
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let mut features = wgpu::Features::empty();
        if subgroups {
            features |= wgpu::Features::SUBGROUP;
        }
        let subgroup_barrier = subgroups && adapter.features().contains(wgpu::Features::SUBGROUP_BARRIER);
        if subgroup_barrier {
            features |= wgpu::Features::SUBGROUP_BARRIER;
        }
        if timestamps {
            features |= wgpu::Features::TIMESTAMP_QUERY;
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("concur"),
            required_features: features,
            required_limits: required,
            ..Default::default()
        }))
        .map_err(|e| GpuError::Device(e.to_string()))?;
        Ok(GpuContext {
            device,
            queue,
            adapter: summary(&info),
            max_binding: limits.max_storage_buffer_binding_size,
            max_buffer: limits.max_buffer_size,
            subgroups,
            subgroup_min: info.subgroup_min_size.max(wgpu::MINIMUM_SUBGROUP_MIN_SIZE),
            subgroup_max: info.subgroup_max_size.clamp(info.subgroup_min_size.max(1), wgpu::MAXIMUM_SUBGROUP_MAX_SIZE),
            subgroup_barrier,
            timestamps,
            workgroup_storage: limits.max_compute_workgroup_storage_size,
            storage_buffers: limits.max_storage_buffers_per_shader_stage,
            pick: OnceLock::new(),
        })
    }

    /// One device per process, opened on first use (the default adapter). The error is kept
    /// too, so a machine without a GPU answers at once after the first try.
    pub fn shared() -> Result<Arc<GpuContext>, GpuError> {
        static SHARED: OnceLock<Result<Arc<GpuContext>, GpuError>> = OnceLock::new();
        SHARED.get_or_init(|| GpuContext::new(None).map(Arc::new)).clone()
    }

    /// A device on every hardware adapter (`--adapter all`): every Vulkan adapter that is not
    /// a CPU (or every adapter of another API where Vulkan has none), so that one GPU seen
    /// through two APIs counts once; the software adapters only when there is no other.
    pub(crate) fn open_all() -> Result<Vec<Arc<GpuContext>>, GpuError> {
        let all = pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()));
        let infos: Vec<wgpu::AdapterInfo> = all.iter().map(|a| a.get_info()).collect();
        let hardware = |i: &wgpu::AdapterInfo| i.device_type != wgpu::DeviceType::Cpu;
        let vulkan = infos.iter().any(|i| hardware(i) && i.backend == wgpu::Backend::Vulkan);
        let mut picked: Vec<usize> = (0..infos.len())
            .filter(|&k| hardware(&infos[k]) && (!vulkan || infos[k].backend == wgpu::Backend::Vulkan))
            .collect();
        if picked.is_empty() {
            // Software adapters only: the first (one device is what such a machine has).
            picked.extend((0..infos.len()).take(1));
        }
        if picked.is_empty() {
            return Err(GpuError::NoAdapter("no adapter found for --adapter all".into()));
        }
        let mut out = Vec::with_capacity(picked.len());
        let mut adapters: Vec<Option<wgpu::Adapter>> = all.into_iter().map(Some).collect();
        for k in picked {
            let adapter = adapters[k].take().expect("each adapter once");
            out.push(Arc::new(GpuContext::on_adapter(adapter)?));
        }
        Ok(out)
    }

    /// The shared device for the default adapter, or a new one for a named adapter.
    pub fn open(name: Option<&str>) -> Result<Arc<GpuContext>, GpuError> {
        match name {
            None => GpuContext::shared(),
            Some(n) => GpuContext::new(Some(n)).map(Arc::new),
        }
    }

    /// A compute pipeline for one entry point of a WGSL module (bind group 0 derived from
    /// what the entry point uses), its pipeline-overridable constants at their defaults.
    pub fn pipeline(&self, module: &wgpu::ShaderModule, entry: &str) -> wgpu::ComputePipeline {
        self.pipeline_with(module, entry, &[])
    }

    /// [`GpuContext::pipeline`] with values for the module's pipeline-overridable constants
    /// (`override NAME: u32 = default;` in the WGSL), by name.
    pub(crate) fn pipeline_with(
        &self,
        module: &wgpu::ShaderModule,
        entry: &str,
        constants: &[(&str, f64)],
    ) -> wgpu::ComputePipeline {
        self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions { constants, ..Default::default() },
            cache: None,
        })
    }

    /// Compiles a WGSL source into a shader module named `label`.
    pub fn module(&self, label: &str, source: &str) -> wgpu::ShaderModule {
        self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        })
    }

    /// A storage buffer holding `data` (at least 4 bytes, so an empty table still binds).
    pub fn storage<T: bytemuck::Pod>(&self, label: &str, data: &[T]) -> wgpu::Buffer {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let size = (bytes.len() as u64).max(4).next_multiple_of(4);
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if !bytes.is_empty() {
            self.queue.write_buffer(&buf, 0, bytes);
        }
        buf
    }

    /// A zeroed storage buffer of `bytes` bytes.
    pub fn zeroed(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// A uniform buffer holding `data`.
    pub fn uniform<T: bytemuck::Pod>(&self, label: &str, data: &T) -> wgpu::Buffer {
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: std::mem::size_of::<T>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buf, 0, bytemuck::bytes_of(data));
        buf
    }

    /// A host-readable staging buffer.
    pub fn staging(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// A bind group for `pipeline` with `buffers` at bindings in the given order.
    pub fn bind(&self, pipeline: &wgpu::ComputePipeline, buffers: &[(u32, &wgpu::Buffer)]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .map(|&(binding, b)| wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    /// Waits for the queue and copies the mapped ranges of `staging` buffers out, in order.
    /// Each `(buffer, bytes)` is mapped from offset 0.
    pub fn read_back(&self, reads: &mut [(&wgpu::Buffer, &mut [u8])]) -> Result<(), GpuError> {
        for (buf, out) in reads.iter() {
            if !out.is_empty() {
                buf.map_async(wgpu::MapMode::Read, 0..out.len() as u64, |_| {});
            }
        }
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::Device(e.to_string()))?;
        for (buf, out) in reads.iter_mut() {
            if out.is_empty() {
                continue;
            }
            {
                let view = buf.get_mapped_range(0..out.len() as u64).map_err(|e| GpuError::Device(e.to_string()))?;
                out.copy_from_slice(&view);
            }
            buf.unmap();
        }
        Ok(())
    }

    /// Waits until the queue is idle.
    pub fn wait(&self) -> Result<(), GpuError> {
        self.device.poll(wgpu::PollType::wait_indefinitely()).map(|_| ()).map_err(|e| GpuError::Device(e.to_string()))
    }

    /// Blocks until the submission `index` has completed.
    pub(crate) fn wait_for(&self, index: wgpu::SubmissionIndex) -> Result<(), GpuError> {
        self.device
            .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
            .map(|_| ())
            .map_err(|e| GpuError::Device(e.to_string()))
    }
}

/// Workgroup counts covering `threads` threads at `WORKGROUP` (256) per group, folded into a
/// second dimension past the 65,535-groups limit. The shaders recover the linear index as
/// `gid.x + gid.y * num_workgroups.x * WORKGROUP`.
pub fn grid(threads: u64) -> (u32, u32) {
    groups_grid(threads.div_ceil(WORKGROUP as u64))
}

/// Like [`grid`] for a count of workgroups (one workgroup per item).
pub(crate) fn groups_grid(groups: u64) -> (u32, u32) {
    let groups = groups.max(1);
    if groups <= MAX_GROUPS as u64 {
        (groups as u32, 1)
    } else {
        let y = groups.div_ceil(MAX_GROUPS as u64);
        (MAX_GROUPS, y as u32)
    }
}

/// Records one dispatch of `pipeline` with `bind` over `(x, y)` workgroups.
pub fn dispatch(
    enc: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    bind: &wgpu::BindGroup,
    xy: (u32, u32),
) {
    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, bind, &[]);
    pass.dispatch_workgroups(xy.0, xy.1, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_folds_past_the_dimension_limit() {
        assert_eq!(grid(1), (1, 1));
        assert_eq!(grid(256 * 65_535), (65_535, 1));
        let (x, y) = grid(1 << 26);
        assert!(x <= MAX_GROUPS && (x as u64) * (y as u64) * 256 >= 1 << 26);
    }
}
