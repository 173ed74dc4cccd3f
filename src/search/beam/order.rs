//! The beam's scan orders and its plan: which cell each step fills, which of its joins face a
//! cell filled before it (the joins a child is scored on), and where a state keeps the colours
//! its open joins show (the slots).
//!
//! A state does not hold a board. It holds the colour each open join shows from its filled
//! side: a join is open from the step that fills its first cell to the step that fills its
//! second. Joins get slots by the greedy colouring of those intervals (a join's slot is freed
//! at the step that reads it, before that step's joins take theirs), which uses as few slots as
//! the most joins open at once: `W + 1` for a row-major scan, `W + 2` or so for a comb.

use crate::puzzle::{Puzzle, opposite};

/// The order the beam fills the cells in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum BeamOrder {
    /// Row by row from the top-left, each row left to right.
    RowMajor,
    /// Row-major down to the last `--teeth` rows, then those rows column by column, each
    /// column top to bottom (Verhaard and Max's comb: the mismatches land in short vertical
    /// teeth instead of the last rows).
    #[default]
    Comb,
    /// The rim inwards, clockwise from the top-left (a cell is scored against fewer neighbours
    /// than in the scans above: a control).
    Spiral,
}

impl BeamOrder {
    /// The cells of a `w` x `h` board in this order; `teeth` is the comb's.
    pub fn cells(self, w: usize, h: usize, teeth: usize) -> Vec<u32> {
        let at = |y: usize, x: usize| (y * w + x) as u32;
        match self {
            BeamOrder::RowMajor => (0..w * h).map(|c| c as u32).collect(),
            BeamOrder::Comb => {
                let split = h - teeth.min(h);
                let mut v: Vec<u32> = (0..split * w).map(|c| c as u32).collect();
                for x in 0..w {
                    v.extend((split..h).map(|y| at(y, x)));
                }
                v
            }
            BeamOrder::Spiral => {
                let mut v = Vec::with_capacity(w * h);
                let (mut top, mut bottom, mut left, mut right) = (0i64, h as i64 - 1, 0i64, w as i64 - 1);
                while top <= bottom && left <= right {
                    v.extend((left..=right).map(|x| at(top as usize, x as usize)));
                    v.extend((top + 1..=bottom).map(|y| at(y as usize, right as usize)));
                    if top < bottom {
                        v.extend((left..right).rev().map(|x| at(bottom as usize, x as usize)));
                    }
                    if left < right {
                        v.extend((top + 1..bottom).rev().map(|y| at(y as usize, left as usize)));
                    }
                    (top, bottom, left, right) = (top + 1, bottom - 1, left + 1, right - 1);
                }
                v
            }
        }
    }
}

/// One step of the plan.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    /// The cell it fills.
    pub cell: u32,
    /// The sides that face a filled cell, each with the slot that holds the colour shown there.
    pub reads: Vec<(u8, u16)>,
    /// The sides that face a cell filled later, each with the slot the colour goes to.
    pub writes: Vec<(u8, u16)>,
}

/// The plan of a beam over one puzzle and order.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// One step a cell, in the order.
    pub steps: Vec<Step>,
    /// Slots a state keeps.
    pub slots: usize,
}

impl Plan {
    /// The plan of `order` (every cell once) on `puzzle`'s board.
    pub fn new(puzzle: &Puzzle, order: &[u32]) -> Plan {
        let n = puzzle.cells();
        debug_assert_eq!(order.len(), n);
        let mut pos = vec![usize::MAX; n];
        for (t, &c) in order.iter().enumerate() {
            pos[c as usize] = t;
        }
        // The slot of the join on side s of cell c, set when its first cell is filled.
        let mut slot_of = vec![[u16::MAX; 4]; n];
        let mut free: Vec<u16> = Vec::new();
        let mut slots = 0usize;
        let mut steps = Vec::with_capacity(n);
        for (t, &c) in order.iter().enumerate() {
            let c = c as usize;
            let mut reads = Vec::new();
            let mut writes = Vec::new();
            for s in 0..4 {
                let Some(d) = puzzle.neighbour(c, s) else { continue };
                if pos[d] < t {
                    let slot = slot_of[d][opposite(s)];
                    reads.push((s as u8, slot));
                    free.push(slot);
                }
            }
            // Lowest free slot first, so a plan is the same whatever the reads' order.
            free.sort_unstable_by(|a, b| b.cmp(a));
            for s in 0..4 {
                let Some(d) = puzzle.neighbour(c, s) else { continue };
                if pos[d] > t {
                    let slot = free.pop().unwrap_or_else(|| {
                        slots += 1;
                        (slots - 1) as u16
                    });
                    slot_of[c][s] = slot;
                    writes.push((s as u8, slot));
                }
            }
            steps.push(Step { cell: c as u32, reads, writes });
        }
        Plan { steps, slots: slots.max(1) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};

    #[test]
    fn every_order_visits_every_cell_once() {
        for (w, h) in [(2, 2), (3, 5), (6, 4), (16, 16), (7, 7)] {
            for order in [BeamOrder::RowMajor, BeamOrder::Comb, BeamOrder::Spiral] {
                for teeth in [0, 1, 2, 5, 40] {
                    let mut v = order.cells(w, h, teeth);
                    v.sort_unstable();
                    assert_eq!(v, (0..(w * h) as u32).collect::<Vec<_>>(), "{order:?} {w}x{h} teeth {teeth}");
                }
            }
        }
    }

    /// Replays a plan on a real board: every read finds the colour the neighbour wrote, and no
    /// slot is overwritten while its join is open.
    #[test]
    fn a_slot_holds_its_joins_colour_until_it_is_read() {
        for (w, h, seed) in [(4, 4, 0), (7, 5, 1), (16, 16, 2), (3, 8, 3)] {
            let (p, board) =
                generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                    .unwrap();
            for order in [BeamOrder::RowMajor, BeamOrder::Comb, BeamOrder::Spiral] {
                let plan = Plan::new(&p, &order.cells(w, h, 2));
                let mut slot = vec![u8::MAX; plan.slots];
                for step in &plan.steps {
                    let pl = board.cells[step.cell as usize];
                    for &(s, k) in &step.reads {
                        assert_eq!(slot[k as usize], p.color(pl, s as usize), "{order:?} {w}x{h}");
                    }
                    for &(s, k) in &step.writes {
                        slot[k as usize] = p.color(pl, s as usize);
                    }
                }
                if order == BeamOrder::RowMajor {
                    assert_eq!(plan.slots, w + 1, "row-major keeps a row and a join");
                }
            }
        }
    }
}
