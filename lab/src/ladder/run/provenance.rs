//! Where and how a ladder's run ran, written into its record: the host, the CPU model, the
//! worker threads, the scheduler's job, array task and restart count, the start time in UTC,
//! the CPU seconds of the run's own thread and the process's peak memory. A pooled rate mixes
//! machines only knowingly: `concur report` lists the machines each table pools.
//!
//! The scheduler is read from its environment: Slurm's `SLURM_JOB_ID`, `SLURM_ARRAY_JOB_ID`,
//! `SLURM_ARRAY_TASK_ID` and `SLURM_RESTART_COUNT`; a Kubernetes indexed job's
//! `JOB_COMPLETION_INDEX` (its pod's name is the host).

use serde::{Deserialize, Serialize};

/// Where and how one run ran.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Provenance {
    /// The host's name.
    pub host: String,
    /// The CPU's model name (`/proc/cpuinfo`), or the architecture where it cannot be read.
    pub cpu: String,
    /// The ladder call's worker threads.
    pub threads: usize,
    /// The scheduler's job, when the run ran under one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<SchedulerJob>,
    /// When the run started, UTC (RFC 3339, to the second).
    pub started: String,
    /// CPU seconds of the thread that ran it (user and system), where the system measures a
    /// thread's own (Linux) and the run ran on one thread; a GPU run's device time is not in
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// The process's peak resident memory in MiB when the run ended (every worker's runs
    /// share the process, so this bounds the run's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_mib: Option<f64>,
}

/// A scheduler's job, as its environment names it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct SchedulerJob {
    /// `slurm` or `kubernetes`.
    pub scheduler: String,
    /// The job's id (Slurm's `SLURM_JOB_ID`; absent for Kubernetes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The array job's id (Slurm's `SLURM_ARRAY_JOB_ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_job: Option<String>,
    /// The task's index in the array (`SLURM_ARRAY_TASK_ID`, `JOB_COMPLETION_INDEX`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_task: Option<String>,
    /// How many times the job was requeued before this run (`SLURM_RESTART_COUNT`).
    #[serde(default)]
    pub restarts: u32,
}

impl SchedulerJob {
    /// The job this process runs in, read from `var` (the environment in use).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        if let Some(id) = var("SLURM_JOB_ID") {
            return Some(SchedulerJob {
                scheduler: "slurm".into(),
                id: Some(id),
                array_job: var("SLURM_ARRAY_JOB_ID"),
                array_task: var("SLURM_ARRAY_TASK_ID"),
                restarts: var("SLURM_RESTART_COUNT").and_then(|r| r.trim().parse().ok()).unwrap_or(0),
            });
        }
        var("JOB_COMPLETION_INDEX").map(|i| SchedulerJob {
            scheduler: "kubernetes".into(),
            array_task: Some(i),
            ..SchedulerJob::default()
        })
    }

    /// The job this process runs in.
    pub fn here() -> Option<Self> {
        Self::from_env(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
    }
}

/// Requeues this process's Slurm job (`scontrol requeue $SLURM_JOB_ID`), so that a task
/// stopped by its time limit or preempted comes back by itself and resumes (as submitit
/// does). The job needs `--requeue` (or the cluster's `JobRequeue=1`); Slurm then signals the
/// job's processes, which are exiting anyway. Ok(None) when not under Slurm; the error is
/// scontrol's own words.
pub fn requeue_job() -> std::result::Result<Option<String>, String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let Some(id) = requeue_target(var) else { return Ok(None) };
    let out = std::process::Command::new("scontrol")
        .args(["requeue", &id])
        .output()
        .map_err(|e| format!("cannot run scontrol: {e}"))?;
    if out.status.success() {
        Ok(Some(id))
    } else {
        let why = String::from_utf8_lossy(&out.stderr).trim().replace('\n', " ");
        Err(format!("scontrol requeue {id} failed: {why}"))
    }
}

/// The job `scontrol requeue` must name for this task: an array task as `ARRAYJOB_TASK` (one
/// array task's `SLURM_JOB_ID` may equal the array job's id, and requeueing that id requeues
/// every task of the array), else `SLURM_JOB_ID`; None when not under Slurm.
fn requeue_target(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    match (var("SLURM_ARRAY_JOB_ID"), var("SLURM_ARRAY_TASK_ID")) {
        (Some(job), Some(task)) => Some(format!("{job}_{task}")),
        _ => var("SLURM_JOB_ID"),
    }
}

/// What a ladder call knows of its machine before its first run: read once.
#[derive(Clone, Debug)]
pub struct Machine {
    host: String,
    cpu: String,
    threads: usize,
    job: Option<SchedulerJob>,
}

impl Machine {
    /// This machine, with the call's worker threads.
    pub fn here(threads: usize) -> Self {
        Machine { host: host_name(), cpu: cpu_model(), threads, job: SchedulerJob::here() }
    }

