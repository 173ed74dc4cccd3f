//! The controls: complete and local search that the iterated maps are measured against.
pub mod alns;
pub mod backtrack;
pub mod hill;
pub mod journal;
pub mod scan;
