//! The puzzle model: pieces, clockwise rotations, candidates per cell, boards and the score.
//!
//! Conventions (ARCHITECTURE.md §2): sides are numbered clockwise, Up=0, Right=1, Down=2, Left=3.
//! A piece is `[u8; 4]` in URDL order; rotating it clockwise by `r` quarter turns gives a piece
//! whose side `d` shows stored side `(d - r) mod 4`. Cell index `c = row * W + col`, row 0 at
//! the top. Colour 0 is the grey rim.

pub mod format;
pub mod generate;

use crate::error::{Error, Result};

/// Edge colours of one piece in URDL order.
pub type Piece = [u8; 4];

/// The top side of a cell or piece.
pub const UP: usize = 0;
/// The right side.
pub const RIGHT: usize = 1;
/// The bottom side.
pub const DOWN: usize = 2;
/// The left side.
pub const LEFT: usize = 3;

/// Largest supported board side.
pub const MAX_SIDE: usize = 256;
/// Largest supported number of cells (a 256x256 board).
pub const MAX_CELLS: usize = 1 << 16;
/// Largest number of colours, grey included: a colour is 0..=63.
pub const MAX_COLORS: usize = 64;

/// The side facing `side` across a join: `(side + 2) % 4`.
#[inline]
pub const fn opposite(side: usize) -> usize {
    (side + 2) % 4
}

/// The piece turned clockwise by `r` quarter turns.
#[inline]
pub fn rotated(p: Piece, r: u8) -> Piece {
    let r = (r % 4) as usize;
    [p[(4 - r) % 4], p[(5 - r) % 4], p[(6 - r) % 4], p[(7 - r) % 4]]
}

/// The rotation-independent form of a piece: the smallest of its four rotations.
pub fn canonical(p: Piece) -> Piece {
    (0..4).map(|r| rotated(p, r)).min().expect("four rotations")
}

/// True when some non-trivial rotation maps the piece onto itself.
pub fn is_symmetric(p: Piece) -> bool {
    rotated(p, 1) == p || rotated(p, 2) == p
}

/// A piece fixed at a cell with a rotation, given in the puzzle (eternity2 "hints").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Hint {
    /// The cell, row-major from the top-left.
    pub cell: usize,
    /// The piece, 0-based in the puzzle's order.
    pub piece: usize,
    /// Clockwise quarter turns, 0..=3.
    pub rot: u8,
}

/// One placed piece: which piece and how many clockwise quarter turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Placement {
    /// The piece, 0-based in the puzzle's order.
    pub piece: u16,
    /// Clockwise quarter turns, 0..=3.
    pub rot: u8,
}

/// A full board: `cells[c]` is the placement at cell `c` (row-major from the top-left).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// `width * height` placements, row-major from the top-left.
    pub cells: Vec<Placement>,
}

/// The class of a piece or a cell, by its number of rim sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Two adjacent grey sides (a piece), or two rim sides (a cell).
    Corner,
    /// One grey side, or one rim side.
    Edge,
    /// No grey side, or no rim side.
    Inner,
}

/// A validated puzzle: W x H pieces whose border classes fit the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Puzzle {
    width: usize,
    height: usize,
    pieces: Vec<Piece>,
    hints: Vec<Hint>,
    num_colors: usize,
}

