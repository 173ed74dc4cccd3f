//! Dense maximum-weight perfect assignment (linear sum assignment).
//!
//! [`Assigner`] solves `max_π Σ_r w[r][π(r)]` over permutations `π` of an
//! `n × n` `f32` weight matrix, where `f32::NEG_INFINITY` marks a forbidden
//! pair. It is a Jonker–Volgenant style shortest-augmenting-path solver:
//!
//! * internally the problem is the min-cost problem with cost `c = -w`
//!   (forbidden pairs become `+inf` costs, which are never turned into large
//!   finite numbers), with column potentials `v` kept in `f64`; a row's
//!   potential is implicit: `u[i] = c[i][x[i]] - v[x[i]]`, and the solver
//!   maintains the invariant that an assigned row's column minimises
//!   `c[i][j] - v[j]` over `j` (dual feasibility);
//! * cold start: column reduction + reduction transfer, then two passes of
//!   augmenting row reduction (auction-like, with an iteration cap so float
//!   near-ties can never make it spin), then one Dijkstra-like shortest
//!   augmenting path per remaining free row;
//! * warm start ([`Assigner::solve_warm`]): keeps `v` from the previous call;
//!   a row keeps its previous column if that column still minimises
//!   `c[i][j] - v[j]` for the new weights, other rows take a minimising column
//!   if it is unclaimed, and the remaining free rows go through the same
//!   row reduction + augmentation as a cold start. The result is exactly
//!   optimal for the new matrix whatever the previous one was; the work is
//!   one O(n²) scan plus work proportional to how many rows lost their
//!   column. If more than n/3 did, it restarts cold (old potentials no help).
//!
//! The O(n²) row scans are written as fixed-width lane loops so that LLVM
//! vectorises them; no `unsafe` is used.
//!
//! Every phase does a bounded amount of work, so ties, near-ties and
//! infeasible inputs terminate: infeasibility (a row or column with no allowed
//! pair, or Hall's condition violated) is reported as
//! [`AssignError::Infeasible`] as soon as a shortest-path search runs out of
//! reachable columns. On integer-valued weights (|w| < 2^24 so they are exact
//! in `f32`, and totals exact in `f64`) all arithmetic is exact and the
//! optimum is found exactly.

use thiserror::Error;

mod kernels;
#[cfg(test)]
mod oracle;
mod real;
#[cfg(test)]
mod tests;
mod warm;

use kernels::*;
#[cfg(test)]
pub(crate) use oracle::brute_force;
pub use real::{Precision, Real};
pub use warm::{WarmState, set_warm_states, warm_states};

/// Marker in [`Assigner::row_to_col`] / [`Assigner::col_to_row`] for an
/// unassigned row / column (only ever visible after a failed solve).
pub const UNASSIGNED: u32 = u32::MAX;

/// The row kernel of the augmenting row reduction.
///
/// `Fused` (the default): a row-reduction step finds a row's two smallest reduced costs and
/// the first column holding the smallest in one pass. `Separate` is the reference it
/// replaced: a pass for the two values, then a pass that locates the first column holding
/// the smallest by exact comparison. Both compute every reduced cost with the same
/// expression and pick the same column, so they return the same assignment, potentials and
/// counts bit for bit (`fused_kernels_are_the_separate_ones_bit_for_bit`). The shortest-path
/// search keeps its separate passes: fusing its relaxation with the next step's minima was
/// measured 1.45x slower at 8x8 (`benches/results/cpu-speed/f1-fused-2026-12-06.md`).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernels {
    /// One pass a row-reduction step.
    Fused,
    /// The reference: a pass for the minima, then one for the first column.
    Separate,
}

