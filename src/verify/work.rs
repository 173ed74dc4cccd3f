//! The consistency ladder's work on one position (`concur count --root-work`): every rung run
//! from the same full domains of a puzzle's root, with its counters side by side.
//!
//! The rungs: AC-1 (the naive fixed point, candidate pair by candidate pair), AC-3, AC-2001 and
//! AC-4 (the same arc-consistent closure by other routes), AC-3 with Régin's all-different,
//! AC-3 with the block filter,
//! singleton arc consistency over AC-3, and partial path consistency. The counters:
//! - revisions: arcs revised (AC-1 sweeps every arc; AC-3 and AC-2001 revise the queued ones;
//!   AC-4 revises none and counts its removals here, as the search's counters do); for SAC the
//!   singleton tests, for path consistency the triangle revisions;
//! - checks: support checks. AC-1 checks one candidate pair at a time; the bitset engines AND
//!   one word of a neighbour's domain with a colour's supports, 64 pairs at once; AC-4 counts
//!   the supports it tallies when it builds its counts; path consistency ORs one row of a
//!   relation into a composition; Régin's filter looks at edges of the value graph; the block
//!   filter (over AC-3) adds its blocks revised to the revisions and its candidates tested
//!   against a composed relation to the checks;
//! - removals: candidates removed, and what is left.

use super::alldiff::PieceFilter;
use super::block::BlockFilter;
use super::pc::{PathConsistency, PcStats};
use super::sac::{SacStats, sac};
use super::{Ac1Work, Consistency, Network, Propagator, SupportCounts, ac1_counted};
use std::time::Instant;

/// One rung's work on the root.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RootWork {
    /// The rung.
    pub level: &'static str,
    /// See the module doc.
    pub revisions: u64,
    /// See the module doc.
    pub checks: u64,
    /// Candidates removed.
    pub removals: u64,
    /// Candidates left over every cell (0 after a wipe-out).
    pub left: u64,
    /// Whether a domain emptied (the puzzle has no solution).
    pub wiped_out: bool,
    /// Seconds it took.
    pub seconds: f64,
}

/// Every rung on `net`'s root, in ladder order.
pub fn root_work(net: &Network) -> Vec<RootWork> {
    let full = net.full_domains();
    let total: u64 = (0..net.cells()).map(|c| net.size(&full, c) as u64).sum();
    let left = |d: &[u64]| (0..net.cells()).map(|c| net.size(d, c) as u64).sum::<u64>();
    let mut out = Vec::new();
    let mut push = |level, (revisions, checks): (u64, u64), ok: bool, d: &[u64], t0: Instant| {
        let kept = if ok { left(d) } else { 0 };
        out.push(RootWork {
            level,
            revisions,
            checks,
            removals: total - left(d),
            left: kept,
            wiped_out: !ok,
            seconds: t0.elapsed().as_secs_f64(),
        });
    };
    let t0 = Instant::now();
    let mut d = full.clone();
    let mut w = Ac1Work::default();
    let ok = ac1_counted(net, &mut d, &mut w);
    push("ac1", (w.revisions, w.checks), ok, &d, t0);
    for (level, kind) in [("ac3", Consistency::Ac3), ("ac2001", Consistency::Ac2001)] {
        let t0 = Instant::now();
        let mut d = full.clone();
        let mut prop = Propagator::new(net);
        let ok = prop.propagate_all(net, &mut d, kind);
        push(level, (prop.revisions, prop.checks), ok, &d, t0);
    }
    let t0 = Instant::now();
    let mut sc = SupportCounts::new(net, &full);
    let ok = sc.propagate_all(net);
    let tallied = 4 * total;
    push("ac4", (sc.removals, tallied), ok, sc.domains(), t0);
    let t0 = Instant::now();
    let mut d = full.clone();
    let mut prop = Propagator::new(net);
    let mut filter = PieceFilter::new();
    let mut changed = Vec::new();
    let mut ok = prop.propagate_all(net, &mut d, Consistency::Ac3);
    while ok {
        changed.clear();
        ok = filter.run(net, &mut d, &mut changed);
        if !ok || changed.is_empty() {
            break;
        }
        ok = prop.propagate_all(net, &mut d, Consistency::Ac3);
    }
    push("ac3+regin", (prop.revisions, prop.checks + filter.stats.edges), ok, &d, t0);
    let t0 = Instant::now();
    let mut d = full.clone();
    let mut prop = Propagator::new(net);
    let mut blocks = BlockFilter::new(net);
    let mut ok = prop.propagate_all(net, &mut d, Consistency::Ac3);
    while ok {
        changed.clear();
        ok = blocks.run(net, &mut d, &mut changed);
        if !ok || changed.is_empty() {
            break;
        }
        ok = prop.propagate_all(net, &mut d, Consistency::Ac3);
    }
    let b = blocks.stats;
    push("ac3+blocks", (prop.revisions + b.blocks, prop.checks + b.tests), ok, &d, t0);
    let t0 = Instant::now();
    let mut d = full.clone();
    let mut s = SacStats::default();
    let ok = sac(net, &mut d, &mut s);
    push("sac", (s.tests, s.checks), ok, &d, t0);
    let t0 = Instant::now();
    let mut d = full.clone();
    let mut prop = Propagator::new(net);
    let mut s = PcStats::default();
    let ok =
        prop.propagate_all(net, &mut d, Consistency::Ac3) && PathConsistency::new(net, &d).close(net, &mut d, &mut s);
    push("pc", (s.revisions, s.checks), ok, &d, t0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};

    /// The arc-consistent rungs reach the same closure; each stronger rung keeps no more; AC-1
    /// revises every arc each sweep where AC-3 revises the queued ones, at least as many checks.
    #[test]
    fn the_rungs_agree_where_they_should_and_grow_stronger_up_the_ladder() {
        for seed in 0..4 {
            let opts = GenerateOptions { width: 4, height: 4, frame_colors: Some(2), inner_colors: Some(3), seed };
            let Ok((p, _)) = generate(&opts) else { continue };
            let net = Network::new(&p);
            let w = root_work(&net);
            let at = |l: &str| w.iter().find(|r| r.level == l).expect("every rung");
            let ac = at("ac3").left;
            for l in ["ac1", "ac2001", "ac4"] {
                assert_eq!(at(l).left, ac, "seed {seed}: {l} reaches AC-3's closure");
            }
            for l in ["ac3+regin", "ac3+blocks", "sac", "pc"] {
                assert!(at(l).left <= ac, "seed {seed}: {l} keeps no more than arc consistency");
            }
            assert!(at("ac1").revisions >= at("ac3").revisions, "seed {seed}: AC-1 sweeps every arc");
            assert!(at("ac1").checks > 0 && at("ac3").checks > 0);
            assert_eq!(at("ac3").removals, at("ac1").removals);
        }
    }
}
