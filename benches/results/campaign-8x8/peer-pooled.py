#!/usr/bin/env python3
"""The record backtracker beside our methods on one instance: pooled core-seconds per solution.

    benches/results/campaign-8x8/peer-pooled.py INSTANCE PEER.jsonl [PEER.jsonl ...] -- LADDER_DIR [LADDER_DIR ...]

INSTANCE is the ladder's instance name (for example
brendan_owen/pieces_set_1/pieces_08x08.txt). The peer's lines are those of
benches/results/campaign-8x8/peer-campaign.sh (`search_s`, `solved`, `verified`; the seconds
of the peer's generation and compile, `build_s`, are left out, as a start-up cost). The
ladder's lines are every `*.jsonl` at the top of each LADDER_DIR, restricted to INSTANCE.

Runs are memoryless restarts of a randomised search, so the solutions d found in a total T
of core-seconds are Poisson with mean T / cost: the estimate is T / d, its exact 95 %
interval [2T / chi2(2d+2, 0.975), 2T / chi2(2d, 0.025)], and with no solution the one-sided
95 % bound T / ln 20 (the report's "Pooled rates", the same formulas). A peer run counts as
solved only when its board passed `concur verify`.
"""
import glob, json, math, os, sys


def chi2_cdf_even(x, k):
    """P(chi-square with 2k degrees of freedom <= x): 1 - P(Poisson(x/2) < k)."""
    h, term, s = x / 2.0, math.exp(-x / 2.0), 0.0
    for i in range(k):
        if i > 0:
            term *= h / i
        s += term
    return 1.0 - s


def chi2_quantile_even(p, k):
    lo, hi = 0.0, 1.0
    while chi2_cdf_even(hi, k) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if chi2_cdf_even(mid, k) < p else (lo, mid)
    return (lo + hi) / 2.0


def pooled(total, d):
    if d == 0:
        return "> %s (none solved)" % fmt(total / math.log(20.0))
    lo = 2 * total / chi2_quantile_even(0.975, d + 1)
    hi = 2 * total / chi2_quantile_even(0.025, d)
    return "%s [%s, %s]" % (fmt(total / d), fmt(lo), fmt(hi))


def fmt(s):
    return "{:,.0f} s".format(s) if s >= 100 else "%.3g s" % s


def main(argv):
    if len(argv) < 4 or "--" not in argv:
        sys.exit(__doc__)
    inst = argv[1]
    cut = argv.index("--")
    peers, dirs = argv[2:cut], argv[cut + 1:]
    rows = {}
    for path in peers:
        for line in open(path):
            if not line.strip():
                continue
            r = json.loads(line)
            key = (r["solver"].split("@")[0] + " (peer)")
            ok = bool(r.get("solved")) and bool(r.get("verified"))
            acc = rows.setdefault(key, [0, 0, 0.0])
            acc[0] += 1
            acc[1] += ok
            acc[2] += float(r["search_s"])
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.jsonl"))):
            for line in open(path):
                if not line.strip():
                    continue
                r = json.loads(line)
                if r["instance"] != inst:
                    continue
                acc = rows.setdefault(r.get("label", r["method"]), [0, 0, 0.0])
                acc[0] += 1
                acc[1] += bool(r["solved"])
                acc[2] += float(r["wall_s"])
    print("| solver | runs | solved | core-seconds per solution [95%] | core-hours spent |")
    print("|---|---|---|---|---|")
    for key in sorted(rows, key=lambda k: (rows[k][1] == 0, rows[k][2] / max(rows[k][1], 1e-9))):
        n, d, t = rows[key]
        print("| %s | %d | %d | %s | %.2f |" % (key, n, d, pooled(t, d), t / 3600.0))


if __name__ == "__main__":
    main(sys.argv)
