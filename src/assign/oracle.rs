//! The exhaustive oracle the solver is tested against.

/// Exhaustive oracle (intended for `n <= 9`): the best total weight and a
/// permutation (`perm[r]` = column of row `r`) achieving it; `None` if every
/// permutation uses a forbidden (`-inf`) pair. Totals are summed in `f64`.
pub(crate) fn brute_force(n: usize, weights: &[f32]) -> Option<(f32, Vec<usize>)> {
    assert_eq!(weights.len(), n * n, "weights must be n*n");
    assert!(n <= 12, "brute_force is exponential; n = {n} is too large");
    struct S<'a> {
        n: usize,
        w: &'a [f32],
        perm: Vec<usize>,
        best: Option<(f64, Vec<usize>)>,
    }
    fn rec(s: &mut S, r: usize, used: u32, acc: f64) {
        if r == s.n {
            if s.best.as_ref().is_none_or(|(b, _)| acc > *b) {
                s.best = Some((acc, s.perm.clone()));
            }
            return;
        }
        for c in 0..s.n {
            if used & (1 << c) != 0 {
                continue;
            }
            let wv = s.w[r * s.n + c];
            if wv == f32::NEG_INFINITY {
                continue;
            }
            s.perm[r] = c;
            rec(s, r + 1, used | (1 << c), acc + wv as f64);
        }
    }
    let mut s = S { n, w: weights, perm: vec![0; n], best: None };
    rec(&mut s, 0, 0, 0.0);
    s.best.map(|(t, p)| (t as f32, p))
}
