//! The searches: the controls, complete and local search that the iterated maps are measured
//! against (`backtrack`, `scan`, `hill`, `alns`), the beam builder (`beam`), and puzzles
//! proven to have one solution (`unique`, by the backtracker's count). They never use the maps, so the arrows run one
//! way: the map drivers and the batch core use the backtracker (completion, propagation), and
//! the map-guided search, which runs F1 to order the backtracker's values, sits above both
//! (`src/guided.rs`).
pub mod alns;
pub mod backtrack;
pub mod beam;
pub mod hill;
pub mod journal;
pub mod scan;
pub mod unique;

/// The Luby restarts both tree searches take (`restart_base`, `no_restarts`): a unit of at
/// least one node.
pub(crate) fn check_restarts(restart_base: u64) -> Result<(), crate::error::SpecError> {
    if restart_base == 0 {
        return Err(crate::error::SpecError::range("restart_base", "at least 1", 0));
    }
    Ok(())
}
