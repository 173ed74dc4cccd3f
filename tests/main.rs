//! One integration binary, one module per area.
mod cli;
mod common;
mod formats;
mod maps;
mod propagate;
mod search;
