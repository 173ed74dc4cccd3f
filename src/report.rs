//! What a solve reports (ARCHITECTURE.md §3, `solve --json`): the fields every method has,
//! and a typed part per method ([`Outcome`], tagged by `method`), and a text drawing of a
//! board for terminals. The JSON keys are those `solve --json`, the golden runs and the
//! ladder's records have always read.

use crate::batch::{Found, MapResult, Mechanism};
use crate::dc::{DcConfig, Readout, Weights};
use crate::f1::map::{AdaptiveWeights, AssignOn, MapConfig};
use crate::f1::project::EdgeProjection;
use crate::method::MethodName;
use crate::puzzle::{Board, DOWN, LEFT, Puzzle, RIGHT, UP};
use crate::search::alns::{AlnsResult, OperatorStats};
use crate::search::backtrack::Ending;
use crate::search::beam::{BeamOrder, BeamResult};
use crate::search::hill::LocalResult;
use crate::search::scan::{ScanSolve, ScanSolveConfig, ScanTree, TreeChoice};
use crate::verify::{self, Consistency};
use serde::Serialize;
use serde_json::Value;

/// The result of one solve, as `--json` prints it.
#[derive(Clone, Debug, Serialize)]
pub struct SolveReport {
    /// The method and what it did (`method` and the method's own fields).
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Whether the run ends with a solution that passed the exact board check.
    pub solved: bool,
    /// Matched interior joins of the best board the run reached (of `board`; 0 without one).
    pub best_score: usize,
    /// The puzzle's interior joins, `2WH - W - H`: the score of a solution.
    pub max_score: usize,
    /// Seconds the run took, wall clock.
    pub wall_s: f64,
    /// The seed the run was given; the same seed, options and puzzle give the same run (one
    /// thread).
    pub seed: u64,
    /// The verified solution, or the best full board when not solved (if the method has one).
    #[serde(skip)]
    pub board: Option<Board>,
    /// Rate mode (`--keep-going`): every verified solution, in the order found.
    #[serde(rename = "solution_list", skip_serializing_if = "Option::is_none")]
    pub solutions: Option<Vec<Found>>,
    /// What the caller adds when it prints: whether a stop request cut the run short, the
    /// board's viewer link, and a board that could not be written with why.
    #[serde(flatten)]
    pub printed: Printed,
}

/// What the command line adds to a report when it prints it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Printed {
    /// The run was cut short by a stop request (Ctrl-C).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The board in the community viewer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viewer_link: Option<String>,
    /// The board in Brendan Owen's solution format, when it could not be written.
    #[serde(rename = "board", skip_serializing_if = "Option::is_none")]
    pub board_text: Option<String>,
    /// Why the board or a certificate could not be written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_error: Option<String>,
}

