#!/usr/bin/env python3
# to_json.py OWEN.txt OUT.json: Owen's puzzle text as the peer's site JSON (same piece order)
import json, sys
L = [l.split() for l in open(sys.argv[1]) if l.strip()]
w, h = map(int, L[0]); pieces = [list(map(int, l)) for l in L[1:]]
assert len(pieces) == w * h
json.dump({"name": sys.argv[1].rsplit('/', 1)[-1], "width": w, "height": h,
           "numColors": max(max(p) for p in pieces) + 1, "pieces": pieces, "hints": []}, open(sys.argv[2], 'w'))
