#!/usr/bin/env python3
"""Best full-board scores at fixed times, read from the runs' traces: for each method label
and each time T (default 60, 600, 3600 s), the runs whose budget reached T, and the mean,
best and worst of their best score by T (the last trace entry at or before T). A run's
trace is (seconds, best score) at each new best, with scores recomputed from the boards by
the exact verifier, so a long run also answers every shorter budget.

    scripts/scores-at.py RESULTS.jsonl... [--at 60,600,3600]
"""
import json, sys

args = sys.argv[1:]
times = [60.0, 600.0, 3600.0]
if "--at" in args:
    i = args.index("--at")
    times = [float(t) for t in args[i + 1].split(",")]
    del args[i : i + 2]
if not args:
    sys.exit(__doc__)

runs = {}
for path in args:
    for line in open(path):
        r = json.loads(line)
        if r.get("best_score") is None:
            continue
        runs.setdefault(r["label"], []).append(r)


def score_by(r, t):
    # A run's last entry may land a moment past its limit (the scan's only entry is at its
    # end), so an entry within a second of T counts at T.
    best = None
    for s, score in r.get("trace") or []:
        if s <= t + 1.0:
            best = score
    return best


header = "| method | " + " | ".join(f"{t:g} s: runs, mean (min-max)" for t in times) + " |"
print(header)
print("|---" * (len(times) + 1) + "|")
for label in sorted(runs):
    cells = []
    for t in times:
        scores = [score_by(r, t) for r in runs[label] if r["params"].get("time_limit", 0) >= t - 1e-9]
        scores = [s for s in scores if s is not None]
        if scores:
            cells.append(f"{len(scores)}, {sum(scores) / len(scores):.1f} ({min(scores)}-{max(scores)})")
        else:
            cells.append("-")
    print(f"| {label} | " + " | ".join(cells) + " |")
