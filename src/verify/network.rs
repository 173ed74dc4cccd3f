//! Bitset domains over per-cell candidates, and their propagation.
//!
//! The domain of cell `c` is a bitset over its candidate list (`Candidates::of(c)`), stored in
//! `nwords(c)` u64 words at `word_off[c]` of one flat slice. `mask(c, s, k)` is the set of
//! candidates of `c` that show colour `k` on side `s`. Revising `c` against its neighbour
//! `m` across side `s` keeps exactly the candidates whose colour on `s` is still offered by
//! `m` on the facing side. Forward checking (`Consistency::Fc`) revises only
//! the placed cell's neighbours; four algorithms reach the arc-consistent fixed point:
//! - AC-3 (Mackworth 1977): a queue of cells whose domain shrank; every arc pointing at a
//!   popped cell is revised by recomputing the offered colours from scratch;
//! - AC-2001 (Bessière & Régin 2001; Zhang & Yap's AC-3.1): the same queue, but each
//!   (cell, side, colour) remembers the word of the neighbour's domain where its last support
//!   was found, checks it first and otherwise resumes the scan from there. Candidates with
//!   the same colour on a side share their supports, so the residue is kept per colour
//!   instead of per candidate: the same algorithm on the quotient, with fewer residues.
//!   Residues are trailed so that search can restore them on backtrack;
//! - AC-4 (after Mohr & Henderson 1986): support counts per (cell, side, colour), decremented
//!   as candidates leave and trailed, so a revision never scans a domain;
//! - AC-1 ([`ac1`]): the naive reference, candidate pair by candidate pair, sweeping every
//!   arc until a sweep removes nothing.
//!
//! Placing a piece removes it from every other domain (all-different on pieces).

use crate::puzzle::{Candidates, Puzzle, opposite};

pub mod rotation;
pub use rotation::Revise;

const NONE: u32 = u32::MAX;
/// Flag on a trail entry's cell: a whole-cell snapshot, not one removal.
const SNAPSHOT: u32 = 1 << 31;

/// Propagation strength for search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Consistency {
    /// Forward checking: revise only the neighbours of the placed cell.
    Fc,
    /// Maintained arc consistency with AC-3.
    Ac3,
    /// Maintained arc consistency with AC-2001 residues.
    Ac2001,
    /// Maintained arc consistency with AC-4 support counts per (cell, side, colour), trailed.
    Ac4,
}

/// The static tables of one puzzle: candidates, colour masks, piece locations.
#[derive(Clone, Debug)]
pub struct Network {
    width: usize,
    cells: usize,
    colors: usize,
    cands: Candidates,
    word_off: Vec<u32>,
    nbr: Vec<[u32; 4]>,
    /// `mask_off[(c * 4 + s) * colors + k]` indexes `masks` (nwords(c) words); interior sides only.
    mask_off: Vec<u32>,
    masks: Vec<u64>,
    /// For piece p, `piece_ent[piece_off[p]..piece_off[p + 1]]` = (cell, first candidate, count).
    piece_off: Vec<u32>,
    piece_ent: Vec<(u32, u32, u32)>,
    /// The pieces as given, and their rotation table ([`rotation`]), for the revisions that
    /// derive colours candidate by candidate.
    pieces: Vec<crate::puzzle::Piece>,
    rot_class: Vec<[[u8; 4]; 4]>,
}

