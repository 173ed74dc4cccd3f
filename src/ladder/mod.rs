//! The benchmark ladder: many independent runs of several methods over many instances,
//! one JSON line per finished run, sharded deterministically and resumable.
//!
//! A config (TOML or JSON, detected from the content) names instances (files or globs,
//! relative to the puzzle folder, or generator specs), methods with parameters, runs per
//! (instance, method) and budgets. Runs are enumerated in a fixed order; shard `K/N` takes
//! every run whose index is `K - 1` modulo `N`, so N machines (Slurm array jobs, Kubernetes
//! indexed jobs) write disjoint files whose union is the unsharded run. Every finished run is
//! appended and flushed as one line, so an interrupted ladder loses nothing it finished, and
//! `--resume` skips every run already on file.
//!
//! Split by concept, every item re-exported here: `config.rs` (the config, its budgets,
//! instances, methods and stopping rules, [`parse_config`]), `plan.rs` (the instances loaded,
//! the planned runs, shards and parts), `records.rs` (the JSONL records, reading them back,
//! the results files, the stops' tally), `run.rs` (running one job, the ladder request and
//! its checks, the ladder run).

pub mod devices;
pub mod fit;
pub mod hardness;
pub mod report;
pub mod stats;
pub mod svg;

mod config;
mod on_file;
mod plan;
mod provenance;
mod records;
mod run;
mod shard_file;

pub use config::{
    Budget, Config, GenSpec, Group, InstanceSpec, MAX_RUNS, MethodSpec, Scope, Spent, Stop, Tally, parse_config,
};
pub use on_file::{OnFile, Parts, RunKey};
pub use plan::{Instance, Job, Part, Shard, load_instances, plan};
pub use provenance::{Machine, Provenance, RunClock, SchedulerJob, cpu_model, host_name, requeue_job};
pub use records::{BySize, FoundAt, Record, join_parts, read_folder, read_records, results_path, tally};
pub use run::{
    Continuation, Done, Ladder, MIN_DEADLINE_RUN_S, Request, RequestError, Where, puzzle_folder, run, run_job,
    run_job_on, state_path,
};
pub use shard_file::{SYNC_EVERY, ShardFile, lock_path};
