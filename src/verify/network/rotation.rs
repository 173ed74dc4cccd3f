//! AC-3's revision candidate by candidate, with and without a rotation table: the
//! measurement of the seed's "table of which rotations of one piece share edge colours, so
//! that revisions stop deriving it" (docs/consistency.md).
//!
//! concur's own revision ([`Revise::Masks`]) never derives a colour: per cell, side and colour
//! it keeps a bitset of the candidates showing that colour there, and a revision ORs the
//! bitsets of the colours the neighbour still offers, 64 candidates a word. That groups
//! every candidate by its colour on the side, the rotations of one piece among them, so a
//! rotation table can only be measured against a revision that looks at candidates one at a
//! time, as the seed's engine does:
//! - [`Revise::Derive`]: each candidate's colour on the side derived from its piece and turn,
//!   then tested against the offered colours;
//! - [`Revise::RotationTable`]: the same, through a table of the turns of each piece that show
//!   the same colour on each side: the first candidate of a class decides the others.
//!
//! All three keep the same candidates (tested); they differ in work only.

use super::{Network, Propagator};
use crate::puzzle::Piece;

/// How AC-3 revises a cell against a neighbour's offered colours: a lab switch for the
/// rotation-table measurement, not an option of the command line. Each keeps the same
/// candidates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Revise {
    /// By the per-(cell, side, colour) candidate bitsets, a word at a time (the engine's way).
    #[default]
    Masks,
    /// Candidate by candidate, each colour derived from the piece and its turn.
    Derive,
    /// Candidate by candidate, through the rotation table.
    RotationTable,
}

/// Per piece, side and turn: the smallest turn of the piece that shows the same colour on
/// that side (its class in the rotation table).
pub(super) fn rotation_table(pieces: &[Piece]) -> Vec<[[u8; 4]; 4]> {
    pieces
        .iter()
        .map(|p| {
            core::array::from_fn(|s| {
                core::array::from_fn(|r| {
                    let colour = |r: usize| p[(s + 4 - r) % 4];
                    (0..4).find(|&r0| colour(r0) == colour(r)).expect("r itself") as u8
                })
            })
        })
        .collect()
}

impl Propagator {
    /// AC-3's revision of `c` against its neighbour across side `s`, candidate by candidate
    /// ([`Revise::Derive`], or [`Revise::RotationTable`] with `table`). Removed bits go to
    /// `self.removed`; returns whether `c` shrank.
    pub(super) fn revise_by_candidate(
        &mut self,
        net: &Network,
        d: &mut [u64],
        c: usize,
        s: usize,
        table: bool,
    ) -> bool {
        let m = net.nbr[c][s] as usize;
        let (offered, checks) = net.offered(d, m, crate::puzzle::opposite(s));
        self.checks += checks;
        let r = net.words(c);
        let cands = net.cands.of(c);
        let mut shrank = false;
        // The verdicts of the current piece's classes: 0 unknown, 1 keep, 2 remove.
        let (mut piece, mut verdict) = (u16::MAX, [0u8; 4]);
        for i in 0..r.len() {
            let mut bits = d[r.start + i];
            let mut drop = 0u64;
            while bits != 0 {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                let pl = cands[i * 64 + b as usize];
                let (p, rot) = (pl.piece as usize, pl.rot as usize);
                let keep = if table {
                    if pl.piece != piece {
                        piece = pl.piece;
                        verdict = [0; 4];
                    }
                    let class = net.rot_class[p][s][rot] as usize;
                    if verdict[class] == 0 {
                        let k = net.pieces[p][(s + 4 - rot) % 4];
                        verdict[class] = if offered >> k & 1 == 1 { 1 } else { 2 };
                    }
                    verdict[class] == 1
                } else {
                    offered >> net.pieces[p][(s + 4 - rot) % 4] & 1 == 1
                };
                if !keep {
                    drop |= 1 << b;
                }
            }
            self.removed[i] = drop;
            self.removals += drop.count_ones() as u64;
            shrank |= drop != 0;
            d[r.start + i] &= !drop;
        }
        shrank
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use crate::verify::Consistency;
    use rand::{RngExt, SeedableRng};

    /// The table's class of a turn shows the same colour as the turn, and is the smallest
    /// such; every way of revising reaches the same arc-consistent domains with the same
    /// revisions, from random domains and after placements.
    #[test]
    fn every_way_of_revising_keeps_the_same_candidates() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        for seed in 0..12u64 {
            let (w, h) = [(4, 4), (5, 4), (6, 6)][seed as usize % 3];
            let Ok((p, _)) =
                generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
            else {
                continue;
            };
            let net = Network::new(&p);
            for (pi, piece) in p.pieces().iter().enumerate() {
                for s in 0..4 {
                    for r in 0..4 {
                        let class = net.rot_class[pi][s][r] as usize;
                        assert!(class <= r);
                        assert_eq!(
                            crate::puzzle::rotated(*piece, class as u8)[s],
                            crate::puzzle::rotated(*piece, r as u8)[s]
                        );
                    }
                }
            }
            let mut start = net.full_domains();
            for x in start.iter_mut() {
                *x &= rng.random::<u64>() | rng.random::<u64>();
            }
            let mut outcomes = Vec::new();
            for way in [Revise::Masks, Revise::Derive, Revise::RotationTable] {
                let mut d = start.clone();
                let mut prop = Propagator::new(&net);
                prop.revise = way;
                let ok = prop.propagate_all(&net, &mut d, Consistency::Ac3);
                let mut placed = d.clone();
                let cell = (0..net.cells()).find(|&c| net.size(&placed, c) > 1);
                let ok2 = ok
                    && cell.is_some_and(|c| {
                        let mut m = Vec::new();
                        net.members(&placed, c, &mut m);
                        prop.assign(&net, &mut placed, c, m[0] as usize, Consistency::Ac3)
                    });
                outcomes.push((ok, d, ok2, placed, prop.revisions, prop.removals));
            }
            assert_eq!(outcomes[0], outcomes[1], "seed {seed}: derive");
            assert_eq!(outcomes[0], outcomes[2], "seed {seed}: rotation table");
        }
    }
}