/// Errors from [`Assigner::solve`] / [`Assigner::solve_warm`].
#[derive(Debug, Error, Clone, PartialEq)]
pub enum AssignError {
    /// The allowed (non `-inf`) pairs admit no perfect matching.
    #[error("no perfect assignment exists: the allowed (finite-weight) pairs admit no perfect matching")]
    Infeasible,
    /// `weights.len() != n * n`.
    #[error("weights has length {got}, expected n*n = {expected} (n = {n})")]
    BadShape {
        /// The problem's size.
        n: usize,
        /// `n * n`.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A weight is NaN or `+inf` (only finite values and `-inf` are allowed).
    #[error("weight at row {row}, column {col} is {value}; weights must be finite or -inf")]
    InvalidWeight {
        /// The weight's row.
        row: usize,
        /// Its column.
        col: usize,
        /// The weight.
        value: f32,
    },
}

/// Problems up to this size can be solved by enumerating permutations
/// ([`Assigner::solve_enumerate`]).
pub const ENUMERATE_MAX: usize = 4;

/// The permutations of 0..4 in lexicographic order.
const PERMS4: [[u8; 4]; 24] = {
    let mut out = [[0u8; 4]; 24];
    let mut k = 0;
    let mut a = 0;
    while a < 4 {
        let mut b = 0;
        while b < 4 {
            let mut c = 0;
            while c < 4 {
                if a != b && a != c && b != c {
                    out[k] = [a, b, c, 6 - a - b - c];
                    k += 1;
                }
                c += 1;
            }
            b += 1;
        }
        a += 1;
    }
    out
};

/// Cumulative counts of what an [`Assigner`] did, for measuring how much of each solve the
/// warm start saves (plain counters: one add each, no effect on the result).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AssignStats {
    /// Successful and failed solves.
    pub solves: u64,
    /// Solves that started warm (from the previous potentials).
    pub warm: u64,
    /// Rows that lost their column (were free) after a warm start's scan, summed.
    pub warm_free_rows: u64,
    /// Warm starts given up for a cold one (more than n/3 rows free).
    pub cold_fallbacks: u64,
    /// Steps of augmenting row reduction.
    pub arr_steps: u64,
    /// Shortest augmenting paths.
    pub augmentations: u64,
    /// Rows those paths scanned, summed.
    pub scanned_rows: u64,
    /// Solves done by enumeration (n <= 4).
    pub enumerated: u64,
}

impl AssignStats {
    /// The sum of two counts.
    pub fn add(&mut self, o: &AssignStats) {
        self.solves += o.solves;
        self.warm += o.warm;
        self.warm_free_rows += o.warm_free_rows;
        self.cold_fallbacks += o.cold_fallbacks;
        self.arr_steps += o.arr_steps;
        self.augmentations += o.augmentations;
        self.scanned_rows += o.scanned_rows;
        self.enumerated += o.enumerated;
    }
}

/// Reusable dense assignment solver for a fixed size `n`.
///
/// Owns the column potentials, the current assignment and all scratch space:
/// `solve`/`solve_warm` never allocate.
#[derive(Debug, Clone)]
pub struct Assigner<R: Real = f64> {
    n: usize,
    /// Column potentials (min-cost convention).
    v: Vec<R>,
    /// Shortest-path distances (scratch; column minima during cold init).
    d: Vec<R>,
    /// Scratch (arg-row of the column minima during cold init).
    h: Vec<R>,
    /// Row -> column.
    x: Vec<u32>,
    /// Column -> row.
    y: Vec<u32>,
    /// Shortest-path predecessor row of each column (scratch).
    pred: Vec<u32>,
    /// Scratch: the columns a shortest-path search scanned, in order (also the per-row
    /// match counts of the cold init).
    cols: Vec<u32>,
    /// Scratch of the shortest-path search: each scanned column's distance when scanned.
    ds: Vec<R>,
    /// Scratch of the shortest-path search: `0` for an unassigned column, `+inf` otherwise.
    fm: Vec<R>,
    /// Free rows.
    free: Vec<u32>,
    /// `v` and `x`/`y` describe a completed optimal solve (warm start usable).
    has_duals: bool,
    /// Which row kernel the row reduction uses (see [`Kernels`]).
    kernels: Kernels,
    total: f64,
    stats: AssignStats,
}

impl Assigner {
    /// A solver for `n × n` matrices, with `f64` potentials and reduced costs.
    pub fn new(n: usize) -> Self {
        Self::with_precision(n)
    }
}

impl Assigner<f32> {
    /// A solver for `n × n` matrices with `f32` potentials and reduced costs: twice the
    /// lanes per vector, and optimal up to `f32` rounding (see [`Real`]).
    pub fn new_f32(n: usize) -> Self {
        Self::with_precision(n)
    }
}

