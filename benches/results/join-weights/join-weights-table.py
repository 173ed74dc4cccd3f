#!/usr/bin/env python3
"""Table of benches/results/join-weights/join-weights-bench.sh results: per file (puzzle, setting), trials solved,
the median of the solved runs, and the censored maximum-likelihood mean of iterations to
solution (all iterations spent / solutions, exponential run lengths as measured at 5x5 and
6x6) with its exact 95% interval (chi-square with 2d degrees of freedom, Wilson-Hilferty),
and the ratio to the uniform metric of the same puzzle.

    benches/results/join-weights/join-weights-table.py benches/results/join-weights/*.jsonl
"""
import json, math, os, sys

def chi2_quantile(p, k):
    # Wilson-Hilferty: accurate to well under 1% for k >= 2.
    z = math.sqrt(2) * erfinv(2 * p - 1)
    return k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3

def erfinv(y):
    # Newton on math.erf, from a rational start.
    x = 0.0
    for _ in range(60):
        x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x

rows = []
for path in sys.argv[1:]:
    lines = [json.loads(l) for l in open(path)]
    head, trials = lines[0], lines[1:]
    solved = sorted(t["solved_at"] for t in trials if t["solved_at"] is not None)
    total = sum(t["iterations"] for t in trials)
    d = len(solved)
    name = os.path.basename(head["puzzle"]).replace("pieces_", "set 1 ").replace(".txt", "")
    name += f' {head.get("method", "rrr")}'
    fixed = "-fixed-" in os.path.basename(path)
    if abs(head.get("beta", 0.7) - 0.7) > 1e-6:
        name += f' beta {head["beta"]:.1f}'
    if head.get("restart_stall"):
        name += f' stall {head["restart_stall"]}'
    if head.get("adapt"):
        a = head["adapt"]
        name += f' adapt {a["rate"]:g},{a["decay"]:g},{a["max"]:g}'
    w = head.get("join_weights") or [1.0, 1.0, 1.0]
    mean = total / d if d else math.inf
    lo = 2 * total / chi2_quantile(0.975, 2 * d) if d else math.nan
    hi = 2 * total / chi2_quantile(0.025, 2 * d) if d else math.inf
    med = solved[len(solved) // 2] if solved else None
    rows.append((name, fixed, w, len(trials), d, head["max_iters"], med, mean, lo, hi, total))
base = {r[0]: r[7] for r in rows if r[2] == [1.0, 1.0, 1.0] and not r[1]}
# A setting's ratio is to the uniform metric of the same puzzle and map (beta 0.7, no stall).
key = lambda name: name.split(" beta ")[0].split(" stall ")[0].split(" adapt ")[0]
print("| puzzle, map | join weights (FF, FI, II) | fixed corner | solved | budget per trial | median of solved | mean iterations per solution (95% interval) | uniform / this |")
print("|---|---|---|---|---|---|---|---|")
fmt = lambda v: f"{v:,.0f}"
for r in sorted(rows, key=lambda r: (r[0], r[1], r[2][2], r[2][1], r[2][0])):
    name, fixed, w, n, d, budget, med, mean, lo, hi, _ = r
    ratio = f"{base[key(name)] / mean:.2f}x" if key(name) in base and d else "-"
    ws = ", ".join(f"{x:g}" for x in w)
    # No solution: the one-sided 95% lower bound of the mean, total / -ln(0.05).
    est = f"{fmt(mean)} ({fmt(lo)}-{fmt(hi)})" if d else f"> {fmt(r[10] / 2.996)} (none solved)"
    print(f"| {name} | {ws} | {'yes' if fixed else ''} | {d}/{n} | {fmt(budget)} | {fmt(med) if med else '-'} | "
          f"{est} | {ratio} |")
