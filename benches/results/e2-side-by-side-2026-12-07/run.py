#!/usr/bin/env python3
"""The side-by-side run on the official puzzle: concur's beam pipeline and the eternity2.dev
engines, one core each, 60 s, the ten eternity2.dev instances, alternating engines, every
board re-scored by `concur verify`. Appends one JSON line a run to results.jsonl as it goes
and skips the runs already there, so it resumes where it stopped.

    PEER=/path/to/single-core-benchmark CONCUR=target/release/concur \\
      python3 run.py --seeds 1 2 3 --engines concur producer --pair

PEER is a folder where the eternity2.dev single-core benchmark (raphael-anjou/eternity2,
research/experiments/single-core-benchmark) was built by hand as its README says; nothing of
it is kept here. The peer's engines are run as its scripts/run_standalone.sh runs them
(producer: width 80,000, order comb:14, tolerance 0, one thread; alns: run_alns's pipeline).
"""
import argparse, json, os, pathlib, subprocess, tempfile, threading, time

HERE = pathlib.Path(__file__).resolve().parent
PUZZLES = pathlib.Path(os.environ.get("CONCUR_PUZZLES", HERE.parents[3] / "shared" / "puzzles")) / "eternity2_dev_cc0"


def verify(concur, puzzle, board):
    out = subprocess.run([concur, "verify", str(puzzle), board, "--json"], capture_output=True, text=True)
    v = json.loads(out.stdout)
    return v["score"], v.get("viewer_link")


