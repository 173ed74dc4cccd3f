//! `concur solve`'s flags, grouped under headings, and the one way they become a run: the
//! flags given on the command line (clap's value source tells them from defaults; none of
//! these flags has a clap default) are read as the same keys a ladder entry has, by
//! [`SolveSpec::from_given`], so that a flag the method or the backend does not use is
//! refused with one line that names it. Each flag's help ends with its default and the methods
//! that use it, read from the library ([`annotate`]), so that neither is written twice.

use crate::backend::BackendChoice;
use crate::batch::MapKind;
use crate::dc::{DcLayout, Readout, Weights};
use crate::error::SpecError;
use crate::f1::JoinWeights;
use crate::f1::map::{AdaptiveWeights, AssignOn};
use crate::f1::project::EdgeProjection;
use crate::method::MethodName;
use crate::search::alns::Destroy;
use crate::search::backtrack::CellOrder;
use crate::search::scan::{ScanWalker, TreeChoice};
use crate::solve::{RUN_KEYS, SolveSpec, run_key_methods};
use crate::verify::Consistency;
use clap::Args;
use clap::parser::ValueSource;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::PathBuf;

/// The headings of `concur solve --help`, in order.
pub const HEADINGS: [&str; 7] = ["Common", "Map", "Divide and concur", "Tree search", "Local search", "GPU", "Output"];

/// Every flag of `concur solve`. The method's and the run's options serialise under their
/// keys (the flag's name with `_`); the outputs are the binary's.
#[derive(Args, Debug, Default, Serialize)]
pub struct SolveArgs {
    /// The puzzle: Brendan Owen's text or the JSON of eternity2.dev (detected from the
    /// content).
    #[serde(skip)]
    pub puzzle: PathBuf,

    // Common.
    /// The method.
    #[arg(long, value_enum, help_heading = "Common")]
    pub method: Option<MethodName>,
    /// The seed of every random choice of the run.
    #[arg(long, help_heading = "Common")]
    pub seed: Option<u64>,
    /// Wall-clock limit in seconds.
    #[arg(long, value_name = "SECS", help_heading = "Common")]
    pub time_limit: Option<f64>,
    /// Iterations per trial (maps; 100,000 without a time limit), moves (hill; 1e8) or
    /// iterations (alns; 1e7); no cap under a time limit.
    #[arg(long, help_heading = "Common")]
    pub max_iters: Option<u64>,
    /// Node limit of a tree search (none by default).
    #[arg(long, help_heading = "Common")]
    pub max_nodes: Option<u64>,
    /// Worker threads (default: every core).
    #[arg(long, help_heading = "Common")]
    pub threads: Option<usize>,
    /// Independent trials of the map, run as one batch.
    #[arg(long, help_heading = "Common")]
    pub trials: Option<usize>,

    // The maps.
    /// The map's step size (the best measured for rrr, dm and dc).
    #[arg(long, help_heading = "Map")]
    pub beta: Option<f32>,
    /// Do not restart trials caught in exact limit cycles.
    #[arg(long, help_heading = "Map")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_cycle_restart: bool,
    /// Run every trial to its budget instead of stopping at the first solution (success
    /// rates and iteration quartiles).
    #[arg(long, help_heading = "Map")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub all_trials: bool,
    /// Rate mode: a solution does not end the run. Each solved trial's board is verified and
    /// recorded, and the trial goes on from a fresh point of its seeded stream, until
    /// --time-limit or every trial's --max-iters; the run reports its trial-iterations, every
    /// solution, and how many are distinct up to turning the board.
    #[arg(long, help_heading = "Map")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keep_going: bool,
    /// F1's edge projection: the average per join, or one colour per join.
    #[arg(long, value_enum, help_heading = "Map")]
    pub edge: Option<EdgeProjection>,
    /// Restart a trial after this many iterations without a new best score since its last
    /// (re)start; 0 never restarts.
    #[arg(long, value_name = "L", help_heading = "Map")]
    pub restart_stall: Option<u64>,
    /// A stall restart perturbs x by S * (u - 1/2) per coordinate instead of drawing a fresh
    /// random point.
    #[arg(long, value_name = "S", help_heading = "Map")]
    pub kick: Option<f32>,
    /// The metric between the constraint classes: the weights of the sides of frame-frame,
    /// frame-inner and inner-inner joins (1,1,1 is the uniform metric).
    #[arg(long, value_name = "FF,FI,II", help_heading = "Map")]
    pub join_weights: Option<JoinWeights>,
    /// An adaptive metric on top of the join weights: a join's weight grows by RATE times its
    /// class weight in every iteration that leaves it unmatched, decays back by the fraction
    /// DECAY, and stays below MAX times its class weight.
    #[arg(long, value_name = "RATE,DECAY,MAX", help_heading = "Map")]
    pub adapt: Option<AdaptiveWeights>,
    /// Solve every assignment cold instead of warm-starting from the previous duals.
    #[arg(long, help_heading = "Map")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cold_assign: bool,
    /// The precision of the host assignments' potentials and reduced costs: f64 (the
    /// reference) or f32 (twice the lanes per vector; near-ties may break differently).
    #[arg(long, value_enum, help_heading = "Map")]
    pub reduced_costs: Option<crate::assign::Precision>,
    /// Arc-consistent completion: when a trial's best board has at most K mismatched joins
    /// (or stalls), free those cells plus a halo and search them with the backtracker.
    #[arg(long, value_name = "K", help_heading = "Map")]
    pub complete: Option<usize>,
    /// The halo's radius around the mismatched cells of --complete.
    #[arg(long, help_heading = "Map")]
    pub complete_radius: Option<usize>,
    /// Node limit of one completion search.
    #[arg(long, help_heading = "Map")]
    pub complete_nodes: Option<u64>,
    /// Iterations without improvement after which a trial's best board is completed.
    #[arg(long, help_heading = "Map")]
    pub complete_stall: Option<u64>,

