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
//! [`check`] recomputes both projections from `x` alone (cold assignments), the gap and the
//! decoded board, and verifies the board exactly.

use crate::assign::AssignError;
use crate::map::{MapKind, Mechanism};
use crate::project::{EdgeProjection, F1};
use crate::puzzle::{Board, Placement, Puzzle};
use crate::verify::{self, Verdict};

/// The format tag of version 1.
pub const FORMAT: &str = "concur-certificate-1";

/// Gap below which `x` counts as a fixed point (absolute, Euclidean).
pub const TOLERANCE: f64 = 1e-3;

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Certificate {
    pub format: String,
    pub method: MapKind,
    pub beta: f32,
    pub edge: EdgeProjection,
    pub width: usize,
    pub height: usize,
    pub colors: usize,
    pub trial: usize,
    pub iteration: u64,
    pub mechanism: Option<Mechanism>,
    pub gap: f64,
    pub score: usize,
    pub max_score: usize,
    pub board: Vec<[u32; 2]>,
    pub x: Vec<f32>,
    pub pa_fb: Vec<f32>,
    pub pb_fa: Vec<f32>,
}

/// The two projections at `x`, their gap and the board `P_P` chose.
pub struct Evaluation {
    pub pa_fb: Vec<f32>,
    pub pb_fa: Vec<f32>,
    pub gap: f64,
    pub board: Board,
}

/// Recomputes the projections of the map at `x` from scratch.
pub fn evaluate(
    puzzle: &Puzzle,
    f1: &F1,
    kind: MapKind,
    beta: f32,
    edge: EdgeProjection,
    x: &[f32],
) -> Result<Evaluation, AssignError> {
    let dim = f1.dim();
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
            f1.project_pieces(&r, &mut pa_fb, &mut scratch, &mut asg, &mut board, false)?;
            pb_fa.copy_from_slice(&pe);
        }
        MapKind::Dm => {
            let inv = 1.0 / beta;
            for i in 0..dim {
                r[i] = (1.0 + inv) * pe[i] - inv * x[i];
            }
            let mut pp = vec![0.0; dim];
            let mut other = vec![0u32; f1.cells()];
            f1.project_pieces(x, &mut pp, &mut scratch, &mut asg, &mut other, false)?;
            for i in 0..dim {
                pp[i] = (1.0 - inv) * pp[i] + inv * x[i];
            }
            f1.project_edges_with(edge, &pp, &mut pb_fa);
            f1.project_pieces(&r, &mut pa_fb, &mut scratch, &mut asg, &mut board, false)?;
        }
    }
    let gap = pa_fb.iter().zip(&pb_fa).map(|(a, b)| ((a - b) as f64).powi(2)).sum::<f64>().sqrt();
    let board = Board { width: puzzle.width(), height: puzzle.height(), cells: f1.placements(&board) };
    Ok(Evaluation { pa_fb, pb_fa, gap, board })
}

/// Builds the certificate of a trial from its iterate (and, for `map+ac`, the completed board).
#[allow(clippy::too_many_arguments, reason = "plain record fields")]
pub fn make(
    puzzle: &Puzzle,
    kind: MapKind,
    beta: f32,
    edge: EdgeProjection,
    trial: usize,
    iteration: u64,
    mechanism: Option<Mechanism>,
    x: &[f32],
    completed: Option<&Board>,
) -> Result<Certificate, AssignError> {
    let f1 = F1::new(puzzle)?;
    let ev = evaluate(puzzle, &f1, kind, beta, edge, x)?;
    let board = completed.unwrap_or(&ev.board);
    Ok(Certificate {
        format: FORMAT.into(),
        method: kind,
        beta,
        edge,
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
    })
}

/// What re-checking a certificate found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The gap recomputed from `x` alone.
    pub gap: f64,
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
pub fn check(puzzle: &Puzzle, cert: &Certificate) -> crate::Result<Report> {
    let bad = |m: String| crate::Error::Invalid(m);
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
    let f1 = F1::new(puzzle).map_err(|e| bad(format!("puzzle has no board: {e}")))?;
    if cert.x.len() != f1.dim() || cert.board.len() != puzzle.cells() {
        return Err(bad(format!(
            "certificate holds {} values and {} cells, expected {} and {}",
            cert.x.len(),
            cert.board.len(),
            f1.dim(),
            puzzle.cells()
        )));
    }
    if cert.x.iter().any(|v| !v.is_finite()) || !(cert.beta > 0.0 && cert.beta.is_finite()) {
        return Err(bad("certificate holds non-finite values".into()));
    }
    let ev = evaluate(puzzle, &f1, cert.method, cert.beta, cert.edge, &cert.x)
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
