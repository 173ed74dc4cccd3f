//! The drivers' shared test of a run in parts: stopped by its token, saved, continued
//! exactly (`f1::map` and `dc::map` run it on their batches).

use super::result::MapResult;
use super::rounds::Progress;
use crate::cancel::Cancel;
use crate::puzzle::Board;

/// A CPU driver's batch, as the test runs it in parts.
pub(crate) trait InParts {
    type Snapshot: serde::Serialize + serde::de::DeserializeOwned + PartialEq + Send + Sync;
    fn restore_from(&mut self, s: &Self::Snapshot);
    fn run_with(&mut self, progress: &mut dyn FnMut(&Progress)) -> MapResult;
    fn take_snapshot_kept(&mut self) -> Option<Self::Snapshot>;
    fn snapshot_now(&self) -> Self::Snapshot;
}

/// The batch that `batch(cancel)` makes (saving at a stop, its token `cancel`) run whole,
/// then stopped by its token after rounds `stops` (one per part) and continued from each
/// part's snapshot through JSON, on one thread and two by turns. The parts must add up to
/// the whole run: the same final state, trials, work, solutions (in rate mode: every
/// solution, in order, and the distinct classes) and best board. Returns how many parts
/// the token cut.
pub(crate) fn check_in_parts<M: InParts>(
    what: &str,
    stops: &[usize],
    rate: bool,
    batch: impl Fn(&Cancel) -> M + Sync,
) -> usize {
    let mut whole_map = batch(&Cancel::new());
    let whole = whole_map.run_with(&mut |_| {});
    let whole_end = whole_map.snapshot_now();
    let (mut parts, mut from, mut cut) = (Vec::new(), None::<M::Snapshot>, 0);
    let end = 'parts: {
        for (i, k) in stops.iter().copied().map(Some).chain([None]).enumerate() {
            let cancel = Cancel::new();
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1 + i % 2).build().expect("a pool");
            let (r, snap, end) = pool.install(|| {
                let mut m = batch(&cancel);
                if let Some(s) = &from {
                    m.restore_from(s);
                }
                let r = m.run_with(&mut cancel_after(k, &cancel));
                (r, m.take_snapshot_kept(), m.snapshot_now())
            });
            parts.push(r);
            let Some(snap) = snap else { break 'parts end };
            assert!(k.is_some(), "{what}: a snapshot without a stop request");
            cut += 1;
            let text = serde_json::to_string(&snap).expect("a snapshot serialises");
            let back: M::Snapshot = serde_json::from_str(&text).expect("a snapshot reads back");
            assert!(back == snap, "{what}: the snapshot reads back as written");
            from = Some(back);
        }
        unreachable!("the last part has no stop request")
    };
    let what = format!("{what}, stops {stops:?}");
    assert!(end == whole_end, "{what}: the final state differs");
    let last = parts.last().expect("a part");
    assert_eq!(last.trials, whole.trials, "{what}");
    let sum = |f: fn(&MapResult) -> u64| parts.iter().map(f).sum::<u64>();
    assert_eq!(sum(|r| r.trial_iterations), whole.trial_iterations, "{what}");
    assert_eq!(sum(MapResult::work), whole.work(), "{what}");
    if rate {
        let all: Vec<_> = parts.iter().flat_map(found).collect();
        assert_eq!(all, found(&whole), "{what}: the solutions");
        let distinct = |r: &MapResult| r.rate.as_ref().map_or(0, |r| r.distinct);
        assert_eq!(parts.iter().map(distinct).sum::<usize>(), distinct(&whole), "{what}");
        assert!(!found(&whole).is_empty(), "{what}: no solution to compare");
    } else {
        let sol = |r: &MapResult| r.solution.as_ref().map(|(t, i, b)| (*t, *i, b.clone()));
        assert_eq!(sol(last), sol(&whole), "{what}");
        assert_eq!((&last.best, last.best_score), (&whole.best, whole.best_score), "{what}");
    }
    assert!(parts[1..].iter().all(|r| r.resumed.is_some()), "{what}");
    cut
}

/// What a rate-mode record must repeat: index, trial, segment, trial iteration, class,
/// whether new, the board.
fn found(r: &MapResult) -> Vec<(usize, usize, u64, u64, usize, bool, Board)> {
    let rate = r.rate.as_ref().map(|r| r.solutions.as_slice()).unwrap_or_default();
    rate.iter()
        .map(|f| (f.index, f.trial, f.segment_iterations, f.trial_iteration, f.class, f.new_class, f.board.clone()))
        .collect()
}

/// A progress hook that trips `cancel` after round `stop`.
fn cancel_after(stop: Option<usize>, cancel: &Cancel) -> impl FnMut(&Progress) + '_ {
    let mut rounds = 0;
    move |_| {
        rounds += 1;
        if Some(rounds) == stop {
            cancel.cancel();
        }
    }
}