impl Network {
    /// The tables of `puzzle`.
    pub fn new(puzzle: &Puzzle) -> Self {
        let cands = puzzle.candidates();
        let (n, k) = (puzzle.cells(), puzzle.num_colors());
        let mut word_off = Vec::with_capacity(n + 1);
        word_off.push(0u32);
        for c in 0..n {
            let words = cands.len(c).div_ceil(64).max(1);
            word_off.push(word_off[c] + words as u32);
        }
        let nbr: Vec<[u32; 4]> =
            (0..n).map(|c| core::array::from_fn(|s| puzzle.neighbour(c, s).map_or(NONE, |m| m as u32))).collect();
        let mut mask_off = vec![NONE; n * 4 * k];
        let mut masks = Vec::new();
        for c in 0..n {
            let nw = (word_off[c + 1] - word_off[c]) as usize;
            for s in 0..4 {
                if nbr[c][s] == NONE {
                    continue;
                }
                for col in 0..k {
                    mask_off[(c * 4 + s) * k + col] = masks.len() as u32;
                    masks.resize(masks.len() + nw, 0);
                }
                for (j, q) in cands.colors_of(c).iter().enumerate() {
                    let base = mask_off[(c * 4 + s) * k + q[s] as usize] as usize;
                    masks[base + j / 64] |= 1 << (j % 64);
                }
            }
        }
        let mut per_piece: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); n];
        for c in 0..n {
            let list = cands.of(c);
            let mut j = 0;
            while j < list.len() {
                let p = list[j].piece;
                let start = j;
                while j < list.len() && list[j].piece == p {
                    j += 1;
                }
                per_piece[p as usize].push((c as u32, start as u32, (j - start) as u32));
            }
        }
        let mut piece_off = vec![0u32];
        let mut piece_ent = Vec::new();
        for v in per_piece {
            piece_ent.extend(v);
            piece_off.push(piece_ent.len() as u32);
        }
        Network {
            width: puzzle.width(),
            cells: n,
            colors: k,
            cands,
            word_off,
            nbr,
            mask_off,
            masks,
            piece_off,
            piece_ent,
            pieces: puzzle.pieces().to_vec(),
            rot_class: rotation::rotation_table(puzzle.pieces()),
        }
    }

    /// Cells of the board.
    pub fn cells(&self) -> usize {
        self.cells
    }
    /// Board width.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Colours K, grey included.
    pub fn colors(&self) -> usize {
        self.colors
    }
    /// The puzzle's candidates per cell; a domain's bit `j` of cell `c` is candidate `j` of
    /// `candidates().of(c)`.
    pub fn candidates(&self) -> &Candidates {
        &self.cands
    }
    /// Words in the flat domain slice.
    pub fn total_words(&self) -> usize {
        *self.word_off.last().expect("n+1 offsets") as usize
    }
    /// The words of cell `c`'s domain in the flat domain slice.
    #[inline]
    pub fn words(&self, c: usize) -> std::ops::Range<usize> {
        self.word_off[c] as usize..self.word_off[c + 1] as usize
    }
    /// The neighbour of cell `c` across side `s`, or `None` on the rim.
    #[inline]
    pub fn neighbour(&self, c: usize, s: usize) -> Option<usize> {
        let m = self.nbr[c][s];
        (m != NONE).then_some(m as usize)
    }
    #[inline]
    fn mask(&self, c: usize, s: usize, k: usize) -> &[u64] {
        let off = self.mask_off[(c * 4 + s) * self.colors + k] as usize;
        &self.masks[off..off + (self.word_off[c + 1] - self.word_off[c]) as usize]
    }

    /// Every candidate of every cell.
    pub fn full_domains(&self) -> Vec<u64> {
        let mut d = vec![0u64; self.total_words()];
        for c in 0..self.cells {
            let len = self.cands.len(c);
            let r = self.words(c);
            for (i, w) in d[r].iter_mut().enumerate() {
                let lo = i * 64;
                *w = if len >= lo + 64 {
                    !0
                } else if len > lo {
                    (1u64 << (len - lo)) - 1
                } else {
                    0
                };
            }
        }
        d
    }

    /// Number of candidates left in the domain of `c`.
    #[inline]
    pub fn size(&self, d: &[u64], c: usize) -> u32 {
        d[self.words(c)].iter().map(|w| w.count_ones()).sum()
    }

    /// Is candidate `j` of cell `c` in the domain?
    #[inline]
    pub fn contains(&self, d: &[u64], c: usize, j: usize) -> bool {
        d[self.word_off[c] as usize + j / 64] >> (j % 64) & 1 == 1
    }

    /// The candidate indices left in the domain of `c`, appended to `out`.
    pub fn members(&self, d: &[u64], c: usize, out: &mut Vec<u32>) {
        for (i, &w) in d[self.words(c)].iter().enumerate() {
            let mut w = w;
            while w != 0 {
                out.push((i * 64) as u32 + w.trailing_zeros());
                w &= w - 1;
            }
        }
    }

    /// Places candidate `j` at cell `c`: its domain becomes `{j}` and the piece leaves every
    /// other domain. Cells whose domain shrank are appended to `changed` (`c` among them when
    /// it had other candidates). Returns false on a wipe-out.
    pub fn place(&self, d: &mut [u64], c: usize, j: usize, changed: &mut Vec<u32>) -> bool {
        let r = self.words(c);
        let mut shrank = false;
        for (i, w) in d[r].iter_mut().enumerate() {
            let keep = if i == j / 64 { 1u64 << (j % 64) } else { 0 };
            shrank |= *w != keep;
            *w = keep;
        }
        if shrank {
            changed.push(c as u32);
        }
        let p = self.cands.of(c)[j].piece as usize;
        let mut alive = true;
        for &(c2, first, count) in &self.piece_ent[self.piece_off[p] as usize..self.piece_off[p + 1] as usize] {
            if c2 as usize == c {
                continue;
            }
            let base = self.word_off[c2 as usize] as usize;
            let mut hit = false;
            for b in first..first + count {
                let w = &mut d[base + b as usize / 64];
                let bit = 1u64 << (b % 64);
                hit |= *w & bit != 0;
                *w &= !bit;
            }
            if hit {
                changed.push(c2);
                alive &= self.size(d, c2 as usize) > 0;
            }
        }
        alive
    }

    /// Colours offered by cell `m` on side `s`, as a bitmask over colours.
    #[inline]
    /// The colours `m` still offers on side `s`, and the words it tested to find them.
    fn offered(&self, d: &[u64], m: usize, s: usize) -> (u64, u64) {
        let dm = &d[self.words(m)];
        let (mut set, mut checks) = (0u64, 0u64);
        for k in 1..self.colors {
            let mk = self.mask(m, s, k);
            for (a, b) in dm.iter().zip(mk) {
                checks += 1;
                if a & b != 0 {
                    set |= 1 << k;
                    break;
                }
            }
        }
        (set, checks)
    }
}

