//! Fixed-point certificates: what a map trial ended on, in a form anyone can re-check.
//!
//! A certificate (JSON, `"format": "concur-certificate-1"`) holds the iterate `x`, the two
//! projections that decide whether `x` is a fixed point, and the board read out of them:
//!
//! | field | meaning |
//! |---|---|
//! | `method`, `beta`, `edge` | the map (`rrr` or `dm`), its step, the edge projection |
//! | `width`, `height`, `colors` | board size; `colors` = K, grey included |
//! | `trial`, `iteration`, `mechanism` | which trial, when, and `map` / `map+ac` / null |
//! | `x` | the iterate, `x[(c * 4 + s) * K + k]`, cell `c` row-major from the top-left, side `s` clockwise from Up |
//! | `pa_fb` | `P_a(f_b(x))`: for RRR `P_P(2 P_E x - x)`; for DM with `f_b = (1 + 1/beta) P_E - (1/beta) I` |
//! | `pb_fa` | `P_b(f_a(x))`: for RRR `P_E(x)`; for DM with `f_a = (1 - 1/beta) P_P + (1/beta) I` |
//! | `gap` | `||pa_fb - pb_fa||` (Euclidean); zero exactly at a fixed point |
//! | `board` | `[piece, rotation]` per cell, the board that `P_P` chose (or the completed board for `map+ac`) |
//! | `score`, `max_score` | matched interior joins of `board` |
//!
//! Divide-and-concur certificates (`"formulation": "dc"`) hold the replica slot values as
//! `x` (slot order of [`crate::dc::Layout`], which the puzzle, the layout fixes), `a` = concur
//! and `b` = divide, the constraint weights `lambda` with adaptive weights, and the board read
//! out of the concur point `P_a(f_b(x))` (per-cell argmax, or the assignment readout when that
//! is not a permutation).
//!
//! [`check`] recomputes both projections from `x` alone (cold assignments), the gap and the
//! decoded board, and verifies the board exactly.

use crate::assign::AssignError;
use crate::batch::{MapKind, Mechanism};
use crate::dc::{self, DcConfig, DcLayout, DivideScratch, Layout, project};
use crate::f1::project::{EdgeProjection, F1};
use crate::puzzle::{Board, Placement, Puzzle};
use crate::verify::{self, Verdict};

/// The format tag of version 1.
pub const FORMAT: &str = "concur-certificate-1";

/// Gap below which `x` counts as a fixed point (absolute, Euclidean).
pub const TOLERANCE: f64 = 1e-3;

/// Which formulation a certificate is of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Formulation {
    /// RRR / the difference map in edge-colour space.
    #[default]
    F1,
    /// Divide and concur in candidate space.
    Dc,
}

/// The certificate's `"hybrid": bool` for a [`DcLayout`] (the file format predates the enum).
mod hybrid_flag {
    use crate::dc::DcLayout;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(layout: &DcLayout, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(layout.is_hybrid())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DcLayout, D::Error> {
        bool::deserialize(d).map(DcLayout::from_hybrid)
    }
}

/// The divide-and-concur part of a certificate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DcPart {
    /// The constraint layout, written as the file's `"hybrid"` flag (true: hybrid).
    #[serde(rename = "hybrid", with = "hybrid_flag")]
    pub layout: DcLayout,
    /// Constraint weights at `x` (adaptive weights), else uniform.
    pub lambda: Option<Vec<f32>>,
    /// Variables the concur projection held at 0 (`--propagate`), ascending; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pruned: Option<Vec<u32>>,
}

/// The state of a divide-and-concur trial that a certificate records.
#[derive(Clone, Copy, Debug)]
pub struct DcState<'a> {
    /// The trial's slot values.
    pub x: &'a [f32],
    /// Constraint weights (used with adaptive weights only).
    pub lambda: Option<&'a [f32]>,
    /// Variables held at 0 by the concur projection (`--propagate`).
    pub pruned: &'a [u32],
}

