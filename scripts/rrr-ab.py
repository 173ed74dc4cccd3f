#!/usr/bin/env python3
"""RRR iterations per second on one core for several command variants, alternating them
round by round so that they share the machine's load; user CPU time of each run.

    scripts/rrr-ab.py "uniform=target/release/concur --join-weights 1,1,1 --restart-stall 0" \\
                      "default=target/release/concur"

Each variant is `NAME=BINARY [EXTRA ARGS...]`; the extra arguments follow the solve arguments.
Cases: set 1's 5x5 twin (one side recoloured so that it never solves: steady state), 7x7 and
8x8, one thread, --all-trials. Env: ROUNDS (default 5), CASES (e.g. "5t,7"), PUZZLES.
Prints per case and variant the median and best it/s, and the (best score, iterations) seen,
which must agree between variants that run the same iterates.
"""
import os, resource, shlex, subprocess, sys, tempfile, json
variants = [(a.split("=", 1)[0], shlex.split(a.split("=", 1)[1])) for a in sys.argv[1:]]
P = os.path.join(os.environ.get("PUZZLES", "../shared/puzzles"), "brendan_owen/pieces_set_1")
lines = open(f"{P}/pieces_05x05.txt").read().splitlines()
assert lines[-1] == "6 7 7 7", "set 1's 5x5 is not the expected file"
lines[-1] = "6 7 7 6"
twin = os.path.join(tempfile.mkdtemp(), "twin_05x05.txt")
open(twin, "w").write("\n".join(lines) + "\n")
cases = [("5t", twin, 4, 50000), ("7", f"{P}/pieces_07x07.txt", 2, 20000), ("8", f"{P}/pieces_08x08.txt", 2, 10000)]
if os.environ.get("CASES"):
    cases = [c for c in cases if c[0] in os.environ["CASES"].split(",")]
rounds = int(os.environ.get("ROUNDS", "5"))

def run(cmd, f, t, it):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    out = subprocess.run([cmd[0], "solve", f, "--method", "rrr", "--trials", str(t), "--threads", "1", "--all-trials",
                          "--max-iters", str(it), "--seed", "1", "--json"] + cmd[1:], capture_output=True, text=True).stdout
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    d = json.loads([l for l in out.splitlines() if l.startswith("{")][0])
    return d["trial_iterations"] / (r1 - r0), (d["best_score"], d["trial_iterations"])

for name, f, t, it in cases:
    res = {v: [] for v, _ in variants}
    for _ in range(rounds):
        for v, cmd in variants:
            res[v].append(run(cmd, f, t, it))
    for v, _ in variants:
        xs = sorted(r[0] for r in res[v])
        print(f"{name:>3} {v:>12}: median {xs[len(xs) // 2]:>9.0f} best {xs[-1]:>9.0f} it/s  {sorted(set(r[1] for r in res[v]))}", flush=True)