    // Divide and concur.
    /// The map between concur and divide.
    #[arg(long, value_enum, help_heading = "Divide and concur")]
    pub dc_map: Option<MapKind>,
    /// The constraint weights in the concur mean.
    #[arg(long, value_enum, help_heading = "Divide and concur")]
    pub weights: Option<Weights>,
    /// The step of the adaptive weights.
    #[arg(long, help_heading = "Divide and concur")]
    pub gamma: Option<f32>,
    /// The constraints: hybrid (one global assignment constraint and the joins, the best
    /// measured) or plain (a constraint per cell, per piece and per join; the GPU's layout).
    #[arg(long, value_enum, help_heading = "Divide and concur")]
    pub layout: Option<DcLayout>,
    /// An alias of --layout hybrid, kept for older scripts and ladders (`hybrid = false` in a
    /// ladder means `layout = "plain"`).
    #[arg(
        long,
        conflicts_with = "layout",
        num_args = 0,
        default_missing_value = "true",
        help_heading = "Divide and concur"
    )]
    pub hybrid: Option<bool>,
    /// How the board is read out of the concur values.
    #[arg(long, value_enum, help_heading = "Divide and concur")]
    pub readout: Option<Readout>,
    /// Fold arc consistency in: once per round the candidates ruled out given the cells whose
    /// concur value reaches TAU, in (0, 1], are held at 0.
    #[arg(long, value_name = "TAU", help_heading = "Divide and concur")]
    pub propagate: Option<f32>,

    // The tree searches.
    /// The backtracker's propagation.
    #[arg(long, value_enum, help_heading = "Tree search")]
    pub ac: Option<Consistency>,
    /// The backtracker's cell ordering.
    #[arg(long, value_enum, help_heading = "Tree search")]
    pub order: Option<CellOrder>,
    /// Nodes per Luby restart unit.
    #[arg(long, help_heading = "Tree search")]
    pub restart_base: Option<u64>,
    /// No Luby restarts (a complete search).
    #[arg(long, help_heading = "Tree search")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_restarts: bool,
    /// The scan's tree of each restart: the smallest by Knuth's estimate, or one at random.
    #[arg(long, value_enum, help_heading = "Tree search")]
    pub tree: Option<TreeChoice>,
    /// The scan's random probes of Knuth's estimator per candidate tree.
    #[arg(long, help_heading = "Tree search")]
    pub probes: Option<u64>,
    /// The scan's row-chain cut (the row under each placement must chain).
    #[arg(long, help_heading = "Tree search")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub row_chain: bool,
    /// The scan's walker: fast, or table (the plain walker, the oracle of the fast one; both
    /// walk the same trees node for node).
    #[arg(long, value_enum, help_heading = "Tree search")]
    pub scan_walker: Option<ScanWalker>,

    // The local searches.
    /// Hill-climber: restart after this many moves without improvement (0: never).
    #[arg(long, help_heading = "Local search")]
    pub plateau: Option<u64>,
    /// ALNS: the fewest cells one destroy removes.
    #[arg(long, help_heading = "Local search")]
    pub destroy_min: Option<usize>,
    /// ALNS: the most cells one destroy removes (default: a third of the board, 4..=48).
    #[arg(long, help_heading = "Local search")]
    pub destroy_max: Option<usize>,
    /// ALNS: the destroy operators to use, comma separated (default: all).
    #[arg(long, value_enum, value_delimiter = ',', help_heading = "Local search")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operators: Vec<Destroy>,
    /// ALNS: no exact (assignment) refill of non-adjacent holes.
    #[arg(long, help_heading = "Local search")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_exact_repair: bool,
    /// ALNS: restart from a new board after this many iterations without a new best (0:
    /// never).
    #[arg(long, help_heading = "Local search")]
    pub restart_after: Option<u64>,
    /// ALNS: the starting temperature of the annealing acceptance.
    #[arg(long, help_heading = "Local search")]
    pub temperature: Option<f64>,

    // Where a map runs.
    /// Where the map runs: auto takes a hardware GPU when there is one and falls back to the
    /// CPU, saying which on stderr; gpu fails without a usable adapter.
    #[arg(long, value_enum, help_heading = "GPU")]
    pub backend: Option<BackendChoice>,
    /// The GPU adapter: the first whose name contains this (case-insensitive); `all`: every
    /// hardware adapter, a batch's trials split over them.
    #[arg(long, help_heading = "GPU")]
    pub adapter: Option<String>,
    /// Where rrr's and dm's assignments are solved: auto (the backend's fastest measured:
    /// gpu-jv on the GPU, the host's JV where the run needs the host every iteration), cpu
    /// (the host's exact JV; the reference), gpu-jv (alias gpu: the device's exact shortest
    /// augmenting paths, a workgroup per problem), gpu-jv-sg (a subgroup per problem),
    /// gpu-jv-sg-staged (each problem's costs in workgroup memory) or gpu-auction. The JSON's
    /// `assign` says which ran.
    #[arg(long, value_enum, help_heading = "GPU")]
    pub assign: Option<AssignOn>,
    /// rrr in the device loop: one fused pass per trial instead of five dispatches, where the
    /// state fits; the same iterates bit for bit.
    #[arg(long, help_heading = "GPU")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fused_passes: bool,

    // Outputs.
    /// Write a fixed-point certificate (x, both projections, gap, board) of the solving
    /// trial into this folder, as trial-T.json.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    #[serde(skip)]
    pub dump_state: Option<PathBuf>,
    /// With --dump-state: a certificate for every trial, solved or not.
    #[arg(long, requires = "dump_state", help_heading = "Output")]
    #[serde(skip)]
    pub dump_all: bool,
    /// With --keep-going: append every solution to this file as one JSON line when it is
    /// found (flushed, so a killed run keeps every solution found).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub solutions: Option<PathBuf>,
    /// Write the solution (Brendan Owen's format) here.
    #[arg(short = 'o', long = "output", help_heading = "Output")]
    #[serde(skip)]
    pub output: Option<PathBuf>,
    /// Print one JSON object instead of the board and text statistics.
    #[arg(long, help_heading = "Output")]
    #[serde(skip)]
    pub json: bool,
}

