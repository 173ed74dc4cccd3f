//! Singleton arc consistency (SAC; Debruyne & Bessière, IJCAI 1997), the rung between arc
//! consistency and path consistency: a candidate stays only when placing it and restoring arc
//! consistency leaves no domain empty. The pass here is SAC-1: sweep every candidate of every
//! cell, try it on a copy of the domains, remove it on a wipe-out, and sweep again until a
//! sweep removes nothing (each removal can make another candidate fail). It is a
//! preprocessing pass: its cost is a propagation per candidate and sweep.

use super::{Consistency, Network, Propagator};

/// What a SAC pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SacStats {
    /// Sweeps over every candidate (the last one removes nothing).
    pub sweeps: u64,
    /// Singleton tests: a candidate placed and arc consistency restored on a copy.
    pub tests: u64,
    /// Candidates removed.
    pub removed: u64,
    /// Support checks of its propagations (words tested, as [`Propagator::checks`]).
    pub checks: u64,
}

/// Makes `d` singleton arc consistent, each test restoring arc consistency with AC-3. Returns
/// false when a domain empties (no solution).
pub fn sac(net: &Network, d: &mut [u64], stats: &mut SacStats) -> bool {
    let mut prop = Propagator::new(net);
    let ok = sac_with(net, d, stats, &mut prop);
    stats.checks += prop.checks;
    ok
}

fn sac_with(net: &Network, d: &mut [u64], stats: &mut SacStats, prop: &mut Propagator) -> bool {
    let kind = Consistency::Ac3;
    if !prop.propagate_all(net, d, kind) {
        return false;
    }
    let mut trial = vec![0u64; d.len()];
    let mut members = Vec::new();
    loop {
        stats.sweeps += 1;
        let mut removed = false;
        for c in 0..net.cells() {
            members.clear();
            net.members(d, c, &mut members);
            if members.len() == 1 {
                continue;
            }
            for &j in &members {
                stats.tests += 1;
                trial.copy_from_slice(d);
                if !prop.assign(net, &mut trial, c, j as usize, kind) {
                    d[net.words(c).start + j as usize / 64] &= !(1u64 << (j % 64));
                    stats.removed += 1;
                    removed = true;
                }
            }
            if net.size(d, c) == 0 {
                return false;
            }
        }
        if !removed {
            return true;
        }
        if !prop.propagate_all(net, d, kind) {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use crate::search::backtrack::{BacktrackConfig, Backtracker, Next};

    /// SAC removes no candidate a solution uses; every candidate it keeps passes its own
    /// test (the fixed point); and it is at least as strong as arc consistency.
    #[test]
    fn sac_is_sound_at_its_fixed_point_and_at_least_as_strong_as_ac() {
        let (mut stronger, mut tried) = (0, 0);
        for (w, h, seed) in [(3, 3, 1), (4, 3, 2), (4, 4, 3), (4, 4, 4), (5, 4, 5), (3, 5, 6)] {
            let opts = GenerateOptions { width: w, height: h, frame_colors: Some(2), inner_colors: Some(3), seed };
            let Ok((p, _)) = generate(&opts) else { continue };
            tried += 1;
            let net = Network::new(&p);
            let cands = p.candidates();
            let mut d = net.full_domains();
            let mut stats = SacStats::default();
            let ok = sac(&net, &mut d, &mut stats);
            // Every solution, by a complete search.
            let mut sols = Vec::new();
            let cfg = BacktrackConfig { restarts: false, randomize: false, ..Default::default() };
            Backtracker::new(&p, cfg).run(|b| {
                sols.push(b.clone());
                Next::Continue
            });
            assert_eq!(ok, !sols.is_empty(), "{w}x{h} seed {seed}");
            for b in &sols {
                for c in 0..p.cells() {
                    let j = cands.of(c).iter().position(|&pl| pl == b.cells[c]).unwrap();
                    assert!(net.contains(&d, c, j), "{w}x{h} seed {seed}: SAC removed a candidate of a solution");
                }
            }
            if !ok {
                continue;
            }
            let mut prop = Propagator::new(&net);
            let mut members = Vec::new();
            for c in 0..p.cells() {
                members.clear();
                net.members(&d, c, &mut members);
                for &j in &members {
                    let mut t = d.clone();
                    prop.reset();
                    assert!(prop.assign(&net, &mut t, c, j as usize, Consistency::Ac3), "not a SAC fixed point");
                }
            }
            let mut ac = net.full_domains();
            assert!(prop.propagate_all(&net, &mut ac, Consistency::Ac3));
            assert!(d.iter().zip(&ac).all(|(s, a)| s & !a == 0), "SAC kept a candidate AC removed");
            stronger += usize::from(d != ac);
        }
        assert!(tried >= 4, "only {tried} puzzles generated");
        assert!(stronger > 0, "SAC never removed more than AC");
    }
}
