//! What a trial's summary and a solution's finder are: [`Mechanism`], [`TrialSummary`].

/// Which mechanism found a solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Mechanism {
    /// An exact fixed point of the map.
    #[serde(rename = "map")]
    Map,
    /// The map's near-fixed point, completed by arc-consistent search.
    #[serde(rename = "map+ac")]
    MapAc,
    /// A complete search whose value order came from the map's weights (the map-guided
    /// search, `src/guided.rs`).
    #[serde(rename = "map-guided")]
    MapGuided,
}

impl Mechanism {
    /// The name results and `--json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Map => "map",
            Mechanism::MapAc => "map+ac",
            Mechanism::MapGuided => "map-guided",
        }
    }
}

/// What a run reports of each trial.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TrialSummary {
    /// Iterations the trial ran.
    pub iterations: u64,
    /// The best score the trial reached.
    pub best_score: usize,
    /// Iteration at which the trial solved (an exact fixed point).
    pub solved_at: Option<u64>,
    /// Which mechanism solved the trial.
    pub solved_by: Option<Mechanism>,
    /// Restarts after exact limit cycles.
    pub restarts: u64,
    /// Arc-consistent completion searches tried, and their nodes in all.
    pub completions: u64,
    /// Nodes of those searches, in all.
    pub completion_nodes: u64,
    /// Restarts (or kicks) after `restart_stall` iterations without a new best.
    pub stall_restarts: u64,
    /// Rate mode: the verified solutions the trial found.
    #[serde(skip_serializing_if = "is_zero")]
    pub solutions: u64,
}

pub(super) fn is_zero(v: &u64) -> bool {
    *v == 0
}
