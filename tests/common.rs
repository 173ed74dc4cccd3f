//! Shared helpers: where the real puzzle sets are, and generated puzzles.
use concur::puzzle::generate::{GenerateOptions, generate};
use concur::puzzle::{Board, Puzzle, format};
use std::path::PathBuf;

/// The shared puzzle folder (`CONCUR_PUZZLES`, else `../shared/puzzles`). When neither
/// exists the caller prints SKIPPED, unless `REQUIRE_PUZZLES=1`, which makes it a failure.
pub fn puzzles(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CONCUR_PUZZLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/puzzles"));
    if dir.join("brendan_owen").is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("REQUIRE_PUZZLES").as_deref() != Ok("1"),
        "{test}: REQUIRE_PUZZLES=1 but no puzzle sets at {}",
        dir.display()
    );
    eprintln!("SKIPPED {test}: no puzzle sets at {} (set CONCUR_PUZZLES)", dir.display());
    None
}

pub fn brendan(dir: &std::path::Path, set: u8, w: usize, h: usize) -> Puzzle {
    let path = dir.join(format!("brendan_owen/pieces_set_{set}/pieces_{w:02}x{h:02}.txt"));
    format::read_puzzle(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn generated(w: usize, h: usize, seed: u64) -> (Puzzle, Board) {
    generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed }).unwrap()
}