/// Scratch and residues for propagation: owned by the caller, reused across calls.
///
/// Propagation is event driven at the colour level: when a domain shrinks, only the arcs
/// across sides where some colour stopped being offered are queued. That is AC-3's
/// "re-enqueue the arcs of a shrunk domain", refined to what a neighbour's support can
/// actually depend on; both AC-3 and AC-2001 run on the same queue.
#[derive(Clone, Debug)]
pub struct Propagator {
    /// Queued arcs `c * 4 + s`: "c may have stopped offering a colour on side s".
    queue: Vec<u32>,
    queued: Vec<bool>,
    /// Bits removed by the last revision or placement (one cell's words).
    removed: Vec<u64>,
    /// AC-2001: word of the neighbour's domain holding the last support of (cell, side, colour).
    residue: Vec<u16>,
    trail: Vec<(u32, u16)>,
    /// Arc revisions done (a work counter for benchmarks).
    pub revisions: u64,
    /// Support checks: words of a neighbour's domain ANDed with a colour's support mask while
    /// looking for a support (each tests up to 64 candidate pairs at once).
    pub checks: u64,
    /// Candidates removed by revisions (placements' own removals not counted).
    pub removals: u64,
    /// How AC-3 (and forward checking) revise: the engine's masks unless a measurement asks
    /// for another way ([`Revise`]).
    pub revise: Revise,
}

impl Propagator {
    /// A propagator sized for `net`, its queue empty.
    pub fn new(net: &Network) -> Self {
        let max_words = (0..net.cells).map(|c| net.words(c).len()).max().unwrap_or(1);
        Propagator {
            queue: Vec::with_capacity(net.cells * 4),
            queued: vec![false; net.cells * 4],
            removed: vec![0; max_words],
            residue: vec![0; net.cells * 4 * net.colors],
            trail: Vec::new(),
            revisions: 0,
            checks: 0,
            removals: 0,
            revise: Revise::Masks,
        }
    }

