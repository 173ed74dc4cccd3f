//! One integration binary, one module per area.
mod cli;
mod common;
mod dc;
mod formats;
mod maps;
mod propagate;
mod search;
mod local;
