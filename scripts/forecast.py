#!/usr/bin/env python3
"""A forecast, stated as such, of the cost per solution at 81 and 100 cells (9x9, 10x10) from
the pooled rates of a report's summary.json, and of where the map's curve would cross the
tree searches'.

    scripts/forecast.py benches/results/campaign-8x8/report/summary.json [UNIT] [FROM_CELLS]

UNIT is "seconds" (core-seconds per solution, the default) or "work". Per method, every size
from FROM_CELLS (default 49) up enters, solved or not: with memoryless runs, the solutions d
found in a total T spent at a size are Poisson with mean T / cost, so the model
cost(cells) = exp(a + b cells) is fitted by maximum likelihood (a Poisson regression with
offset ln T; several instances of one size pool, as the report pools them). A size with no
solution pushes the line up as much as its spend says, no more. The band is a parametric
bootstrap: each size's solutions are redrawn, Poisson with the fitted mean, and the line
refitted, 2,000 times; the 2.5 and 97.5 percentiles are given. Nothing here is a
measurement: the line assumes that the growth per cell of the fitted sizes holds beyond them,
which the step from 49 to 56 cells (faster than from 36 to 49) already warns against.
"""
import json, math, random, sys

summary = json.load(open(sys.argv[1]))
unit = sys.argv[2] if len(sys.argv) > 2 else "seconds"
from_cells = int(sys.argv[3]) if len(sys.argv) > 3 else 49
key = "pooled_seconds" if unit == "seconds" else "pooled_work"
methods = ["rrr", "scan", "backtrack ac4"]
targets = [64, 81, 100]
rng = random.Random(2027)


def points(label):
    """Per size (cells): total spent and solutions, pooled over the instances of that size."""
    by = {}
    for r in summary["rows"]:
        if r["label"] != label or r["area"] < from_cells:
            continue
        p = r[key]
        t, d = by.get(r["area"], (0.0, 0))
        by[r["area"]] = (t + p["total"], d + p["solutions"])
    return sorted(by.items())


def fit(pts):
    """Maximum likelihood of d ~ Poisson(T exp(-(a + b c))) over the points (c, T, d), by
    Newton's method on (a, b); returns None when no point has a solution (no finite fit)."""
    if not any(d for _, _, d in pts):
        return None
    c0 = sum(c for c, _, _ in pts) / len(pts)

    def loglik(a, b):
        return sum(-d * (a + b * (c - c0)) - t * math.exp(-(a + b * (c - c0))) for c, t, d in pts)

    # Start from the pooled rate over all sizes, with no growth; damped Newton steps (halved
    # until the likelihood rises) keep the exponentials from overshooting.
    a = math.log(sum(t for _, t, _ in pts) / sum(d for _, _, d in pts))
    b = 0.0
    for _ in range(200):
        # l(a, b) = sum d (-(a + b x)) - T exp(-(a + b x)), x = c - c0.
        ga = gb = haa = hab = hbb = 0.0
        for c, t, d in pts:
            x = c - c0
            m = t * math.exp(-(a + b * x))
            ga += m - d
            gb += (m - d) * x
            haa -= m
            hab -= m * x
            hbb -= m * x * x
        det = haa * hbb - hab * hab
        if det == 0:
            break
        da = (hbb * ga - hab * gb) / det
        db = (haa * gb - hab * ga) / det
        step, l0 = 1.0, loglik(a, b)
        while step > 1e-6:
            try:
                if loglik(a - step * da, b - step * db) >= l0:
                    break
            except OverflowError:
                pass
            step /= 2
        a, b = a - step * da, b - step * db
        if abs(step * da) + abs(step * db) < 1e-10:
            break
    # Back to a + b c.
    return a - b * c0, b


def poisson(lam):
    """A Poisson draw (by exponential gaps; lam is at most a few hundred here)."""
    k, s = 0, rng.expovariate(1.0)
    while s < lam:
        k += 1
        s += rng.expovariate(1.0)
    return k


def draws(pts, line, n=2000):
    """Bootstrap lines (a, b) of ln(cost) against cells, redrawn from the fitted line."""
    a, b = line
    out = []
    while len(out) < n:
        redrawn = [(c, t, poisson(t / math.exp(a + b * c))) for c, t, _ in pts]
        f = fit(redrawn)
        if f is not None and f[1] > -1:
            out.append(f)
    return out


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def show(v):
    if unit == "seconds":
        if v >= 3.15e7:
            return f"{v / 3.15e7:,.3g} core-years"
        if v >= 86400:
            return f"{v / 86400:,.3g} core-days"
        return f"{v:,.3g} s"
    return f"{v:.2e}"


lines = {}
print(f"Forecast of {'core-seconds' if unit == 'seconds' else 'work'} per solution, fitted on sizes >= {from_cells} cells")
print()
print("| method | sizes fitted (cells: solutions in total spent) | growth per cell [95%] | " + " | ".join(f"{t} cells [95%]" for t in targets) + " |")
print("|---|---|---|" + "---|" * len(targets))
for m in methods:
    pts = [(c, t, d) for c, (t, d) in points(m)]
    line = fit(pts)
    if line is None or len(pts) < 2:
        continue
    a, b = line
    bs = draws(pts, line)
    lines[m] = bs
    g = [math.exp(bb) for _, bb in bs]
    cells = ", ".join(f"{c}: {d} in {show(t)}" for c, t, d in pts)
    row = f"| {m} | {cells} | x{math.exp(b):.2f} [{pct(g, 0.025):.2f}, {pct(g, 0.975):.2f}] |"
    for t in targets:
        f = [math.exp(aa + bb * t) for aa, bb in bs]
        row += f" {show(math.exp(a + b * t))} [{show(pct(f, 0.025))}, {show(pct(f, 0.975))}] |"
    print(row)
print()
if unit != "seconds":
    print("(Work units differ between methods: iterations against nodes. Compare costs in core-seconds.)")
elif "rrr" in lines:
    for other in ("scan", "backtrack ac4"):
        if other not in lines:
            continue
        print(f"The map against {other}: ratio of cost per solution (map / {other}), forecast [95%]:")
        for t in targets:
            r = [math.exp((a1 + b1 * t) - (a2 + b2 * t)) for (a1, b1), (a2, b2) in zip(lines["rrr"], lines[other])]
            cross = sum(1 for v in r if v < 1) / len(r)
            print(f"  {t} cells: {pct(r, 0.5):.3g} [{pct(r, 0.025):.3g}, {pct(r, 0.975):.3g}]; "
                  f"share of bootstrap lines where the map is cheaper: {cross:.1%}")
