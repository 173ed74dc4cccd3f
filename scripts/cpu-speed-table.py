#!/usr/bin/env python3
"""Summarises scripts/cpu-speed-bench.sh output: per label, the best and median iterations/s
of each build over its rounds, and the ratio of the medians. Usage: cpu-speed-table.py FILE"""
import json, statistics, sys
from collections import defaultdict
runs = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["run"] is None:
        continue
    if d["label"] not in order:
        order.append(d["label"])
    runs[(d["label"], d["build"])].append(d["run"]["iters_per_s"])
print("| run | before (median, best) | after (median, best) | after / before |")
print("|---|---|---|---|")
for label in order:
    b, a = runs[(label, "before")], runs[(label, "after")]
    if not b or not a:
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    print(f"| {label} | {mb:,.0f} ({max(b):,.0f}) | {ma:,.0f} ({max(a):,.0f}) | {ma / mb:.2f}x |")
