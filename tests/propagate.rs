//! AC-3 and AC-2001 against the naive AC-1 on random partial boards.
use crate::common::generated;
use concur::verify::{Consistency, Network, Propagator, SupportCounts, ac1};
use proptest::prelude::*;

/// Places `k` random candidates (each from the current domain, all-different applied, no
/// propagation) and returns the domains.
fn partial(net: &Network, picks: &[(usize, usize)]) -> Vec<u64> {
    let mut d = net.full_domains();
    let mut changed = Vec::new();
    let mut members = Vec::new();
    for &(cell, pick) in picks {
        let c = cell % net.cells();
        members.clear();
        net.members(&d, c, &mut members);
        if members.len() <= 1 {
            continue;
        }
        let j = members[pick % members.len()] as usize;
        if !net.place(&mut d, c, j, &mut changed) {
            break;
        }
    }
    d
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn ac3_ac2001_and_ac1_reach_the_same_fixed_point(
        seed in 0u64..50,
        w in 3usize..7,
        h in 3usize..6,
        picks in proptest::collection::vec((0usize..64, 0usize..1000), 0..12),
    ) {
        let (p, _) = generated(w, h, seed);
        let net = Network::new(&p);
        let start = partial(&net, &picks);
        let mut reference = start.clone();
        let ok1 = ac1(&net, &mut reference);
        let mut prop = Propagator::new(&net);
        for kind in [Consistency::Ac3, Consistency::Ac2001] {
            let mut d = start.clone();
            prop.reset();
            let ok = prop.propagate_all(&net, &mut d, kind);
            prop_assert_eq!(ok, ok1, "{:?} disagrees on wipe-out", kind);
            if ok {
                prop_assert_eq!(&d, &reference, "{:?} fixed point differs", kind);
            }
        }
        let mut counts = SupportCounts::new(&net, &start);
        prop_assert_eq!(counts.propagate_all(&net), ok1, "AC-4 counts disagree on wipe-out");
        if ok1 {
            prop_assert_eq!(counts.domains(), &reference[..], "AC-4 counts fixed point differs");
        }
        // A second pass changes nothing: it is a fixed point.
        if ok1 {
            let mut again = reference.clone();
            prop_assert!(prop.propagate_all(&net, &mut again, Consistency::Ac2001));
            prop_assert_eq!(again, reference);
        }
    }

    #[test]
    fn incremental_assign_equals_propagation_from_scratch(
        seed in 0u64..50,
        order in proptest::collection::vec(0usize..1000, 1..10),
        kind in prop_oneof![Just(Consistency::Ac3), Just(Consistency::Ac2001), Just(Consistency::Ac4)],
    ) {
        // Placing planted-solution pieces one by one with incremental propagation reaches the
        // same domains as AC-1 from scratch, never wipes out, and keeps the planted board.
        let (p, sol) = generated(5, 4, seed);
        let net = Network::new(&p);
        let cands = net.candidates();
        let mut d = net.full_domains();
        let mut prop = Propagator::new(&net);
        let mut counts = SupportCounts::new(&net, &d);
        if kind == Consistency::Ac4 {
            prop_assert!(counts.propagate_all(&net));
        } else {
            prop_assert!(prop.propagate_all(&net, &mut d, kind));
        }
        let root = counts.mark();
        let mut plain = net.full_domains();
        let mut changed = Vec::new();
        for &o in &order {
            let c = o % p.cells();
            let j = cands.of(c).iter().position(|pl| *pl == sol.cells[c]).unwrap();
            if kind == Consistency::Ac4 {
                prop_assert!(net.contains(counts.domains(), c, j), "planted candidate pruned");
                prop_assert!(counts.assign(&net, c, j));
            } else {
                prop_assert!(net.contains(&d, c, j), "planted candidate pruned");
                prop_assert!(prop.assign(&net, &mut d, c, j, kind));
            }
            prop_assert!(net.place(&mut plain, c, j, &mut changed));
        }
        if kind == Consistency::Ac4 {
            d = counts.domains().to_vec();
            // Undoing every placement gives back the root fixed point.
            counts.undo(&net, root);
            let mut fresh = SupportCounts::new(&net, &net.full_domains());
            prop_assert!(fresh.propagate_all(&net));
            prop_assert_eq!(counts.domains(), fresh.domains());
        }
        prop_assert!(ac1(&net, &mut plain));
        prop_assert_eq!(d, plain);
    }
}

#[test]
fn a_wipe_out_is_reported_as_one() {
    // Two corners that share no colour cannot be neighbours on a 2x2 board.
    let p = concur::puzzle::Puzzle::new(2, 2, vec![[0, 1, 2, 0], [0, 0, 3, 4], [5, 6, 0, 0], [7, 0, 0, 8]], vec![])
        .unwrap();
    let net = Network::new(&p);
    let mut prop = Propagator::new(&net);
    for kind in [Consistency::Ac3, Consistency::Ac2001] {
        let mut d = net.full_domains();
        assert!(!prop.propagate_all(&net, &mut d, kind), "{kind:?}");
    }
    let mut d = net.full_domains();
    assert!(!ac1(&net, &mut d));
}