/// The report's outcome from the method list ([`crate::method`]'s `methods!`).
macro_rules! outcome {
    ($($(#[doc = $doc:literal])* $v:ident $name:literal $opts:ident $outcome:ident $kind:ident,)*) => {
        /// What each method did, tagged by its name.
        #[derive(Clone, Debug, Serialize)]
        #[serde(tag = "method", rename_all = "lowercase")]
        pub enum Outcome {
            $($(#[doc = $doc])* $v($outcome),)*
        }

        impl Outcome {
            /// The method's name.
            pub fn method(&self) -> MethodName {
                match self {
                    $(Outcome::$v(_) => MethodName::$v,)*
                }
            }
        }
    };
}
crate::method::methods!(outcome);

impl Outcome {
    /// A map's outcome (rrr, dm, dc).
    pub fn map(&self) -> Option<&MapOutcome> {
        match self {
            Outcome::Rrr(m) | Outcome::Dm(m) | Outcome::Dc(m) => Some(m),
            Outcome::Backtrack(_) | Outcome::Scan(_) | Outcome::Hill(_) | Outcome::Alns(_) | Outcome::Beam(_) => None,
        }
    }
}

/// What a map's batch did (rrr, dm, dc).
#[derive(Clone, Debug, Serialize)]
pub struct MapOutcome {
    /// What found the solution: `map`, or `map+ac` with the completion; null when unsolved.
    pub mechanism: Option<Mechanism>,
    /// Solved trials by mechanism.
    pub solved_by_map: usize,
    /// Solved trials whose solution the arc-consistent completion of a near-solution found
    /// (`map+ac`).
    pub solved_by_map_ac: usize,
    /// Completion searches run.
    pub completions: u64,
    /// Quartiles of the solved trials' iterations; null when none solved.
    pub iterations_q1_median_q3: Option<[u64; 3]>,
    /// The solving trial; null when unsolved.
    pub trial: Option<usize>,
    /// The solving trial's iterations, else the most any trial ran.
    pub iterations: u64,
    /// Trial-iterations per second of the batch: `trial_iterations / wall_s`.
    pub iters_per_s: f64,
    /// Iterations run, summed over the trials.
    pub trial_iterations: u64,
    /// Restarts after exact limit cycles, summed over the trials.
    pub restarts: u64,
    /// Restarts (or kicks) after `restart_stall` iterations without a new best, summed over the
    /// trials.
    pub stall_restarts: u64,
    /// Trials that reached a verified solution (with `all_trials` or rate mode, possibly several).
    pub solved_trials: usize,
    /// The formulation's parameters as the batch ran them.
    #[serde(flatten)]
    pub params: MapParams,
    /// Rate mode only.
    #[serde(flatten)]
    pub rate: Option<RateOutcome>,
    /// Where the batch ran: "cpu", or "gpu: " and the adapter.
    pub backend: String,
}

/// A map's parameters as its batch ran them.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum MapParams {
    /// RRR and the difference map in edge-colour space.
    F1(F1Params),
    /// Divide and concur.
    Dc(DcParams),
}

/// F1's parameters (rrr, dm).
#[derive(Clone, Debug, Serialize)]
pub struct F1Params {
    /// The step size, rounded to the digits of its `f32`.
    pub beta: f64,
    /// Trials of the batch.
    pub trials: usize,
    /// The edge projection P_E (or its one-colour relaxation P_E1).
    pub edge: EdgeProjection,
    /// Where the assignments ran (`auto` resolved).
    pub assign: AssignOn,
    /// Weights of the frame-frame, frame-inner and inner-inner joins in P_P's metric
    /// (`[1, 1, 1]`: the uniform metric).
    pub join_weights: [f64; 3],
    /// The precision of the host assignment's reduced costs, when not the `f64` reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduced_costs: Option<crate::assign::Precision>,
    /// The adaptive join weights, when on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapt: Option<AdaptParams>,
    /// A batch split over several devices: each one's share and rate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::batch::DeviceShare>,
}

/// The adaptive metric as run.
#[derive(Clone, Debug, Serialize)]
pub struct AdaptParams {
    /// What an unmatched join's weight gains per iteration, as a fraction of its class weight.
    pub rate: f64,
    /// The fraction of its excess over the class weight that a join's weight loses per
    /// iteration.
    pub decay: f64,
    /// The cap on a join's weight, as a multiple of its class weight.
    pub max: f64,
}

/// Divide and concur's parameters.
#[derive(Clone, Debug, Serialize)]
pub struct DcParams {
    /// The step size, rounded to the digits of its `f32`.
    pub beta: f64,
    /// Trials of the batch.
    pub trials: usize,
    /// The map between concur and divide: RRR or the difference map.
    pub map: crate::batch::MapKind,
    /// The constraint weights in the concur mean: uniform or adaptive.
    pub weights: Weights,
    /// The hybrid layout (one global assignment constraint and the joins), else the plain one.
    pub hybrid: bool,
    /// How the board is read out of the concur values.
    pub readout: Readout,
    /// Bytes of slot values per trial ([`crate::dc::replica_bytes`]).
    pub replica_bytes: usize,
    /// The arc-consistency threshold TAU of the folded-in propagation, when on.
    pub propagate: Option<f64>,
}

/// What a rate-mode batch found.
#[derive(Clone, Debug, Serialize)]
pub struct RateOutcome {
    /// Always true: the batch ran in rate mode.
    pub keep_going: bool,
    /// Verified solutions found, repeats included.
    pub solutions: usize,
    /// Of them, the distinct ones up to turning the board.
    pub distinct_solutions: usize,
    /// Claims the exact verifier rejected (none are expected; omitted when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub rejected_claims: u64,
    /// The first error of the solution sink (the run went on), when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solutions_error: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the arc-consistent backtracker did.
#[derive(Clone, Debug, Serialize)]
pub struct BacktrackOutcome {
    /// The propagation after each placement.
    pub ac: Consistency,
    /// Placements tried.
    pub nodes: u64,
    /// Placements tried per second.
    pub nodes_per_s: f64,
    /// Luby restarts after the first descent.
    pub restarts: u64,
    /// Most cells placed at once.
    pub best_depth: usize,
    /// Cells of the board (the depth of a solution).
    pub cells: usize,
    /// How the search ended.
    pub ending: Ending,
    /// Unsolved: what the best board is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_board: Option<&'static str>,
}

/// What the row scan did.
#[derive(Clone, Debug, Serialize)]
pub struct ScanOutcome {
    /// Pieces placed, over every thread and restart.
    pub nodes: u64,
    /// Pieces placed per second of search (setup not counted).
    pub nodes_per_s: f64,
    /// Restarts begun after the first, over every thread.
    pub restarts: u64,
    /// Nodes per Luby restart unit.
    pub restart_base: u64,
    /// Most cells placed at once.
    pub best_depth: usize,
    /// With `--breaks`: the mismatched joins of the deepest partial board.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_breaks: Option<usize>,
    /// Cells of the board (the depth of a solution).
    pub cells: usize,
    /// How the search ended.
    pub ending: Ending,
    /// Independent searches run at once.
    pub threads: usize,
    /// How each restart picked its tree.
    pub tree_choice: TreeChoice,
    /// The candidate trees sized by Knuth's estimator.
    pub trees: usize,
    /// The tree that found the solution, else the one every restart walked (null when drawn at
    /// random).
    pub tree: Option<ScanTree>,
    /// The thread (0-based) that found the solution.
    pub solved_thread: Option<usize>,
    /// The restart (0-based) of that thread that found it.
    pub solved_restart: Option<u64>,
    /// Seconds spent on the estimates and tables before the search began (part of `wall_s`).
    pub setup_s: f64,
    /// Unsolved: what the best board is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_board: Option<&'static str>,
}

/// What a local search did (hill; ALNS adds [`AlnsOutcome`]'s).
#[derive(Clone, Debug, Serialize)]
pub struct LocalOutcome {
    /// Moves proposed (hill), or pieces placed by repairs (ALNS).
    pub moves: u64,
    /// `moves` per second.
    pub moves_per_s: f64,
    /// Fresh boards started after the first.
    pub restarts: u64,
}

/// What ALNS did.
#[derive(Clone, Debug, Serialize)]
pub struct AlnsOutcome {
    /// The local search's counters (`moves` are pieces placed by repairs).
    #[serde(flatten)]
    pub local: LocalOutcome,
    /// Destroy-and-repair iterations.
    pub iterations: u64,
    /// Iterations per second.
    pub iterations_per_s: f64,
    /// Times the temperature was raised back after a run without a new best.
    pub reheats: u64,
    /// Iterations whose holes were refilled by the exact assignment.
    pub exact_repairs: u64,
    /// Each destroy operator's final weight and counts.
    pub operators: Vec<OperatorStats>,
}

/// What the beam builder and its polish did.
#[derive(Clone, Debug, Serialize)]
pub struct BeamOutcome {
    /// The width of the best pipeline's beam (calibrated to the time limit unless given).
    pub width: usize,
    /// The scan order.
    pub order: BeamOrder,
    /// The score of the beam's board, before the polish.
    pub beam_score: usize,
    /// Seconds the beam took (its calibration included).
    pub beam_s: f64,
    /// Whether the beam reached the last cell (false: a stop cut it short and the greedy
    /// repair completed its best partial board).
    pub complete: bool,
    /// Partial boards expanded, over every beam of the run.
    pub nodes: u64,
    /// Partial boards expanded a second.
    pub nodes_per_s: f64,
    /// The polish's destroy-and-repair iterations.
    pub polish_iterations: u64,
    /// Seconds the polish took.
    pub polish_s: f64,
    /// Pipelines run (`rounds` a thread); the best board is reported.
    pub pipelines: usize,
}

impl SolveReport {
    fn new(puzzle: &Puzzle, outcome: Outcome, solved: bool, best_score: usize, wall_s: f64, seed: u64) -> Self {
        SolveReport {
            outcome,
            solved,
            best_score,
            max_score: puzzle.max_score(),
            wall_s,
            seed,
            board: None,
            solutions: None,
            printed: Printed::default(),
        }
    }

    /// The method that ran.
    pub fn method(&self) -> MethodName {
        self.outcome.method()
    }

    /// The report of an arc-consistent backtracker run.
    pub(crate) fn from_backtrack(
        puzzle: &Puzzle,
        r: crate::search::backtrack::BacktrackSolve,
        consistency: Consistency,
        seed: u64,
    ) -> Self {
        let solved = r.board.as_ref().is_some_and(|b| verify::check(puzzle, b).valid);
        // Unsolved: the deepest partial board, completed greedily, is the best board.
        let best_board = r.board.is_none().then_some(if r.best_board.is_some() {
            "the deepest partial board, completed greedily"
        } else {
            "none"
        });
        let board = r.board.or(r.best_board);
        let best_score = board.as_ref().map_or(0, |b| puzzle.score(b));
        let stats = &r.stats;
        let outcome = Outcome::Backtrack(BacktrackOutcome {
            ac: consistency,
            nodes: stats.nodes,
            nodes_per_s: stats.nodes_per_s(),
            restarts: stats.restarts,
            best_depth: stats.best_depth,
            cells: puzzle.cells(),
            ending: r.ending,
            best_board,
        });
        SolveReport { board, ..Self::new(puzzle, outcome, solved, best_score, stats.wall_s, seed) }
    }

    /// The report of a row-scan search ([`crate::search::scan::solve`]).
    pub(crate) fn from_scan(puzzle: &Puzzle, r: &ScanSolve, cfg: &ScanSolveConfig) -> Self {
        let solved = r.board.as_ref().is_some_and(|b| verify::check(puzzle, b).valid);
        // Unsolved: the deepest partial board, completed greedily, is the best board.
        let board = r.board.clone().or_else(|| r.best_board.clone());
        let best_score = board.as_ref().map_or(0, |b| puzzle.score(b));
        let best_board = r.board.is_none().then_some(if board.is_some() {
            "the deepest partial board, completed greedily"
        } else {
            "none"
        });
        let outcome = Outcome::Scan(ScanOutcome {
            nodes: r.nodes,
            nodes_per_s: r.nodes_per_s(),
            restarts: r.restarts,
            restart_base: cfg.restart_base,
            best_depth: r.best_depth,
            best_breaks: r.best_breaks,
            cells: puzzle.cells(),
            ending: r.ending,
            threads: r.threads,
            tree_choice: cfg.choice,
            trees: r.trees.len(),
            tree: r.solved_tree.or(r.chosen_tree).map(|t| r.trees[t]),
            solved_thread: r.solved_thread,
            solved_restart: r.solved_restart,
            setup_s: r.setup_s,
            best_board,
        });
        SolveReport { board, ..Self::new(puzzle, outcome, solved, best_score, r.wall_s, cfg.seed) }
    }

    /// The report of a batched map run of either formulation (`method` rrr, dm or dc), with
    /// the parameters it ran and where.
    pub(crate) fn from_map(
        puzzle: &Puzzle,
        method: MethodName,
        r: &MapResult,
        seed: u64,
        params: MapParams,
        backend: String,
    ) -> Self {
        let (solved, board, trial, iterations) = match &r.solution {
            Some((t, it, b)) => (verify::check(puzzle, b).valid, b.clone(), Some(*t), *it),
            None => (false, r.best.clone(), None, r.trials.iter().map(|t| t.iterations).max().unwrap_or(0)),
        };
        let best_score = puzzle.score(&board);
        let mut solved_its: Vec<u64> = r.trials.iter().filter_map(|t| t.solved_at).collect();
        solved_its.sort_unstable();
        let q = |f: f64| solved_its[((solved_its.len() as f64 - 1.0) * f).round() as usize];
        let by =
            |m| r.trials.iter().filter(|t| t.solved_at.is_some() && t.solved_by.unwrap_or(Mechanism::Map) == m).count();
        let outcome = MapOutcome {
            mechanism: r.solution.as_ref().map(|(t, _, _)| r.trials[*t].solved_by.unwrap_or(Mechanism::Map)),
            solved_by_map: by(Mechanism::Map),
            solved_by_map_ac: by(Mechanism::MapAc),
            completions: r.trials.iter().map(|t| t.completions).sum(),
            iterations_q1_median_q3: (!solved_its.is_empty()).then(|| [q(0.25), q(0.5), q(0.75)]),
            trial,
            iterations,
            iters_per_s: if r.wall_s > 0.0 { r.trial_iterations as f64 / r.wall_s } else { 0.0 },
            trial_iterations: r.trial_iterations,
            restarts: r.trials.iter().map(|t| t.restarts).sum(),
            stall_restarts: r.trials.iter().map(|t| t.stall_restarts).sum(),
            solved_trials: r.trials.iter().filter(|t| t.solved_at.is_some()).count(),
            params,
            rate: r.rate.as_ref().map(|rate| RateOutcome {
                keep_going: true,
                solutions: rate.solutions.len(),
                distinct_solutions: rate.distinct,
                rejected_claims: rate.rejected,
                solutions_error: rate.sink_error.clone(),
            }),
            backend,
        };
        let outcome = match method {
            MethodName::Dm => Outcome::Dm(outcome),
            MethodName::Dc => Outcome::Dc(outcome),
            _ => Outcome::Rrr(outcome),
        };
        SolveReport {
            board: Some(board),
            solutions: r.rate.as_ref().map(|rate| rate.solutions.clone()),
            ..Self::new(puzzle, outcome, solved, best_score, r.wall_s, seed)
        }
    }

    /// F1's parameters as its batch `cfg` ran (over `devices`, when split).
    pub(crate) fn f1_params(cfg: &MapConfig, r: &MapResult) -> MapParams {
        MapParams::F1(F1Params {
            beta: short(cfg.beta),
            trials: cfg.run.trials,
            edge: cfg.edge,
            assign: cfg.assign,
            join_weights: cfg.join_weights.unwrap_or([1.0; 3]).map(short),
            reduced_costs: (cfg.reduced_costs != crate::assign::Precision::F64).then_some(cfg.reduced_costs),
            adapt: cfg.adapt.map(|a: AdaptiveWeights| AdaptParams {
                rate: short(a.rate),
                decay: short(a.decay),
                max: short(a.max),
            }),
            devices: r.devices.clone(),
        })
    }

    /// Divide and concur's parameters as its batch `cfg` ran.
    pub(crate) fn dc_params(puzzle: &Puzzle, cfg: &DcConfig) -> MapParams {
        MapParams::Dc(DcParams {
            beta: short(cfg.beta),
            trials: cfg.run.trials,
            map: cfg.kind,
            weights: cfg.weights,
            hybrid: cfg.layout.is_hybrid(),
            readout: cfg.readout,
            replica_bytes: crate::dc::replica_bytes(puzzle, cfg.layout),
            propagate: cfg.propagate.map(short),
        })
    }

    /// The report of the hill-climber.
    pub(crate) fn from_hill(puzzle: &Puzzle, r: &LocalResult) -> Self {
        let solved = r.solved && verify::check(puzzle, &r.board).valid;
        let outcome = Outcome::Hill(LocalOutcome { moves: r.moves, moves_per_s: r.moves_per_s, restarts: r.restarts });
        SolveReport {
            board: Some(r.board.clone()),
            ..Self::new(puzzle, outcome, solved, r.best_score, r.wall_s, r.seed)
        }
    }

    /// The report of ALNS.
    pub(crate) fn from_alns(puzzle: &Puzzle, r: &AlnsResult) -> Self {
        let l = &r.local;
        let solved = l.solved && verify::check(puzzle, &l.board).valid;
        let outcome = Outcome::Alns(AlnsOutcome {
            local: LocalOutcome { moves: l.moves, moves_per_s: l.moves_per_s, restarts: l.restarts },
            iterations: r.iterations,
            iterations_per_s: r.iterations_per_s,
            reheats: r.reheats,
            exact_repairs: r.exact_repairs,
            operators: r.operators.clone(),
        });
        SolveReport {
            board: Some(l.board.clone()),
            ..Self::new(puzzle, outcome, solved, l.best_score, l.wall_s, l.seed)
        }
    }

    /// The report of the beam builder and its polish.
    pub(crate) fn from_beam(puzzle: &Puzzle, r: &BeamResult, order: BeamOrder) -> Self {
        let solved = r.solved && verify::check(puzzle, &r.board).valid;
        let outcome = Outcome::Beam(BeamOutcome {
            width: r.width,
            order,
            beam_score: r.beam_score,
            beam_s: r.beam_s,
            complete: r.complete,
            nodes: r.nodes,
            nodes_per_s: if r.beam_s > 0.0 { r.nodes as f64 / r.beam_s } else { 0.0 },
            polish_iterations: r.polish_iterations,
            polish_s: r.polish_s,
            pipelines: r.pipelines,
        });
        SolveReport {
            board: Some(r.board.clone()),
            ..Self::new(puzzle, outcome, solved, r.best_score, r.wall_s, r.seed)
        }
    }

    /// One human-readable line: the method, the verdict, then the method's fields in
    /// alphabetical order; then one line per solution of a rate-mode run.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{}: {} score {}/{} in {:.3} s",
            self.method(),
            if self.solved { "SOLVED" } else { "not solved," },
            self.best_score,
            self.max_score,
            self.wall_s
        );
        let mut details = match serde_json::to_value(&self.outcome) {
            Ok(Value::Object(o)) => o,
            _ => serde_json::Map::new(),
        };
        details.remove("method");
        if self.printed.interrupted {
            details.insert("interrupted".into(), Value::Bool(true));
        }
        for (k, v) in &details {
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
