//! What a solve reports: the shared result record of every method, and a text drawing of a
//! board for terminals.

use crate::batch::MapResult;
use crate::f1::map::MapConfig;
use crate::puzzle::{Board, DOWN, LEFT, Puzzle, RIGHT, UP};
use crate::search::backtrack::{BacktrackStats, Ending};
use crate::verify::{self, Consistency};
use serde_json::{Map, Value, json};

/// Solving methods (ARCHITECTURE.md §7); each lands with its issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// RRR (reflect-reflect-relax) between "edges match" and "pieces used once".
    Rrr,
    /// The general-beta difference map between the same two sets.
    Dm,
    /// Divide and concur (Gravel & Elser): replicas per constraint, averaged by concur.
    Dc,
    /// Arc-consistent backtracking with restarts.
    Backtrack,
    /// The row-scan tree search (lookup tables, join budgets), randomised with restarts.
    Scan,
    /// Hill-climbing over full boards with restarts (a control).
    Hill,
    /// Adaptive large-neighbourhood search (a control).
    Alns,
}

impl Method {
    /// The name the command line, the JSON and a ladder's records use.
    pub fn name(self) -> &'static str {
        match self {
            Method::Rrr => "rrr",
            Method::Dm => "dm",
            Method::Dc => "dc",
            Method::Backtrack => "backtrack",
            Method::Scan => "scan",
            Method::Hill => "hill",
            Method::Alns => "alns",
        }
    }
}

/// The result of one solve, as printed by `--json`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SolveReport {
    pub method: Method,
    pub solved: bool,
    pub best_score: usize,
    pub max_score: usize,
    pub wall_s: f64,
    pub seed: u64,
    /// The verified solution, or the best full board when not solved (if the method has one).
    #[serde(skip)]
    pub board: Option<Board>,
    /// Method-specific counters.
    #[serde(flatten)]
    pub details: Map<String, Value>,
    /// Rate mode (`--keep-going`): every verified solution, in the order found.
    #[serde(rename = "solution_list", skip_serializing_if = "Option::is_none")]
    pub solutions: Option<Vec<crate::batch::Found>>,
}

impl SolveReport {
    pub fn from_backtrack(
        puzzle: &Puzzle,
        board: Option<Board>,
        ending: Ending,
        stats: &BacktrackStats,
        consistency: Consistency,
        seed: u64,
    ) -> Self {
        let solved = board.as_ref().is_some_and(|b| verify::check(puzzle, b).valid);
        let best_score = board.as_ref().map_or(0, |b| puzzle.score(b));
        let details = json!({
            "ac": consistency,
            "nodes": stats.nodes,
            "nodes_per_s": stats.nodes_per_s(),
            "restarts": stats.restarts,
            "best_depth": stats.best_depth,
            "cells": puzzle.cells(),
            "ending": ending,
        });
        SolveReport {
            method: crate::report::Method::Backtrack,
            solved,
            best_score,
            max_score: puzzle.max_score(),
            wall_s: stats.wall_s,
            seed,
            board,
            details: details.as_object().expect("object").clone(),
            solutions: None,
        }
    }

    /// The report of a row-scan search ([`crate::search::scan::solve`]).
    pub fn from_scan(
        puzzle: &Puzzle,
        r: &crate::search::scan::ScanSolve,
        cfg: &crate::search::scan::ScanSolveConfig,
    ) -> Self {
        let solved = r.board.as_ref().is_some_and(|b| verify::check(puzzle, b).valid);
        // Unsolved: the deepest partial board, completed greedily, is the best board.
        let board = r.board.clone().or_else(|| r.best_board.clone());
        let best_score = board.as_ref().map_or(0, |b| puzzle.score(b));
        let tree = r.solved_tree.or(r.chosen_tree).map(|t| r.trees[t]);
        let details = json!({
            "nodes": r.nodes,
            "nodes_per_s": r.nodes_per_s(),
            "restarts": r.restarts,
            "restart_base": cfg.restart_base,
            "best_depth": r.best_depth,
            "cells": puzzle.cells(),
            "ending": r.ending,
            "threads": r.threads,
            "tree_choice": cfg.choice,
            "trees": r.trees.len(),
            "tree": tree,
            "solved_thread": r.solved_thread,
            "solved_restart": r.solved_restart,
            "setup_s": r.setup_s,
        });
        let mut details = details.as_object().expect("object").clone();
        if r.board.is_none() {
            let what = if board.is_some() { "the deepest partial board, completed greedily" } else { "none" };
            details.insert("best_board".into(), json!(what));
        }
        SolveReport {
            method: Method::Scan,
            solved,
            best_score,
            max_score: puzzle.max_score(),
            wall_s: r.wall_s,
            seed: cfg.seed,
            board,
            details,
            solutions: None,
        }
    }