/// A fixed-point certificate, as its JSON file holds it (the table above).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Certificate {
    /// The format tag, [`FORMAT`].
    pub format: String,
    /// Which formulation the iterate is of (absent in older files: F1).
    #[serde(default)]
    pub formulation: Formulation,
    /// Divide and concur's part (its layout, weights and held variables); absent for F1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dc: Option<DcPart>,
    /// The map: RRR or the difference map.
    pub method: MapKind,
    /// The map's step.
    pub beta: f32,
    /// F1's edge projection (P_E or P_E1).
    pub edge: EdgeProjection,
    /// The weighted metric P_P worked in ([`crate::f1::map::MapConfig::join_weights`]); absent:
    /// uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_weights: Option<[f32; 3]>,
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// Colours K, grey included.
    pub colors: usize,
    /// The trial of the batch the iterate is from.
    pub trial: usize,
    /// The trial's iteration at the iterate.
    pub iteration: u64,
    /// What solved the trial (`map` or `map+ac`); null when it did not solve.
    pub mechanism: Option<Mechanism>,
    /// `||pa_fb - pb_fa||` as the run computed it; [`check`] recomputes it.
    pub gap: f64,
    /// Matched interior joins of `board`.
    pub score: usize,
    /// The puzzle's interior joins, the score of a solution.
    pub max_score: usize,
    /// `[piece, rotation]` per cell, row-major from the top-left.
    pub board: Vec<[u32; 2]>,
    /// The iterate: F1's `x[(c * 4 + s) * K + k]`, or divide and concur's slot values.
    pub x: Vec<f32>,
    /// `P_a(f_b(x))`.
    pub pa_fb: Vec<f32>,
    /// `P_b(f_a(x))`.
    pub pb_fa: Vec<f32>,
}

/// The two projections at `x`, their gap and the board `P_P` chose.
pub struct Evaluation {
    /// `P_a(f_b(x))`.
    pub pa_fb: Vec<f32>,
    /// `P_b(f_a(x))`.
    pub pb_fa: Vec<f32>,
    /// `||pa_fb - pb_fa||`, Euclidean.
    pub gap: f64,
    /// The board decoded from `x` (F1: the one `P_P` chose; divide and concur: the concur point's
    /// readout).
    pub board: Board,
}

/// Recomputes the projections of the map at `x` from scratch.
pub fn evaluate(
    puzzle: &Puzzle,
    f1: &F1,
    kind: MapKind,
    beta: f32,
    edge: EdgeProjection,
    join_weights: Option<[f32; 3]>,
    x: &[f32],
) -> Result<Evaluation, AssignError> {
    let dim = f1.dim();
    // Under a weighted metric P_P reads D y (`F1::weigh_slots`); its picture is the board's.
    let slot_w = join_weights.map(|w| crate::f1::project::join_slot_weights(puzzle, w));
    let weighed = |y: &[f32]| -> Vec<f32> {
        match &slot_w {
            Some(d) => {
                let mut z = vec![0.0; y.len()];
                f1.weigh_slots_into(d, y, &mut z);
                z
            }
            None => y.to_vec(),
        }
    };
    let mut pe = vec![0.0; dim];
    let mut r = vec![0.0; dim];
    let mut pa_fb = vec![0.0; dim];
    let mut pb_fa = vec![0.0; dim];
    let mut scratch = f1.piece_scratch();
    let mut asg = f1.assigners();
    let mut board = vec![0u32; f1.cells()];
    f1.project_edges_with(edge, x, &mut pe);
    match kind {
        MapKind::Rrr => {
            for i in 0..dim {
                r[i] = 2.0 * pe[i] - x[i];
            }
            f1.project_pieces(&weighed(&r), &mut pa_fb, &mut scratch, &mut asg, &mut board, false)?;
            pb_fa.copy_from_slice(&pe);
        }
        MapKind::Dm => {
            let inv = 1.0 / beta;
            for i in 0..dim {
                r[i] = (1.0 + inv) * pe[i] - inv * x[i];
            }
            let mut pp = vec![0.0; dim];
            let mut other = vec![0u32; f1.cells()];
            f1.project_pieces(&weighed(x), &mut pp, &mut scratch, &mut asg, &mut other, false)?;
            for i in 0..dim {
                pp[i] = (1.0 - inv) * pp[i] + inv * x[i];
            }
            f1.project_edges_with(edge, &pp, &mut pb_fa);
            f1.project_pieces(&weighed(&r), &mut pa_fb, &mut scratch, &mut asg, &mut board, false)?;
        }
    }
    let gap = pa_fb.iter().zip(&pb_fa).map(|(a, b)| ((a - b) as f64).powi(2)).sum::<f64>().sqrt();
    let board = Board { width: puzzle.width(), height: puzzle.height(), cells: f1.placements(&board) };
    Ok(Evaluation { pa_fb, pb_fa, gap, board })
}

