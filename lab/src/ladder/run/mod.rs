//! Running a ladder: its config, the planned runs, the records on file, the shard file and its
//! lock, the records' provenance, and the workers (`workers.rs`).

mod config;
mod on_file;
mod plan;
mod provenance;
mod records;
mod shard_file;
mod workers;

pub use config::{
    Budget, Config, GenSpec, Group, InstanceSpec, MAX_RUNS, MethodSpec, Scope, Spent, Stop, Tally, parse_config,
};
pub use on_file::{OnFile, Parts, RunKey};
pub use plan::{Instance, Job, Part, Shard, load_instances, plan};
pub use provenance::{Machine, Provenance, RunClock, SchedulerJob, cpu_model, host_name, requeue_job};
pub use records::{BySize, FoundAt, Record, join_parts, read_folder, read_records, results_path, tally};
pub use shard_file::{SYNC_EVERY, ShardFile, lock_path};
pub use workers::{
    Continuation, Done, Ladder, MIN_DEADLINE_RUN_S, Request, RequestError, Where, puzzle_folder, run, run_job,
    state_path,
};
