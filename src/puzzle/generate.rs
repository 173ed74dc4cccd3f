//! The planted-solution generator, in the manner of Brendan Owen's benchmark sets.
//!
//! Joins fall in two classes: frame joins (between two rim cells, along the rim) and inner
//! joins (all others). Frame joins draw from colours `1..=F`, inner joins from
//! `F+1..=F+I`, and within each class every colour is used as evenly as the join count
//! allows. Draws with duplicate pieces (equal up to rotation) or rotationally symmetric
//! pieces are rejected. The pieces are then shuffled and each is turned at random; the
//! planted board is returned alongside.

use super::{Board, DOWN, Piece, Placement, Puzzle, RIGHT, canonical, check_size, is_symmetric, neighbour, rotated};
use crate::error::{Error, Result};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashSet;

/// What [`generate`] makes (`concur generate`'s options): the board's size, its colour counts
/// and the seed; `None` colour counts follow Brendan Owen's table for the size.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    /// Columns of the board.
    pub width: usize,
    /// Rows of the board.
    pub height: usize,
    /// Colours of the frame joins (along the rim, between two rim pieces), grey not counted.
    pub frame_colors: Option<usize>,
    /// Colours of all other joins.
    pub inner_colors: Option<usize>,
    /// Every random choice flows from it: the same options give the same puzzle.
    pub seed: u64,
}

/// How many balanced redraws to try before giving up on duplicate or symmetric pieces.
const MAX_ATTEMPTS: usize = 20_000;

