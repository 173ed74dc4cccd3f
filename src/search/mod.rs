//! The searches: the controls, complete and local search that the iterated maps are measured
//! against (`backtrack`, `scan`, `hill`, `alns`; they never use the maps), and the map-guided
//! search (`guided`), which runs F1 to order the backtracker's values.
pub mod alns;
pub mod backtrack;
pub mod guided;
pub mod hill;
pub mod journal;
pub mod scan;