impl<R: Real> Assigner<R> {
    /// A solver for `n × n` matrices in the precision `R`.
    pub fn with_precision(n: usize) -> Self {
        Self {
            n,
            v: vec![R::ZERO; n],
            d: vec![R::ZERO; n],
            h: vec![R::ZERO; n],
            x: vec![UNASSIGNED; n],
            y: vec![UNASSIGNED; n],
            pred: vec![0; n],
            cols: vec![0; n],
            ds: vec![R::ZERO; n],
            fm: vec![R::ZERO; n],
            free: Vec::with_capacity(n),
            has_duals: false,
            kernels: Kernels::Fused,
            total: 0.0,
            stats: AssignStats::default(),
        }
    }

    /// The same solver with the given row kernels. [`Kernels::Separate`] is the reference
    /// the fused kernels are tested against; both give the same assignment, potentials and
    /// counts, bit for bit.
    #[doc(hidden)]
    pub fn with_kernels(mut self, kernels: Kernels) -> Self {
        self.kernels = kernels;
        self
    }

    /// What this solver did so far (see [`AssignStats`]).
    pub fn stats(&self) -> &AssignStats {
        &self.stats
    }

    /// Matrix size this solver was created for.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Column assigned to each row. Meaningful after a successful solve; after
    /// a failed one it is a partial assignment ([`UNASSIGNED`] entries).
    pub fn row_to_col(&self) -> &[u32] {
        &self.x
    }

    /// Row assigned to each column (inverse of [`Assigner::row_to_col`]).
    pub fn col_to_row(&self) -> &[u32] {
        &self.y
    }

    /// Total weight of the last solve, accumulated in `f64` (the `f32`
    /// returned by `solve` is this value rounded); NaN after a failed solve.
    pub fn total_f64(&self) -> f64 {
        self.total
    }

    /// Column potentials of the last solve (min-cost convention on `-w`:
    /// with `u[r] = max_c (w[r][c] + v[c])`, `u[r] - v[c] >= w[r][c]` holds
    /// up to rounding, with equality on assigned pairs).
    pub fn col_potentials(&self) -> &[R] {
        &self.v
    }

    /// What this solver carries from one solve to the next ([`WarmState`]): the potentials
    /// and the assignment a warm start reads, whether they are usable, the last total and
    /// the counts. The rest of the solver is scratch that every solve writes before it reads.
    pub fn warm_state(&self) -> WarmState {
        WarmState {
            n: self.n,
            v: self.v.iter().map(|v| v.to_f64().to_bits()).collect(),
            x: self.x.clone(),
            y: self.y.clone(),
            has_duals: self.has_duals,
            total: self.total.to_bits(),
            stats: self.stats,
        }
    }

    /// Puts the solver in the state `s` ([`Assigner::warm_state`] of a solver of the same
    /// size and precision), so that its next solves are those the saved solver would have
    /// made, bit for bit. Refused (the solver unchanged) when `s` does not fit: another size,
    /// an entry out of range, or usable potentials that are not finite or an assignment that
    /// is not a permutation with its inverse.
    pub fn set_warm_state(&mut self, s: &WarmState) -> Result<(), String> {
        let n = self.n;
        if s.n != n || s.v.len() != n || s.x.len() != n || s.y.len() != n {
            return Err(format!("an assignment solver of size {} saved for one of size {n}", s.n));
        }
        let v: Vec<R> = s.v.iter().map(|&b| R::from_f64(f64::from_bits(b))).collect();
        let in_range = |a: &[u32]| a.iter().all(|&j| j == UNASSIGNED || (j as usize) < n);
        if !in_range(&s.x) || !in_range(&s.y) {
            return Err(format!("an assignment of size {n} names a row or column out of range"));
        }
        if s.has_duals {
            let inverse = s.x.iter().enumerate().all(|(i, &j)| j != UNASSIGNED && s.y[j as usize] == i as u32);
            if !inverse || v.iter().any(|p| !p.to_f64().is_finite()) {
                return Err(format!("a warm start of size {n} whose assignment or potentials are not a solve's"));
            }
        }
        self.v = v;
        self.x.clone_from(&s.x);
        self.y.clone_from(&s.y);
        self.has_duals = s.has_duals;
        self.total = f64::from_bits(s.total);
        self.stats = s.stats;
        Ok(())
    }