/// Recomputes the projections of divide and concur at the slot values `x` from scratch:
/// `P_a(f_b(x))` (concur, holding the `pruned` variables at 0) and `P_b(f_a(x))` (divide),
/// and the board read out of the concur point.
pub fn evaluate_dc(
    puzzle: &Puzzle,
    layout: &Layout,
    kind: MapKind,
    beta: f32,
    lambda: Option<&[f32]>,
    pruned: &[u32],
    x: &[f32],
) -> Result<Evaluation, AssignError> {
    let hold = |m: &mut [f32]| pruned.iter().for_each(|&v| m[v as usize] = 0.0);
    let (s, v, nc, n) = (layout.slots(), layout.vars(), layout.choices(), layout.cells());
    let mut div = DivideScratch::new(layout);
    let mut asg = layout.assigners();
    let mut chosen = vec![0u32; nc];
    let mut pb = vec![0.0f32; s];
    project::divide(layout, x, &mut chosen, &mut div, &mut asg, false)?;
    project::expand(&chosen, &mut pb);
    let mut m = vec![0.0f32; v];
    let mut pa_fb = vec![0.0f32; s];
    let mut pb_fa = vec![0.0f32; s];
    match kind {
        MapKind::Rrr => {
            let z: Vec<f32> = pb.iter().zip(x).map(|(&b, &y)| 2.0 * b - y).collect();
            project::concur(layout, &z, lambda, &mut m);
            hold(&mut m);
            pb_fa.copy_from_slice(&pb);
        }
        MapKind::Dm => {
            let inv = 1.0 / beta;
            let z: Vec<f32> = pb.iter().zip(x).map(|(&b, &y)| (1.0 + inv) * b - inv * y).collect();
            project::concur(layout, &z, lambda, &mut m);
            hold(&mut m);
            let mut ca = vec![0.0f32; v];
            project::concur(layout, x, lambda, &mut ca);
            hold(&mut ca);
            let fa: Vec<f32> =
                layout.slot_var().iter().zip(x).map(|(&j, &y)| (1.0 - inv) * ca[j as usize] + inv * y).collect();
            project::divide(layout, &fa, &mut chosen, &mut div, &mut asg, false)?;
            project::expand(&chosen, &mut pb_fa);
        }
    }
    project::spread(layout, &m, &mut pa_fb);
    let mut board = vec![0u32; n];
    layout.argmax_board(&m, &mut board);
    if !layout.is_permutation(&board, &mut vec![false; n]) {
        layout.assign(&m, &mut layout.assign_scratch(), &mut asg, false, &mut board)?;
    }
    let gap = pa_fb.iter().zip(&pb_fa).map(|(a, b)| ((a - b) as f64).powi(2)).sum::<f64>().sqrt();
    let board = Board { width: puzzle.width(), height: puzzle.height(), cells: layout.placements(&board) };
    Ok(Evaluation { pa_fb, pb_fa, gap, board })
}