/// (W, H, frame colours, inner colours) of Brendan Owen's sets, W >= H, read from set 1.
const BRENDAN_COLORS: [(u8, u8, u8, u8); 171] = [
    (3, 3, 2, 2),
    (4, 3, 2, 2),
    (4, 4, 2, 3),
    (5, 3, 2, 3),
    (5, 4, 2, 3),
    (5, 5, 3, 4),
    (6, 3, 2, 3),
    (6, 4, 3, 4),
    (6, 5, 3, 5),
    (6, 6, 3, 5),
    (7, 3, 3, 3),
    (7, 4, 3, 4),
    (7, 5, 3, 5),
    (7, 6, 3, 6),
    (7, 7, 3, 6),
    (8, 3, 3, 3),
    (8, 4, 3, 5),
    (8, 5, 3, 5),
    (8, 6, 3, 6),
    (8, 7, 3, 7),
    (8, 8, 3, 8),
    (9, 3, 3, 4),
    (9, 4, 3, 5),
    (9, 5, 3, 6),
    (9, 6, 3, 7),
    (9, 7, 3, 7),
    (9, 8, 3, 8),
    (9, 9, 4, 9),
    (10, 3, 3, 4),
    (10, 4, 3, 5),
    (10, 5, 3, 6),
    (10, 6, 3, 7),
    (10, 7, 3, 8),
    (10, 8, 4, 9),
    (10, 9, 4, 9),
    (10, 10, 4, 10),
    (11, 3, 4, 4),
    (11, 4, 4, 5),
    (11, 5, 3, 7),
    (11, 6, 3, 8),
    (11, 7, 4, 8),
    (11, 8, 4, 9),
    (11, 9, 4, 10),
    (11, 10, 4, 11),
    (11, 11, 4, 11),
    (12, 3, 4, 4),
    (12, 4, 4, 6),
    (12, 5, 4, 7),
    (12, 6, 4, 8),
    (12, 7, 4, 9),
    (12, 8, 4, 10),
    (12, 9, 4, 10),
    (12, 10, 4, 11),
    (12, 11, 4, 12),
    (12, 12, 4, 12),
    (13, 3, 4, 4),
    (13, 4, 4, 6),
    (13, 5, 4, 7),
    (13, 6, 4, 8),
    (13, 7, 4, 9),
    (13, 8, 4, 10),
    (13, 9, 4, 11),
    (13, 10, 4, 12),
    (13, 11, 4, 12),
    (13, 12, 4, 13),
    (13, 13, 4, 14),
    (14, 3, 4, 5),
    (14, 4, 4, 6),
    (14, 5, 4, 8),
    (14, 6, 4, 9),
    (14, 7, 4, 10),
    (14, 8, 4, 11),
    (14, 9, 4, 11),
    (14, 10, 4, 12),
    (14, 11, 4, 13),
    (14, 12, 4, 13),
    (14, 13, 5, 14),
    (14, 14, 5, 15),
    (15, 3, 5, 5),
    (15, 4, 4, 6),
    (15, 5, 4, 8),
    (15, 6, 4, 9),
    (15, 7, 4, 10),
    (15, 8, 4, 11),
    (15, 9, 4, 12),
    (15, 10, 4, 13),
    (15, 11, 4, 13),
    (15, 12, 5, 14),
    (15, 13, 5, 15),
    (15, 14, 5, 15),
    (15, 15, 5, 16),
    (16, 3, 5, 5),
    (16, 4, 4, 7),
    (16, 5, 4, 8),
    (16, 6, 4, 9),
    (16, 7, 4, 10),
    (16, 8, 4, 11),
    (16, 9, 4, 12),
    (16, 10, 4, 13),
    (16, 11, 5, 14),
    (16, 12, 5, 15),
    (16, 13, 5, 15),
    (16, 14, 5, 16),
    (16, 15, 5, 17),
    (16, 16, 5, 17),
    (17, 3, 5, 5),
    (17, 4, 5, 7),
    (17, 5, 5, 8),
    (17, 6, 4, 10),
    (17, 7, 4, 11),
    (17, 8, 4, 12),
    (17, 9, 4, 13),
    (17, 10, 5, 13),
    (17, 11, 5, 14),
    (17, 12, 5, 15),
    (17, 13, 5, 16),
    (17, 14, 5, 16),
    (17, 15, 5, 17),
    (17, 16, 5, 18),
    (17, 17, 5, 18),
    (18, 3, 5, 5),
    (18, 4, 5, 7),
    (18, 5, 5, 9),
    (18, 6, 5, 10),
    (18, 7, 5, 11),
    (18, 8, 5, 12),
    (18, 9, 5, 13),
    (18, 10, 5, 14),
    (18, 11, 5, 15),
    (18, 12, 5, 16),
    (18, 13, 5, 16),
    (18, 14, 5, 17),
    (18, 15, 5, 18),
    (18, 16, 5, 18),
    (18, 17, 5, 19),
    (18, 18, 5, 20),
    (19, 3, 6, 5),
    (19, 4, 5, 7),
    (19, 5, 5, 9),
    (19, 6, 5, 10),
    (19, 7, 5, 11),
    (19, 8, 5, 12),
    (19, 9, 5, 13),
    (19, 10, 5, 14),
    (19, 11, 5, 15),
    (19, 12, 5, 16),
    (19, 13, 5, 17),
    (19, 14, 5, 17),
    (19, 15, 5, 18),
    (19, 16, 5, 19),
    (19, 17, 5, 20),
    (19, 18, 5, 20),
    (19, 19, 5, 21),
    (20, 3, 6, 5),
    (20, 4, 5, 8),
    (20, 5, 5, 9),
    (20, 6, 5, 11),
    (20, 7, 5, 12),
    (20, 8, 5, 13),
    (20, 9, 5, 14),
    (20, 10, 5, 15),
    (20, 11, 5, 16),
    (20, 12, 5, 16),
    (20, 13, 5, 17),
    (20, 14, 5, 18),
    (20, 15, 5, 19),
    (20, 16, 5, 19),
    (20, 17, 5, 20),
    (20, 18, 5, 21),
    (20, 19, 6, 21),
    (20, 20, 6, 22),
];

/// Brendan Owen's (frame, inner) colour counts for a W x H board (either orientation).
/// Sizes beyond 20 use the 20-wide entries, the largest in his sets.
pub fn default_colors(width: usize, height: usize) -> (usize, usize) {
    let (w, h) = (width.max(height).min(20), width.min(height).clamp(3, 20));
    let w = w.max(3);
    BRENDAN_COLORS
        .iter()
        .find(|e| e.0 as usize == w && e.1 as usize == h)
        .map(|e| (e.2 as usize, e.3 as usize))
        .expect("the table covers 3 <= H <= W <= 20")
}

