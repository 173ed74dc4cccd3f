#!/usr/bin/env python3
"""The run-time distribution of RRR on a generated 6x6, from Python, and one trial's gap.

Runs 64 RRR trials in rate mode (``concur.solutions``: every solution is recorded and its trial
goes on from a fresh point) with a fixed budget of iterations per trial, then plots

- ``rtd.png``: the fraction of trials solved against iterations (each trial's first
  solution; a trial without one is censored at the budget), beside the exponential that the
  pooled rate (all trial-iterations over all solutions, every segment of rate mode) predicts
  if run lengths are memoryless;
- ``gap.png``: one trial's gap ``||P_a(f_b(x)) - P_b(f_a(x))||`` against its iterations,
  stepped with ``concur.F1Map`` from the same seed (the same iterates as the run), to its
  first solution.

Usage: ``python examples/python/rtd.py [OUT_DIR] [--budget N] [--seed S]`` (default OUT_DIR:
docs/img/ of the repository). Needs ``pip install ./python matplotlib``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import concur  # noqa: E402

TRIALS = 64


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=str(root / "docs" / "img"), help="folder for the PNGs")
    ap.add_argument("--budget", type=int, default=20_000, help="iterations per trial")
    ap.add_argument("--seed", type=int, default=1, help="the puzzle's and the run's seed")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    puzzle = concur.Puzzle.generate(6, 6, seed=args.seed)
    print(f"{puzzle!r}: {TRIALS} RRR trials of {args.budget} iterations in rate mode")
    t0 = time.monotonic()
    gen = concur.solutions(puzzle, "rrr", trials=TRIALS, seed=args.seed, max_iters=args.budget, backend="cpu")
    first: dict[int, int] = {}
    found = 0
    while True:
        try:
            s = next(gen)
        except StopIteration as stop:
            result = stop.value
            break
        found += 1
        first.setdefault(s.trial, s.trial_iteration)
    total = int(result.trial_iterations.sum())
    print(f"{found} solutions ({result.distinct_solutions} distinct up to turning) in {total:,} trial-iterations, "
          f"{time.monotonic() - t0:.1f} s; {len(first)} of {TRIALS} trials solved at least once")

    # The run-time distribution of the first solutions, and the memoryless prediction.
    times = np.sort(np.array(list(first.values()), dtype=float))
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = np.concatenate([[1.0], times, [float(args.budget)]])
    ys = np.concatenate([[0.0], np.arange(1, len(times) + 1) / TRIALS, [len(times) / TRIALS]])
    ax.step(xs, ys, where="post", label=f"RRR, {TRIALS} trials (first solution)")
    if found:
        mean = total / found
        grid = np.logspace(0, math.log10(args.budget), 200)
        ax.plot(grid, 1 - np.exp(-grid / mean), "--", label=f"exponential, mean {mean:,.0f} (pooled rate)")
    ax.set_xscale("log")
    ax.set_xlim(10, args.budget)
    ax.set_ylim(0, 1)
    ax.set_xlabel("iterations")
    ax.set_ylabel("fraction of trials solved")
    ax.set_title(f"RRR on a generated 6x6 (seed {args.seed}), beta 0.7, join weights 1,1,4")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out / "rtd.png", dpi=120)
    print(f"wrote {out / 'rtd.png'}")

    # One trial's gap, stepped from the same seed: the lowest trial that solved. Iterate n is
    # the state after n iterations (0: the start); the trial solves at iteration `until`.
    trial = min(first) if first else 0
    until = first.get(trial, args.budget)
    stepper = concur.F1Map(puzzle, map="rrr", trials=trial + 1, seed=args.seed)
    gaps, scores = [], []
    for n in range(until + 1):
        if n:
            stepper.step(1)
        p = stepper.projections()
        gaps.append(float(p["gap"][trial]))
        scores.append(int(p["scores"][trial]))
    assert until == args.budget or stepper.solved_at[trial] == until, "the stepper follows the run's trial"
    its = np.arange(until + 1)
    window = 101
    median = np.array([np.median(gaps[max(0, i - window // 2):i + window // 2 + 1]) for i in range(len(gaps))])
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(6.5, 5), sharex=True)
    ax1.plot(its, gaps, lw=0.4, color="tab:blue", alpha=0.5, label="gap at iterate n")
    ax1.plot(its, median, lw=1.2, color="navy", label=f"running median ({window})")
    ax1.set_yscale("log")
    ax1.set_ylabel("||P_a(f_b(x)) - P_b(f_a(x))||")
    ax1.legend(loc="lower left", fontsize=8)
    ax2.plot(its, scores, lw=0.4, color="tab:orange", alpha=0.6, label="the board P_P chose")
    ax2.plot(its, np.maximum.accumulate(scores), lw=1.2, color="saddlebrown", label="best so far")
    ax2.axhline(puzzle.max_score, color="gray", lw=0.8, ls=":")
    ax2.set_ylabel(f"score (of {puzzle.max_score})")
    ax2.set_xlabel("iteration n")
    ax2.legend(loc="lower left", fontsize=8)
    solved = "solved" if until < args.budget or stepper.solved[trial] else "unsolved"
    ax1.set_title(f"trial {trial} of the same run, stepped with F1Map: {solved} at iteration {until}")
    fig.tight_layout()
    fig.savefig(out / "gap.png", dpi=120)
    print(f"wrote {out / 'gap.png'}")


if __name__ == "__main__":
    main()
