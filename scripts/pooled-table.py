#!/usr/bin/env python3
"""The pooled-rates table (docs/scaling.md) of the 8x8 question, from a report's summary.json: per
method and size, runs, solutions, work and core-seconds per solution with their 95% intervals
(the one-sided bound when nothing solved), and the memorylessness check.

    scripts/pooled-table.py benches/results/campaign-8x8/report/summary.json [METHODS] [SIZES]

METHODS defaults to "rrr,scan,backtrack ac4", SIZES to "6x6,7x7,8x7,9x7,8x8".
"""
import json, sys

summary = json.load(open(sys.argv[1]))
methods = (sys.argv[2] if len(sys.argv) > 2 else "rrr,scan,backtrack ac4").split(",")
sizes = (sys.argv[3] if len(sys.argv) > 3 else "6x6,7x7,8x7,9x7,8x8").split(",")

def num(v, secs=False):
    if secs:
        return f"{v:,.0f} s" if v >= 100 else (f"{v:.3g} s")
    return f"{v:.2e}".replace("e+0", "e").replace("e+", "e") if v >= 1e6 else f"{v:,.0f}"

def pooled(p, secs=False):
    lo, hi = p["ci"]
    if p["mean"] is None:
        return f"> {num(lo, secs)} (none solved)" if lo is not None else "-"
    return f"{num(p['mean'], secs)} [{num(lo, secs)}, {num(hi, secs)}]"

rows = {(r["label"], f'{r["width"]}x{r["height"]}'): r for r in summary["rows"]}
print("| method | size (cells) | runs | solutions | work per solution | core-seconds per solution | core-hours spent | memoryless (KS p) |")
print("|---|---|---|---|---|---|---|---|")
for m in methods:
    for sz in sizes:
        r = rows.get((m, sz))
        if r is None:
            continue
        w, h = map(int, sz.split("x"))
        fit = r.get("memoryless")
        ml = "-" if fit is None else (f"no (p = {fit['p_value']:.3f})" if fit["rejected"] else f"yes (p = {fit['p_value']:.2f})")
        print(f"| {m} | {sz} ({w * h}) | {r['runs']} | {r['pooled_work']['solutions']} | "
              f"{pooled(r['pooled_work'])} {r['work_unit']} | {pooled(r['pooled_seconds'], True)} | "
              f"{r['pooled_seconds']['total'] / 3600:.2f} | {ml} |")