impl Puzzle {
    /// Builds and validates a puzzle. Rejects sizes outside 2..=256, a wrong piece count,
    /// pieces whose grey sides fit no cell, class counts that fit no border arrangement,
    /// and hints that are out of range, repeated, or put a piece where its rim does not fit.
    pub fn new(width: usize, height: usize, pieces: Vec<Piece>, hints: Vec<Hint>) -> Result<Self> {
        check_size(width, height)?;
        let n = width * height;
        if pieces.len() != n {
            return Err(Error::puzzle(format!("a {width}x{height} board needs {n} pieces, found {}", pieces.len())));
        }
        let mut num_colors = 1;
        for (i, p) in pieces.iter().enumerate() {
            for &col in p {
                if col as usize >= MAX_COLORS {
                    return Err(Error::puzzle(format!(
                        "piece {i} has colour {col}; at most {} colours are supported",
                        MAX_COLORS - 1
                    )));
                }
                num_colors = num_colors.max(col as usize + 1);
            }
            if piece_class(*p).is_none() {
                return Err(Error::puzzle(format!(
                    "piece {i} {:?} has grey (0) on sides that no cell of a {width}x{height} board has on its rim",
                    p
                )));
            }
        }
        let mut want = [0usize; 3];
        for c in 0..n {
            want[class_index(cell_class(width, height, c))] += 1;
        }
        let mut have = [0usize; 3];
        for p in &pieces {
            have[class_index(piece_class(*p).expect("checked"))] += 1;
        }
        if want != have {
            return Err(Error::puzzle(format!(
                "pieces do not fit a {width}x{height} border: need {} corner, {} edge and {} inner pieces, found {}, {} and {}",
                want[0], want[1], want[2], have[0], have[1], have[2]
            )));
        }
        let mut used_cell = vec![false; n];
        let mut used_piece = vec![false; n];
        for h in &hints {
            if h.cell >= n || h.piece >= n || h.rot > 3 {
                return Err(Error::puzzle(format!(
                    "hint {h:?} is out of range for {n} cells and pieces, rotations 0..3"
                )));
            }
            if std::mem::replace(&mut used_cell[h.cell], true) {
                return Err(Error::puzzle(format!("two hints for cell {}", h.cell)));
            }
            if std::mem::replace(&mut used_piece[h.piece], true) {
                return Err(Error::puzzle(format!("two hints for piece {}", h.piece)));
            }
            let q = rotated(pieces[h.piece], h.rot);
            if !fits_rim(width, height, h.cell, q) {
                return Err(Error::puzzle(format!(
                    "hint {h:?} puts piece {} rotated to {q:?} where its grey sides do not match the rim",
                    h.piece
                )));
            }
        }
        Ok(Puzzle { width, height, pieces, hints, num_colors })
    }

    /// Columns of the board.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Rows of the board.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Cells of the board, `width * height` (and pieces of the puzzle).
    pub fn cells(&self) -> usize {
        self.width * self.height
    }
    /// The pieces, in the file's order (a piece's number is its index).
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }
    /// The pieces fixed in place by the puzzle (eternity2.dev hints), in the file's order.
    pub fn hints(&self) -> &[Hint] {
        &self.hints
    }
    /// Number of colours including grey (max colour + 1).
    pub fn num_colors(&self) -> usize {
        self.num_colors
    }
    /// The puzzle's identity as one number: FNV-1a ([`crate::hash`]) over its size, colours,
    /// pieces in order and hints. Two puzzles with the same fingerprint are, for every
    /// practical purpose, the same puzzle (a map's snapshot is checked against it before a
    /// run continues from it).
    pub fn fingerprint(&self) -> u64 {
        let mut h = crate::hash::Fnv1a::new();
        for v in [self.width as u64, self.height as u64, self.num_colors as u64, self.pieces.len() as u64] {
            h = h.word(v);
        }
        for p in &self.pieces {
            h = h.bytes(p);
        }
        for hint in &self.hints {
            h = h.word(hint.cell as u64).word(hint.piece as u64).word(u64::from(hint.rot));
        }
        h.finish()
    }
    /// Number of interior joins, the maximum score: `J = 2WH - W - H`.
    pub fn max_score(&self) -> usize {
        2 * self.width * self.height - self.width - self.height
    }

    /// The neighbour of cell `c` across side `s`, or `None` on the rim.
    #[inline]
    pub fn neighbour(&self, c: usize, s: usize) -> Option<usize> {
        neighbour(self.width, self.height, c, s)
    }

    /// Colour shown on side `s` by placement `pl`.
    #[inline]
    pub fn color(&self, pl: Placement, s: usize) -> u8 {
        rotated(self.pieces[pl.piece as usize], pl.rot)[s]
    }

    /// Candidate lists for every cell (ARCHITECTURE.md §2).
    pub fn candidates(&self) -> Candidates {
        Candidates::new(self)
    }

    /// The same puzzle with its turn symmetry broken: on a square board without hints, the
    /// lowest-numbered corner piece is fixed in the top-left cell, in the one rotation that
    /// fits it there (a hint). In any solution that piece sits in one of the four corners, and
    /// exactly one quarter turn of the board brings it to the top-left, so the fixed puzzle
    /// keeps one solution per solution of the original up to turning, and each of its
    /// solutions solves the original. `None` where that does not hold: a rectangle (its turns
    /// do not reach every corner), a puzzle with hints, or no piece that only fits corners.
    pub fn with_fixed_corner(&self) -> Option<Puzzle> {
        let (w, h) = (self.width, self.height);
        if w != h || w < 2 || !self.hints.is_empty() {
            return None;
        }
        let corner_only = |q: Piece| {
            (0..4).all(|r| {
                (0..self.cells()).all(|c| {
                    let corner = cell_class(w, h, c) == Class::Corner;
                    corner || !fits_rim(w, h, c, rotated(q, r))
                })
            })
        };
        let (piece, rot) = self.pieces.iter().enumerate().find_map(|(i, &q)| {
            let rot = (0..4u8).find(|&r| fits_rim(w, h, 0, rotated(q, r)))?;
            corner_only(q).then_some((i, rot))
        })?;
        Puzzle::new(w, h, self.pieces.clone(), vec![Hint { cell: 0, piece, rot }]).ok()
    }

    /// Number of matched interior joins of a full board.
    pub fn score(&self, board: &Board) -> usize {
        let w = self.width;
        let mut score = 0;
        for c in 0..self.cells() {
            let here = rotated(self.pieces[board.cells[c].piece as usize], board.cells[c].rot);
            if (c % w) + 1 < w {
                let right = rotated(self.pieces[board.cells[c + 1].piece as usize], board.cells[c + 1].rot);
                score += usize::from(here[RIGHT] == right[LEFT]);
            }
            if c + w < self.cells() {
                let down = rotated(self.pieces[board.cells[c + w].piece as usize], board.cells[c + w].rot);
                score += usize::from(here[DOWN] == down[UP]);
            }
        }
        score
    }
}