/// Builds the certificate of a divide-and-concur trial from its slot values (and weights),
/// and for `map+ac` the completed board.
#[allow(clippy::too_many_arguments, reason = "plain record fields")]
pub fn make_dc(
    puzzle: &Puzzle,
    cfg: &DcConfig,
    trial: usize,
    iteration: u64,
    mechanism: Option<Mechanism>,
    state: DcState,
    completed: Option<&Board>,
) -> Result<Certificate, AssignError> {
    let layout = Layout::new(puzzle, cfg.layout);
    let (x, pruned) = (state.x, state.pruned);
    let lambda = state.lambda.filter(|_| cfg.weights == dc::Weights::Adaptive);
    let ev = evaluate_dc(puzzle, &layout, cfg.kind, cfg.beta, lambda, pruned, x)?;
    let f1_shaped = record(puzzle, ev, completed, (trial, iteration, mechanism), x, (cfg.kind, cfg.beta));
    let mut sorted = pruned.to_vec();
    sorted.sort_unstable();
    Ok(Certificate {
        formulation: Formulation::Dc,
        dc: Some(DcPart {
            layout: cfg.layout,
            lambda: lambda.map(|l| l.to_vec()),
            pruned: (!sorted.is_empty()).then_some(sorted),
        }),
        ..f1_shaped
    })
}

/// Builds the certificate of a trial from its iterate (and, for `map+ac`, the completed board).
#[allow(clippy::too_many_arguments, reason = "plain record fields")]
pub fn make(
    puzzle: &Puzzle,
    kind: MapKind,
    beta: f32,
    edge: EdgeProjection,
    join_weights: Option<[f32; 3]>,
    trial: usize,
    iteration: u64,
    mechanism: Option<Mechanism>,
    x: &[f32],
    completed: Option<&Board>,
) -> Result<Certificate, AssignError> {
    let f1 = F1::new(puzzle)?;
    let ev = evaluate(puzzle, &f1, kind, beta, edge, join_weights, x)?;
    Ok(Certificate {
        edge,
        join_weights,
        ..record(puzzle, ev, completed, (trial, iteration, mechanism), x, (kind, beta))
    })
}

/// The fields every certificate has, from an evaluation at `x` (an F1-shaped record with the
/// average edge projection; callers override what differs). The board is the completed one
/// for `map+ac`, else the decoded one.
fn record(
    puzzle: &Puzzle,
    ev: Evaluation,
    completed: Option<&Board>,
    (trial, iteration, mechanism): (usize, u64, Option<Mechanism>),
    x: &[f32],
    (method, beta): (MapKind, f32),
) -> Certificate {
    let board = completed.unwrap_or(&ev.board);
    Certificate {
        format: FORMAT.into(),
        formulation: Formulation::F1,
        dc: None,
        method,
        beta,
        edge: EdgeProjection::Average,
        join_weights: None,
        width: puzzle.width(),
        height: puzzle.height(),
        colors: puzzle.num_colors(),
        trial,
        iteration,
        mechanism,
        gap: ev.gap,
        score: puzzle.score(board),
        max_score: puzzle.max_score(),
        board: board.cells.iter().map(|p| [p.piece as u32, p.rot as u32]).collect(),
        x: x.to_vec(),
        pa_fb: ev.pa_fb,
        pb_fa: ev.pb_fa,
    }
}

/// What re-checking a certificate found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The gap recomputed from `x` alone.
    pub gap: f64,
    /// The gap below which `x` counts as a fixed point ([`TOLERANCE`]).
    pub tolerance: f64,
    /// `gap <= tolerance`.
    pub fixed_point: bool,
    /// The recorded gap agrees with the recomputed one (to 1e-4 relative).
    pub gap_matches_record: bool,
    /// The recorded board is the one decoded from `x`.
    pub board_matches_decoded: bool,
    /// Exact verification of the board that counts: the decoded board, or for `map+ac` the
    /// recorded completed board.
    pub verdict: Verdict,
    /// Why the certificate does not certify a solution, if it does not.
    pub reasons: Vec<String>,
}