/// True when the join from cell `c` across side `s` (Right or Down) runs along the rim.
fn is_frame_join(width: usize, height: usize, c: usize, s: usize) -> bool {
    let (row, col) = (c / width, c % width);
    match s {
        RIGHT => row == 0 || row + 1 == height,
        DOWN => col == 0 || col + 1 == width,
        _ => unreachable!("joins are named from their upper or left cell"),
    }
}

/// Generates a puzzle with a planted solution. The same options give the same puzzle.
pub fn generate(opts: &GenerateOptions) -> Result<(Puzzle, Board)> {
    let (w, h) = (opts.width, opts.height);
    check_size(w, h).map_err(|e| Error::Generate { width: w, height: h, reason: e.to_string() })?;
    let (df, di) = default_colors(w, h);
    let f = opts.frame_colors.unwrap_or(df);
    let i = opts.inner_colors.unwrap_or(di);
    if f == 0 || i == 0 || 1 + f + i > super::MAX_COLORS {
        return Err(Error::Generate {
            width: w,
            height: h,
            reason: format!(
                "colour counts frame={f} inner={i}: each must be at least 1 and together at most {}",
                super::MAX_COLORS - 1
            ),
        });
    }
    let n = w * h;
    // Every join, named by its upper/left cell and side, in a fixed order.
    let mut frame = Vec::new();
    let mut inner = Vec::new();
    for c in 0..n {
        for s in [RIGHT, DOWN] {
            if neighbour(w, h, c, s).is_some() {
                if is_frame_join(w, h, c, s) { frame.push((c, s)) } else { inner.push((c, s)) }
            }
        }
    }
    let balanced =
        |len: usize, first: usize, k: usize| -> Vec<u8> { (0..len).map(|j| (first + j % k) as u8).collect() };
    let mut frame_cols = balanced(frame.len(), 1, f);
    let mut inner_cols = balanced(inner.len(), 1 + f, i);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
    let mut solved: Vec<Piece> = vec![[0; 4]; n];
    let mut seen = HashSet::with_capacity(n);
    for _attempt in 0..MAX_ATTEMPTS {
        frame_cols.shuffle(&mut rng);
        inner_cols.shuffle(&mut rng);
        solved.iter_mut().for_each(|p| *p = [0; 4]);
        for (&(c, s), &col) in frame.iter().zip(&frame_cols).chain(inner.iter().zip(&inner_cols)) {
            let d = neighbour(w, h, c, s).expect("interior join");
            solved[c][s] = col;
            solved[d][super::opposite(s)] = col;
        }
        seen.clear();
        if solved.iter().all(|&p| !is_symmetric(p) && seen.insert(canonical(p))) {
            // Shuffle the piece order and turn each piece at random.
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut rng);
            let mut pieces = vec![[0u8; 4]; n];
            let mut cells = vec![Placement::default(); n];
            for (c, &pi) in order.iter().enumerate() {
                let r: u8 = rng.random_range(0..4);
                pieces[pi] = rotated(solved[c], (4 - r) % 4);
                cells[c] = Placement { piece: pi as u16, rot: r };
            }
            let puzzle = Puzzle::new(w, h, pieces, vec![])?;
            return Ok((puzzle, Board { width: w, height: h, cells }));
        }
    }
    Err(Error::Unsatisfiable { width: w, height: h, frame_colors: f, inner_colors: i, attempts: MAX_ATTEMPTS })
}

/// A generated puzzle with the default colours, for the library's unit tests.
#[cfg(test)]
pub(crate) fn puzzle(w: usize, h: usize, seed: u64) -> Puzzle {
    generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
        .expect("a generated puzzle")
        .0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_solution_is_perfect_and_deterministic() {
        for (w, h, seed) in [(3, 3, 1), (5, 5, 2), (6, 4, 3), (8, 8, 4), (16, 16, 5)] {
            let opts = GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed };
            let (p, b) = generate(&opts).unwrap();
            assert_eq!(p.score(&b), p.max_score());
            let (p2, b2) = generate(&opts).unwrap();
            assert_eq!((p, b), (p2, b2));
        }
    }

    #[test]
    fn table_matches_known_entries() {
        assert_eq!(default_colors(16, 16), (5, 17));
        assert_eq!(default_colors(3, 8), (3, 3));
        assert_eq!(default_colors(5, 5), (3, 4));
    }
}