pub(crate) fn check_size(width: usize, height: usize) -> Result<()> {
    if !(2..=MAX_SIDE).contains(&width) || !(2..=MAX_SIDE).contains(&height) {
        return Err(Error::puzzle(format!(
            "board size {width}x{height} is out of range: each side must be 2..={MAX_SIDE}"
        )));
    }
    if width * height > MAX_CELLS {
        return Err(Error::puzzle(format!("board {width}x{height} has more than {MAX_CELLS} cells")));
    }
    Ok(())
}

fn class_index(c: Class) -> usize {
    match c {
        Class::Corner => 0,
        Class::Edge => 1,
        Class::Inner => 2,
    }
}

/// Class of a piece from its grey sides; `None` if no cell can hold it.
pub fn piece_class(p: Piece) -> Option<Class> {
    let zeros: Vec<usize> = (0..4).filter(|&s| p[s] == 0).collect();
    match zeros.as_slice() {
        [] => Some(Class::Inner),
        [_] => Some(Class::Edge),
        [a, b] if (b - a) % 2 == 1 => Some(Class::Corner),
        _ => None,
    }
}

/// The neighbour of cell `c` across side `s` on a `width` x `height` board, or `None` on the rim.
#[inline]
pub fn neighbour(width: usize, height: usize, c: usize, s: usize) -> Option<usize> {
    let (row, col) = (c / width, c % width);
    match s {
        UP if row > 0 => Some(c - width),
        RIGHT if col + 1 < width => Some(c + 1),
        DOWN if row + 1 < height => Some(c + width),
        LEFT if col > 0 => Some(c - 1),
        _ => None,
    }
}

/// The class of a cell by its number of rim sides.
pub fn cell_class(width: usize, height: usize, c: usize) -> Class {
    match (0..4).filter(|&s| neighbour(width, height, c, s).is_none()).count() {
        0 => Class::Inner,
        1 => Class::Edge,
        _ => Class::Corner,
    }
}

/// True when the (already rotated) colours `q` show grey exactly on the rim sides of cell `c`.
pub fn fits_rim(width: usize, height: usize, c: usize, q: Piece) -> bool {
    (0..4).all(|s| (q[s] == 0) == neighbour(width, height, c, s).is_none())
}

