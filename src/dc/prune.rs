//! Propagation folded into divide and concur: the "certain" weight of the three-weight
//! algorithm (Derbinsky, Bento, Elser & Yedidia, "An improved three-weight message-passing
//! algorithm", 2013), applied to the candidates that arc consistency rules out.
//!
//! Once per round the concur point `m` names the **confident** cells: those whose largest
//! candidate value is at least `tau`. Taken from the most confident down (ties by cell
//! index), each confident cell's top candidate is placed and arc consistency restored
//! (AC-3, [`Propagator::assign`]); a cell whose placement wipes a domain out conflicts with
//! the cells before it and is left unplaced. Every candidate of an *unplaced* cell that is no
//! longer in its domain is **pruned**: until the next round the concur projection holds it at
//! 0 with certain weight, i.e. `P_a` becomes the projection onto the consensus vectors that
//! are 0 there (still a projection onto an affine set). The placed cells' own candidates keep
//! their ordinary weight, so the map stays free to move them, and the pruning they cause
//! lapses as soon as they stop being confident. A conflicting cell's own top candidate is
//! pruned too: the cells before it rule it out.
//!
//! [`prune_reference`] is the oracle: the same greedy order with [`Network::place`] and the
//! naive [`ac1`] from scratch for every cell.

use super::layout::{Layout, argmax};
use crate::verify::{Consistency, Network, Propagator, ac1};
use std::sync::Arc;

/// Scratch of the per-round pruning: owned by one worker, allocated once.
pub struct Pruner {
    net: Arc<Network>,
    prop: Propagator,
    /// Arc-consistent domains of the empty board (the start of every round's pruning).
    base: Vec<u64>,
    d: Vec<u64>,
    saved: Vec<u64>,
    /// Confident cells: (top value, cell, top candidate), most confident first.
    order: Vec<(f32, u32, u32)>,
    placed: Vec<bool>,
}

impl Pruner {
    /// A pruner over `net`, with the arc-consistent domains of the empty board computed once.
    pub fn new(net: Arc<Network>) -> Self {
        let mut prop = Propagator::new(&net);
        let mut base = net.full_domains();
        // A puzzle with a solution is arc consistent after this; one without may wipe out,
        // and then nothing is pruned (the base stays as propagation left it, which only
        // removes candidates no solution uses).
        let _ = prop.propagate_all(&net, &mut base, Consistency::Ac3);
        let cells = net.cells();
        Pruner {
            d: base.clone(),
            saved: base.clone(),
            base,
            prop,
            net,
            order: Vec::with_capacity(cells),
            placed: vec![false; cells],
        }
    }

    /// Fills `pruned` with the variables (candidates) held at 0 for the next round, given
    /// the concur point `m` and the confidence threshold `tau`; returns the number of cells
    /// placed.
    pub fn prune(&mut self, layout: &Layout, m: &[f32], tau: f32, pruned: &mut Vec<u32>) -> usize {
        confident(layout, m, tau, &mut self.order);
        self.d.copy_from_slice(&self.base);
        self.placed.iter_mut().for_each(|p| *p = false);
        let mut n = 0;
        for &(_, c, j) in &self.order {
            self.saved.copy_from_slice(&self.d);
            if self.prop.assign(&self.net, &mut self.d, c as usize, j as usize, Consistency::Ac3) {
                self.placed[c as usize] = true;
                n += 1;
            } else {
                self.d.copy_from_slice(&self.saved);
            }
        }
        collect(layout, &self.net, &self.d, &self.placed, pruned);
        n
    }
}

/// The confident cells of `m`, most confident first (ties by cell index).
fn confident(layout: &Layout, m: &[f32], tau: f32, order: &mut Vec<(f32, u32, u32)>) {
    order.clear();
    for c in 0..layout.cells() {
        let r = layout.cell_vars(c);
        let vals = &m[r];
        if let Some(top) = argmax(vals).filter(|&j| vals[j] >= tau) {
            order.push((vals[top], c as u32, top as u32));
        }
    }
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
}

/// The candidates of unplaced cells that the domains `d` no longer hold, as variables.
fn collect(layout: &Layout, net: &Network, d: &[u64], placed: &[bool], pruned: &mut Vec<u32>) {
    pruned.clear();
    for (c, &p) in placed.iter().enumerate() {
        if p {
            continue;
        }
        let r = layout.cell_vars(c);
        for j in 0..r.len() {
            if !net.contains(d, c, j) {
                pruned.push((r.start + j) as u32);
            }
        }
    }
}

