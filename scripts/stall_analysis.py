#!/usr/bin/env python3
"""Tables and plots of BENCHMARKS.md "Why the map stalls" from the files of
`cargo run --release --example diagnose` (standard library only).

    scripts/stall_analysis.py dist benches/results/stall/dist-*.jsonl
    scripts/stall_analysis.py trace benches/results/stall/trace-6x6-b0.5      # .csv .jsonl .tail.csv .baseline.csv
    scripts/stall_analysis.py survival-svg OUT.svg benches/results/stall/dist-*.jsonl
"""
import csv
import gzip
import json
import math
import statistics as st
import sys
from collections import defaultdict


def opener(path):
    """Opens `path`, or `path.gz` when only the compressed copy exists."""
    import os

    if not path.endswith(".gz") and not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def load_dist(path):
    with opener(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    return lines[0], lines[1:]


def quantile(a, q):
    a = sorted(a)
    pos = q * (len(a) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return a[lo] + (pos - lo) * (a[hi] - a[lo])


def dist_row(path, cap=None):
    head, trials = load_dist(path)
    budget = head["max_iters"] if cap is None else min(cap, head["max_iters"])
    solved = sorted(t["solved_at"] for t in trials if t["solved_at"] is not None and t["solved_at"] <= budget)
    n = len(trials)
    uns = n - len(solved)
    exposure = sum(solved) + uns * budget
    rate = len(solved) / exposure
    ks = 0.0
    for i, t in enumerate(solved):
        f = 1 - math.exp(-rate * t)
        ks = max(ks, abs(f - i / n), abs((i + 1) / n - f))
    mean = st.mean(solved)
    cv = st.pstdev(solved) / mean
    # Restart analysis (Luby et al. 1993): expected work per solution with a fixed cutoff,
    # only at cutoffs with >= 20 solved runs (fewer make the estimate noise).
    best = None
    prefix = 0
    for i, t in enumerate(solved):
        prefix += t
        if i + 1 < 20:
            continue
        w = (prefix + (n - i - 1) * t) / (i + 1)
        if best is None or w < best[1]:
            best = (t, w)
    return dict(
        name=path.split("/")[-1],
        n=n,
        solved=len(solved),
        budget=budget,
        q=[quantile(solved, q) for q in (0.1, 0.25, 0.5, 0.75, 0.9)],
        mean=mean,
        cv=cv,
        exp_mean=1 / rate,
        ks=ks,
        ks_crit=1.36 / math.sqrt(n),
        best_cut=best,
        wall_s=head.get("wall_s"),
        solved_list=solved,
        head=head,
    )


def cmd_dist(paths):
    print("| run | trials | solved | q10 / q25 / median / q75 / q90 | mean | CV | exp. mean (censored MLE) | KS (5% crit.) | best cutoff (>= 20 solved): work per solution |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p in paths:
        r = dist_row(p)
        q = " / ".join(f"{v:,.0f}" for v in r["q"])
        cut = f"{r['best_cut'][0]:,} : {r['best_cut'][1]:,.0f}" if r["best_cut"] else "-"
        print(f"| {r['name']} | {r['n']} | {r['solved']} | {q} | {r['mean']:,.0f} | {r['cv']:.2f} | {r['exp_mean']:,.0f} | {r['ks']:.3f} ({r['ks_crit']:.3f}) | {cut} |")


def cmd_trace(prefix):
    rows = list(csv.DictReader(opener(prefix + ".csv")))
    summ = [json.loads(l) for l in opener(prefix + ".jsonl")]
    head, summ = summ[0], summ[1:]
    by = defaultdict(list)
    for r in rows:
        by[int(r["trial"])].append(r)
    try:
        base = list(csv.DictReader(opener(prefix + ".baseline.csv")))
        bc = [int(r["cells"]) for r in base]
        bm = [int(r["moves"]) for r in base]
        print(f"random boards (P_P of uniform points, {len(bc)}): nearest cells median {quantile(bc, .5):.0f} (min {min(bc)}, q10 {quantile(bc, .1):.0f}), moves median {quantile(bm, .5):.0f} (min {min(bm)})")
    except FileNotFoundError:
        pass
    print(f"solutions in the set: {head['solutions']}; logged every {head['every']} iterations")
    print("| trial | solved at | best score | best board: cells / moves | running board: cells median (q10, min) | moves median (min) | gap mean first / second half | distinct boards / iterations | window: exact period, nearest x lag, |x_T - x_T-lag| / last step |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in summ:
        t = s["trial"]
        rs = [r for r in by[t] if int(r["score"]) < head.get("max_score", 10**9)]
        if s["solved_at"]:
            rs = rs[:-1]
        cur = [int(r["cur_cells"]) for r in rs]
        mv = [int(r["cur_moves"]) for r in rs]
        gaps = [float(r["gap"]) for r in rs]
        h = len(gaps) // 2
        w = s.get("window")
        wtxt = "-"
        if w:
            wtxt = f"{w['exact_board_period'] or 'none'}, lag {w['x_nearest_lag']}, {w['x_nearest_dist'] / w['x_last_step']:.2f}"
        print(
            f"| {t} | {s['solved_at'] or '-'} | {s['best_score']} | {s['best_cells']} / {s['best_moves']} | "
            f"{quantile(cur, .5):.0f} ({quantile(cur, .1):.0f}, {min(cur)}) | {quantile(mv, .5):.0f} ({min(mv)}) | "
            f"{st.mean(gaps[:h]):.2f} / {st.mean(gaps[h:]):.2f} | {s['distinct_boards']:,} / {s['iterations']:,} | {wtxt} |"
        )
    by_score = defaultdict(list)
    gap_by_score = defaultdict(list)
    for r in rows:
        by_score[int(r["score"])].append(int(r["cur_cells"]))
        gap_by_score[int(r["score"])].append(float(r["gap"]))
    top = max(by_score)
    print("running boards by score (score: median cells to the nearest solution, mean gap, boards logged):")
    print(" ".join(f"{k}: {quantile(v, .5):.0f}, {st.mean(gap_by_score[k]):.2f}, n={len(v)};" for k, v in sorted(by_score.items()) if len(v) >= 5 and k < top))
    try:
        tail = list(csv.DictReader(opener(prefix + ".tail.csv")))
    except FileNotFoundError:
        return
    tb = defaultdict(list)
    for r in tail:
        tb[int(r["trial"])].append(r)
    approach = []
    for t, rs in tb.items():
        s = next(x for x in summ if x["trial"] == t)
        if not s["solved_at"]:
            continue
        last = int(rs[-1]["iteration"])
        far = [int(r["iteration"]) for r in rs if int(r["to_final_cells"]) > 12]
        if far:
            approach.append(last - max(far))
    if approach:
        print(f"approach: iterations from the last board > 12 cells from the final solution to the solution, per solved trial: {sorted(approach)} (median {quantile(approach, .5):.0f})")


def cmd_survival_svg(out, paths):
    W, H, L, B = 640, 400, 60, 40
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    rs = [dist_row(p) for p in paths]
    # x: t / exponential mean (so every run's exponential is the same line); y: log10 survival.
    ymin = -2.5
    sx = lambda v: L + v / 4.0 * (W - L - 20)
    sy = lambda v: 20 + (0 - v) / (0 - ymin) * (H - 20 - B)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
             f'<rect width="{W}" height="{H}" fill="white"/>']
    for k in range(0, 5):
        parts.append(f'<line x1="{sx(k)}" y1="{sy(0)}" x2="{sx(k)}" y2="{sy(ymin)}" stroke="#ddd"/>')
        parts.append(f'<text x="{sx(k)}" y="{H - B + 16}" text-anchor="middle">{k}</text>')
    for k in [0, -0.5, -1, -1.5, -2, -2.5]:
        parts.append(f'<line x1="{sx(0)}" y1="{sy(k)}" x2="{sx(4)}" y2="{sy(k)}" stroke="#ddd"/>')
        parts.append(f'<text x="{L - 6}" y="{sy(k) + 4}" text-anchor="end">{10 ** k:.3g}</text>')
    parts.append(f'<text x="{(L + W) / 2}" y="{H - 6}" text-anchor="middle">iterations / fitted exponential mean</text>')
    parts.append(f'<text x="14" y="{H / 2}" transform="rotate(-90 14 {H / 2})" text-anchor="middle">fraction of trials not yet solved (log)</text>')
    parts.append(f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(4)}" y2="{sy(-4 / math.log(10))}" stroke="black" stroke-dasharray="5,4"/>')
    for i, r in enumerate(rs):
        n = r["n"]
        pts = [(0.0, 0.0)]
        for j, t in enumerate(r["solved_list"]):
            surv = (n - j - 1) / n
            if surv <= 0:
                break
            pts.append((t / r["exp_mean"], math.log10(surv)))
        d = " ".join(f"{sx(min(x, 4)):.1f},{sy(max(y, ymin)):.1f}" for x, y in pts)
        c = colors[i % len(colors)]
        parts.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="1.6"/>')
        label = r["name"].replace(".jsonl", "").replace(".gz", "")
        parts.append(f'<text x="{W - 200}" y="{40 + 16 * i}" fill="{c}">{label} (mean {r["exp_mean"]:,.0f})</text>')
    parts.append(f'<text x="{W - 200}" y="{40 + 16 * len(rs)}">- - exponential</text>')
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "dist":
        cmd_dist(sys.argv[2:])
    elif cmd == "trace":
        cmd_trace(sys.argv[2])
    elif cmd == "survival-svg":
        cmd_survival_svg(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(f"unknown command {cmd}")
