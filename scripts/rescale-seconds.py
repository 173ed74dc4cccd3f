#!/usr/bin/env python3
"""Convert one method's core-seconds in a report's summary.json to a new per-core rate, when the
work per solution is unchanged (the same search order, the same nodes): every seconds figure of
that method's rows (pooled total, mean and interval; quartiles and median interval) and of its
CPU machines' entries in `devices` (rate multiplied, seconds divided) is divided by the rate
factor of its size. Work, runs and solutions stay as measured. The output is a
conversion, not a measurement; the scripts that read summary.json (pooled-table.py,
forecast.py) read it unchanged.

    scripts/rescale-seconds.py SUMMARY METHOD SIZE=FACTOR[,SIZE=FACTOR...] [DEFAULT] > OUT.json

DEFAULT (the factor for sizes not listed) defaults to 1 (unchanged).
"""
import json, sys

summary = json.load(open(sys.argv[1]))
method = sys.argv[2]
factors = {k: float(v) for k, v in (p.split("=") for p in sys.argv[3].split(","))}
default = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0


def scale(v, f):
    if v is None:
        return None
    if isinstance(v, list):
        return [scale(x, f) for x in v]
    return v / f


for r in summary["rows"]:
    if r["label"] != method:
        continue
    f = factors.get(f'{r["width"]}x{r["height"]}', default)
    p = r["pooled_seconds"]
    for k in ("total", "mean", "ci"):
        p[k] = scale(p[k], f)
    s = r["seconds"]
    for k in ("quartiles", "median_ci"):
        if k in s:
            s[k] = scale(s[k], f)
    r["rate_factor"] = f

# The report's work per solution by machine (read by crossing.py): the CPU machines' rates for
# that method are multiplied by the factor, their seconds divided by it; device rates untouched.
for e in summary.get("devices", []):
    if e["label"] != method:
        continue
    f = factors.get(f'{e["width"]}x{e["height"]}', default)
    for m in e["machines"]:
        if m["name"] != "cpu":
            continue
        m["rate"] = m["rate"] * f
        m["total_s"] = m["total_s"] / f
        m["seconds"] = scale(m["seconds"], f)
json.dump(summary, sys.stdout)
