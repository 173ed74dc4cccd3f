#!/usr/bin/env python3
"""The crossing table: the map on one GPU against the scan on the host cores, in wall-clock
seconds per solution, per board size, from a `concur report` summary.json:

    scripts/crossing.py SUMMARY.json [--cpu-machine TEXT] [--cpu-cores N] [--map LABEL]
        [--scan LABEL] [--min-cells C] [--max-cells C] [--fill docs/crossing.md]

The figures come from the report's "work per solution by machine" (`devices` in
summary.json, lab/src/ladder/report/devices.rs): per method and size, the work per solution pooled over
every machine that agrees (trial-iterations for the map, nodes for the scan), divided by each
machine's measured rate, with the exact 95% interval carried through. Then:

- the map on one GPU: seconds per solution on one device, for every device that ran it;
- the map and the scan on the host's cores: seconds per solution on one core divided by the
  cores (`--cpu-cores`; independent runs, one per core, so solutions come that much faster);
- the ratio map / scan, with the interval [map lo / scan hi, map hi / scan lo] (the two
  estimates are independent; this interval is conservative);
- the verdict per size: the map faster (the whole interval below 1), level (it holds 1),
  or the scan faster (above 1), and the first size where the map is not behind.

Every figure names its machine. Records that name none (older ladders) are the CPU machine
`--cpu-machine`. Until a device has run the map, the table has the CPU machine only and says
so. With `--fill FILE`, the table replaces what lies between the markers
`<!-- crossing:begin -->` and `<!-- crossing:end -->` in FILE; without it, it is printed.
"""
import argparse
import json
import sys

BEGIN, END = "<!-- crossing:begin -->", "<!-- crossing:end -->"


def fmt_s(v):
    if v is None:
        return "?"
    if v == 0:
        return "0"
    if v < 1e-3 or v >= 1e5:
        return f"{v:.2e}"
    digits = max(0, 2 - int(__import__("math").floor(__import__("math").log10(v))))
    return f"{v:.{digits}f}"


def fmt_interval(s):
    """s = [mean, lo, hi] in seconds; no mean without a solution, hi None when open."""
    mean, lo, hi = s
    if mean is None:
        return f"> {fmt_s(lo)} (none solved)" if lo is not None else "-"
    return f"{fmt_s(mean)} [{fmt_s(lo)}, {fmt_s(hi) if hi is not None else 'open'}]"


def scaled(s, k):
    return [None if v is None else v / k for v in s]


def ratio(a, b):
    """map / scan: [estimate, lo, hi]; None where not defined (open ends give None)."""
    am, alo, ahi = a
    bm, blo, bhi = b
    est = am / bm if am is not None and bm else None
    lo = alo / bhi if alo is not None and bhi else None
    hi = ahi / blo if ahi is not None and blo else None
    return [est, lo, hi]


def fmt_ratio(r):
    est, lo, hi = r
    f = lambda v: "?" if v is None else (f"{v:.3g}")
    if est is None:
        return f"> {f(lo)}" if lo is not None else "-"
    return f"{f(est)} [{f(lo)}, {f(hi) if hi is not None else 'open'}]"


