//! One integration binary, one module per area. The modules that run the `concur` binary
//! need the `application` feature; elsewhere a test that runs it is ignored without it.
#[cfg(feature = "application")]
mod cli;
mod common;
mod dc;
#[cfg(feature = "gpu")]
mod deadline;
mod docs;
#[cfg(feature = "application")]
mod faults;
#[cfg(feature = "application")]
mod flags;
mod formats;
mod fuzz;
#[cfg(feature = "application")]
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
#[cfg(feature = "application")]
mod limits;
mod local;
mod maps;
mod propagate;
mod rate;
mod search;
mod shaders;
#[cfg(feature = "application")]
mod slurm;
mod snapshot;
