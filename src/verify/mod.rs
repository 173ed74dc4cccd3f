//! Exact verification of boards, and the bitset constraint network used by search and
//! certification (ARCHITECTURE.md §6).

pub mod alldiff;
pub mod block;
mod network;
pub mod pc;
pub mod sac;
pub mod work;

pub use alldiff::AllDiff;
pub use network::{Ac1Work, Consistency, Network, Propagator, Revise, SupportCounts, ac1, ac1_counted};

use crate::puzzle::{Board, Puzzle, rotated};

/// The outcome of an exact board check.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// Every piece once, every rim side grey, every interior join matched, hints respected.
    pub valid: bool,
    /// Matched interior joins.
    pub score: usize,
    /// The puzzle's interior joins, the score of a solution.
    pub max_score: usize,
    /// Human-readable reasons, at most a handful.
    pub problems: Vec<String>,
}

const MAX_PROBLEMS: usize = 8;

/// Checks a full board directly, with no shortcut: the test every claimed solution passes.
pub fn check(puzzle: &Puzzle, board: &Board) -> Verdict {
    let mut problems = Vec::new();
    let mut note = |s: String| {
        if problems.len() < MAX_PROBLEMS {
            problems.push(s);
        }
    };
    let max_score = puzzle.max_score();
    if (board.width, board.height) != (puzzle.width(), puzzle.height()) || board.cells.len() != puzzle.cells() {
        note(format!(
            "board is {}x{} with {} cells, puzzle is {}x{}",
            board.width,
            board.height,
            board.cells.len(),
            puzzle.width(),
            puzzle.height()
        ));
        return Verdict { valid: false, score: 0, max_score, problems };
    }
    let (w, n) = (puzzle.width(), puzzle.cells());
    let mut uses = vec![0u32; n];
    let mut ok = true;
    let colors: Vec<Option<[u8; 4]>> = board
        .cells
        .iter()
        .map(|pl| (pl.piece as usize) < n && pl.rot < 4)
        .zip(&board.cells)
        .map(|(good, pl)| good.then(|| rotated(puzzle.pieces()[pl.piece as usize], pl.rot)))
        .collect();
    for (c, pl) in board.cells.iter().enumerate() {
        match colors[c] {
            None => {
                ok = false;
                note(format!("cell {c} holds piece {} rotation {}: out of range", pl.piece, pl.rot));
            }
            Some(q) => {
                uses[pl.piece as usize] += 1;
                for s in 0..4 {
                    if puzzle.neighbour(c, s).is_none() && q[s] != 0 {
                        ok = false;
                        note(format!("cell {c} (row {}, col {}) shows colour {} on the rim", c / w, c % w, q[s]));
                    }
                }
            }
        }
    }
    for (p, &u) in uses.iter().enumerate() {
        if u != 1 {
            ok = false;
            note(format!("piece {p} is used {u} times"));
        }
    }
    for h in puzzle.hints() {
        let pl = board.cells[h.cell];
        if pl.piece as usize != h.piece || pl.rot != h.rot {
            ok = false;
            note(format!("hint not respected: cell {} must hold piece {} rotation {}", h.cell, h.piece, h.rot));
        }
    }
    let mut score = 0;
    for c in 0..n {
        for s in [crate::puzzle::RIGHT, crate::puzzle::DOWN] {
            if let Some(d) = puzzle.neighbour(c, s) {
                match (colors[c], colors[d]) {
                    (Some(a), Some(b)) if a[s] == b[crate::puzzle::opposite(s)] => score += 1,
                    _ => {}
                }
            }
        }
    }
    if score != max_score {
        ok = false;
        note(format!("{} of {max_score} interior joins do not match", max_score - score));
    }
    Verdict { valid: ok, score, max_score, problems }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};

    #[test]
    fn planted_board_verifies_and_damage_is_caught() {
        let (p, b) =
            generate(&GenerateOptions { width: 5, height: 4, frame_colors: None, inner_colors: None, seed: 9 })
                .unwrap();
        let v = check(&p, &b);
        assert!(v.valid, "{v:?}");
        assert_eq!(v.score, p.max_score());
        let mut bad = b.clone();
        bad.cells[7].rot = (bad.cells[7].rot + 1) % 4;
        let v = check(&p, &bad);
        assert!(!v.valid);
        assert_eq!(v.score, p.score(&bad));
        let mut dup = b.clone();
        dup.cells[0] = dup.cells[1];
        assert!(!check(&p, &dup).valid);
    }
}