    /// Forgets all residues (for a fresh, non-search propagation).
    pub fn reset(&mut self) {
        self.residue.iter_mut().for_each(|r| *r = 0);
        self.trail.clear();
    }

    /// A mark for [`Propagator::undo`]: residues changed after it can be restored.
    pub fn mark(&self) -> usize {
        self.trail.len()
    }

    /// Restores residues to what they were at `mark`.
    pub fn undo(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let (i, old) = self.trail.pop().expect("non-empty");
            self.residue[i as usize] = old;
        }
    }

    #[inline]
    fn enqueue(&mut self, arc: usize) {
        if !std::mem::replace(&mut self.queued[arc], true) {
            self.queue.push(arc as u32);
        }
    }

    /// After `c` lost the candidates in `self.removed`, queues the arcs across every side
    /// where one of their colours is no longer offered.
    fn note_removed(&mut self, net: &Network, d: &[u64], c: usize) {
        let dc = &d[net.words(c)];
        let removed_count: u32 = self.removed[..dc.len()].iter().map(|w| w.count_ones()).sum();
        if removed_count > 8 {
            // Many candidates left (a placement): test colour by colour instead.
            for s in 0..4 {
                if net.nbr[c][s] == NONE || self.queued[c * 4 + s] {
                    continue;
                }
                for k in 1..net.colors {
                    let mk = net.mask(c, s, k);
                    let lost = self.removed.iter().zip(mk).any(|(a, b)| a & b != 0);
                    if lost && !dc.iter().zip(mk).any(|(a, b)| a & b != 0) {
                        self.enqueue(c * 4 + s);
                        break;
                    }
                }
            }
            return;
        }
        let colors = net.cands.colors_of(c);
        let mut checked = [1u64; 4]; // bit k: colour k on side s already examined (grey never)
        for i in 0..dc.len() {
            let mut w = self.removed[i];
            while w != 0 {
                let j = i * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                let q = colors[j];
                for s in 0..4 {
                    let k = q[s] as usize;
                    if checked[s] >> k & 1 == 1 || net.nbr[c][s] == NONE {
                        continue;
                    }
                    checked[s] |= 1 << k;
                    if !dc.iter().zip(net.mask(c, s, k)).any(|(a, b)| a & b != 0) {
                        self.enqueue(c * 4 + s);
                    }
                }
            }
        }
    }

    /// Places candidate `j` at cell `c` (the piece leaves every other domain) and restores
    /// the chosen consistency. Returns false on a wipe-out.
    pub fn assign(&mut self, net: &Network, d: &mut [u64], c: usize, j: usize, kind: Consistency) -> bool {
        let event = kind != Consistency::Fc;
        let r = net.words(c);
        for (i, w) in d[r].iter_mut().enumerate() {
            let keep = if i == j / 64 { 1u64 << (j % 64) } else { 0 };
            self.removed[i] = *w & !keep;
            *w = keep;
        }
        if event {
            self.note_removed(net, d, c);
        }
        let p = net.cands.of(c)[j].piece as usize;
        let mut alive = true;
        for &(c2, first, count) in &net.piece_ent[net.piece_off[p] as usize..net.piece_off[p + 1] as usize] {
            let c2 = c2 as usize;
            if c2 == c {
                continue;
            }
            let base = net.word_off[c2] as usize;
            let nw = net.words(c2).len();
            self.removed[..nw].iter_mut().for_each(|w| *w = 0);
            let mut hit = false;
            for b in first..first + count {
                let (wi, bit) = (b as usize / 64, 1u64 << (b % 64));
                if d[base + wi] & bit != 0 {
                    hit = true;
                    d[base + wi] &= !bit;
                    self.removed[wi] |= bit;
                }
            }
            if hit {
                if net.size(d, c2) == 0 {
                    alive = false;
                    break;
                }
                if event {
                    self.note_removed(net, d, c2);
                }
            }
        }
        if alive {
            alive = match kind {
                Consistency::Fc => (0..4).all(|s| match net.neighbour(c, s) {
                    Some(m) => {
                        self.revisions += 1;
                        !self.revise3(net, d, m, opposite(s)) || net.size(d, m) > 0
                    }
                    None => true,
                }),
                Consistency::Ac3 | Consistency::Ac4 => self.run_queue(net, d, false),
                Consistency::Ac2001 => self.run_queue(net, d, true),
            };
        }
        self.clear_queue();
        alive
    }

    fn clear_queue(&mut self) {
        for &a in &self.queue {
            self.queued[a as usize] = false;
        }
        self.queue.clear();
    }

    /// Arc consistency from scratch over the whole board (forward checking does AC-3 here).
    pub fn propagate_all(&mut self, net: &Network, d: &mut [u64], kind: Consistency) -> bool {
        if (0..net.cells).any(|c| net.size(d, c) == 0) {
            return false;
        }
        for c in 0..net.cells {
            for s in 0..4 {
                if net.nbr[c][s] != NONE {
                    self.enqueue(c * 4 + s);
                }
            }
        }
        let ok = self.run_queue(net, d, kind == Consistency::Ac2001);
        self.clear_queue();
        ok
    }

    fn run_queue(&mut self, net: &Network, d: &mut [u64], residues: bool) -> bool {
        // Processed as a stack; the order does not change the fixed point.
        while let Some(arc) = self.queue.pop() {
            let arc = arc as usize;
            self.queued[arc] = false;
            let (c, s) = (arc / 4, arc % 4);
            let m = net.nbr[c][s] as usize;
            self.revisions += 1;
            let shrank = if residues {
                self.revise_ac2001(net, d, m, opposite(s))
            } else {
                self.revise3(net, d, m, opposite(s))
            };
            if shrank {
                if net.size(d, m) == 0 {
                    return false;
                }
                self.note_removed(net, d, m);
            }
        }
        true
    }

    /// AC-3's revision, the way [`Propagator::revise`] asks.
    #[inline]
    fn revise3(&mut self, net: &Network, d: &mut [u64], c: usize, s: usize) -> bool {
        match self.revise {
            Revise::Masks => self.revise_ac3(net, d, c, s),
            Revise::Derive => self.revise_by_candidate(net, d, c, s, false),
            Revise::RotationTable => self.revise_by_candidate(net, d, c, s, true),
        }
    }

    /// AC-3 revision of `c` against its neighbour across side `s`: recompute the colours the
    /// neighbour offers and keep the candidates that show one of them. Removed bits go to
    /// `self.removed`; returns whether `c` shrank.
    #[inline]
    fn revise_ac3(&mut self, net: &Network, d: &mut [u64], c: usize, s: usize) -> bool {
        let m = net.nbr[c][s] as usize;
        let (offered, checks) = net.offered(d, m, opposite(s));
        self.checks += checks;
        let r = net.words(c);
        let mut shrank = false;
        for i in 0..r.len() {
            let mut keep = 0u64;
            let mut set = offered;
            while set != 0 {
                let k = set.trailing_zeros() as usize;
                set &= set - 1;
                keep |= net.mask(c, s, k)[i];
            }
            let w = &mut d[r.start + i];
            self.removed[i] = *w & !keep;
            self.removals += self.removed[i].count_ones() as u64;
            shrank |= self.removed[i] != 0;
            *w &= keep;
        }
        shrank
    }

    /// AC-2001 revision of `c` against its neighbour across side `s`: for each colour `c`
    /// shows on `s`, check the remembered support word, else resume the scan after it.
    #[inline]
    fn revise_ac2001(&mut self, net: &Network, d: &mut [u64], c: usize, s: usize) -> bool {
        let m = net.nbr[c][s] as usize;
        let os = opposite(s);
        let rc = net.words(c);
        let rm = net.words(m);
        self.removed[..rc.len()].iter_mut().for_each(|w| *w = 0);
        let mut shrank = false;
        for k in 1..net.colors {
            let mc = net.mask(c, s, k);
            if !d[rc.clone()].iter().zip(mc).any(|(a, b)| a & b != 0) {
                continue;
            }
            let ri = (c * 4 + s) * net.colors + k;
            let last = self.residue[ri] as usize;
            let mm = net.mask(m, os, k);
            let dm = &d[rm.clone()];
            self.checks += 1;
            if dm[last] & mm[last] != 0 {
                continue;
            }
            let found = (last + 1..rm.len()).find(|&i| dm[i] & mm[i] != 0);
            self.checks += (found.map_or(rm.len(), |i| i + 1) - last - 1) as u64;
            match found {
                Some(i) => {
                    self.trail.push((ri as u32, last as u16));
                    self.residue[ri] = i as u16;
                }
                None => {
                    for ((w, b), r) in d[rc.clone()].iter_mut().zip(mc).zip(self.removed.iter_mut()) {
                        self.removals += (*w & b).count_ones() as u64;
                        *r |= *w & b;
                        *w &= !b;
                    }
                    shrank = true;
                }
            }
        }
        shrank
    }
}

