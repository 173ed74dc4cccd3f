#!/usr/bin/env python3
"""The table of best scores (docs/real-puzzle.md) on the real Eternity II from a report's summary.json:
per method and board size, runs, mean, best and quartiles of each run's best score (matched
joins of a complete board with the hints in place, recomputed by the exact verifier).

    scripts/scores-table.py benches/results/e2-scores/report/summary.json [SIZE]
"""
import json, sys

summary = json.load(open(sys.argv[1]))
size = sys.argv[2] if len(sys.argv) > 2 else "16x16"
print("| method | runs (one core, budget) | mean best score | best | q1 – median – q3 |")
print("|---|---|---|---|---|")
for r in summary["rows"]:
    if f'{r["width"]}x{r["height"]}' != size:
        continue
    s = r["scores"]
    q1, q2, q3 = s["quartiles"]
    budget = f'{r["time_limit_s"]:g} s' if r.get("time_limit_s") else "-"
    print(f'| {r["label"]} | {r["runs"]} ({budget}) | {s["mean"]:.1f} / {s["max_score"]} | {s["best"]} | {q1:.1f} – {q2:.1f} – {q3:.1f} |')