impl SolveArgs {
    /// The flags given on the command line (as the keys of a ladder entry), read from the
    /// parsed flags and clap's matches of the `solve` subcommand.
    pub fn given(&self, matches: &clap::ArgMatches) -> Result<Map<String, Value>, SpecError> {
        let Ok(Value::Object(all)) = serde_json::to_value(self) else { return Ok(Map::new()) };
        let given: Map<String, Value> = all
            .into_iter()
            .filter(|(k, _)| matches!(matches.value_source(k), Some(ValueSource::CommandLine)))
            .collect();
        // A given value serialises to null only when it is a number JSON cannot hold (NaN,
        // an infinity): refused here, as a ladder entry cannot even say it.
        if let Some((key, _)) = given.iter().find(|(_, v)| v.is_null() || has_null(v)) {
            let value = matches.get_raw(key).and_then(|mut v| v.next()).map(|v| v.to_string_lossy().into_owned());
            return Err(SpecError::range(key, "a finite number", value.unwrap_or_default()));
        }
        Ok(given)
    }

    /// The run the flags ask for, checked as a ladder entry is ([`SolveSpec::from_given`]).
    pub fn spec(&self, matches: &clap::ArgMatches) -> Result<SolveSpec, SpecError> {
        SolveSpec::from_given(&self.given(matches)?)
    }
}

/// Whether a value holds a null inside (a non-finite number in a list or an object).
fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(o) => o.values().any(has_null),
        _ => false,
    }
}

