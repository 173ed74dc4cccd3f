#!/usr/bin/env python3
"""Best full-board scores at fixed times, read from the runs' traces: for each method label
and each time T (default 60, 600, 3600 s), the runs whose budget reached T, and the mean,
best and worst of their best score by T (the last trace entry at or before T). A run's
trace is (seconds, best score) at each new best, with scores recomputed from the boards by
the exact verifier, so a long run also answers every shorter budget.

With --best-of N, the runs of each method and instance are taken N at a time, in run order,
and each group counts as one run on N cores: its score is the best of the N. Independent
trials over threads share nothing, so N one-core runs side by side are exactly one run of N
trials on N cores.

    scripts/scores-at.py RESULTS.jsonl... [--at 60,600,3600] [--best-of N]
"""
import json, sys

args = sys.argv[1:]


def option(name, default, parse):
    if name in args:
        i = args.index(name)
        value = parse(args[i + 1])
        del args[i : i + 2]
        return value
    return default


times = option("--at", [60.0, 600.0, 3600.0], lambda s: [float(t) for t in s.split(",")])
best_of = option("--best-of", 1, int)
if not args:
    sys.exit(__doc__)

runs = {}
for path in args:
    for line in open(path):
        r = json.loads(line)
        if r.get("best_score") is None:
            continue
        runs.setdefault((r["label"], r["instance"]), []).append(r)


def score_by(r, t):
    # A run's last entry may land a moment past its limit, so an entry within a second of T
    # counts at T. A run without a trace (the scan's one board, made at its end) counts from
    # its end.
    if not r.get("trace"):
        return r["best_score"] if r["wall_s"] <= t + 1.0 else None
    best = None
    for s, score in r.get("trace") or []:
        if s <= t + 1.0:
            best = score
    return best


labels = sorted({label for label, _ in runs})
header = "| method | " + " | ".join(f"{t:g} s: runs, mean (min-max)" for t in times) + " |"
if best_of > 1:
    header = header.replace("runs,", f"groups of {best_of} runs,")
print(header)
print("|---" * (len(times) + 1) + "|")
for label in labels:
    cells = []
    for t in times:
        scores = []
        for (l, _), rs in sorted(runs.items()):
            if l != label:
                continue
            rs = sorted((r for r in rs if r["params"].get("time_limit", 0) >= t - 1e-9), key=lambda r: r["run"])
            for g in range(0, len(rs) - best_of + 1, best_of):
                group = [score_by(r, t) for r in rs[g : g + best_of]]
                if all(s is not None for s in group):
                    scores.append(max(group))
        if scores:
            cells.append(f"{len(scores)}, {sum(scores) / len(scores):.1f} ({min(scores)}-{max(scores)})")
        else:
            cells.append("-")
    print(f"| {label} | " + " | ".join(cells) + " |")
