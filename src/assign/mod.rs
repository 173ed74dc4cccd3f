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

/// The precision of a solver's potentials, distances and reduced costs: `f64` (the default,
/// and the reference) or `f32` (twice the lanes per vector). Weights are `f32` either way, and
/// totals are summed in `f64`. Every kernel computes a reduced cost `cost(w) - v` with the same
/// expression, so minima found in one pass are found again by exact comparison in another, in
/// either precision. With `f32` the potentials round at 2^-24 of their size: the assignment is
/// optimal up to that rounding, and near-ties may break differently from the `f64` solver's.
pub trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::AddAssign
    + std::ops::SubAssign
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
    + sealed::Sealed
{
    /// `+inf`: a forbidden pair's cost, and a masked column.
    const INF: Self;
    /// `0`.
    const ZERO: Self;
    /// Min-cost view of a weight: `-w` (forbidden `-inf` becomes `+inf`).
    fn cost(w: f32) -> Self;
    /// A small integer (a row index), held exactly.
    fn from_index(i: usize) -> Self;
    /// The integer [`Real::from_index`] stored.
    fn to_index(self) -> usize;
    /// Widening, for certificates and tests.
    fn to_f64(self) -> f64;
    /// Narrowing back ([`Real::to_f64`] then this is the identity): a saved solver's
    /// potentials ([`WarmState`]).
    fn from_f64(v: f64) -> Self;
    /// Runs a solve compiled for the machine's instruction sets.
    #[doc(hidden)]
    fn dispatch(a: &mut Assigner<Self>, w: &[f32], warm: bool) -> Result<f32, AssignError>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

impl Real for f64 {
    const INF: Self = f64::INFINITY;
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn cost(w: f32) -> Self {
        -(w as f64)
    }
    #[inline(always)]
    fn from_index(i: usize) -> Self {
        i as f64
    }
    #[inline(always)]
    fn to_index(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn dispatch(a: &mut Assigner<Self>, w: &[f32], warm: bool) -> Result<f32, AssignError> {
        run_dispatch(a, w, warm)
    }
}

impl Real for f32 {
    const INF: Self = f32::INFINITY;
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn cost(w: f32) -> Self {
        -w
    }
    #[inline(always)]
    fn from_index(i: usize) -> Self {
        i as f32
    }
    #[inline(always)]
    fn to_index(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn dispatch(a: &mut Assigner<Self>, w: &[f32], warm: bool) -> Result<f32, AssignError> {
        run_dispatch_f32(a, w, warm)
    }
}

/// The precision a map's host assignments run in (`--reduced-costs`): the solver's
/// potentials, distances and reduced costs in `f64` (the reference) or `f32` (see [`Real`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `f64` throughout: the reference.
    #[default]
    F64,
    /// `f32` potentials, distances and reduced costs: twice the lanes per vector.
    F32,
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

/// The state an [`Assigner`] carries from one solve to the next, saved with a map's snapshot
/// so that a continued run warm-starts as the uninterrupted run would: the column potentials
/// `v` (as the bits of their `f64` values, exact for either precision), the assignment `x`
/// (row to column) and its inverse `y`, whether they describe a completed solve (a warm
/// start is then possible), the last total (`f64` bits; NaN after a failed solve) and the
/// counts. Everything else in a solver is scratch, written by each solve before it is read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WarmState {
    /// The problem's size.
    pub n: usize,
    /// Column potentials, as `f64::to_bits`.
    pub v: Vec<u64>,
    /// Row to column ([`UNASSIGNED`] where none).
    pub x: Vec<u32>,
    /// Column to row ([`UNASSIGNED`] where none).
    pub y: Vec<u32>,
    /// Whether `v`, `x` and `y` are a completed solve's (a warm start reads them).
    pub has_duals: bool,
    /// The last solve's total, as `f64::to_bits`.
    pub total: u64,
    /// What the solver did so far.
    pub stats: AssignStats,
}

/// The warm starts of several solvers ([`Assigner::warm_state`] of each), in order.
pub fn warm_states<R: Real>(solvers: &[Assigner<R>]) -> Vec<WarmState> {
    solvers.iter().map(Assigner::warm_state).collect()
}

/// Puts each of `solvers` in its saved state ([`warm_states`] of solvers of the same sizes
/// and precision), all or none: refused, with every solver unchanged, when any does not fit.
pub fn set_warm_states<R: Real>(solvers: &mut [Assigner<R>], states: &[WarmState]) -> Result<(), String> {
    if solvers.len() != states.len() {
        return Err(format!("{} assignment solvers saved for {}", states.len(), solvers.len()));
    }
    let mut fresh = solvers.to_vec();
    for (a, s) in fresh.iter_mut().zip(states) {
        a.set_warm_state(s)?;
    }
    solvers.clone_from_slice(&fresh);
    Ok(())
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

/// The smallest `d[j]`, and the smallest `d[j] + fm[j]` (over the unassigned columns).
#[inline(always)]
fn min_and_min_free<R: Real>(d: &[R], fm: &[R]) -> (R, R) {
    let fm = &fm[..d.len()];
    let mut a = [R::INF; LANES];
    let mut b = [R::INF; LANES];
    let dc = d.chunks_exact(LANES);
    let fc = fm.chunks_exact(LANES);
    let (dr, fr) = (dc.remainder(), fc.remainder());
    for (d8, f8) in dc.zip(fc) {
        for k in 0..LANES {
            a[k] = fmin(a[k], d8[k]);
            b[k] = fmin(b[k], d8[k] + f8[k]);
        }
    }
    let mut m = a.iter().fold(R::INF, |x, &y| fmin(x, y));
    let mut mf = b.iter().fold(R::INF, |x, &y| fmin(x, y));
    for (&dj, &fj) in dr.iter().zip(fr) {
        m = fmin(m, dj);
        mf = fmin(mf, dj + fj);
    }
    (m, mf)
}

/// The first `j` with `d[j] == target` (`target` must occur).
#[inline(always)]
fn find_at<R: Real>(d: &[R], target: R) -> usize {
    d.iter().position(|&dj| dj == target).unwrap_or(0)
}

/// The first unassigned `j` with `d[j] == target` (one must exist).
#[inline(always)]
fn find_free_at<R: Real>(d: &[R], fm: &[R], target: R) -> usize {
    d.iter().zip(fm).position(|(&dj, &fj)| dj + fj == target).unwrap_or(0)
}

/// Relaxes every unscanned column through row `i`: `d[j] = min(d[j], c[i][j] - v[j] - h)`,
/// with `pred[j] = i` where it drops. Branch-free.
#[inline(always)]
fn relax<R: Real>(row: &[f32], v: &[R], mask: &[R], h: R, i: u32, d: &mut [R], pred: &mut [u32]) {
    let n = d.len();
    let (row, v, mask, pred) = (&row[..n], &v[..n], &mask[..n], &mut pred[..n]);
    for j in 0..n {
        let cred = R::cost(row[j]) - v[j] - h + mask[j];
        let lt = cred < d[j];
        d[j] = if lt { cred } else { d[j] };
        pred[j] = if lt { i } else { pred[j] };
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

// ---------------------------------------------------------------------------
// Row kernels. They work on `h_j = R::cost(row[j]) - v[j]` and are written as
// independent lanes over fixed-size chunks so that LLVM vectorises them
// (the scalar argmin loop is ~3x slower). Every kernel computes `h_j` with
// the same expression, so values are bitwise reproducible across kernels and
// `find_reduced` can locate a minimum by exact comparison.

const LANES: usize = 8;

/// The lanes of the kernels that carry a column with each minimum: four, so that a lane
/// array of `f64` fills one AVX2 register.
const FLANES: usize = 4;

#[inline(always)]
fn fmin<R: Real>(a: R, b: R) -> R {
    if b < a { b } else { a }
}

#[inline(always)]
fn fmax<R: Real>(a: R, b: R) -> R {
    if b > a { b } else { a }
}

/// `min_j R::cost(row[j]) - v[j]` (`+inf` for an empty or all-forbidden row).
#[inline(always)]
fn min_reduced<R: Real>(row: &[f32], v: &[R]) -> R {
    let v = &v[..row.len()];
    let mut acc = [R::INF; LANES];
    let rc = row.chunks_exact(LANES);
    let vc = v.chunks_exact(LANES);
    let (rr, vr) = (rc.remainder(), vc.remainder());
    for (r8, v8) in rc.zip(vc) {
        for k in 0..LANES {
            acc[k] = fmin(acc[k], R::cost(r8[k]) - v8[k]);
        }
    }
    let mut m = acc.iter().fold(R::INF, |a, &b| fmin(a, b));
    for (&r, &vj) in rr.iter().zip(vr) {
        m = fmin(m, R::cost(r) - vj);
    }
    m
}

/// Whether a row holds a NaN or `+inf` weight (branch-free so that it
/// vectorises; run on a row just before it is scanned, while it is hot).
#[inline(always)]
fn row_invalid(row: &[f32]) -> bool {
    let mut bad = 0u32;
    for &x in row {
        bad |= (x.is_nan() | (x == f32::INFINITY)) as u32;
    }
    bad != 0
}

/// The two smallest values (as a multiset) of `R::cost(row[j]) - v[j]`.
#[inline(always)]
fn top2_reduced<R: Real>(row: &[f32], v: &[R]) -> (R, R) {
    let v = &v[..row.len()];
    let mut m1 = [R::INF; LANES];
    let mut m2 = [R::INF; LANES];
    let rc = row.chunks_exact(LANES);
    let vc = v.chunks_exact(LANES);
    let (rr, vr) = (rc.remainder(), vc.remainder());
    for (r8, v8) in rc.zip(vc) {
        for k in 0..LANES {
            let h = R::cost(r8[k]) - v8[k];
            let lt = h < m1[k];
            let hi = if lt { m1[k] } else { h };
            m1[k] = if lt { h } else { m1[k] };
            m2[k] = fmin(m2[k], hi);
        }
    }
    let (mut a, mut b) = reduce_top2(&mut m1, &mut m2);
    for (&r, &vj) in rr.iter().zip(vr) {
        let h = R::cost(r) - vj;
        b = fmin(b, fmax(a, h));
        a = fmin(a, h);
    }
    (a, b)
}

/// The two smallest values (as a multiset) of the lanes' pairs `(m1[k] <= m2[k])`, by a
/// tree reduction without branches: the two smallest of the union of the pairs
/// (a <= b) and (x <= y) are min(a, x) and min(b, y, max(a, x)). (A chain of
/// compare-and-branch pushes here cost more than the vector loop itself at n ~ 36.)
/// `L` is a power of two; the arrays are left as scratch.
#[inline(always)]
fn reduce_top2<R: Real, const L: usize>(m1: &mut [R; L], m2: &mut [R; L]) -> (R, R) {
    let mut half = L;
    while half > 1 {
        half /= 2;
        for k in 0..half {
            let (x, y) = (m1[k + half], m2[k + half]);
            m2[k] = fmin(fmin(m2[k], y), fmax(m1[k], x));
            m1[k] = fmin(m1[k], x);
        }
    }
    (m1[0], m2[0])
}

/// First `j >= start` with `R::cost(row[j]) - v[j] == target`, else `row.len()`.
/// Tests a chunk at a time (vectorised) before locating the hit.
#[inline(always)]
fn find_reduced<R: Real>(row: &[f32], v: &[R], start: usize, target: R) -> usize {
    let v = &v[..row.len()];
    let (r, vv) = (&row[start..], &v[start..]);
    let rc = r.chunks_exact(LANES);
    let vc = vv.chunks_exact(LANES);
    for (c, (r8, v8)) in rc.zip(vc).enumerate() {
        let mut hit = false;
        for k in 0..LANES {
            hit |= R::cost(r8[k]) - v8[k] == target;
        }
        if hit {
            for k in 0..LANES {
                if R::cost(r8[k]) - v8[k] == target {
                    return start + c * LANES + k;
                }
            }
        }
    }
    let tail = start + (r.len() / LANES) * LANES;
    (tail..row.len()).find(|&j| R::cost(row[j]) - v[j] == target).unwrap_or(row.len())
}

/// The two smallest values (as a multiset) of `R::cost(row[j]) - v[j]`, as
/// [`top2_reduced`] gives them, and the first `j` holding the smallest (as
/// [`find_reduced`] from 0 finds it; `0` when every value is `+inf`), in one pass.
#[inline(always)]
fn top2_first_reduced<R: Real>(row: &[f32], v: &[R]) -> (R, R, usize) {
    let v = &v[..row.len()];
    let mut m1 = [R::INF; FLANES];
    let mut m2 = [R::INF; FLANES];
    // Each lane's first column at its minimum, and the lanes' columns in this chunk, held
    // as exact small numbers in `R` so that the blends vectorise with the values.
    let mut at = [R::ZERO; FLANES];
    let mut col: [R; FLANES] = std::array::from_fn(R::from_index);
    let step = R::from_index(FLANES);
    let rc = row.chunks_exact(FLANES);
    let vc = v.chunks_exact(FLANES);
    let (rr, vr) = (rc.remainder(), vc.remainder());
    for (rk, vk) in rc.zip(vc) {
        for k in 0..FLANES {
            let h = R::cost(rk[k]) - vk[k];
            let lt = h < m1[k];
            let hi = if lt { m1[k] } else { h };
            m1[k] = if lt { h } else { m1[k] };
            at[k] = if lt { col[k] } else { at[k] };
            m2[k] = fmin(m2[k], hi);
            col[k] += step;
        }
    }
    // The two values by `reduce_top2`. The first column at the minimum is the smallest
    // column of the lanes that hold it: a second fold, without branches.
    let a0 = m1.iter().fold(R::INF, |x, &y| fmin(x, y));
    let j0 = first_at(&m1, &at, a0);
    let (mut a, mut b) = reduce_top2(&mut m1, &mut m2);
    let mut j = if a < R::INF { j0 } else { 0 };
    let tail = row.len() - rr.len();
    for (t, (&r, &vj)) in rr.iter().zip(vr).enumerate() {
        let h = R::cost(r) - vj;
        b = fmin(b, fmax(a, h));
        if h < a {
            j = tail + t;
        }
        a = fmin(a, h);
    }
    (a, b, j)
}

/// The smallest column `at[k]` of the lanes whose value `m[k]` is `target`, without branches.
#[inline(always)]
fn first_at<R: Real, const L: usize>(m: &[R; L], at: &[R; L], target: R) -> usize {
    let mut c = [R::INF; L];
    for k in 0..L {
        c[k] = if m[k] == target { at[k] } else { R::INF };
    }
    c.iter().fold(R::INF, |x, &y| fmin(x, y)).to_index()
}

/// Column minima of the cost matrix with (lowest) arg-row, as `f64` row
/// indices so that the update vectorises. Returns whether a NaN or `+inf`
/// weight was seen.
#[inline(always)]
fn column_minima<R: Real>(n: usize, w: &[f32], colmin: &mut [R], argrow: &mut [R]) -> bool {
    let colmin = &mut colmin[..n];
    let argrow = &mut argrow[..n];
    colmin.fill(R::INF);
    argrow.fill(R::ZERO);
    let mut bad = false;
    for (i, row) in w.chunks_exact(n).enumerate() {
        let fi = R::from_index(i);
        bad |= row_invalid(row);
        for ((m, a), &wij) in colmin.iter_mut().zip(argrow.iter_mut()).zip(row) {
            let c = R::cost(wij);
            let lt = c < *m;
            *m = if lt { c } else { *m };
            *a = if lt { fi } else { *a };
        }
    }
    bad
}

/// Reject NaN and `+inf` weights.
fn validate(n: usize, w: &[f32]) -> Result<(), AssignError> {
    if !w.chunks(256).any(row_invalid) {
        return Ok(());
    }
    let p = w.iter().position(|&x| x.is_nan() || x == f32::INFINITY).unwrap_or(0);
    Err(AssignError::InvalidWeight { row: p / n.max(1), col: p % n.max(1), value: w[p] })
}

/// Exhaustive oracle (intended for `n <= 9`): the best total weight and a
/// permutation (`perm[r]` = column of row `r`) achieving it; `None` if every
/// permutation uses a forbidden (`-inf`) pair. Totals are summed in `f64`.
#[cfg(test)]
pub(crate) fn brute_force(n: usize, weights: &[f32]) -> Option<(f32, Vec<usize>)> {
    assert_eq!(weights.len(), n * n, "weights must be n*n");
    assert!(n <= 12, "brute_force is exponential; n = {n} is too large");
    struct S<'a> {
        n: usize,
        w: &'a [f32],
        perm: Vec<usize>,
        best: Option<(f64, Vec<usize>)>,
    }
    fn rec(s: &mut S, r: usize, used: u32, acc: f64) {
        if r == s.n {
            if s.best.as_ref().is_none_or(|(b, _)| acc > *b) {
                s.best = Some((acc, s.perm.clone()));
            }
            return;
        }
        for c in 0..s.n {
            if used & (1 << c) != 0 {
                continue;
            }
            let wv = s.w[r * s.n + c];
            if wv == f32::NEG_INFINITY {
                continue;
            }
            s.perm[r] = c;
            rec(s, r + 1, used | (1 << c), acc + wv as f64);
        }
    }
    let mut s = S { n, w: weights, perm: vec![0; n], best: None };
    rec(&mut s, 0, 0, 0.0);
    s.best.map(|(t, p)| (t as f32, p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus as Rng;

    const NEG: f32 = f32::NEG_INFINITY;

    fn rng(seed: u64) -> Rng {
        Rng::seed_from_u64(seed)
    }

    fn uniform(r: &mut Rng, n: usize) -> Vec<f32> {
        (0..n * n).map(|_| r.random::<f32>()).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-4 * b.abs().max(1.0)
    }

    /// Check that the solver's state is a valid perfect assignment on allowed
    /// pairs whose recomputed total equals the returned total; returns it.
    fn check_solution(a: &Assigner, w: &[f32], total: f32) -> f64 {
        let n = a.n();
        let x = a.row_to_col();
        let y = a.col_to_row();
        assert_eq!(x.len(), n);
        assert_eq!(y.len(), n);
        let mut seen = vec![false; n];
        let mut sum = 0.0f64;
        for r in 0..n {
            let c = x[r] as usize;
            assert!(c < n, "row {r} unassigned");
            assert!(!seen[c], "column {c} used twice");
            seen[c] = true;
            assert_eq!(y[c] as usize, r, "col_to_row not inverse of row_to_col");
            let wv = w[r * n + c];
            assert!(wv != NEG, "forbidden pair ({r},{c}) used");
            sum += wv as f64;
        }
        assert_eq!(sum as f32, total, "returned total differs from recomputed");
        assert_eq!(sum, a.total_f64());
        // Independent optimality certificate from the column potentials: for
        // any v, sum_r max_c (w[r][c] + v[c]) - sum_c v[c] >= optimum (weak
        // duality), so equality with the primal total proves optimality. It
        // also catches broken dual invariants that happened not to change
        // the primal answer.
        let v = a.col_potentials();
        let mut bound = 0.0f64;
        let mut scale = 1.0f64;
        for r in 0..n {
            let mut best = f64::NEG_INFINITY;
            for c in 0..n {
                let wv = w[r * n + c] as f64;
                if wv > f64::NEG_INFINITY {
                    scale = scale.max(wv.abs());
                }
                best = best.max(wv + v[c]);
            }
            bound += best;
        }
        bound -= v.iter().sum::<f64>();
        assert!(
            (bound - sum).abs() <= 1e-9 * scale * (n as f64 + 1.0).powi(2),
            "dual certificate {bound} != primal {sum}"
        );
        sum
    }

    /// Solve cold and against brute force; returns whether feasible.
    fn vs_brute(n: usize, w: &[f32], ctx: &str) -> bool {
        let mut a = Assigner::new(n);
        let got = a.solve(w);
        match brute_force(n, w) {
            None => {
                assert_eq!(got, Err(AssignError::Infeasible), "{ctx}: expected infeasible");
                false
            }
            Some((bt, perm)) => {
                let t = got.unwrap_or_else(|e| panic!("{ctx}: {e}"));
                let s = check_solution(&a, w, t);
                let bs: f64 = (0..n).map(|r| w[r * n + perm[r]] as f64).sum();
                assert_eq!(bs as f32, bt);
                assert!(close(s, bs), "{ctx}: got {s}, brute {bs}");
                // The same solver warm-started on the same matrix.
                let t2 = a.solve_warm(w).unwrap();
                let s2 = check_solution(&a, w, t2);
                assert!(close(s2, bs), "{ctx}: warm {s2}, brute {bs}");
                true
            }
        }
    }

    #[test]
    fn brute_force_sanity() {
        // Known small instance: best is anti-diagonal 3 + 3 = 6.
        let w = [1.0, 3.0, 3.0, 1.0];
        assert_eq!(brute_force(2, &w), Some((6.0, vec![1, 0])));
        assert_eq!(brute_force(2, &[NEG, 1.0, NEG, 2.0]), None);
        assert_eq!(brute_force(0, &[]), Some((0.0, vec![])));
    }

    #[test]
    fn uniform_vs_brute() {
        for n in 1..=8 {
            let reps = if n <= 6 { 150 } else { 60 };
            for s in 0..reps {
                let mut r = rng(1000 * n as u64 + s);
                let w = uniform(&mut r, n);
                assert!(vs_brute(n, &w, &format!("uniform n={n} s={s}")));
            }
        }
    }

    #[test]
    fn ties_vs_brute() {
        for n in 1..=8 {
            let reps = if n <= 6 { 150 } else { 60 };
            for s in 0..reps {
                let mut r = rng(2000 * n as u64 + s);
                let hi = if s % 2 == 0 { 2 } else { 4 };
                let w: Vec<f32> = (0..n * n).map(|_| r.random_range(0..hi) as f32).collect();
                let mut a = Assigner::new(n);
                let t = a.solve(&w).unwrap();
                check_solution(&a, &w, t);
                // Integer weights: must be exact.
                assert_eq!(Some(t), brute_force(n, &w).map(|b| b.0), "ties n={n} s={s}");
            }
        }
    }

    #[test]
    fn structured_vs_brute() {
        for n in 1..=8 {
            for s in 0..40u64 {
                let mut r = rng(3000 * n as u64 + s);
                // Separable: every permutation is optimal.
                let f: Vec<f32> = (0..n).map(|_| r.random_range(-5.0f32..5.0)).collect();
                let g: Vec<f32> = (0..n).map(|_| r.random_range(-5.0f32..5.0)).collect();
                let w: Vec<f32> = (0..n * n).map(|k| f[k / n] + g[k % n]).collect();
                assert!(vs_brute(n, &w, &format!("separable n={n} s={s}")));
                // Planted permutation with a clear margin.
                let mut perm: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    perm.swap(i, r.random_range(0..=i));
                }
                let mut w = uniform(&mut r, n);
                for (i, &p) in perm.iter().enumerate() {
                    w[i * n + p] += 2.0;
                }
                let mut a = Assigner::new(n);
                let t = a.solve(&w).unwrap();
                check_solution(&a, &w, t);
                let planted: Vec<u32> = perm.iter().map(|&p| p as u32).collect();
                assert_eq!(a.row_to_col(), &planted[..], "planted n={n} s={s}");
                assert!(vs_brute(n, &w, &format!("planted n={n} s={s}")));
                // Monge-like (banded) costs, and negative weights.
                let w: Vec<f32> = (0..n * n)
                    .map(|k| -(((k / n) as f32 - (k % n) as f32).powi(2)) + r.random::<f32>() * 0.5)
                    .collect();
                assert!(vs_brute(n, &w, &format!("banded n={n} s={s}")));
                // Large magnitudes mixed with small ones.
                let w: Vec<f32> = (0..n * n)
                    .map(|_| if r.random_bool(0.2) { r.random_range(-1e6f32..1e6) } else { r.random() })
                    .collect();
                assert!(vs_brute(n, &w, &format!("mixed-scale n={n} s={s}")));
            }
        }
    }

    #[test]
    fn forbidden_vs_brute() {
        let mut feasible = 0;
        let mut infeasible = 0;
        for n in 1..=8 {
            for s in 0..150u64 {
                let mut r = rng(4000 * n as u64 + s);
                let p = [0.2, 0.4, 0.6, 0.75][s as usize % 4];
                let ints = s % 3 == 0;
                let w: Vec<f32> = (0..n * n)
                    .map(|_| {
                        if r.random_bool(p) {
                            NEG
                        } else if ints {
                            r.random_range(0..3) as f32
                        } else {
                            r.random_range(-1.0f32..1.0)
                        }
                    })
                    .collect();
                if vs_brute(n, &w, &format!("forbidden n={n} s={s}")) {
                    feasible += 1;
                } else {
                    infeasible += 1;
                }
            }
        }
        // Make sure both branches were really exercised.
        assert!(feasible > 200 && infeasible > 200, "{feasible} / {infeasible}");
    }

    fn km_total(n: usize, wi: &[i64]) -> i64 {
        let m = pathfinding::matrix::Matrix::from_vec(n, n, wi.to_vec()).unwrap();
        pathfinding::kuhn_munkres::kuhn_munkres(&m).0
    }

    #[test]
    fn integer_vs_kuhn_munkres() {
        let mut seed = 0;
        for n in (1..=40).chain([64, 100]) {
            let reps = if n <= 40 { 6 } else { 2 };
            for rep in 0..reps {
                seed += 1;
                let mut r = rng(5000 + seed);
                let (lo, hi) = [(0, 3), (0, 1000), (-50, 50), (-1_000_000, 1_000_000)][rep % 4];
                let wi: Vec<i64> = (0..n * n).map(|_| r.random_range(lo..=hi)).collect();
                let w: Vec<f32> = wi.iter().map(|&v| v as f32).collect();
                let expect = km_total(n, &wi);
                let mut a = Assigner::new(n);
                let t = a.solve(&w).unwrap();
                check_solution(&a, &w, t);
                let mine: i64 = (0..n).map(|i| wi[i * n + a.row_to_col()[i] as usize]).sum();
                assert_eq!(mine, expect, "n={n} rep={rep}");
                assert_eq!(a.total_f64(), expect as f64);
                // Integer perturbation sequence, warm vs exact.
                let mut wi = wi;
                for step in 0..3 {
                    for v in wi.iter_mut() {
                        if r.random_bool(0.1) {
                            *v += r.random_range(-2..=2);
                        }
                    }
                    let w: Vec<f32> = wi.iter().map(|&v| v as f32).collect();
                    let t = a.solve_warm(&w).unwrap();
                    check_solution(&a, &w, t);
                    assert_eq!(a.total_f64(), km_total(n, &wi) as f64, "warm n={n} step={step}");
                }
            }
        }
    }

    #[test]
    fn warm_sequences_match_cold() {
        for (n, seeds, steps) in [(3, 30, 20), (7, 30, 20), (16, 20, 20), (50, 8, 15), (128, 3, 10)] {
            for s in 0..seeds {
                let mut r = rng(6000 + 100 * n as u64 + s);
                let eps = [0.001f32, 0.01, 0.1][s as usize % 3];
                let mut w = uniform(&mut r, n);
                let mut warm = Assigner::new(n);
                let mut cold = Assigner::new(n);
                warm.solve_warm(&w).unwrap(); // first call: cold fallback
                for step in 0..steps {
                    for v in w.iter_mut() {
                        *v += r.random_range(-eps..eps);
                    }
                    let tw = warm.solve_warm(&w).unwrap();
                    let sw = check_solution(&warm, &w, tw);
                    let tc = cold.solve(&w).unwrap();
                    let sc = check_solution(&cold, &w, tc);
                    assert!(close(sw, sc), "n={n} s={s} step={step}: warm {sw} cold {sc}");
                    if n <= 8 {
                        let b = brute_force(n, &w).unwrap().0 as f64;
                        assert!(close(sw, b), "n={n} s={s} step={step}: warm {sw} brute {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn warm_after_unrelated_matrices() {
        for n in [2usize, 5, 8, 30] {
            let mut a = Assigner::new(n);
            for s in 0..30u64 {
                let mut r = rng(7000 + 50 * n as u64 + s);
                let scale = [1.0f32, 1000.0, 1e-3, -7.0][s as usize % 4];
                // Random forbidden pattern, but a random permutation kept allowed.
                let mut w: Vec<f32> =
                    (0..n * n).map(|_| if r.random_bool(0.3) { NEG } else { r.random::<f32>() * scale }).collect();
                let shift = r.random_range(0..n);
                for i in 0..n {
                    w[i * n + (i + shift) % n] = r.random::<f32>() * scale;
                }
                let tw = a.solve_warm(&w).unwrap();
                let sw = check_solution(&a, &w, tw);
                let mut c = Assigner::new(n);
                let tc = c.solve(&w).unwrap();
                let sc = check_solution(&c, &w, tc);
                assert!(close(sw, sc), "n={n} s={s}: warm {sw} cold {sc}");
                if n <= 8 {
                    let b = brute_force(n, &w).unwrap().0 as f64;
                    assert!(close(sw, b));
                }
            }
        }
    }

    #[test]
    fn warm_infeasible_then_recovers() {
        let n = 6;
        let mut r = rng(8000);
        let mut a = Assigner::new(n);
        for _ in 0..5 {
            let w = uniform(&mut r, n);
            a.solve_warm(&w).unwrap();
            // Row 2 all forbidden.
            let mut bad = w.clone();
            bad[2 * n..3 * n].fill(NEG);
            assert_eq!(a.solve_warm(&bad), Err(AssignError::Infeasible));
            // Column 4 all forbidden.
            let mut bad = w.clone();
            for i in 0..n {
                bad[i * n + 4] = NEG;
            }
            assert_eq!(a.solve_warm(&bad), Err(AssignError::Infeasible));
            // Forbid exactly the previous optimum's pair for row 0 plus a Hall
            // violation: rows 0..3 may only use columns 0..2.
            let mut bad = w.clone();
            for i in 0..3 {
                for j in 2..n {
                    bad[i * n + j] = NEG;
                }
            }
            assert_eq!(a.solve_warm(&bad), Err(AssignError::Infeasible));
            assert_eq!(a.solve(&bad), Err(AssignError::Infeasible));
            let t = a.solve_warm(&w).unwrap();
            let s = check_solution(&a, &w, t);
            assert!(close(s, brute_force(n, &w).unwrap().0 as f64));
        }
    }

    #[test]
    fn infeasible_cases() {
        let n = 5;
        let base: Vec<f32> = (0..n * n).map(|k| (k % 7) as f32).collect();
        let mut a = Assigner::new(n);
        let mut row = base.clone();
        row[3 * n..4 * n].fill(NEG);
        assert_eq!(a.solve(&row), Err(AssignError::Infeasible));
        let mut col = base.clone();
        for i in 0..n {
            col[i * n + 1] = NEG;
        }
        assert_eq!(a.solve(&col), Err(AssignError::Infeasible));
        // Hall: rows 0..3 can only use columns {0, 1}.
        let mut hall = base.clone();
        for i in 0..3 {
            for j in 2..n {
                hall[i * n + j] = NEG;
            }
        }
        assert_eq!(a.solve(&hall), Err(AssignError::Infeasible));
        // 2x2 block structure: rows {0,1} x cols {0,1} allowed, rows {2,3,4}
        // may use columns {0,1} only too -> infeasible; with one link fixed it
        // becomes feasible.
        let mut blk = vec![NEG; n * n];
        for i in 0..n {
            for j in 0..2 {
                blk[i * n + j] = 1.0;
            }
        }
        assert_eq!(a.solve(&blk), Err(AssignError::Infeasible));
        let all = vec![NEG; n * n];
        assert_eq!(a.solve(&all), Err(AssignError::Infeasible));
        assert_eq!(a.solve_warm(&all), Err(AssignError::Infeasible));
        // Solver usable afterwards.
        let t = a.solve(&base).unwrap();
        check_solution(&a, &base, t);
        assert_eq!(Some(t), brute_force(n, &base).map(|b| b.0));
        // Only a single feasible permutation (the anti-diagonal).
        let mut one = vec![NEG; n * n];
        for i in 0..n {
            one[i * n + (n - 1 - i)] = i as f32 - 10.0;
        }
        let t = a.solve_warm(&one).unwrap();
        check_solution(&a, &one, t);
        assert_eq!(t, (0..n).map(|i| i as f32 - 10.0).sum::<f32>());
        // Large infeasible instance terminates: half the rows share 10 columns.
        let n = 200;
        let mut r = rng(9);
        let mut w = uniform(&mut r, n);
        for i in 0..100 {
            for j in 10..n {
                w[i * n + j] = NEG;
            }
        }
        let mut a = Assigner::new(n);
        assert_eq!(a.solve(&w), Err(AssignError::Infeasible));
        assert_eq!(a.solve_warm(&w), Err(AssignError::Infeasible));
    }

    #[test]
    fn edge_cases_and_errors() {
        let mut a = Assigner::new(0);
        assert_eq!(a.solve(&[]), Ok(0.0));
        assert_eq!(a.solve_warm(&[]), Ok(0.0));
        assert!(a.row_to_col().is_empty());
        assert!(matches!(a.solve(&[1.0]), Err(AssignError::BadShape { n: 0, expected: 0, got: 1 })));

        let mut a = Assigner::new(1);
        assert_eq!(a.n(), 1);
        assert_eq!(a.solve(&[-2.5]), Ok(-2.5));
        assert_eq!(a.row_to_col(), &[0]);
        assert_eq!(a.solve(&[NEG]), Err(AssignError::Infeasible));
        assert_eq!(a.solve_warm(&[3.0]), Ok(3.0));

        let mut a = Assigner::new(3);
        assert_eq!(a.solve(&[0.0; 8]), Err(AssignError::BadShape { n: 3, expected: 9, got: 8 }));
        let mut w = [0.5f32; 9];
        w[5] = f32::NAN;
        assert!(matches!(a.solve(&w), Err(AssignError::InvalidWeight { row: 1, col: 2, .. })));
        w[5] = f32::INFINITY;
        assert_eq!(a.solve_warm(&w), Err(AssignError::InvalidWeight { row: 1, col: 2, value: f32::INFINITY }));
        // Invalid weights take precedence over infeasibility, cold or warm.
        let mut both = [0.5f32; 9];
        both[..3].fill(NEG);
        both[7] = f32::NAN;
        assert!(matches!(a.solve(&both), Err(AssignError::InvalidWeight { row: 2, col: 1, .. })));
        a.solve(&[0.5; 9]).unwrap();
        assert!(matches!(a.solve_warm(&both), Err(AssignError::InvalidWeight { row: 2, col: 1, .. })));
        w[5] = f32::MAX;
        let t = a.solve(&w).unwrap();
        check_solution(&a, &w, t);
        assert_eq!(t, f32::MAX);
        assert!(AssignError::Infeasible.to_string().contains("no perfect assignment"));
    }

    #[test]
    fn larger_float_consistency() {
        // Transposing the matrix leaves the optimum unchanged; cold, warm and
        // transposed solves must agree, and duals must certify optimality.
        for (n, seed) in [(64usize, 1u64), (100, 2), (256, 3)] {
            let mut r = rng(10_000 + seed);
            let w = uniform(&mut r, n);
            let wt: Vec<f32> = (0..n * n).map(|k| w[(k % n) * n + k / n]).collect();
            let mut a = Assigner::new(n);
            let t = a.solve(&w).unwrap();
            let s = check_solution(&a, &w, t);
            // Dual certificate: u[r] = max_c (w + v); sum u - sum v == total.
            let v = a.col_potentials();
            let mut bound = 0.0f64;
            for i in 0..n {
                let u = (0..n).map(|j| w[i * n + j] as f64 + v[j]).fold(f64::NEG_INFINITY, f64::max);
                bound += u;
            }
            bound -= v.iter().sum::<f64>();
            assert!((bound - s).abs() < 1e-6 * n as f64, "n={n}: dual bound {bound} vs primal {s}");
            let mut b = Assigner::new(n);
            let tt = b.solve(&wt).unwrap();
            let st = check_solution(&b, &wt, tt);
            assert!(close(s, st), "n={n}: {s} vs transposed {st}");
        }
    }

    #[test]
    fn degenerate_and_near_ties() {
        // Completely tied large matrices (every permutation optimal), with and
        // without forbidden pairs: must terminate and be exact.
        for n in [50usize, 200] {
            let mut a = Assigner::new(n);
            let w = vec![0.25f32; n * n];
            let t = a.solve(&w).unwrap();
            assert_eq!(check_solution(&a, &w, t), 0.25 * n as f64);
            let t = a.solve_warm(&w).unwrap();
            assert_eq!(check_solution(&a, &w, t), 0.25 * n as f64);
            // Banded: only |r - c| <= 1 allowed, all equal.
            let w: Vec<f32> = (0..n * n).map(|k| if (k / n).abs_diff(k % n) <= 1 { 1.0 } else { NEG }).collect();
            let t = a.solve_warm(&w).unwrap();
            assert_eq!(check_solution(&a, &w, t), n as f64);
        }
        // Integers plus noise far below the integer spacing: near-ties that
        // rounding could mishandle.
        for n in 2..=8 {
            for s in 0..60u64 {
                let mut r = rng(11_000 + 100 * n as u64 + s);
                let w: Vec<f32> =
                    (0..n * n).map(|_| r.random_range(0..3) as f32 + r.random_range(-1e-6f32..1e-6)).collect();
                assert!(vs_brute(n, &w, &format!("near-ties n={n} s={s}")));
            }
        }
        // Near-tie warm sequence on a bigger matrix.
        let n = 120;
        let mut r = rng(12_000);
        let mut w: Vec<f32> = (0..n * n).map(|_| r.random_range(0..4) as f32).collect();
        let mut warm = Assigner::new(n);
        let mut cold = Assigner::new(n);
        for step in 0..10 {
            for v in w.iter_mut() {
                *v += r.random_range(-1e-5f32..1e-5);
            }
            let tw = warm.solve_warm(&w).unwrap();
            let sw = check_solution(&warm, &w, tw);
            let tc = cold.solve(&w).unwrap();
            let sc = check_solution(&cold, &w, tc);
            assert!(close(sw, sc), "step {step}: warm {sw} cold {sc}");
        }
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            // No regression files: this module must not write outside src/.
            #![proptest_config(ProptestConfig {
                cases: 200,
                failure_persistence: None,
                ..ProptestConfig::default()
            })]
            #[test]
            fn matches_brute(n in 1usize..=6, cells in proptest::collection::vec(-1i32..6, 36)) {
                // -1 encodes a forbidden pair, others are small integer weights.
                let w: Vec<f32> = cells[..n * n]
                    .iter()
                    .map(|&c| if c < 0 { NEG } else { c as f32 })
                    .collect();
                let mut a = Assigner::new(n);
                let got = a.solve(&w);
                match brute_force(n, &w) {
                    None => prop_assert_eq!(got, Err(AssignError::Infeasible)),
                    Some((bt, _)) => {
                        let t = got.unwrap();
                        check_solution(&a, &w, t);
                        prop_assert_eq!(t, bt);
                    }
                }
            }

            /// Enumeration (n <= 4) is brute force's first best permutation, on integer
            /// weights with ties and forbidden pairs and on random floats, and JV's total.
            #[test]
            fn enumeration_matches_brute_force_and_jv(
                n in 1usize..=4,
                cells in proptest::collection::vec(-1i32..4, 16),
                floats in proptest::collection::vec(-1.0f32..1.0, 16),
                use_floats in proptest::bool::ANY,
            ) {
                let w: Vec<f32> = (0..n * n)
                    .map(|i| if use_floats { floats[i] } else if cells[i] < 0 { NEG } else { cells[i] as f32 })
                    .collect();
                let mut e = Assigner::new(n);
                let mut jv = Assigner::new(n);
                let got = e.solve_enumerate(&w);
                let jv_got = jv.solve(&w);
                match brute_force(n, &w) {
                    None => {
                        prop_assert_eq!(got, Err(AssignError::Infeasible));
                        prop_assert_eq!(jv_got, Err(AssignError::Infeasible));
                    }
                    Some((bt, perm)) => {
                        let t = got.unwrap();
                        prop_assert_eq!(t, bt);
                        prop_assert_eq!(e.row_to_col().iter().map(|&c| c as usize).collect::<Vec<_>>(), perm);
                        for (r, &c) in e.row_to_col().iter().enumerate() {
                            prop_assert_eq!(e.col_to_row()[c as usize] as usize, r);
                        }
                        prop_assert!((jv_got.unwrap() as f64 - t as f64).abs() <= 1e-5);
                    }
                }
                // A warm solve after enumeration starts cold and is still optimal.
                if let Some((bt, _)) = brute_force(n, &w) {
                    prop_assert!((e.solve_warm(&w).unwrap() as f64 - bt as f64).abs() <= 1e-5);
                }
            }
        }
    }

    /// The `f32` solver's answer on `w`: a valid perfect assignment on allowed pairs, with
    /// its total summed in `f64`.
    fn f32_total(a: &Assigner<f32>, w: &[f32]) -> f64 {
        let n = a.n();
        let mut seen = vec![false; n];
        let mut sum = 0.0;
        for (r, &c) in a.row_to_col().iter().enumerate() {
            let c = c as usize;
            assert!(c < n && !seen[c], "row {r}: column {c} missing or used twice");
            seen[c] = true;
            assert_eq!(a.col_to_row()[c] as usize, r);
            assert!(w[r * n + c] != NEG, "forbidden pair ({r},{c}) used");
            sum += w[r * n + c] as f64;
        }
        assert_eq!(sum, a.total_f64());
        sum
    }

    /// How far an `f32` solve may fall short of the optimum: the rounding of reduced costs
    /// of size `scale`, summed along paths of at most `n` steps per row.
    fn f32_slack(n: usize, w: &[f32]) -> f64 {
        let scale = w.iter().filter(|x| x.is_finite()).fold(1.0f64, |m, &x| m.max(x.abs() as f64));
        4.0 * f32::EPSILON as f64 * scale * ((n * n) as f64 + 1.0)
    }

    /// f32 reduced costs against brute force, cold and warm, on every kind of matrix the
    /// f64 solver is tested on: optimal up to f32 rounding, and infeasible exactly when
    /// brute force finds no permutation.
    #[test]
    fn f32_solver_is_optimal_up_to_rounding_against_brute_force() {
        let (mut feasible, mut infeasible) = (0, 0);
        for n in 1..=8 {
            for s in 0..120u64 {
                let mut r = rng(9000 * n as u64 + s);
                let w: Vec<f32> = match s % 6 {
                    0 => uniform(&mut r, n),
                    1 => (0..n * n).map(|_| r.random_range(0..3) as f32).collect(),
                    2 => {
                        let f: Vec<f32> = (0..n).map(|_| r.random_range(-5.0f32..5.0)).collect();
                        (0..n * n).map(|k| f[k / n] + f[k % n] * 0.5).collect()
                    }
                    3 => (0..n * n)
                        .map(|_| if r.random_bool(0.2) { r.random_range(-1e4f32..1e4) } else { r.random() })
                        .collect(),
                    // Near-ties: values a few f32 ulps apart.
                    4 => (0..n * n).map(|_| 1.0 + r.random_range(0..4) as f32 * f32::EPSILON).collect(),
                    _ => (0..n * n)
                        .map(|_| if r.random_bool(0.5) { NEG } else { r.random_range(-1.0f32..1.0) })
                        .collect(),
                };
                let mut a = Assigner::new_f32(n);
                let cold = a.solve(&w);
                match brute_force(n, &w) {
                    None => {
                        assert_eq!(cold, Err(AssignError::Infeasible), "n={n} s={s}");
                        infeasible += 1;
                    }
                    Some((_, perm)) => {
                        let best: f64 = (0..n).map(|i| w[i * n + perm[i]] as f64).sum();
                        cold.unwrap_or_else(|e| panic!("n={n} s={s}: {e}"));
                        let got = f32_total(&a, &w);
                        assert!(best - got <= f32_slack(n, &w), "n={n} s={s}: {got} < optimum {best}");
                        a.solve_warm(&w).unwrap();
                        let warm = f32_total(&a, &w);
                        assert!(best - warm <= f32_slack(n, &w), "n={n} s={s}: warm {warm} < optimum {best}");
                        feasible += 1;
                    }
                }
            }
        }
        assert!(feasible > 700 && infeasible > 20, "{feasible} / {infeasible}");
    }

    /// Long warm-started sequences, as a map makes them (each matrix a small move from the
    /// last): the f32 solver stays within rounding of the f64 solver's optimum at every
    /// step, for the class sizes of set 1 up to 16x16, and its potentials do not drift.
    #[test]
    fn f32_warm_sequences_track_the_f64_solver() {
        for (n, steps) in [(5, 3000), (12, 2000), (24, 1500), (36, 800), (56, 300), (196, 40)] {
            let mut r = rng(77 + n as u64);
            let mut w = uniform(&mut r, n);
            let (mut a64, mut a32) = (Assigner::new(n), Assigner::new_f32(n));
            let mut differ = 0;
            for step in 0..steps {
                for x in w.iter_mut() {
                    *x = (*x + r.random_range(-0.05f32..0.05)).clamp(0.0, 4.0);
                }
                a64.solve_warm(&w).unwrap();
                a32.solve_warm(&w).unwrap();
                let (t64, t32) = (a64.total_f64(), f32_total(&a32, &w));
                assert!(t64 - t32 <= f32_slack(n, &w), "n={n} step {step}: f32 {t32} < f64 {t64}");
                differ += (a64.row_to_col() != a32.row_to_col()) as usize;
                let vmax = a32.col_potentials().iter().fold(0.0f32, |m, &v| m.max(v.abs()));
                assert!(vmax < 1e3, "n={n} step {step}: f32 potentials drifted to {vmax}");
            }
            // Continuous random weights have no exact ties: the two agree almost always.
            assert!(differ * 20 <= steps, "n={n}: {differ} of {steps} assignments differ");
        }
    }

    /// Runs one warm sequence through a fused and a separate-kernel solver of precision `R`
    /// and holds them to the same totals, assignments, potentials and counts, bit for bit.
    fn same_bits<R: Real>(n: usize, seq: &[Vec<f32>], ctx: &str) {
        let mut fused = Assigner::<R>::with_precision(n);
        let mut sep = Assigner::<R>::with_precision(n).with_kernels(Kernels::Separate);
        for (step, w) in seq.iter().enumerate() {
            let cold = step % 7 == 3;
            let (a, b) = if cold { (fused.solve(w), sep.solve(w)) } else { (fused.solve_warm(w), sep.solve_warm(w)) };
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "{ctx} step {step}");
            assert_eq!(fused.row_to_col(), sep.row_to_col(), "{ctx} step {step}");
            let bits = |s: &Assigner<R>| s.col_potentials().iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fused), bits(&sep), "{ctx} step {step}");
        }
        assert_eq!(format!("{:?}", fused.stats()), format!("{:?}", sep.stats()), "{ctx}");
    }

    #[test]
    fn fused_kernels_are_the_separate_ones_bit_for_bit() {
        // Drifting continuous weights (F1's case), integer weights full of ties, forbidden
        // pairs, and sizes on and off the lane width, in both precisions.
        let mut cases = 0;
        for n in [1usize, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 36, 40, 56] {
            for kind in 0..4 {
                let mut r = rng(31_000 + 10 * n as u64 + kind);
                let draw = |r: &mut Rng| match kind {
                    0 | 1 => r.random_range(0.0f32..4.0),
                    2 => r.random_range(0..3) as f32,
                    _ => {
                        if r.random_range(0..5) == 0 {
                            NEG
                        } else {
                            r.random_range(0..4) as f32
                        }
                    }
                };
                let mut w: Vec<f32> = (0..n * n).map(|_| draw(&mut r)).collect();
                let mut seq = Vec::new();
                for _ in 0..60 {
                    for x in w.iter_mut() {
                        if *x == NEG {
                            continue;
                        }
                        *x = match kind {
                            0 => (*x + r.random_range(-0.05f32..0.05)).clamp(0.0, 4.0),
                            1 => (*x + r.random_range(-0.5f32..0.5)).clamp(0.0, 4.0),
                            _ if r.random_range(0..8) == 0 => r.random_range(0..3) as f32,
                            _ => *x,
                        };
                    }
                    seq.push(w.clone());
                }
                same_bits::<f64>(n, &seq, &format!("f64 n={n} kind={kind}"));
                same_bits::<f32>(n, &seq, &format!("f32 n={n} kind={kind}"));
                cases += 1;
            }
        }
        assert_eq!(cases, 68);
    }

    #[test]
    fn fused_row_kernel_finds_the_first_minimum() {
        // The kernel alone, against the separate passes, on rows full of ties.
        for n in 0..=41usize {
            for s in 0..40u64 {
                let mut r = rng(41_000 + 100 * n as u64 + s);
                let row: Vec<f32> =
                    (0..n).map(|_| if r.random_range(0..6) == 0 { NEG } else { r.random_range(0..3) as f32 }).collect();
                let v: Vec<f64> = (0..n).map(|_| r.random_range(0..2) as f64).collect();
                let (a, b) = top2_reduced(&row, &v);
                let (fa, fb, fj) = top2_first_reduced(&row, &v);
                assert_eq!((a.to_bits(), b.to_bits()), (fa.to_bits(), fb.to_bits()), "n={n} s={s}");
                if a < f64::INFINITY {
                    assert_eq!(fj, find_reduced(&row, &v, 0, a), "n={n} s={s}");
                }
            }
        }
    }
}