impl Report {
    /// A certificate certifies a solution when its board verifies and agrees with `x`.
    pub fn certifies(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// Re-checks a certificate against its puzzle, from `x` alone.
pub fn check(puzzle: &Puzzle, cert: &Certificate) -> crate::error::Result<Report> {
    let bad = |m: String| crate::error::Error::certificate(m);
    if cert.format != FORMAT {
        return Err(bad(format!("unknown certificate format {:?}, expected {FORMAT:?}", cert.format)));
    }
    if (cert.width, cert.height, cert.colors) != (puzzle.width(), puzzle.height(), puzzle.num_colors()) {
        return Err(bad(format!(
            "certificate is for a {}x{} board with {} colours, the puzzle is {}x{} with {}",
            cert.width,
            cert.height,
            cert.colors,
            puzzle.width(),
            puzzle.height(),
            puzzle.num_colors()
        )));
    }
    if cert.x.iter().any(|v| !v.is_finite()) || !(cert.beta > 0.0 && cert.beta.is_finite()) {
        return Err(bad("certificate holds non-finite values".into()));
    }
    let size_error = |len: usize| {
        bad(format!(
            "certificate holds {} values and {} cells, expected {len} and {}",
            cert.x.len(),
            cert.board.len(),
            puzzle.cells()
        ))
    };
    let ev = match (cert.formulation, &cert.dc) {
        (Formulation::F1, _) => {
            let f1 = F1::new(puzzle).map_err(|e| bad(format!("puzzle has no board: {e}")))?;
            if cert.x.len() != f1.dim() || cert.board.len() != puzzle.cells() {
                return Err(size_error(f1.dim()));
            }
            if cert.join_weights.is_some_and(|w| w.iter().any(|v| !(v.is_finite() && *v > 0.0))) {
                return Err(bad("join_weights must be three positive numbers".into()));
            }
            evaluate(puzzle, &f1, cert.method, cert.beta, cert.edge, cert.join_weights, &cert.x)
        }
        (Formulation::Dc, None) => return Err(bad("a dc certificate without its \"dc\" part".into())),
        (Formulation::Dc, Some(part)) => {
            let layout = Layout::new(puzzle, part.layout);
            if cert.x.len() != layout.slots() || cert.board.len() != puzzle.cells() {
                return Err(size_error(layout.slots()));
            }
            let lambda = part.lambda.as_deref();
            if lambda.is_some_and(|l| l.len() != layout.constraints() || l.iter().any(|w| !(w.is_finite() && *w > 0.0)))
            {
                return Err(bad(format!("lambda must hold {} positive weights", layout.constraints())));
            }
            let pruned = part.pruned.as_deref().unwrap_or(&[]);
            if pruned.iter().any(|&v| v as usize >= layout.vars()) {
                return Err(bad(format!("pruned names a variable past the {} of the layout", layout.vars())));
            }
            evaluate_dc(puzzle, &layout, cert.method, cert.beta, lambda, pruned, &cert.x)
        }
    }
    .map_err(|e| bad(format!("projection failed: {e}")))?;
    let mut stored = Vec::with_capacity(cert.board.len());
    for &[p, r] in &cert.board {
        if p as usize >= puzzle.cells() || r > 3 {
            return Err(bad(format!("board entry [{p}, {r}] is out of range")));
        }
        stored.push(Placement { piece: p as u16, rot: r as u8 });
    }
    let stored = Board { width: puzzle.width(), height: puzzle.height(), cells: stored };
    let board_matches_decoded = stored == ev.board;
    let completed = cert.mechanism == Some(Mechanism::MapAc);
    let verdict = verify::check(puzzle, if completed { &stored } else { &ev.board });
    let mut reasons = Vec::new();
    if !verdict.valid {
        reasons.push(format!("the board is not a solution: score {}/{}", verdict.score, verdict.max_score));
    }
    if !board_matches_decoded && !completed {
        reasons.push("the recorded board is not the board decoded from x".into());
    }
    let gap_matches_record = (ev.gap - cert.gap).abs() <= 1e-4 * (1.0 + cert.gap.abs());
    Ok(Report {
        gap: ev.gap,
        tolerance: TOLERANCE,
        fixed_point: ev.gap <= TOLERANCE,
        gap_matches_record,
        board_matches_decoded,
        verdict,
        reasons,
    })
}
