//! Device timestamps inside the real loop: every compute pass the F1 iteration records goes
//! through a `Passes` recorder, which, when it carries a `Profile`, brackets the pass with
//! two timestamp queries (wgpu's `ComputePassTimestampWrites`, which needs only the
//! adapter's `TIMESTAMP_QUERY` feature, not timestamps inside passes). Since each dispatch is
//! its own pass, the profile gives the device time of every kernel inside whole iterations,
//! with the barriers wgpu puts between passes counted apart, as the gap between the sum of
//! the passes and the span from the first pass's start to the last one's end.
//!
//! Without the feature ([`GpuContext::timestamps`] false) the recorder dispatches plainly
//! and `Profile::new` says why it cannot measure.

use super::GpuContext;
use crate::backend::GpuError;

/// Records compute passes into an encoder, timing each one when profiling.
pub(crate) struct Passes<'e> {
    pub enc: &'e mut wgpu::CommandEncoder,
    prof: Option<&'e mut Profile>,
}

impl<'e> Passes<'e> {
    /// Plain passes, no timestamps.
    pub fn new(enc: &'e mut wgpu::CommandEncoder) -> Self {
        Passes { enc, prof: None }
    }

    /// Passes timed into `prof` (each pass takes two of its queries; a pass past its capacity
    /// runs untimed and is counted in [`Profile::untimed`]).
    pub fn profiled(enc: &'e mut wgpu::CommandEncoder, prof: &'e mut Profile) -> Self {
        Passes { enc, prof: Some(prof) }
    }

    /// Records one dispatch of `pipeline` with `bind` over `(x, y)` workgroups, as its own
    /// pass, named `label` in a profile.
    pub fn dispatch(
        &mut self,
        label: &'static str,
        pipeline: &wgpu::ComputePipeline,
        bind: &wgpu::BindGroup,
        xy: (u32, u32),
    ) {
        let writes = self.prof.as_deref_mut().and_then(|p| p.claim(label));
        let mut pass = self.enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: writes.as_ref().map(|(set, i)| wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(*i),
                end_of_pass_write_index: Some(*i + 1),
            }),
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind, &[]);
        pass.dispatch_workgroups(xy.0, xy.1, 1);
    }
}

/// A query set for the passes of one profiled submission, and the kernel name of each pass.
pub(crate) struct Profile {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
    capacity: u32,
    labels: Vec<&'static str>,
    untimed: usize,
    period_ns: f32,
}

/// Device time per kernel over one profiled submission.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Timings {
    /// (kernel, device nanoseconds summed over its passes, passes), in first-seen order.
    pub kernels: Vec<(&'static str, f64, usize)>,
    /// From the first pass's start to the last pass's end, in nanoseconds.
    pub span_ns: f64,
    /// Passes that ran untimed (past the query set's capacity).
    pub untimed: usize,
}

impl Timings {
    /// The sum of the timed passes, in nanoseconds.
    pub fn busy_ns(&self) -> f64 {
        self.kernels.iter().map(|k| k.1).sum()
    }
}

impl Profile {
    /// Room for `passes` timed passes (at most 2,048, wgpu's query limit of 4,096 over two).
    pub fn new(ctx: &GpuContext, passes: u32) -> Result<Self, GpuError> {
        if !ctx.timestamps {
            return Err(GpuError::Misuse(format!(
                "the adapter {} offers no timestamp queries (wgpu's TIMESTAMP_QUERY feature)",
                ctx.adapter
            )));
        }
        let capacity = passes.clamp(1, wgpu::QUERY_SET_MAX_QUERIES / 2);
        let queries = 2 * capacity;
        let set = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: queries,
        });
        let bytes = 8 * queries as u64;
        let resolve = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps resolve"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = ctx.staging("timestamps", bytes);
        Ok(Profile {
            set,
            resolve,
            staging,
            capacity,
            labels: Vec::new(),
            untimed: 0,
            period_ns: ctx.queue.get_timestamp_period(),
        })
    }

    fn claim(&mut self, label: &'static str) -> Option<(&wgpu::QuerySet, u32)> {
        if self.labels.len() as u32 >= self.capacity {
            self.untimed += 1;
            return None;
        }
        let i = 2 * self.labels.len() as u32;
        self.labels.push(label);
        Some((&self.set, i))
    }

    /// Records the resolve of the timed passes and their copy to the host, after the passes.
    pub fn resolve(&self, enc: &mut wgpu::CommandEncoder) {
        let n = 2 * self.labels.len() as u32;
        if n == 0 {
            return;
        }
        enc.resolve_query_set(&self.set, 0..n, &self.resolve, 0);
        enc.copy_buffer_to_buffer(&self.resolve, 0, &self.staging, 0, 8 * n as u64);
    }

    /// Reads the resolved timestamps (after the submission with [`Profile::resolve`]) and sums
    /// them per kernel.
    pub fn read(&self, ctx: &GpuContext) -> Result<Timings, GpuError> {
        let n = 2 * self.labels.len();
        let mut raw = vec![0u64; n];
        if n > 0 {
            ctx.read_back(&mut [(&self.staging, bytemuck::cast_slice_mut(&mut raw))])?;
        }
        Ok(timings(&self.labels, &raw, self.period_ns as f64, self.untimed))
    }
}

/// Sums pass durations per label from raw (begin, end) tick pairs.
pub(crate) fn timings(labels: &[&'static str], raw: &[u64], period_ns: f64, untimed: usize) -> Timings {
    let mut kernels: Vec<(&'static str, f64, usize)> = Vec::new();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for (i, &label) in labels.iter().enumerate() {
        let (b, e) = (raw[2 * i], raw[2 * i + 1]);
        lo = lo.min(b);
        hi = hi.max(e);
        let ns = e.saturating_sub(b) as f64 * period_ns;
        match kernels.iter_mut().find(|k| k.0 == label) {
            Some(k) => {
                k.1 += ns;
                k.2 += 1;
            }
            None => kernels.push((label, ns, 1)),
        }
    }
    let span_ns = if hi > lo { (hi - lo) as f64 * period_ns } else { 0.0 };
    Timings { kernels, span_ns, untimed }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_durations_sum_per_kernel_and_span_the_submission() {
        let labels = ["a", "b", "a"];
        let raw = [100, 150, 160, 200, 210, 230];
        let t = timings(&labels, &raw, 2.0, 1);
        assert_eq!(t.kernels, vec![("a", 140.0, 2), ("b", 80.0, 1)]);
        assert_eq!(t.span_ns, 260.0);
        assert_eq!(t.busy_ns(), 220.0);
        assert_eq!(t.untimed, 1);
    }
}