/// Per-cell candidate lists, flattened: the candidates of cell `c` are
/// `list[offsets[c]..offsets[c + 1]]`, ordered by piece then rotation, so the candidates of
/// one piece in one cell are contiguous. `colors[i]` are the rotated colours of `list[i]`.
#[derive(Clone, Debug)]
pub struct Candidates {
    offsets: Vec<u32>,
    list: Vec<Placement>,
    colors: Vec<Piece>,
}

impl Candidates {
    fn new(p: &Puzzle) -> Self {
        let n = p.cells();
        let mut hinted_cell: Vec<Option<Hint>> = vec![None; n];
        let mut hinted_piece = vec![false; n];
        for h in &p.hints {
            hinted_cell[h.cell] = Some(*h);
            hinted_piece[h.piece] = true;
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut list = Vec::new();
        let mut colors = Vec::new();
        offsets.push(0);
        for c in 0..n {
            if let Some(h) = hinted_cell[c] {
                list.push(Placement { piece: h.piece as u16, rot: h.rot });
                colors.push(rotated(p.pieces[h.piece], h.rot));
            } else {
                for (pi, &piece) in p.pieces.iter().enumerate() {
                    if hinted_piece[pi] {
                        continue;
                    }
                    for r in 0..4u8 {
                        let q = rotated(piece, r);
                        // A symmetric piece shows the same picture twice: keep the first.
                        if (0..r).any(|r0| rotated(piece, r0) == q) {
                            continue;
                        }
                        if fits_rim(p.width, p.height, c, q) {
                            list.push(Placement { piece: pi as u16, rot: r });
                            colors.push(q);
                        }
                    }
                }
            }
            offsets.push(list.len() as u32);
        }
        Candidates { offsets, list, colors }
    }

    /// Candidates of cell `c`.
    #[inline]
    pub fn of(&self, c: usize) -> &[Placement] {
        &self.list[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }
    /// Rotated colours of the candidates of cell `c`.
    #[inline]
    pub fn colors_of(&self, c: usize) -> &[Piece] {
        &self.colors[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }
    /// Number of candidates of cell `c`.
    #[inline]
    pub fn len(&self, c: usize) -> usize {
        (self.offsets[c + 1] - self.offsets[c]) as usize
    }
    /// Whether cell `c` has no candidate (no piece fits it).
    pub fn is_empty(&self, c: usize) -> bool {
        self.len(c) == 0
    }
    /// Candidates over every cell: the length of the flat list.
    pub fn total(&self) -> usize {
        self.list.len()
    }
    /// Cells of the board.
    pub fn cells(&self) -> usize {
        self.offsets.len() - 1
    }
}

/// The board turned clockwise by a quarter turn as a whole (square boards): the piece at
/// (row, col) moves to (col, W - 1 - row) and turns once.
pub fn rotate_board(b: &Board) -> Board {
    let (w, h) = (b.width, b.height);
    let mut cells = vec![Placement::default(); w * h];
    for row in 0..h {
        for col in 0..w {
            let pl = b.cells[row * w + col];
            let (nr, nc) = (col, h - 1 - row);
            cells[nr * h + nc] = Placement { piece: pl.piece, rot: (pl.rot + 1) % 4 };
        }
    }
    Board { width: h, height: w, cells }
}

/// The cells to free around the mismatches of a near-solution: both cells of every
/// mismatched join, plus every cell within Chebyshev distance `radius` of one of them.
pub fn mismatch_region(puzzle: &Puzzle, board: &Board, radius: usize) -> Vec<bool> {
    let (w, h) = (puzzle.width(), puzzle.height());
    let mut core = vec![false; w * h];
    for c in 0..w * h {
        for s in [RIGHT, DOWN] {
            if let Some(m) = puzzle.neighbour(c, s)
                && puzzle.color(board.cells[c], s) != puzzle.color(board.cells[m], opposite(s))
            {
                core[c] = true;
                core[m] = true;
            }
        }
    }
    let mut free = vec![false; w * h];
    for c in (0..w * h).filter(|&c| core[c]) {
        let (r0, c0) = (c / w, c % w);
        for r in r0.saturating_sub(radius)..=(r0 + radius).min(h - 1) {
            for x in c0.saturating_sub(radius)..=(c0 + radius).min(w - 1) {
                free[r * w + x] = true;
            }
        }
    }
    free
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_corner_keeps_one_solution_per_turn_class() {
        use crate::search::scan::{ScanOptions, count};
        let make = |width, height, colors: Option<(usize, usize)>, seed| {
            let (frame_colors, inner_colors) = (colors.map(|c| c.0), colors.map(|c| c.1));
            generate::generate(&generate::GenerateOptions { width, height, frame_colors, inner_colors, seed })
                .unwrap()
                .0
        };
        for seed in 0..4 {
            let p = make(4, 4, Some((2, 3)), seed);
            let fixed = p.with_fixed_corner().expect("a square without hints");
            let h = fixed.hints()[0];
            assert_eq!(h.cell, 0);
            assert!(fits_rim(4, 4, 0, rotated(p.pieces()[h.piece], h.rot)));
            let all = count(&p, &ScanOptions::default());
            let one = count(&fixed, &ScanOptions::default());
            assert!(all.complete && one.complete && all.solutions > 0);
            assert_eq!(one.solutions * 4, all.solutions, "seed {seed}");
        }
        assert!(make(5, 4, None, 1).with_fixed_corner().is_none(), "turns of a rectangle do not reach every corner");
        let fixed = make(4, 4, None, 1).with_fixed_corner().unwrap();
        assert!(fixed.with_fixed_corner().is_none(), "a puzzle with hints");
    }

    #[test]
    fn rotation_follows_the_convention() {
        let p: Piece = [1, 2, 3, 4];
        // Turned clockwise once, the old Left side faces Up.
        assert_eq!(rotated(p, 1), [4, 1, 2, 3]);
        assert_eq!(rotated(p, 2), [3, 4, 1, 2]);
        assert_eq!(rotated(rotated(p, 3), 1), p);
        for r in 0..4 {
            for d in 0..4 {
                assert_eq!(rotated(p, r)[d], p[(d + 4 - r as usize) % 4]);
            }
        }
    }

    #[test]
    fn classes_and_symmetry() {
        assert_eq!(piece_class([0, 0, 1, 2]), Some(Class::Corner));
        assert_eq!(piece_class([0, 1, 1, 2]), Some(Class::Edge));
        assert_eq!(piece_class([0, 1, 0, 2]), None);
        assert_eq!(piece_class([3, 1, 1, 2]), Some(Class::Inner));
        assert!(is_symmetric([1, 2, 1, 2]));
        assert!(is_symmetric([1, 1, 1, 1]));
        assert!(!is_symmetric([1, 2, 2, 1]));
        assert_eq!(canonical([2, 1, 3, 1]), canonical([1, 2, 1, 3]));
    }

    #[test]
    fn candidates_respect_border_classes() {
        // A 2x2 board: four corners.
        let pieces = vec![[0, 1, 2, 0], [0, 0, 3, 1], [2, 4, 0, 0], [3, 0, 0, 4]];
        let pz = Puzzle::new(2, 2, pieces, vec![]).unwrap();
        let cands = pz.candidates();
        for c in 0..4 {
            assert_eq!(cands.len(c), 4, "every corner piece fits every corner once");
            for q in cands.colors_of(c) {
                assert!(fits_rim(2, 2, c, *q));
            }
        }
        assert_eq!(pz.max_score(), 4);
    }

    #[test]
    fn rejects_wrong_counts() {
        let e = Puzzle::new(2, 2, vec![[0, 1, 2, 0]; 3], vec![]).unwrap_err();
        assert!(e.to_string().contains("needs 4 pieces"), "{e}");
        let e = Puzzle::new(2, 2, vec![[1, 1, 2, 1]; 4], vec![]).unwrap_err();
        assert!(e.to_string().contains("border"), "{e}");
        assert!(Puzzle::new(1_000_000_000, 1_000_000_000, vec![], vec![]).is_err());
    }
}