/// The oracle of [`Pruner::prune`]: the same greedy order, each placement by
/// [`Network::place`] followed by the naive AC-1 on a copy of the domains.
pub fn prune_reference(layout: &Layout, net: &Network, m: &[f32], tau: f32) -> Vec<u32> {
    let mut d = net.full_domains();
    let _ = ac1(net, &mut d);
    let mut order = Vec::new();
    confident(layout, m, tau, &mut order);
    let mut placed = vec![false; layout.cells()];
    for &(_, c, j) in &order {
        let mut d2 = d.clone();
        let mut changed = Vec::new();
        if net.place(&mut d2, c as usize, j as usize, &mut changed) && ac1(net, &mut d2) {
            d = d2;
            placed[c as usize] = true;
        }
    }
    let mut pruned = Vec::new();
    collect(layout, net, &d, &placed, &mut pruned);
    pruned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Random concur points, some cells near one-hot at a solution's candidate, some at a
    /// random candidate (so conflicts occur), the rest noise: AC-3 and the AC-1 oracle prune
    /// the same candidates.
    #[test]
    fn pruning_matches_the_ac1_oracle() {
        for (w, h, seed) in [(3, 3, 1), (4, 4, 2), (5, 5, 3), (6, 5, 4)] {
            let opts = GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed };
            let (p, sol) = generate(&opts).unwrap();
            let layout = Layout::new(&p, crate::dc::DcLayout::Hybrid);
            let net = Arc::new(Network::new(&p));
            let mut pr = Pruner::new(net.clone());
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut pruned = Vec::new();
            let mut seen_conflict = false;
            for round in 0..40 {
                let mut m: Vec<f32> = (0..layout.vars()).map(|_| rng.random::<f32>() * 0.6).collect();
                for c in 0..layout.cells() {
                    let r = layout.cell_vars(c);
                    let pick = match rng.random_range(0..4) {
                        0 => layout.variable_of(c, sol.cells[c]).expect("a solution's candidate") as usize,
                        1 => r.start + rng.random_range(0..r.len()),
                        _ => continue,
                    };
                    m[pick] = 0.7 + 0.3 * rng.random::<f32>();
                }
                let tau = [0.5, 0.7, 0.9][round % 3];
                let placed = pr.prune(&layout, &m, tau, &mut pruned);
                let want = prune_reference(&layout, &net, &m, tau);
                assert_eq!(pruned, want, "{w}x{h} round {round}");
                let mut order = Vec::new();
                confident(&layout, &m, tau, &mut order);
                seen_conflict |= placed < order.len();
            }
            assert!(seen_conflict || w * h < 16, "{w}x{h}: no conflicting confident cell was exercised");
        }
    }

    /// At a solution every cell is confident and placed, so nothing is pruned; with one
    /// cell left unconfident, it keeps exactly its solution candidate among those AC allows
    /// when the rest of the solution is placed (the pieces are all placed elsewhere).
    #[test]
    fn a_solution_prunes_nothing_and_forces_the_last_cell() {
        let opts = GenerateOptions { width: 4, height: 4, frame_colors: None, inner_colors: None, seed: 7 };
        let (p, sol) = generate(&opts).unwrap();
        let layout = Layout::new(&p, crate::dc::DcLayout::Plain);
        let net = Arc::new(Network::new(&p));
        let mut pr = Pruner::new(net);
        let mut m = vec![0.0f32; layout.vars()];
        for c in 0..layout.cells() {
            m[layout.variable_of(c, sol.cells[c]).unwrap() as usize] = 1.0;
        }
        let mut pruned = Vec::new();
        assert_eq!(pr.prune(&layout, &m, 0.9, &mut pruned), layout.cells());
        assert!(pruned.is_empty());
        let c = 5;
        let keep = layout.variable_of(c, sol.cells[c]).unwrap();
        m[keep as usize] = 0.5;
        assert_eq!(pr.prune(&layout, &m, 0.9, &mut pruned), layout.cells() - 1);
        let r = layout.cell_vars(c);
        assert!(pruned.iter().all(|&v| r.contains(&(v as usize))), "only the unplaced cell is pruned");
        assert!(!pruned.contains(&keep), "its solution candidate stays");
        // Every other piece is placed elsewhere: only rotations of its own piece are left.
        let piece = sol.cells[c].piece;
        for v in r.filter(|v| !pruned.contains(&(*v as u32))) {
            assert_eq!(layout.placement(v).piece, piece, "candidate {v} should be pruned");
        }
    }
}