def run_concur(args, v, seed, pin, tmp, method="beam"):
    puzzle = PUZZLES / f"e2-16x16-v{v:02d}.json"
    sol = tmp / "concur.sol"
    cmd = [args.concur, "solve", str(puzzle), "--method", method, "--threads", "1",
           "--time-limit", str(args.seconds), "--seed", str(seed), "--json", "-o", str(sol)] + args.concur_args
    t0 = time.monotonic()
    out = subprocess.run(pin + cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    rep = json.loads(out.stdout)
    score, link = verify(args.concur, puzzle, str(sol))
    keys = ("width", "beam_score", "beam_s", "polish_iterations", "nodes_per_s", "best_depth", "best_breaks", "nodes")
    extra = {k: rep[k] for k in keys if k in rep}
    return score, link, wall, " ".join(cmd[1:]), extra


def run_map_alns(args, v, seed, pin, tmp):
    """The map in the beam's place: RRR for half the budget, then ALNS from its best board."""
    puzzle = PUZZLES / f"e2-16x16-v{v:02d}.json"
    half = args.seconds / 2
    sol, out = tmp / "map.sol", tmp / "alns.sol"
    rrr = [args.concur, "solve", str(puzzle), "--method", "rrr", "--backend", "cpu", "--threads", "1",
           "--time-limit", f"{half:g}", "--seed", str(seed), "--json", "-o", str(sol)]
    alns = [args.concur, "solve", str(puzzle), "--method", "alns", "--start", str(sol),
            "--time-limit", f"{half:g}", "--seed", str(seed), "--json", "-o", str(out)]
    t0 = time.monotonic()
    subprocess.run(pin + rrr, capture_output=True, text=True)
    map_score, _ = verify(args.concur, puzzle, str(sol))
    subprocess.run(pin + alns, capture_output=True, text=True)
    wall = time.monotonic() - t0
    score, link = verify(args.concur, puzzle, str(out))
    return score, link, wall, " ".join(rrr[1:]) + " && " + " ".join(alns[1:]), {"map_score": map_score}


def run_scan_alns(args, v, seed, pin, tmp):
    """The scan (with --concur-args, e.g. its breaks) for 70 % of the budget, then ALNS from its
    board for the rest: the beam pipeline's split, with the scan as the builder."""
    puzzle = PUZZLES / f"e2-16x16-v{v:02d}.json"
    first = round(args.seconds * 0.7, 3)
    sol, out = tmp / "scan.sol", tmp / "alns.sol"
    scan = [args.concur, "solve", str(puzzle), "--method", "scan", "--threads", "1", "--time-limit", f"{first:g}",
            "--seed", str(seed), "--json", "-o", str(sol)] + args.concur_args
    alns = [args.concur, "solve", str(puzzle), "--method", "alns", "--start", str(sol),
            "--time-limit", f"{args.seconds - first:g}", "--seed", str(seed), "--json", "-o", str(out)]
    t0 = time.monotonic()
    rep = json.loads(subprocess.run(pin + scan, capture_output=True, text=True).stdout)
    scan_score, _ = verify(args.concur, puzzle, str(sol))
    subprocess.run(pin + alns, capture_output=True, text=True)
    wall = time.monotonic() - t0
    score, link = verify(args.concur, puzzle, str(out))
    extra = {"scan_score": scan_score, "best_depth": rep.get("best_depth"), "best_breaks": rep.get("best_breaks")}
    return score, link, wall, " ".join(scan[1:]) + " && " + " ".join(alns[1:]), extra


def run_peer(args, engine, v, seed, pin, tmp):
    puzzle = PUZZLES / f"e2-16x16-v{v:02d}.json"
    peer = pathlib.Path(args.peer)
    csv = peer / "variants" / f"variant_{v:02d}.csv"
    out_json = tmp / f"{engine}.json"
    budget = args.peer_timeout or args.seconds
    script = f'source scripts/run_standalone.sh; run_{engine} {csv} {seed} {budget} {out_json}'
    env = dict(os.environ)
    if args.producer_width:
        env["BENCH_PRODUCER_BEAM"] = str(args.producer_width)
    t0 = time.monotonic()
    subprocess.run(pin + ["bash", "-c", script], cwd=peer, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    cmd = f"run_{engine} variants/variant_{v:02d}.csv {seed} {budget} OUT.json"
    doc = json.loads(out_json.read_text()) if out_json.exists() else {}
    if not doc.get("url"):
        return 0, None, wall, cmd, {"note": "no board: the engine did not finish within its wrapper's timeout"}
    score, link = verify(args.concur, puzzle, doc["url"])
    extra = {"self_score": doc.get("score")}
    if args.producer_width:
        extra["width"] = args.producer_width
        cmd = f"BENCH_PRODUCER_BEAM={args.producer_width} " + cmd
    return score, link, wall, cmd, extra


def run_algo(args, engine, v, seed, pin, tmp):
    """One of the peer's native engine family (`run_algo --algo NAME`, e.g. gacolor_ac3). Its
    best board is a partial board (empty cells); it is completed greedily by concur (ALNS's
    start with --max-iters 0: the rule concur's scan and backtracker use for their own best
    boards) before it is scored."""
    puzzle = PUZZLES / f"e2-16x16-v{v:02d}.json"
    peer = pathlib.Path(args.peer)
    out_json, sol = tmp / "board.json", tmp / "completed.sol"
    cmd = [str(peer / "engine/target/release/run_algo"), "--puzzle", f"variants/variant_{v:02d}.json", "--algo",
           engine, "--seed", str(seed), "--budget-ms", str(args.seconds * 1000), "--emit", str(out_json)]
    t0 = time.monotonic()
    out = subprocess.run(pin + cmd, cwd=peer, capture_output=True, text=True)
    wall = time.monotonic() - t0
    line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT")), "")
    fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    doc = json.loads(out_json.read_text()) if out_json.exists() else {}
    if not doc.get("url"):
        return 0, None, wall, " ".join(cmd[1:]), {"note": "no board"}
    complete = [args.concur, "solve", str(puzzle), "--method", "alns", "--start", doc["url"], "--max-iters", "0",
                "--json", "-o", str(sol)]
    subprocess.run(complete, capture_output=True, text=True)
    score, link = verify(args.concur, puzzle, str(sol))
    extra = {"self_score": doc.get("score"), "breaks": doc.get("breaks"), "nodes": int(fields.get("nodes", 0)),
             "nodes_per_s": int(fields.get("nps", 0)), "completion": "concur's greedy completion",
             "partial_viewer_link": doc["url"]}
    return score, link, wall, "run_algo " + " ".join(cmd[1:]), extra


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--instances", type=int, nargs="+", default=list(range(10)))
    ap.add_argument("--engines", nargs="+", default=["concur", "producer"],
                    help="concur (the beam pipeline), scan, scan-alns, backtrack, map-alns; the peer's producer, alns, "
                         "blackwood, verhaard, or run_algo:NAME (its native family, e.g. run_algo:gacolor_ac3)")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--core", type=int, default=None, help="pin every run to this core (taskset)")
    ap.add_argument("--pair", action="store_true", help="run the engines of an instance and seed at once, one a core")
    ap.add_argument("--out", default=str(HERE / "results.jsonl"))
    ap.add_argument("--tag", default="concur", help="the name of concur's row")
    ap.add_argument("--producer-width", type=int, default=None, help="the producer's beam width (default: its wrapper's 80,000)")
    ap.add_argument("--best-of", type=int, default=None, metavar="RUNS",
                    help="run the engine RUNS times with new seeds (1000 x seed + k) and record the best board; each run "
                         "is appended to OUT's .runs.jsonl as it ends (it resumes)")
    ap.add_argument("--peer-timeout", type=int, default=None, metavar="SECONDS",
                    help="the budget handed to the peer's wrapper instead of --seconds; for the producer it is only its "
                         "timeout (its width sets its work), so a run slowed by work beside it is not killed")
    ap.add_argument("--beside", default=None, help="what ran on the other core (recorded with each run)")
    ap.add_argument("--concur-args", nargs=argparse.REMAINDER, default=[])
    args = ap.parse_args()
    args.concur = os.environ.get("CONCUR", "concur")
    args.peer = os.environ.get("PEER", "")
    done = set()
    out = pathlib.Path(args.out)
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["engine"], int(r["instance"][1:]), r["seed"]))
    def row_name(engine):
        name = args.tag if engine in ("concur", "scan", "scan-alns", "backtrack") else engine
        if engine.startswith("run_algo:"):
            name = engine.split(":", 1)[1] + (f" ({args.seconds} s)" if args.seconds != 60 else "")
        if engine == "producer" and args.producer_width:
            name = f"producer (width {args.producer_width})"
        if args.best_of:
            name += f" (best of {args.best_of} runs)"
        return name

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")

    def single(engine, v, seed, pin):
        with tempfile.TemporaryDirectory() as t:
            t = pathlib.Path(t)
            if engine == "concur":
                return run_concur(args, v, seed, pin, t)
            if engine == "scan":
                return run_concur(args, v, seed, pin, t, method="scan")
            if engine == "scan-alns":
                return run_scan_alns(args, v, seed, pin, t)
            if engine == "backtrack":
                return run_concur(args, v, seed, pin, t, method="backtrack")
            if engine == "map-alns":
                return run_map_alns(args, v, seed, pin, t)
            if engine.startswith("run_algo:"):
                return run_algo(args, engine.split(":", 1)[1], v, seed, pin, t)
            return run_peer(args, engine, v, seed, pin, t)

    def best_of(engine, v, seed, pin):
        """--best-of runs with seeds 1000 x seed + 1, + 2, ...; the best board."""
        log = out.with_suffix(".runs.jsonl")
        name = row_name(engine)
        runs = []
        if log.exists():
            runs = [r for r in map(json.loads, log.read_text().splitlines())
                    if (r["engine"], r["instance"], r["seed"]) == (name, f"v{v:02d}", seed)]
        while len(runs) < args.best_of:
            sub = 1000 * seed + len(runs) + 1
            score, link, wall, cmd, extra = single(engine, v, sub, pin)
            r = {"engine": name, "instance": f"v{v:02d}", "seed": seed, "run_seed": sub, "score": score,
                 "wall_s": round(wall, 2), "command": cmd, **extra, "viewer_link": link}
            with lock:
                with log.open("a") as f:
                    f.write(json.dumps(r) + "\n")
            print(f"  {name} v{v:02d} seed {sub}: {score} in {wall:.1f} s", flush=True)
            runs.append(r)
        best = max(runs, key=lambda r: r["score"])
        extra = {"runs": len(runs), "scores": [r["score"] for r in runs], "best_run_seed": best["run_seed"]}
        return best["score"], best["viewer_link"], sum(r["wall_s"] for r in runs), best["command"], extra

    def one(engine, v, seed, core):
        name = row_name(engine)
        pin = ["taskset", "-c", str(core)] if core is not None else []
        if args.best_of:
            score, link, wall, cmd, extra = best_of(engine, v, seed, pin)
        else:
            score, link, wall, cmd, extra = single(engine, v, seed, pin)
        rec = {"engine": name, "instance": f"v{v:02d}", "seed": seed, "score": score, "wall_s": round(wall, 2),
               "budget_s": args.seconds, "command": cmd, "cpu": cpu, "core": core,
               "beside": args.beside or (args.pair and "the other engine on the other core" or "nothing"),
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **extra, "viewer_link": link}
        with lock:
            with out.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            print(f"{name} v{v:02d} seed {seed}: {score} in {wall:.1f} s", flush=True)

    lock = threading.Lock()
    k = 0
    for seed in args.seeds:
        for v in args.instances:
            engines = args.engines if k % 2 == 0 else list(reversed(args.engines))
            k += 1
            todo = [e for e in engines if (row_name(e), v, seed) not in done]
            if args.pair:
                # One engine a core, at the same time; the cores alternate between pairs.
                threads = [threading.Thread(target=one, args=(e, v, seed, (i + k) % 2)) for i, e in enumerate(todo)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
            else:
                for e in todo:
                    one(e, v, seed, args.core)


if __name__ == "__main__":
    main()