/// AC-1: the naive reference. Sweeps every arc, candidate pair by candidate pair, until a
/// sweep removes nothing. Returns false on a wipe-out.
pub fn ac1(net: &Network, d: &mut [u64]) -> bool {
    ac1_counted(net, d, &mut Ac1Work::default())
}

/// What an AC-1 pass did: its arcs revised, the candidate pairs it checked (one pair a check,
/// where the bitset engines test 64 at once) and the candidates it removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Ac1Work {
    /// Sweeps over every arc (the last removes nothing).
    pub sweeps: u64,
    /// Arc revisions.
    pub revisions: u64,
    /// Candidate pairs checked.
    pub checks: u64,
    /// Candidates removed.
    pub removals: u64,
}

/// [`ac1`], counting its work into `work`.
pub fn ac1_counted(net: &Network, d: &mut [u64], work: &mut Ac1Work) -> bool {
    let cands = net.candidates();
    let mut members = Vec::new();
    loop {
        let mut changed = false;
        work.sweeps += 1;
        for c in 0..net.cells {
            for s in 0..4 {
                let Some(m) = net.neighbour(c, s) else { continue };
                work.revisions += 1;
                members.clear();
                net.members(d, c, &mut members);
                for &j in &members {
                    let col = cands.colors_of(c)[j as usize][s];
                    let supported = (0..cands.len(m)).any(|i| {
                        let live = net.contains(d, m, i);
                        work.checks += u64::from(live);
                        live && cands.colors_of(m)[i][opposite(s)] == col
                    });
                    if !supported {
                        d[net.word_off[c] as usize + j as usize / 64] &= !(1u64 << (j % 64));
                        work.removals += 1;
                        changed = true;
                    }
                }
                if net.size(d, c) == 0 {
                    return false;
                }
            }
        }
        if !changed {
            return true;
        }
    }
}