    /// The report of a batched map run (`method` is `rrr` or `dm`).
    /// The report of a batched map run of either formulation; `params` (a JSON object: beta,
    /// trials and the formulation's options) is merged into the details.
    pub fn from_map(puzzle: &Puzzle, method: Method, r: &MapResult, seed: u64, params: Value) -> Self {
        let (solved, board, trial, iterations) = match &r.solution {
            Some((t, it, b)) => (verify::check(puzzle, b).valid, b.clone(), Some(*t), *it),
            None => (false, r.best.clone(), None, r.trials.iter().map(|t| t.iterations).max().unwrap_or(0)),
        };
        let best_score = puzzle.score(&board);
        let mut solved_its: Vec<u64> = r.trials.iter().filter_map(|t| t.solved_at).collect();
        solved_its.sort_unstable();
        let q = |f: f64| solved_its.get(((solved_its.len() as f64 - 1.0) * f).round() as usize).copied();
        let mechanism =
            r.solution.as_ref().map(|(t, _, _)| r.trials[*t].solved_by.unwrap_or(crate::batch::Mechanism::Map));
        let by = |m| {
            r.trials
                .iter()
                .filter(|t| t.solved_at.is_some() && t.solved_by.unwrap_or(crate::batch::Mechanism::Map) == m)
                .count()
        };
        let details = json!({
            "mechanism": mechanism,
            "solved_by_map": by(crate::batch::Mechanism::Map),
            "solved_by_map_ac": by(crate::batch::Mechanism::MapAc),
            "completions": r.trials.iter().map(|t| t.completions).sum::<u64>(),
            "iterations_q1_median_q3": if solved_its.is_empty() { Value::Null } else { json!([q(0.25), q(0.5), q(0.75)]) },
            "trial": trial,
            "iterations": iterations,
            "iters_per_s": if r.wall_s > 0.0 { r.trial_iterations as f64 / r.wall_s } else { 0.0 },
            "trial_iterations": r.trial_iterations,
            "restarts": r.trials.iter().map(|t| t.restarts).sum::<u64>(),
            "stall_restarts": r.trials.iter().map(|t| t.stall_restarts).sum::<u64>(),
            "solved_trials": r.trials.iter().filter(|t| t.solved_at.is_some()).count(),
        });
        let mut details = details.as_object().expect("object").clone();
        if let Value::Object(extra) = params {
            details.extend(extra);
        }
        if let Some(rate) = &r.rate {
            details.insert("keep_going".into(), json!(true));
            details.insert("solutions".into(), json!(rate.solutions.len()));
            details.insert("distinct_solutions".into(), json!(rate.distinct));
            if rate.rejected > 0 {
                details.insert("rejected_claims".into(), json!(rate.rejected));
            }
            if let Some(e) = &rate.sink_error {
                details.insert("solutions_error".into(), json!(e));
            }
        }
        SolveReport {
            method,
            solved,
            best_score,
            max_score: puzzle.max_score(),
            wall_s: r.wall_s,
            seed,
            board: Some(board),
            details,
            solutions: r.rate.as_ref().map(|rate| rate.solutions.clone()),
        }
    }

    /// The report of an F1 run (`rrr` or `dm`).
    pub fn from_f1(puzzle: &Puzzle, method: Method, r: &MapResult, cfg: &MapConfig) -> Self {
        let mut params = json!({ "beta": short(cfg.beta), "trials": cfg.trials, "edge": cfg.edge, "assign": cfg.assign,
            "join_weights": cfg.join_weights.unwrap_or([1.0; 3]).map(short) });
        if cfg.reduced_costs != crate::assign::Precision::F64 {
            params["reduced_costs"] = json!(cfg.reduced_costs);
        }
        if let Some(a) = cfg.adapt {
            params["adapt"] = json!({ "rate": short(a.rate), "decay": short(a.decay), "max": short(a.max) });
        }
        if !r.devices.is_empty() {
            // A batch split over several devices: each one's share and rate.
            params["devices"] = json!(r.devices);
        }
        Self::from_map(puzzle, method, r, cfg.seed, params)
    }

