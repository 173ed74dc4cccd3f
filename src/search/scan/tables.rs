//! The row scan's lookup tables: per (cell, left colour, up colour) the placements that fit,
//! the join budgets, the look-ahead masks, and the corner piece fixed by turn symmetry.

use crate::puzzle::Puzzle;

/// One placement in a table: piece, the colours it shows right and down, and its index in
/// the cell's candidate list.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) piece: u16,
    pub(super) right: u8,
    pub(super) down: u8,
    pub(super) cand: u32,
    /// The joins this placement opens (towards the right and downwards), as indices into
    /// the join budgets; the spare last budget (never exhausted) for a rim side or when
    /// budgets are off, so that the walk needs no branch for those.
    pub(super) opens: [u16; 2],
}

/// The spare budget's value: more joins than any board has.
const UNLIMITED: i32 = i32::MAX / 4;

/// The lookup tables of one puzzle.
#[derive(Clone)]
pub(super) struct Tables {
    pub(super) width: usize,
    pub(super) cells: usize,
    colors: usize,
    /// `offsets[(c * K + left) * K + up]..offsets[.. + 1]` indexes `entries`.
    pub(super) offsets: Vec<u32>,
    pub(super) entries: Vec<Entry>,
    /// Words of a piece bitset.
    words: usize,
    /// `below[(c * K + k) * words..]`: the pieces with a candidate at the cell under `c`
    /// that shows colour `k` upwards (empty rows for the bottom row).
    below: Vec<u64>,
    /// Join budgets ([`join_budgets`], empty when not used), then one spare, [`UNLIMITED`].
    pub(super) budget: Vec<i32>,
    /// Check the row under each placement as a chain ([`Walker::reach_mask`](super::walk::Walker::reach_mask)).
    pub(super) reach: bool,
}

/// How many joins of each kind and colour every solution has, indexed `kind * K + colour`
/// with kind 0 = between two frame cells, 1 = frame to inner, 2 = between two inner cells.
/// Empty for boards narrower than 3 (where the kinds below do not hold).
///
/// On a board at least 3 x 3, pieces go to cells of their own class, and in any solution:
/// - each edge piece's side opposite its grey side faces an inner cell, and every
///   frame-to-inner join has exactly one such side: J1(k) = E(k), the number of edge pieces
///   whose inward side has colour k;
/// - inner pieces' sides of colour k are those E(k) joins plus two per inner join:
///   J2(k) = (I(k) - E(k)) / 2;
/// - the other non-grey sides of frame pieces pair up across frame joins: J0(k) = L(k) / 2.
///
/// So the number of joins of each kind and colour is fixed by the pieces alone. A search
/// that opens more joins of some kind and colour than that has no completion: the count
/// check in [`Walker::walk`](super::walk::Walker::walk). (Colour-count parity alone is implied by matched joins and
/// prunes nothing; these per-kind budgets are what bites.) Odd or negative totals mean no
/// solution; flooring keeps every check sound.
fn join_budgets(puzzle: &Puzzle) -> Vec<i32> {
    let (w, h, k) = (puzzle.width(), puzzle.height(), puzzle.num_colors());
    if w < 3 || h < 3 {
        return Vec::new();
    }
    let (mut inner, mut inward, mut lateral) = (vec![0i32; k], vec![0i32; k], vec![0i32; k]);
    for p in puzzle.pieces() {
        let grey: Vec<usize> = (0..4).filter(|&s| p[s] == 0).collect();
        match grey.len() {
            0 => (0..4).for_each(|s| inner[p[s] as usize] += 1),
            1 => {
                let g = grey[0];
                inward[p[(g + 2) % 4] as usize] += 1;
                lateral[p[(g + 1) % 4] as usize] += 1;
                lateral[p[(g + 3) % 4] as usize] += 1;
            }
            _ => (0..4).filter(|&s| p[s] != 0).for_each(|s| lateral[p[s] as usize] += 1),
        }
    }
    let mut b = vec![0i32; 3 * k];
    for c in 1..k {
        b[c] = lateral[c].div_euclid(2);
        b[k + c] = inward[c];
        b[2 * k + c] = (inner[c] - inward[c]).div_euclid(2);
    }
    b
}