/// AC-4 on the colour quotient (Mohr & Henderson 1986, support counting): the number of
/// candidates of cell `c` that show colour `k` on side `s` is kept up to date. When it drops
/// to zero, every candidate of the neighbour across `s` that shows `k` on the facing side has
/// lost its last support and goes. Each removal costs O(1) plus the removals it causes, and
/// removals are trailed, so search undoes them instead of copying domains. The fixed point is
/// the same arc-consistent closure as AC-3's.
#[derive(Clone, Debug)]
pub struct SupportCounts {
    dom: Vec<u64>,
    /// `count[(c * 4 + s) * K + k]`.
    count: Vec<u16>,
    size: Vec<u32>,
    /// Removed candidates `(cell, j)`, in order; `(cell | SNAPSHOT, at)` marks a whole-cell
    /// change whose old words and counts start at `saved[at..]`.
    trail: Vec<(u32, u32)>,
    saved_words: Vec<u64>,
    saved_counts: Vec<u16>,
    /// Pending "colour k vanished from side s of c" events, as `(c * 4 + s) * K + k`.
    events: Vec<u32>,
    /// Candidates removed (a work counter).
    pub removals: u64,
    /// Conflict weight of each arc `c * 4 + s` (Boussemart et al. 2004): bumped on both arcs
    /// of a join whenever propagation across it wipes a domain out. Kept across restarts.
    weights: Vec<u32>,
}