    /// Solve from scratch (discards previous potentials).
    ///
    /// `weights` is row-major `n*n`: `weights[r*n + c]` is the value of
    /// assigning row `r` to column `c`; `f32::NEG_INFINITY` forbids the pair.
    /// Returns the maximum total weight. `n == 0` gives `Ok(0.0)`.
    pub fn solve(&mut self, weights: &[f32]) -> Result<f32, AssignError> {
        self.run(weights, false)
    }

    /// Solve reusing the column potentials and (where still consistent) the
    /// assignment of the previous successful call on this solver. Exactly as
    /// optimal as [`Assigner::solve`] (same total up to float rounding; ties
    /// may be broken differently). Falls back to a cold start when there is
    /// no previous successful solve, or when more than n/3 rows lose their
    /// column (the weights changed too much for the old potentials to help;
    /// the cost of finding that out is one O(n²) scan).
    pub fn solve_warm(&mut self, weights: &[f32]) -> Result<f32, AssignError> {
        self.run(weights, self.has_duals)
    }

    fn run(&mut self, w: &[f32], warm: bool) -> Result<f32, AssignError> {
        R::dispatch(self, w, warm)
    }

    #[inline(always)]
    fn run_inner(&mut self, w: &[f32], warm: bool) -> Result<f32, AssignError> {
        let n = self.n;
        if n.checked_mul(n) != Some(w.len()) {
            return Err(AssignError::BadShape { n, expected: n.saturating_mul(n), got: w.len() });
        }
        self.has_duals = false;
        self.stats.solves += 1;
        if n == 0 {
            self.total = 0.0;
            self.has_duals = true;
            return Ok(0.0);
        }
        // The init phase reads every weight and rejects NaN / +inf before
        // anything else looks at them.
        let res = if warm {
            // When the new weights moved so far that the old potentials leave
            // about as many rows free as a cold start would (~n/e on random
            // data), they are a worse starting point than column reduction.
            self.stats.warm += 1;
            self.init_warm(w).and_then(|()| {
                self.stats.warm_free_rows += self.free.len() as u64;
                if self.free.len() * 3 > n {
                    self.stats.cold_fallbacks += 1;
                    self.init_cold(w)
                } else {
                    Ok(())
                }
            })
        } else {
            self.init_cold(w)
        }
        .and_then(|()| self.augmenting_row_reduction(w))
        .and_then(|()| self.augmenting_row_reduction(w))
        .and_then(|()| self.augment_free_rows(w));
        if let Err(e) = res {
            self.total = f64::NAN;
            // An early `Infeasible` may precede the scan of a bad weight.
            validate(n, w)?;
            return Err(e);
        }
        let total: f64 = (0..n).map(|i| w[i * n + self.x[i] as usize] as f64).sum();
        self.total = total;
        self.has_duals = true;
        Ok(total as f32)
    }