impl Tables {
    /// Tables for `puzzle`; with `first_piece`, cell 0 keeps only that piece.
    pub(super) fn new(puzzle: &Puzzle, first_piece: Option<u16>) -> Self {
        let cands = puzzle.candidates();
        let (n, k) = (puzzle.cells(), puzzle.num_colors());
        let (w, h) = (puzzle.width(), puzzle.height());
        let mut budget = join_budgets(puzzle);
        let spare = budget.len() as u16;
        // Kind of the join between cell c and its neighbour across side s.
        let join = |c: usize, s: usize, colour: u8| -> u16 {
            if budget.is_empty() {
                return spare;
            }
            match crate::puzzle::neighbour(w, h, c, s) {
                None => spare,
                Some(m) => {
                    let inner = |x| crate::puzzle::cell_class(w, h, x) == crate::puzzle::Class::Inner;
                    let kind = usize::from(inner(c)) + usize::from(inner(m));
                    (kind * k + colour as usize) as u16
                }
            }
        };
        let mut offsets = Vec::with_capacity(n * k * k + 1);
        let mut entries = Vec::new();
        offsets.push(0);
        // Each cell's candidates, in their own order within each (left, up) list: a stable sort
        // by list (one pass a cell, not one a list).
        let mut order: Vec<(usize, usize)> = Vec::new();
        for c in 0..n {
            order.clear();
            for (j, (pl, q)) in cands.of(c).iter().zip(cands.colors_of(c)).enumerate() {
                if c == 0 && first_piece.is_some_and(|p| p != pl.piece) {
                    continue;
                }
                order.push((q[crate::puzzle::LEFT] as usize * k + q[crate::puzzle::UP] as usize, j));
            }
            order.sort_by_key(|&(list, _)| list);
            let mut next = order.iter().peekable();
            for list in 0..k * k {
                while let Some(&(_, j)) = next.next_if(|&&(l, _)| l == list) {
                    let (pl, q) = (&cands.of(c)[j], &cands.colors_of(c)[j]);
                    entries.push(Entry {
                        piece: pl.piece,
                        right: q[crate::puzzle::RIGHT],
                        down: q[crate::puzzle::DOWN],
                        cand: j as u32,
                        opens: [
                            join(c, crate::puzzle::RIGHT, q[crate::puzzle::RIGHT]),
                            join(c, crate::puzzle::DOWN, q[crate::puzzle::DOWN]),
                        ],
                    });
                }
                offsets.push(entries.len() as u32);
            }
        }
        // `Walker::open` relies on the rim: a last-column placement shows grey to the right.
        debug_assert!(
            (0..n).filter(|c| c % w == w - 1).all(|c| cands.colors_of(c).iter().all(|q| q[crate::puzzle::RIGHT] == 0))
        );
        let words = n.div_ceil(64);
        let mut below = vec![0u64; n * k * words];
        for c in 0..n.saturating_sub(w) {
            for (pl, q) in cands.of(c + w).iter().zip(cands.colors_of(c + w)) {
                let i = (c * k + q[crate::puzzle::UP] as usize) * words + pl.piece as usize / 64;
                below[i] |= 1 << (pl.piece % 64);
            }
        }
        budget.push(UNLIMITED);
        Tables { width: w, cells: n, colors: k, offsets, entries, words, below, budget, reach: false }
    }

    /// True when some piece outside `used` (and other than `piece`) can go under cell `c`
    /// showing colour `k` upwards.
    #[inline]
    pub(super) fn below_ok(&self, c: usize, k: u8, used: &[u64], piece: u16) -> bool {
        let base = (c * self.colors + k as usize) * self.words;
        let m = &self.below[base..base + self.words];
        m.iter().zip(used).enumerate().any(|(i, (&m, &u))| {
            let own = if i == piece as usize / 64 { 1u64 << (piece % 64) } else { 0 };
            m & !u & !own != 0
        })
    }

    /// The pieces with a candidate at the cell under `c` that shows colour `k` upwards (zero
    /// words for the bottom row).
    pub(super) fn below_mask(&self, c: usize, k: u8) -> &[u64] {
        let base = (c * self.colors + k as usize) * self.words;
        &self.below[base..base + self.words]
    }

    pub(super) fn colors(&self) -> usize {
        self.colors
    }

    #[inline]
    pub(super) fn range(&self, c: usize, left: u8, up: u8) -> (u32, u32) {
        let i = (c * self.colors + left as usize) * self.colors + up as usize;
        (self.offsets[i], self.offsets[i + 1])
    }
}

/// The corner piece to fix in the top-left cell, when turn symmetry applies: the board is
/// square, has no hints, and the piece can only go to corner cells.
pub(super) fn symmetry_piece(puzzle: &Puzzle) -> Option<u16> {
    let (w, h) = (puzzle.width(), puzzle.height());
    if w != h || !puzzle.hints().is_empty() || w < 2 {
        return None;
    }
    let cands = puzzle.candidates();
    let p = cands.of(0).iter().map(|pl| pl.piece).min()?;
    symmetry_piece_ok(puzzle, p).then_some(p)
}

/// True when piece `p` can only go to the four corner cells of the (square) board.
pub(super) fn symmetry_piece_ok(puzzle: &Puzzle, p: u16) -> bool {
    let (w, n) = (puzzle.width(), puzzle.cells());
    let cands = puzzle.candidates();
    let corners = [0, w - 1, n - w, n - 1];
    (0..n).all(|c| corners.contains(&c) || cands.of(c).iter().all(|pl| pl.piece != p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use crate::puzzle::{Class, cell_class, neighbour};

    /// The budgets are exactly the joins of each kind and colour of a solution, so the check
    /// can never cut a solution off.
    #[test]
    fn join_budgets_equal_the_joins_of_the_planted_solution() {
        for (w, h) in [(3, 3), (4, 3), (5, 5), (7, 4), (8, 8)] {
            for seed in 0..3 {
                let (p, b) =
                    generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                        .unwrap();
                let k = p.num_colors();
                let mut seen = vec![0i32; 3 * k];
                for c in 0..p.cells() {
                    for s in [crate::puzzle::RIGHT, crate::puzzle::DOWN] {
                        if let Some(m) = neighbour(w, h, c, s) {
                            let kind = usize::from(cell_class(w, h, c) == Class::Inner)
                                + usize::from(cell_class(w, h, m) == Class::Inner);
                            seen[kind * k + p.color(b.cells[c], s) as usize] += 1;
                        }
                    }
                }
                assert_eq!(join_budgets(&p), seen, "{w}x{h} seed {seed}");
            }
        }
    }
}
