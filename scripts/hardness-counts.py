#!/usr/bin/env python3
"""Exact solution counts of the hardness campaign's instances, where a small budget reaches
them: the second axis of "work per solution against hardness" (solution density).

For every instance of the ladder config (a file, or a `generate = {...}` entry rebuilt with
`concur generate`), runs the row-scan count on one thread under a time limit and appends one
line to OUT (`hardness-inputs/counts.jsonl` in the results folder, which `concur report`
reads): instance, board, colours, solutions, complete, nodes, seconds. An instance already on
file is skipped, so the script resumes; a count the limit cut short is recorded with
`complete: false` (the report leaves it out).

    scripts/hardness-counts.py examples/ladder-hardness.toml \
        benches/results/hardness/hardness-inputs/counts.jsonl [--time-limit 30] [--max-cells 56]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("out")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--max-cells", type=int, default=10**9)
    ap.add_argument("--bin", default=os.environ.get("CONCUR_BIN", "target/release/concur"))
    ap.add_argument("--puzzles", default=os.environ.get("CONCUR_PUZZLES", "../shared/puzzles"))
    a = ap.parse_args()
    cfg = tomllib.load(open(a.config, "rb"))
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    done = set()
    if os.path.exists(a.out):
        for line in open(a.out):
            try:
                done.add(json.loads(line)["instance"])
            except (ValueError, KeyError):
                pass
    tmp = tempfile.mkdtemp(prefix="hardness-counts-")
    for inst in cfg["instances"]:
        if "path" in inst:
            name, path = inst["path"], os.path.join(a.puzzles, inst["path"])
        else:
            g = inst["generate"]
            name = f'generated:{g["width"]}x{g["height"]}:seed{g.get("seed", 0)}'
            args = ["--width", str(g["width"]), "--height", str(g["height"]), "--seed", str(g.get("seed", 0))]
            if "frame_colors" in g:
                name += f':frame{g["frame_colors"]}'
                args += ["--frame-colors", str(g["frame_colors"])]
            if "inner_colors" in g:
                name += f':inner{g["inner_colors"]}'
                args += ["--inner-colors", str(g["inner_colors"])]
            path = os.path.join(tmp, name.replace(":", "_") + ".txt")
            subprocess.run([a.bin, "generate", *args, "-o", path], check=True)
        with open(path) as f:
            w, h = (int(t) for t in f.readline().split()[:2])
        if name in done or w * h > a.max_cells:
            continue
        out = subprocess.run(
            [a.bin, "count", path, "--engine", "scan", "--threads", "1", "--time-limit", str(a.time_limit), "--json"],
            capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{name}: count failed: {out.stderr.strip()}", file=sys.stderr)
            continue
        c = json.loads(out.stdout)
        line = {"instance": name, "width": w, "height": h, "solutions": c["solutions"],
                "up_to_rotation": c.get("up_to_rotation"), "complete": c["complete"], "nodes": c["nodes"],
                "wall_s": c["wall_s"], "engine": "scan", "time_limit": a.time_limit}
        with open(a.out, "a") as f:
            f.write(json.dumps(line) + "\n")
        print(f'{name}: {c["solutions"]} solutions{"" if c["complete"] else " (incomplete)"}, {c["nodes"]:.3g} nodes, {c["wall_s"]:.1f} s')


if __name__ == "__main__":
    main()
