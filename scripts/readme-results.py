#!/usr/bin/env python3
"""The tables of docs/scaling.md "The scaling ladder", from a ladder report's summary.json:

    scripts/readme-results.py benches/results/ladder-answer/report/summary.json

1. per method and board size: runs solved within the budget and the Kaplan-Meier median
   seconds (with its bootstrap interval), unsolved runs censored;
2. the growth of the median seconds per extra cell (least squares on ln median against area,
   over the sizes whose median lies within the budget), with its 95% interval, from the
   report; and the same slope over the sizes from 5x5 on only, where no method's time is
   still its start-up (the scan's 2-4 ms of table building up to 5x5), without an interval
   (three sizes at most).
"""
import math
import json, sys

d = json.load(open(sys.argv[1]))
rows = d["rows"]
sizes = sorted({(r["width"], r["height"]) for r in rows}, key=lambda s: (s[0] * s[1], s))
labels = sorted({r["label"] for r in rows})


def secs(v):
    if v is None:
        return "> budget"
    if v < 1e-3:
        return f"{v * 1e6:.0f} us"
    if v < 1:
        return f"{v * 1e3:.0f} ms"
    return f"{v:.1f} s"


def cell(r):
    q = r["seconds"]["quartiles"]
    med = q[1] if q else None
    ci = r["seconds"].get("median_ci") or [None, None]
    s = f"{r['solved']}/{r['runs']}, {secs(med)}"
    if med is not None and ci[0] is not None:
        s += f" [{secs(ci[0])}, {secs(ci[1])}]"
    return s


budgets = {}
for r in rows:
    budgets[(r["width"], r["height"])] = r.get("time_limit_s")
print("| method | " + " | ".join(f"{w}x{h} ({budgets[(w, h)]:.0f} s)" for w, h in sizes) + " |")
print("|---|" + "---|" * len(sizes))
for lab in labels:
    by = {(r["width"], r["height"]): r for r in rows if r["label"] == lab}
    print(f"| {lab} | " + " | ".join(cell(by[s]) if s in by else "not run" for s in sizes) + " |")
print()
def slope_from(label, min_area):
    pts = [(r["area"], math.log(r["seconds"]["quartiles"][1])) for r in rows
           if r["label"] == label and r["area"] >= min_area and r["seconds"]["quartiles"]
           and r["seconds"]["quartiles"][1] is not None]
    if len(pts) < 2:
        return None
    mx = sum(a for a, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    b = sum((a - mx) * (y - my) for a, y in pts) / sum((a - mx) ** 2 for a, _ in pts)
    return math.exp(b), len(pts)


print("| method | growth of the median seconds per extra cell [95% CI] | areas fitted | sizes left out (median > budget) | growth from 5x5 on (sizes) |")
print("|---|---|---|---|---|")
for f in d["fits"]:
    if f["quantity"] != "seconds":
        continue
    lo, hi = f["growth_ci"] if f.get("growth_ci") else (None, None)
    ci = f"[x{lo:.3f}, x{hi:.3f}]" if lo is not None else "[-]"
    out = ", ".join(f["beyond_budget"]) or "none"
    late = slope_from(f["label"], 25)
    late = f"x{late[0]:.3f} ({late[1]})" if late else "-"
    print(f"| {f['label']} | x{f['growth_per_cell']:.3f} {ci} | {f['area_min']}-{f['area_max']} ({f['points']} sizes) | {out} | {late} |")