    /// The host's name.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// A run starting now; [`RunClock::finish`] makes its provenance.
    pub fn start(&self) -> RunClock<'_> {
        RunClock { machine: self, started: std::time::SystemTime::now() }
    }
}

/// A run's start, taken on the thread that runs it.
pub struct RunClock<'m> {
    machine: &'m Machine,
    started: std::time::SystemTime,
}

impl RunClock<'_> {
    /// The run's provenance when it ends, with the CPU seconds of the thread that ran it
    /// ([`concur::solve::Solved::cpu_s`]).
    pub fn finish(self, cpu_s: Option<f64>) -> Provenance {
        Provenance {
            host: self.machine.host.clone(),
            cpu: self.machine.cpu.clone(),
            threads: self.machine.threads,
            job: self.machine.job.clone(),
            started: humantime::format_rfc3339_seconds(self.started).to_string(),
            cpu_s: cpu_s.map(|c| (c * 1e6).round() / 1e6),
            peak_mib: peak_mib(),
        }
    }
}

/// The host's name (`gethostname`), else `$HOSTNAME`, else `unknown`.
pub fn host_name() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname writes at most that many
        // bytes and the name is read up to its first NUL, within the buffer.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            if let Ok(name) = std::str::from_utf8(&buf[..end])
                && !name.is_empty()
            {
                return name.to_string();
            }
        }
    }
    std::env::var("HOSTNAME").unwrap_or_else(|_| "unknown".into())
}

/// The CPU's model name from `/proc/cpuinfo` (its first `model name`), else the architecture.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The process's peak resident memory in MiB.
pub fn peak_mib() -> Option<f64> {
    #[cfg(target_os = "linux")]
    {
        // Linux reports ru_maxrss in KiB.
        rusage(libc::RUSAGE_SELF).map(|u| (u.ru_maxrss as f64 / 1024.0 * 10.0).round() / 10.0)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

#[cfg(target_os = "linux")]
fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given for a valid `who`; on failure the zeroed
    // value is not read.
    let rc = unsafe { libc::getrusage(who, u.as_mut_ptr()) };
    // SAFETY: rc == 0 means the call filled it (and it started zeroed, a valid rusage).
    (rc == 0).then(|| unsafe { u.assume_init() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheduler_is_read_from_its_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let j = SchedulerJob::from_env(env(&[
            ("SLURM_JOB_ID", "42"),
            ("SLURM_ARRAY_JOB_ID", "40"),
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_RESTART_COUNT", "2"),
        ]))
        .unwrap();
        assert_eq!(
            (j.scheduler.as_str(), j.id.as_deref(), j.array_job.as_deref(), j.array_task.as_deref(), j.restarts),
            ("slurm", Some("42"), Some("40"), Some("3"), 2)
        );
        let k = SchedulerJob::from_env(env(&[("JOB_COMPLETION_INDEX", "7")])).unwrap();
        assert_eq!((k.scheduler.as_str(), k.array_task.as_deref()), ("kubernetes", Some("7")));
        assert_eq!(SchedulerJob::from_env(env(&[])), None);
    }

    #[test]
    fn an_array_task_requeues_itself_alone() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let task = env(&[("SLURM_JOB_ID", "3"), ("SLURM_ARRAY_JOB_ID", "3"), ("SLURM_ARRAY_TASK_ID", "2")]);
        assert_eq!(requeue_target(task).as_deref(), Some("3_2"));
        assert_eq!(requeue_target(env(&[("SLURM_JOB_ID", "7")])).as_deref(), Some("7"));
        assert_eq!(requeue_target(env(&[])), None);
    }

    #[test]
    fn a_thread_measures_its_own_cpu_time() {
        // Spin until the thread's own clock has counted 20 ms (on a loaded machine that takes
        // longer than 20 ms of wall time), then check it against the wall clock: one thread's
        // CPU time cannot run ahead of the time that passed.
        let before = concur::meter::thread_cpu_seconds();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        let used = loop {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            let (Some(a), Some(b)) = (before, concur::meter::thread_cpu_seconds()) else { break None };
            if b - a >= 0.02 || t.elapsed().as_secs_f64() > 10.0 {
                break Some(b - a);
            }
        };
        std::hint::black_box(x);
        if let Some(used) = used {
            let wall = t.elapsed().as_secs_f64();
            assert!(used >= 0.02 && used <= wall + 0.01, "{used} s of CPU in {wall} s");
        }
        let p = Machine::here(1).start().finish(Some(0.25));
        assert!(!p.host.is_empty() && !p.cpu.is_empty());
        assert!(p.started.ends_with('Z'), "{}", p.started);
        assert_eq!(p.cpu_s, Some(0.25));
    }
}