/// The flags that are a run's keys (the method's options and the run's own), with the
/// methods that use each.
pub fn key_methods() -> Vec<(String, Vec<MethodName>)> {
    let mut keys: Vec<(String, Vec<MethodName>)> = Vec::new();
    for m in MethodName::ALL {
        for k in m.keys() {
            match keys.iter_mut().find(|(key, _)| *key == k) {
                Some((_, ms)) => ms.push(m),
                None => keys.push((k, vec![m])),
            }
        }
    }
    for k in RUN_KEYS {
        keys.push((k.to_string(), run_key_methods(k).unwrap_or_default()));
    }
    keys
}

/// The default of a run's key as the help shows it, read from the options of the methods
/// that have it (each method's where they differ) or the run's: None where there is nothing
/// to show.
pub fn default_text(key: &str, methods: &[MethodName]) -> Option<String> {
    let show = |value: Option<Value>| match value? {
        Value::Null | Value::Bool(false) | Value::Object(_) => None,
        Value::Array(a) if a.is_empty() => None,
        Value::Array(a) => Some(a.iter().map(plain).collect::<Vec<_>>().join(",")),
        v => Some(plain(&v)),
    };
    if RUN_KEYS.contains(&key) {
        return show(serde_json::to_value(SolveSpec::default()).ok()?.get(key).cloned());
    }
    let mut each: Vec<(MethodName, String)> = Vec::new();
    for &m in methods {
        if let Some(d) = show(serde_json::to_value(m.with_defaults()).ok()?.get(key).cloned()) {
            each.push((m, d));
        }
    }
    let first = each.first()?.1.clone();
    if each.iter().all(|(_, d)| *d == first) {
        return Some(first);
    }
    Some(each.iter().map(|(m, d)| format!("{d} ({m})")).collect::<Vec<_>>().join(", "))
}

/// A value as a user writes it: a string bare, an f32 option's number in its shortest form
/// (0.7, not 0.699999988).
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            if f64::from(f as f32) == f { format!("{}", f as f32) } else { format!("{f}") }
        }
        v => v.to_string(),
    }
}

/// `concur solve`'s command with each run flag's help ending in its default and the methods
/// that use it, from the library's tables.
pub fn annotate(cmd: clap::Command) -> clap::Command {
    let mut keys = key_methods();
    // The outputs: certificates are the maps'; the board and the JSON every method's.
    let maps = vec![MethodName::Rrr, MethodName::Dm, MethodName::Dc];
    keys.push(("dump_state".into(), maps.clone()));
    keys.push(("dump_all".into(), maps));
    keys.push(("output".into(), MethodName::ALL.to_vec()));
    keys.push(("json".into(), MethodName::ALL.to_vec()));
    cmd.mut_args(|a| {
        let id = a.get_id().as_str().to_string();
        let Some((_, methods)) = keys.iter().find(|(k, _)| *k == id) else { return a };
        let base = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        let mut extra = Vec::new();
        if let Some(d) = default_text(&id, methods) {
            extra.push(format!("default: {d}"));
        }
        let names: Vec<&str> = methods.iter().map(|m| m.name()).collect();
        if names.len() < MethodName::ALL.len() {
            extra.push(format!("methods: {}", names.join(", ")));
        } else {
            extra.push("all methods".into());
        }
        a.help(format!("{base} [{}]", extra.join("; ")))
    })
}

/// `concur solve`'s run flags as a Markdown table under the help's headings: each flag, its
/// default and the methods that use it, as the help shows them (docs/cli.md holds a copy that
/// a test keeps current).
pub fn options_markdown() -> String {
    let cmd = crate::cli::command();
    let solve = cmd.find_subcommand("solve").expect("solve is a subcommand");
    let keys = key_methods();
    let mut out = String::from("| heading | flag | default | methods |\n|---|---|---|---|\n");
    for heading in HEADINGS {
        for a in solve.get_arguments() {
            let id = a.get_id().as_str();
            let Some((_, methods)) = keys.iter().find(|(k, _)| k == id) else { continue };
            if a.get_help_heading() != Some(heading) {
                continue;
            }
            let default = default_text(id, methods).unwrap_or_else(|| "-".into());
            let names: Vec<&str> = methods.iter().map(|m| m.name()).collect();
            let used_by = if names.len() == MethodName::ALL.len() { "all".to_string() } else { names.join(", ") };
            let long = a.get_long().map(|l| format!("`--{l}`")).unwrap_or_default();
            out.push_str(&format!("| {heading} | {long} | {default} | {used_by} |\n"));
        }
    }
    out
}
