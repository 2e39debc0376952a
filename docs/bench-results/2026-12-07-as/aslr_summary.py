#!/usr/bin/env python3
"""Summarises aslr_probe.sh's output (its stdout lines `tag variant row median_ns`, read from the
file given or stdin): part 1, each variant's medians per mode (aslr: usual processes; fixed:
under setarch -R) with their spread; part 2, each shift's ns per variant and their ratio, then the
median and mean over the shifts."""
import re
import statistics as st
import sys
from collections import defaultdict

lines = open(sys.argv[1]).read().splitlines() if len(sys.argv) > 1 else sys.stdin.read().splitlines()
data = defaultdict(list)  # (mode, variant, row) -> [ns]
shift = defaultdict(dict)  # row -> shift -> variant -> ns
for line in lines:
    f = line.split()
    if len(f) != 4 or not re.match(r"(aslr|fixed|shift)\d+$", f[0]):
        continue
    tag, v, row, ns = f[0], f[1], f[2], float(f[3])
    mode = re.match(r"[a-z]+", tag).group(0)
    data[(mode, v, row)].append(ns)
    if mode == "shift":
        shift[row].setdefault(int(tag[5:]), {})[v] = ns
rows = sorted({k[2] for k in data})
variants = sorted({k[1] for k in data})
print("## Part 1: one median per process")
for row in rows:
    for mode in ("aslr", "fixed"):
        for v in variants:
            xs = data.get((mode, v, row), [])
            if xs:
                print(f"{row:40s} {mode:5s} {v:5s} n={len(xs):2d} median {st.median(xs):6.1f} "
                      f"min {min(xs):6.1f} max {max(xs):6.1f}  [{' '.join(f'{x:.1f}' for x in xs)}]")
print("## Part 2: by stack shift (setarch -R)")
for row in rows:
    if row not in shift or len(variants) < 2:
        continue
    a, b = variants[0], variants[1]
    ratios = []
    print(f"{row}: shift {a} {b} {a}/{b}")
    for s in sorted(shift[row]):
        d = shift[row][s]
        if a in d and b in d:
            ratios.append(d[a] / d[b])
            print(f"  {s:5d} {d[a]:6.1f} {d[b]:6.1f} {d[a] / d[b]:.3f}")
    if ratios:
        ma = st.mean(shift[row][s][a] for s in shift[row] if a in shift[row][s])
        mb = st.mean(shift[row][s][b] for s in shift[row] if b in shift[row][s])
        print(f"  median ratio {st.median(ratios):.3f}, ratio of means over shifts {ma / mb:.3f} "
              f"({a} {ma:.1f}, {b} {mb:.1f})")
