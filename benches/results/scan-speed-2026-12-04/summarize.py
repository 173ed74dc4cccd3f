#!/usr/bin/env python3
"""Tables from the raw lines of this directory.

  python3 summarize.py small.txt 8x8.txt...   side-by-side lines (peer_run.sh / scan_run.sh)
  python3 summarize.py --rates rates.jsonl    walker rates (rate_ratio.sh)

Per (puzzle, solver): runs, solved, median and mean search seconds to the first solution
(unsolved runs count at their cap in the mean and rank as slowest in the median), nodes/s
(total nodes over total search seconds), and the pooled core-seconds and nodes per solution
(total over all runs, solved or not, divided by the solutions; with none, the one-sided 95%
bound total / ln 20).
"""
import json, math, statistics, sys
from collections import defaultdict


def kv(line):
    return dict(t.split('=', 1) for t in line.split() if '=' in t)


def runs(paths):
    out = defaultdict(list)
    for p in paths:
        for line in open(p):
            if line.startswith('solver='):
                r = kv(line)
                out[(r['puzzle'], r['solver'])].append(r)
    return out


def main(paths):
    print('| puzzle | solver | runs solved | median s | mean s | nodes/s | pooled core-s per solution | pooled nodes per solution | load (min-max) |')
    print('|---|---|---|---|---|---|---|---|---|')
    for (puz, solver), rs in sorted(runs(paths).items()):
        s = [float(r['search_s'] or r['cap_s']) for r in rs]
        solved = sum(r['status'] == 'solved' for r in rs)
        bad = sum(r['status'] not in ('solved', 'unsolved') for r in rs)
        nodes = sum(int(r['nodes'] or 0) for r in rs)
        med = statistics.median([x if r['status'] == 'solved' else math.inf for x, r in zip(s, rs)])
        loads = [float(r['load']) for r in rs]
        tot = sum(s)
        if solved:
            pooled, pn = f'{tot / solved:,.4g}', f'{nodes / solved:.3g}'
        else:
            pooled, pn = f'> {tot / math.log(20):,.0f} (none)', f'> {nodes / math.log(20):.3g}'
        print(f'| {puz} | {solver} | {solved}/{len(rs)}' + (f' ({bad} bad)' if bad else '') +
              f' | {med:.3f} | {statistics.mean(s):.3f} | {nodes / tot / 1e6:.1f} M | {pooled} | {pn} | {min(loads):.1f}-{max(loads):.1f} |')


def rates(path):
    by = defaultdict(lambda: [0, 0.0, []])
    for line in open(path):
        r = json.loads(line)
        b = by[(r['puzzle'], r['walker'])]
        b[0] += r['nodes']; b[1] += r['search_s']; b[2].append(r['load_before'])
    print('| puzzle | table walker nodes/s | fast walker nodes/s | ratio | load (min-max) |')
    print('|---|---|---|---|---|')
    for puz in sorted({p for p, _ in by}):
        t, f = by[(puz, 'table')], by[(puz, 'fast')]
        rt, rf = t[0] / t[1], f[0] / f[1]
        ls = t[2] + f[2]
        print(f'| {puz} | {rt / 1e6:.1f} M | {rf / 1e6:.1f} M | {rf / rt:.2f} | {min(ls):.1f}-{max(ls):.1f} |')


if __name__ == '__main__':
    if sys.argv[1] == '--rates':
        rates(sys.argv[2])
    else:
        main(sys.argv[1:])
