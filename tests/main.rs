//! One integration binary, one module per area: the end-to-end tests of the engine, the lab
//! and the `concur` binary together (a test target of the command-line crate, `cli/`).
mod cli;
mod common;
mod dc;
#[cfg(feature = "gpu")]
mod deadline;
mod docs;
mod faults;
mod flags;
mod formats;
mod fuzz;
mod golden;
#[cfg(feature = "gpu")]
mod gpu;
#[cfg(feature = "gpu")]
mod gpu_assign;
#[cfg(feature = "gpu")]
mod gpu_stepper;
mod hardness;
mod ladder;
mod layering;
mod limits;
mod local;
mod maps;
mod propagate;
mod rate;
mod search;
mod shaders;
mod slurm;
mod snapshot;
