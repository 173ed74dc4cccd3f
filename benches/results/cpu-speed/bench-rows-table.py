#!/usr/bin/env python3
"""Before/after table of `concur bench --json` rows labelled with a "build" field (batch 1).
Usage: bench-rows-table.py FILE"""
import json, sys
t = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    if d.get("batch") != 1:
        continue
    k = d["kernel"] + (f"/n{d['class_n']}" if d.get("class_n") else "")
    t[(d["size"], k, d["build"])] = d["trial_iters_per_s"]
keys = sorted({(s, k) for (s, k, _) in t}, key=lambda x: (int(x[0].split("x")[0]), x[1]))
print("| size | row | before | after | after / before |\n|---|---|---|---|---|")
for s, k in keys:
    b, a = t.get((s, k, "before")), t.get((s, k, "after"))
    if b and a:
        print(f"| {s} | {k} | {b:.3g} | {a:.3g} | {a / b:.2f}x |")