def verdict(r):
    est, lo, hi = r
    if lo is not None and lo > 1:
        return "scan faster"
    if hi is not None and hi < 1:
        return "map faster"
    if lo is None and hi is None:
        return "-"
    return "level (interval holds 1)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("summary")
    ap.add_argument("--cpu-machine", default="the shared 2-core development VM (AMD EPYC)")
    ap.add_argument("--cpu-cores", type=int, default=2)
    ap.add_argument(
        "--host",
        default="cpu",
        help="the CPU machine whose cores the scan runs on, as records name it (`device`; "
        "\"cpu\" for records that name none)",
    )
    ap.add_argument("--map", default="rrr", help="the map's method label")
    ap.add_argument("--scan", default="scan", help="the scan's method label")
    ap.add_argument("--min-cells", type=int, default=49)
    ap.add_argument("--max-cells", type=int, default=64)
    ap.add_argument("--command", default=None, help="the command that made the summary, to state")
    ap.add_argument("--fill", default=None)
    a = ap.parse_args()
    d = json.load(open(a.summary))
    pools = {(p["label"], p["width"], p["height"]): p for p in d.get("devices", [])}
    sizes = sorted(
        {(w, h) for (_, w, h) in pools if a.min_cells <= w * h <= a.max_cells},
        key=lambda s: (s[0] * s[1], s),
    )
    sizes = [s for s in sizes if (a.map, *s) in pools and (a.scan, *s) in pools]

    def cpu(p):
        return [m for m in p["machines"] if m["per"] == "core" and m["name"] == a.host]

    def gpus(p):
        return [m for m in p["machines"] if m["per"] == "device"]

    devices = sorted({m["name"] for p in pools.values() if p["label"] == a.map for m in gpus(p)})
    out = []
    if not devices:
        out.append(
            f"**No device has run the campaign yet: this table holds the CPU machine only** "
            f"({a.cpu_machine}, {a.cpu_cores} cores). The map's column on one GPU fills in when "
            f"the report holds device runs of `{a.map}`."
        )
        out.append("")
    cores = a.cpu_cores
    head = ["size", "cells"]
    for g in devices:
        head.append(f"map on one GPU: {g} (s per solution [95% CI])")
    head += [
        f"map on {cores} cores of the CPU machine (s per solution [95% CI])",
        f"scan on {cores} cores of the CPU machine (s per solution [95% CI])",
    ]
    for g in devices:
        head.append(f"ratio map on {g} / scan")
    head += [f"ratio map / scan, both on the CPU machine", "verdict (best map column)", "pooled", "flags"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    crossing = None
    for w, h in sizes:
        mp, sp = pools[(a.map, w, h)], pools[(a.scan, w, h)]
        row = [f"{w}x{h}", str(w * h)]
        scan_cpu = cpu(sp)
        scan_s = scaled(scan_cpu[0]["seconds"], cores) if scan_cpu else [None] * 3
        map_dev = {m["name"]: m for m in gpus(mp)}
        for g in devices:
            row.append(fmt_interval(map_dev[g]["seconds"]) if g in map_dev else "not run")
        map_cpu = cpu(mp)
        map_s = scaled(map_cpu[0]["seconds"], cores) if map_cpu else [None] * 3
        row.append(fmt_interval(map_s) if map_cpu else "not run")
        row.append(fmt_interval(scan_s) if scan_cpu else "not run")
        best = None
        for g in devices:
            if g in map_dev:
                r = ratio(map_dev[g]["seconds"], scan_s)
                row.append(fmt_ratio(r))
                if best is None or (r[1] or 0) < (best[1] or 0):
                    best = r
            else:
                row.append("-")
        rc = ratio(map_s, scan_s)
        row.append(fmt_ratio(rc))
        best = best or rc
        v = verdict(best)
        if crossing is None and v != "scan faster" and v != "-":
            crossing = (w, h, v)
        row.append(v)
        row.append(
            "yes" if mp["pooled"] is not None and sp["pooled"] is not None else "**no** (machines disagree or share no instance)"
        )
        flags = [f"{p['label']}: {x} vs {y}" for p in (mp, sp) for x, y in p["disagree"]]
        flags += [f"{p['label']}: {x} and {y} share no instance" for p in (mp, sp) for x, y in p.get("apart", [])]
        row.append("; ".join(flags) if flags else "none")
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    what = "the map on one GPU" if devices else "the map on the CPU machine's cores"
    if not sizes:
        out.append("No size in range holds both methods.")
    elif crossing is None:
        out.append(
            f"**No crossing from {sizes[0][0]}x{sizes[0][1]} to {sizes[-1][0]}x{sizes[-1][1]}:** "
            f"{what} stays behind the scan on {cores} host cores at every size, beyond the intervals."
        )
    else:
        w, h, v = crossing
        out.append(
            f"**First size where {what} is not behind the scan on {cores} host cores: {w}x{h}** "
            f"({v})."
        )
    out.append("")
    machines = [f"CPU machine: {a.cpu_machine}, {cores} cores; each ladder run held one core, and "
                f"its rate (work / wall second) is the report's, from those runs"]
    machines += [f"GPU: {g}, one device; its rate is the report's, from its runs" for g in devices]
    out.append("Machines: " + "; ".join(machines) + ".")
    if a.command:
        out.append("")
        out.append(f"Made by: `{a.command}`.")
    text = "\n".join(out) + "\n"
    if a.fill:
        doc = open(a.fill).read()
        if BEGIN not in doc or END not in doc:
            sys.exit(f"{a.fill}: no {BEGIN} ... {END} markers")
        before, rest = doc.split(BEGIN, 1)
        _, after = rest.split(END, 1)
        open(a.fill, "w").write(before + BEGIN + "\n" + text + END + after)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
