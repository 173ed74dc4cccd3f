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
//! Two folders, every public item re-exported here: `run/` runs a ladder (`config.rs`: the
//! config, its budgets, instances, methods and stopping rules, [`parse_config`]; `plan.rs`:
//! the instances loaded, the planned runs, shards and parts; `records.rs`: the JSONL records
//! and reading them back; `on_file.rs` and `shard_file.rs`: what the folder holds and the one
//! writer of a results file; `provenance.rs`: where and how a run ran; `workers.rs`: the
//! request, its checks, the workers and the ladder run), and `report/` reads the records
//! back (`concur report`: statistics, fits, curves, figures).

pub mod report;
pub mod run;

pub use report::{choice, curve, devices, fit, hardness, poisson_lognormal, stats, svg};
pub use run::{
    Budget, BySize, Config, Continuation, Done, FoundAt, GenSpec, Group, Instance, InstanceSpec, Job, Ladder, MAX_RUNS,
    MIN_DEADLINE_RUN_S, Machine, MethodSpec, OnFile, Part, Parts, Provenance, Record, Request, RequestError, RunClock,
    RunKey, SYNC_EVERY, SchedulerJob, Scope, Shard, ShardFile, Spent, Stop, Tally, Where, cpu_model, host_name,
    join_parts, load_instances, lock_path, parse_config, plan, puzzle_folder, read_folder, read_records, requeue_job,
    results_path, run, run_job, state_path, tally,
};