    /// Solves a tiny problem (n <= [`ENUMERATE_MAX`], the corner class) by trying every
    /// permutation, summed in `f64` as the tests' exhaustive oracle does; the first best in lexicographic
    /// order wins. Exactly optimal, and at n = 4 cheaper than any start of JV. It keeps no
    /// potentials (a later [`Assigner::solve_warm`] starts cold) and [`Assigner::col_potentials`]
    /// are not duals after it. Larger `n` goes to [`Assigner::solve`].
    pub fn solve_enumerate(&mut self, w: &[f32]) -> Result<f32, AssignError> {
        let n = self.n;
        if n > ENUMERATE_MAX || n == 0 {
            return self.solve(w);
        }
        if n * n != w.len() {
            return Err(AssignError::BadShape { n, expected: n * n, got: w.len() });
        }
        self.has_duals = false;
        self.stats.solves += 1;
        validate(n, w)?;
        self.stats.enumerated += 1;
        if n == 4 {
            // The 24 permutations from a table, sums without branches but the best test.
            let mut best = f64::NEG_INFINITY;
            let mut at = 0;
            for (k, p) in PERMS4.iter().enumerate() {
                let t = w[p[0] as usize] as f64
                    + w[4 + p[1] as usize] as f64
                    + w[8 + p[2] as usize] as f64
                    + w[12 + p[3] as usize] as f64;
                if t > best {
                    best = t;
                    at = k;
                }
            }
            if best == f64::NEG_INFINITY {
                self.total = f64::NAN;
                return Err(AssignError::Infeasible);
            }
            self.v.fill(R::ZERO);
            for (r, &c) in PERMS4[at].iter().enumerate() {
                self.x[r] = c as u32;
                self.y[c as usize] = r as u32;
            }
            self.total = best;
            return Ok(best as f32);
        }
        let mut best = f64::NEG_INFINITY;
        let mut best_perm = [0u8; ENUMERATE_MAX];
        let mut perm = [0u8; ENUMERATE_MAX];
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i as u8;
        }
        // Heap's algorithm would reorder; lexicographic next-permutation keeps "first best"
        // well defined.
        loop {
            let mut t = 0.0f64;
            for r in 0..n {
                t += w[r * n + perm[r] as usize] as f64;
            }
            if t > best {
                best = t;
                best_perm = perm;
            }
            // Next permutation of perm[..n] in lexicographic order.
            let p = &mut perm[..n];
            let Some(i) = (0..n - 1).rev().find(|&i| p[i] < p[i + 1]) else { break };
            let j = (i + 1..n).rev().find(|&j| p[j] > p[i]).unwrap_or(i + 1);
            p.swap(i, j);
            p[i + 1..].reverse();
        }
        if best == f64::NEG_INFINITY {
            self.total = f64::NAN;
            return Err(AssignError::Infeasible);
        }
        self.v.fill(R::ZERO);
        for r in 0..n {
            self.x[r] = best_perm[r] as u32;
            self.y[best_perm[r] as usize] = r as u32;
        }
        self.total = best;
        Ok(best as f32)
    }

    /// Column reduction + reduction transfer (cold start).
    #[inline(always)]
    fn init_cold(&mut self, w: &[f32]) -> Result<(), AssignError> {
        let n = self.n;
        let colmin = &mut self.d[..n];
        let argrow = &mut self.h[..n];
        if column_minima(n, w, colmin, argrow) {
            validate(n, w)?;
        }
        if colmin.contains(&R::INF) {
            // A column with no allowed pair.
            return Err(AssignError::Infeasible);
        }
        self.v.copy_from_slice(colmin);
        self.x.fill(UNASSIGNED);
        self.y.fill(UNASSIGNED);
        // `cols` doubles as the per-row count of columns whose minimum it holds.
        let matches = &mut self.cols[..n];
        matches.fill(0);
        for j in (0..n).rev() {
            let i = argrow[j].to_index(); // an exact small integer
            matches[i] += 1;
            if matches[i] == 1 {
                self.x[i] = j as u32;
                self.y[j] = i as u32;
            }
        }
        self.free.clear();
        for i in 0..n {
            match matches[i] {
                0 => self.free.push(i as u32),
                1 => {
                    // Reduction transfer: lower v[j1] so that row i's second
                    // best column becomes as attractive as j1.
                    let j1 = self.x[i] as usize;
                    let row = &w[i * n..(i + 1) * n];
                    let mu =
                        fmin(min_reduced(&row[..j1], &self.v[..j1]), min_reduced(&row[j1 + 1..], &self.v[j1 + 1..]));
                    if mu < R::INF {
                        self.v[j1] -= mu;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Warm start: keep `v`; rows whose previous column still minimises
    /// `c - v` keep it (with reduction transfer), the others take a
    /// minimising column if it is unclaimed, else stay free.
    #[inline(always)]
    fn init_warm(&mut self, w: &[f32]) -> Result<(), AssignError> {
        let n = self.n;
        self.y.fill(UNASSIGNED);
        self.free.clear();
        // `pred` holds each pending row's minimising column.
        for (i, row) in w.chunks_exact(n).enumerate() {
            if row_invalid(row) {
                validate(n, w)?;
            }
            let (m, m2) = top2_reduced(row, &self.v);
            if m == R::INF {
                // A row with no allowed pair.
                return Err(AssignError::Infeasible);
            }
            let prev = self.x[i];
            if prev != UNASSIGNED {
                let p = prev as usize;
                let a = R::cost(row[p]) - self.v[p];
                if a <= m {
                    // Previous columns are distinct: no conflict possible.
                    self.y[p] = i as u32;
                    // Reduction transfer (as in the cold start): make p look
                    // worse to everyone else by lowering v[p] until row i is
                    // indifferent between p and its best alternative. Other
                    // rows' alternatives only get worse, so every kept or
                    // pending row's choice stays minimal.
                    if m2 < R::INF {
                        self.v[p] -= m2 - a;
                    }
                    continue;
                }
            }
            let jm = find_reduced(row, &self.v, 0, m);
            self.x[i] = UNASSIGNED;
            self.pred[i] = jm as u32;
        }
        for i in 0..n {
            if self.x[i] == UNASSIGNED {
                let j = self.pred[i] as usize;
                if self.y[j] == UNASSIGNED {
                    self.y[j] = i as u32;
                    self.x[i] = j as u32;
                } else {
                    self.free.push(i as u32);
                }
            }
        }
        Ok(())
    }

    /// One pass of JV's augmenting row reduction over the free rows, with an
    /// iteration cap (float near-ties could otherwise cause long price wars).
    #[inline(always)]
    fn augmenting_row_reduction(&mut self, w: &[f32]) -> Result<(), AssignError> {
        let n = self.n;
        let prv = self.free.len();
        if prv == 0 {
            return Ok(());
        }
        // Free rows fight over columns in steps of exact price cuts (no epsilon), which can
        // go on for many steps; past a few per free row the shortest-path augmentation below
        // is cheaper (measured on F1's iterates: 8x8 ran ~130 steps per solve at 2n + 16;
        // 3 per free row + 4 was 5% faster than + 16 at 5x5 to 8x8, BENCHMARKS.md).
        let cap = (3 * prv + 4).min(2 * n + 16);
        let mut steps = 0usize;
        let mut k = 0usize; // next entry of free[..prv] to process
        let mut nf = 0usize; // rows kept free for the next pass (nf <= k)
        while k < prv {
            if steps >= cap {
                self.free.copy_within(k..prv, nf);
                nf += prv - k;
                break;
            }
            steps += 1;
            self.stats.arr_steps += 1;
            let i = self.free[k] as usize;
            k += 1;
            let row = &w[i * n..(i + 1) * n];
            let (umin, usub, mut j1) = match self.kernels {
                Kernels::Fused => top2_first_reduced(row, &self.v),
                Kernels::Separate => {
                    let (a, b) = top2_reduced(row, &self.v);
                    (a, b, if a == R::INF { 0 } else { find_reduced(row, &self.v, 0, a) })
                }
            };
            if umin == R::INF {
                // Row with no allowed pair.
                return Err(AssignError::Infeasible);
            }
            let mut i0 = self.y[j1];
            // `reprocess`: the displaced row is handled right away (price
            // strictly dropped); otherwise it waits for the next pass.
            let reprocess = umin < usub && usub < R::INF;
            if reprocess {
                self.v[j1] -= usub - umin;
            } else if i0 != UNASSIGNED && usub == umin {
                // Tie: take the equally good second column instead.
                let j2 = find_reduced(row, &self.v, j1 + 1, umin);
                j1 = j2;
                i0 = self.y[j2];
            }
            self.x[i] = j1 as u32;
            self.y[j1] = i as u32;
            if i0 != UNASSIGNED {
                self.x[i0 as usize] = UNASSIGNED;
                if reprocess {
                    k -= 1;
                    self.free[k] = i0;
                } else {
                    self.free[nf] = i0;
                    nf += 1;
                }
            }
        }
        self.free.truncate(nf);
        Ok(())
    }

    #[inline(always)]
    fn augment_free_rows(&mut self, w: &[f32]) -> Result<(), AssignError> {
        for k in 0..self.free.len() {
            let f = self.free[k] as usize;
            self.augment_row(f, w)?;
        }
        self.free.clear();
        Ok(())
    }

    /// Dijkstra-like shortest augmenting path from free row `f` (Jonker and Volgenant's
    /// augmentation, in the dense form of Crouse's rectangular LSAP), then potential update
    /// and augmentation.
    ///
    /// Every pass runs over all `n` columns in their natural order with no data-dependent
    /// branch, so that it vectorises: scanned columns are masked out by holding `+inf` in
    /// `d` and in the mask `h` (a masked reduced cost is `+inf`, never below `d`). On a tie
    /// of the minimum an unassigned column ends the search at once.
    #[inline(always)]
    fn augment_row(&mut self, f: usize, w: &[f32]) -> Result<(), AssignError> {
        let n = self.n;
        let v = &mut self.v[..n];
        let d = &mut self.d[..n];
        let mask = &mut self.h[..n];
        let fm = &mut self.fm[..n];
        let pred = &mut self.pred[..n];
        let cols = &mut self.cols[..n];
        let ds = &mut self.ds[..n];
        let x = &mut self.x[..n];
        let y = &self.y[..n];

        let frow = &w[f * n..(f + 1) * n];
        for j in 0..n {
            d[j] = R::cost(frow[j]) - v[j];
            pred[j] = f as u32;
            mask[j] = R::ZERO;
            fm[j] = if y[j] == UNASSIGNED { R::ZERO } else { R::INF };
        }
        self.stats.augmentations += 1;
        let mut lo = 0usize;
        let (endcol, min) = loop {
            let (min, min_free) = min_and_min_free(d, fm);
            if min == R::INF {
                // No further column reachable through allowed pairs.
                return Err(AssignError::Infeasible);
            }
            if min_free == min {
                break (find_free_at(d, fm, min), min);
            }
            // The first column at the minimum; it is assigned (else min_free == min).
            let j1 = find_at(d, min);
            cols[lo] = j1 as u32;
            ds[lo] = min;
            lo += 1;
            d[j1] = R::INF;
            mask[j1] = R::INF;
            let i = y[j1] as usize;
            let row = &w[i * n..(i + 1) * n];
            let h = R::cost(row[j1]) - v[j1] - min;
            relax(row, v, mask, h, i as u32, d, pred);
        };
        self.stats.scanned_rows += lo as u64;
        // Potential update for the scanned columns.
        for k in 0..lo {
            let j = cols[k] as usize;
            v[j] += ds[k] - min;
        }
        // Augment along the predecessor chain.
        let y = &mut self.y[..n];
        let mut j = endcol;
        loop {
            let i = pred[j] as usize;
            y[j] = i as u32;
            let prev = x[i];
            x[i] = j as u32;
            if i == f {
                break;
            }
            j = prev as usize;
        }
        Ok(())
    }
}

/// [`Assigner::run`] compiled for the instruction sets the machine has: the row scans
/// below are lane loops, and with AVX2 they run four `f64` lanes at a time instead of
/// SSE2's two. The arithmetic is the same (no fused multiply-add: Rust does not contract
/// float operations), so every version returns the same assignment, bit for bit.
#[multiversion::multiversion(targets("x86_64+avx2+fma"))]
fn run_dispatch(a: &mut Assigner, w: &[f32], warm: bool) -> Result<f32, AssignError> {
    a.run_inner(w, warm)
}

/// [`run_dispatch`] for the `f32` solver.
#[multiversion::multiversion(targets("x86_64+avx2+fma"))]
fn run_dispatch_f32(a: &mut Assigner<f32>, w: &[f32], warm: bool) -> Result<f32, AssignError> {
    a.run_inner(w, warm)
}

/// Reject NaN and `+inf` weights.
fn validate(n: usize, w: &[f32]) -> Result<(), AssignError> {
    if !w.chunks(256).any(row_invalid) {
        return Ok(());
    }
    let p = w.iter().position(|&x| x.is_nan() || x == f32::INFINITY).unwrap_or(0);
    Err(AssignError::InvalidWeight { row: p / n.max(1), col: p % n.max(1), value: w[p] })
}
