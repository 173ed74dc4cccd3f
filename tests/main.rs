//! One integration binary, one module per area.
mod cli;
mod common;
mod dc;
mod docs;
mod faults;
mod formats;
mod fuzz;
mod golden;
#[cfg(feature = "gpu")]
mod gpu;
#[cfg(feature = "gpu")]
mod gpu_assign;
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
