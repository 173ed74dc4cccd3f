#!/usr/bin/env python3
"""Markdown table of benches/results/first-solution/first-solution-bench.sh's results: per puzzle and solver, the
runs solved (and verified) within the cap, and the median, min and max wall time to the
first solution (unsolved runs count as the cap, so a median at the cap means "not within
it"). For the peer, the search alone; its start-up (generation and compile) apart.

    scripts/first-solution-table.py benches/results/first-solution/first-solution-2026-12-01.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    r = json.loads(line)
    key = (r["puzzle"], r["solver"])
    if key not in runs:
        order.append(key)
    runs[key].append(r)

def fmt(x):
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"

print("| puzzle | solver | solved | median s | min-max s | start-up s (median) | cap s |")
print("|---|---|---|---|---|---|---|")
for key in order:
    rs = runs[key]
    ok = [r for r in rs if r["solved"] and r["verified"]]
    times = [r["wall_s"] if (r["solved"] and r["verified"]) else r["cap_s"] for r in rs]
    med = statistics.median(times)
    med_s = fmt(med) if len(ok) * 2 > len(rs) else f"> {rs[0]['cap_s']}"
    span = f"{fmt(min(times))}-{fmt(max(times))}" if ok else "-"
    ups = [r["startup_s"] for r in rs if r.get("startup_s") is not None]
    up = fmt(statistics.median(ups)) if ups else ""
    print(f"| {key[0]} | {key[1]} | {len(ok)}/{len(rs)} | {med_s} | {span} | {up} | {rs[0]['cap_s']} |")
