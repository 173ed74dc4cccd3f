//! The searches: the controls, complete and local search that the iterated maps are measured
//! against (`backtrack`, `scan`, `hill`, `alns`). They never use the maps, so the arrows run one
//! way: the map drivers and the batch core use the backtracker (completion, propagation), and
//! the map-guided search, which runs F1 to order the backtracker's values, sits above both
//! (`src/guided.rs`).
pub mod alns;
pub mod backtrack;
pub mod hill;
pub mod journal;
pub mod scan;