    /// The report of a local search (`hill` or `alns`): its serialised result becomes the
    /// details.
    pub fn from_local(
        puzzle: &Puzzle,
        method: Method,
        local: &crate::search::hill::LocalResult,
        details: Value,
    ) -> Self {
        let solved = local.solved && verify::check(puzzle, &local.board).valid;
        let mut details = match details {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        for k in ["solved", "best_score", "max_score", "wall_s", "seed"] {
            details.remove(k);
        }
        SolveReport {
            method,
            solved,
            best_score: local.best_score,
            max_score: puzzle.max_score(),
            wall_s: local.wall_s,
            seed: local.seed,
            board: Some(local.board.clone()),
            details,
            solutions: None,
        }
    }

    /// One human-readable line.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{}: {} score {}/{} in {:.3} s",
            serde_json::to_value(self.method).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            if self.solved { "SOLVED" } else { "not solved," },
            self.best_score,
            self.max_score,
            self.wall_s
        );
        for (k, v) in &self.details {
            let v = match v {
                Value::Number(x) if x.is_f64() => {
                    let f = x.as_f64().unwrap_or(0.0);
                    if f.abs() >= 100.0 { format!("{f:.0}") } else { format!("{f:.3}") }
                }
                Value::String(x) => x.clone(),
                other => other.to_string(),
            };
            s.push_str(&format!(", {k} {v}"));
        }
        for f in self.solutions.iter().flatten() {
            s.push_str(&format!(
                "\nsolution {}: trial {}, segment {} iterations (trial at {}), {}, class {}{}, {:.3} s, viewer: {}",
                f.index,
                f.trial,
                f.segment_iterations,
                f.trial_iteration,
                f.mechanism.as_str(),
                f.class,
                if f.new_class { " (new)" } else { "" },
                f.wall_s,
                f.viewer_link.as_deref().unwrap_or("(too many colours for the viewer)"),
            ));
        }
        s
    }
}

/// An f32 parameter as the f64 of its shortest decimal form (0.7, not 0.699999988).
pub fn short(x: f32) -> f64 {
    format!("{x}").parse().unwrap_or(x as f64)
}

/// One character per colour: 0 is `.` (grey), then 1-9, a-z, A-Z.
fn glyph(c: u8) -> char {
    const G: &[u8] = b".123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?";
    G.get(c as usize).map_or('?', |&b| b as char)
}

/// Draws a board as text: each cell shows its four edge colours; a mismatched join is drawn
/// as `x` between the two cells.
pub fn draw_board(puzzle: &Puzzle, board: &Board) -> String {
    let (w, h) = (puzzle.width(), puzzle.height());
    let col = |c: usize, s: usize| puzzle.color(board.cells[c], s);
    let mut out = String::new();
    for row in 0..h {
        let mut top = String::new();
        let mut mid = String::new();
        let mut bot = String::new();
        for x in 0..w {
            let c = row * w + x;
            top.push_str(&format!(" {} ", glyph(col(c, UP))));
            mid.push_str(&format!("{}#{}", glyph(col(c, LEFT)), glyph(col(c, RIGHT))));
            bot.push_str(&format!(" {} ", glyph(col(c, DOWN))));
            if x + 1 < w {
                let bad = col(c, RIGHT) != col(c + 1, LEFT);
                top.push(' ');
                mid.push(if bad { 'x' } else { ' ' });
                bot.push(' ');
            }
        }
        out.push_str(&top);
        out.push('\n');
        out.push_str(&mid);
        out.push('\n');
        out.push_str(&bot);
        out.push('\n');
        if row + 1 < h {
            let sep: Vec<String> = (0..w)
                .map(|x| {
                    let c = row * w + x;
                    if col(c, DOWN) != col(c + w, UP) { " x " } else { "   " }.to_string()
                })
                .collect();
            out.push_str(&sep.join(" "));
            out.push('\n');
        }
    }
    out
}