impl SupportCounts {
    /// Counts for the given domains; no propagation yet.
    pub fn new(net: &Network, domains: &[u64]) -> Self {
        let mut sc = SupportCounts {
            dom: domains.to_vec(),
            count: vec![0; net.cells * 4 * net.colors],
            size: vec![0; net.cells],
            trail: Vec::new(),
            saved_words: Vec::new(),
            saved_counts: Vec::new(),
            events: Vec::new(),
            removals: 0,
            weights: vec![1; net.cells * 4],
        };
        sc.load(net, domains);
        sc
    }

    /// Replaces the domains and recounts (forgets the trail).
    pub fn load(&mut self, net: &Network, domains: &[u64]) {
        self.dom.copy_from_slice(domains);
        self.count.iter_mut().for_each(|v| *v = 0);
        self.trail.clear();
        self.saved_words.clear();
        self.saved_counts.clear();
        self.events.clear();
        let k = net.colors;
        for c in 0..net.cells {
            self.size[c] = net.size(&self.dom, c);
            let colors = net.cands.colors_of(c);
            for (i, &w) in self.dom[net.words(c)].iter().enumerate() {
                let mut w = w;
                while w != 0 {
                    let j = i * 64 + w.trailing_zeros() as usize;
                    w &= w - 1;
                    for s in 0..4 {
                        self.count[(c * 4 + s) * k + colors[j][s] as usize] += 1;
                    }
                }
            }
        }
    }

    /// The current domains, flat ([`Network::words`] per cell).
    pub fn domains(&self) -> &[u64] {
        &self.dom
    }
    /// Candidates left in cell `c`'s domain.
    #[inline]
    pub fn size(&self, c: usize) -> u32 {
        self.size[c]
    }
    /// A mark for [`SupportCounts::undo`].
    pub fn mark(&self) -> usize {
        self.trail.len()
    }

    /// Puts back every candidate removed after `mark`.
    pub fn undo(&mut self, net: &Network, mark: usize) {
        let k = net.colors;
        while self.trail.len() > mark {
            let (c, j) = self.trail.pop().expect("non-empty");
            if c & SNAPSHOT != 0 {
                let c = (c & !SNAPSHOT) as usize;
                let (r, at) = (net.words(c), j as usize);
                let wat = self.saved_words.len() - r.len();
                self.dom[r].copy_from_slice(&self.saved_words[wat..]);
                self.saved_words.truncate(wat);
                self.count[c * 4 * k..(c + 1) * 4 * k].copy_from_slice(&self.saved_counts[at..]);
                self.saved_counts.truncate(at);
                self.size[c] = net.size(&self.dom, c);
                continue;
            }
            let (c, j) = (c as usize, j as usize);
            self.dom[net.word_off[c] as usize + j / 64] |= 1 << (j % 64);
            self.size[c] += 1;
            let q = net.cands.colors_of(c)[j];
            for s in 0..4 {
                self.count[(c * 4 + s) * k + q[s] as usize] += 1;
            }
        }
    }

    #[inline]
    fn remove(&mut self, net: &Network, c: usize, j: usize) {
        let k = net.colors;
        self.dom[net.word_off[c] as usize + j / 64] &= !(1 << (j % 64));
        self.size[c] -= 1;
        self.removals += 1;
        self.trail.push((c as u32, j as u32));
        let q = net.cands.colors_of(c)[j];
        for s in 0..4 {
            let i = (c * 4 + s) * k + q[s] as usize;
            self.count[i] -= 1;
            if self.count[i] == 0 && net.nbr[c][s] != NONE {
                self.events.push(i as u32);
            }
        }
    }

    /// Removes the candidates of `c` in `bits` (one word at `word`).
    fn remove_word(&mut self, net: &Network, c: usize, word: usize, bits: u64) {
        let mut w = bits;
        while w != 0 {
            let j = word * 64 + w.trailing_zeros() as usize;
            w &= w - 1;
            self.remove(net, c, j);
        }
    }

    /// Runs pending events to the fixed point. Returns false on a wipe-out.
    fn drain(&mut self, net: &Network) -> bool {
        let k = net.colors;
        while let Some(e) = self.events.pop() {
            let e = e as usize;
            let (cs, col) = (e / k, e % k);
            let (c, s) = (cs / 4, cs % 4);
            let m = net.nbr[c][s] as usize;
            let os = opposite(s);
            let base = net.word_off[m] as usize;
            for i in 0..net.words(m).len() {
                let hit = self.dom[base + i] & net.mask(m, os, col)[i];
                if hit != 0 {
                    self.remove_word(net, m, i, hit);
                }
            }
            if self.size[m] == 0 {
                self.weights[cs] += 1;
                self.weights[m * 4 + os] += 1;
                self.events.clear();
                return false;
            }
        }
        true
    }

    /// Conflict weight of the arc from `c` across side `s`.
    #[inline]
    pub fn weight(&self, c: usize, s: usize) -> u32 {
        self.weights[c * 4 + s]
    }

    /// Arc consistency from the current domains (colours already missing count as events).
    pub fn propagate_all(&mut self, net: &Network) -> bool {
        if self.size.contains(&0) {
            return false;
        }
        let k = net.colors;
        for c in 0..net.cells {
            for s in 0..4 {
                if net.nbr[c][s] == NONE {
                    continue;
                }
                for col in 1..k {
                    if self.count[(c * 4 + s) * k + col] == 0 {
                        self.events.push(((c * 4 + s) * k + col) as u32);
                    }
                }
            }
        }
        self.drain(net)
    }

    /// Places candidate `j` at `c`: every other candidate of `c` and every other copy of its
    /// piece go, then arc consistency is restored. Returns false on a wipe-out.
    pub fn assign(&mut self, net: &Network, c: usize, j: usize) -> bool {
        // The cell itself changes wholesale: snapshot its words and counts instead of
        // trailing every removed candidate, and set the counts of the one survivor.
        let k = net.colors;
        let r = net.words(c);
        self.trail.push((c as u32 | SNAPSHOT, self.saved_counts.len() as u32));
        self.saved_words.extend_from_slice(&self.dom[r.clone()]);
        self.saved_counts.extend_from_slice(&self.count[c * 4 * k..(c + 1) * 4 * k]);
        self.removals += (self.size[c] - 1) as u64;
        for (i, w) in self.dom[r].iter_mut().enumerate() {
            *w = if i == j / 64 { 1u64 << (j % 64) } else { 0 };
        }
        self.size[c] = 1;
        let q = net.cands.colors_of(c)[j];
        for s in 0..4 {
            let row = &mut self.count[(c * 4 + s) * k..(c * 4 + s + 1) * k];
            for (col, v) in row.iter_mut().enumerate() {
                let now = u16::from(col == q[s] as usize);
                if *v > 0 && now == 0 && net.nbr[c][s] != NONE {
                    self.events.push(((c * 4 + s) * k + col) as u32);
                }
                *v = now;
            }
        }
        let p = net.cands.of(c)[j].piece as usize;
        for e in net.piece_off[p] as usize..net.piece_off[p + 1] as usize {
            let (c2, first, count) = net.piece_ent[e];
            let c2 = c2 as usize;
            if c2 == c {
                continue;
            }
            let b2 = net.word_off[c2] as usize;
            for b in first as usize..(first + count) as usize {
                if self.dom[b2 + b / 64] >> (b % 64) & 1 == 1 {
                    self.remove(net, c2, b);
                }
            }
            if self.size[c2] == 0 {
                self.events.clear();
                return false;
            }
        }
        self.drain(net)
    }
}
