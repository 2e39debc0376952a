#!/usr/bin/env python3
"""Summarises call2's stack-shift passes (shift_pass*.txt: `shiftS variant row median_ns`):
per pass, each variant's median and minimum over the 16 shifts and the paired ratios; then, over
the quiet passes (6 and 1b-5b), each shift's median per variant. Run in this folder."""
import collections
import glob
import statistics as st

files = sorted(glob.glob("shift_pass*.txt"), key=lambda f: (f.endswith("b.txt"), f))
quiet = {"shift_pass6.txt"} | {f"shift_pass{i}b.txt" for i in range(1, 6)}
ratios = collections.defaultdict(list)
by_shift = collections.defaultdict(list)
for f in files:
    d = {}
    for line in open(f):
        p = line.split()
        if len(p) == 4 and p[0].startswith("shift"):
            d[(int(p[0][5:]), p[1], p[2].split("/")[1])] = float(p[3])
            if f in quiet and p[2].split("/")[1] == "pool":
                by_shift[(int(p[0][5:]), p[1])].append(float(p[3]))
    for row in ("null", "pool"):
        shifts = [s for s in range(0, 4096, 256) if (s, "snew", row) in d and (s, "sold", row) in d]
        a = [d[(s, "snew", row)] for s in shifts]
        b = [d[(s, "sold", row)] for s in shifts]
        r = [x / y for x, y in zip(a, b)]
        ratios[row] += r
        print(f"{f:18s} {row}: snew median {st.median(a):6.1f} min {min(a):5.1f}, sold median "
              f"{st.median(b):6.1f} min {min(b):5.1f}; paired ratio median {st.median(r):.3f}")
for row, r in ratios.items():
    r.sort()
    n = len(r)
    print(f"{row}: all {n} paired ratios: median {st.median(r):.3f} "
          f"(quartiles {r[n // 4]:.3f}-{r[3 * n // 4]:.3f})")
print("pool, quiet passes: shift, snew median min max, sold median min max, ratio of medians")
for s in range(0, 4096, 256):
    a, b = by_shift[(s, "snew")], by_shift[(s, "sold")]
    print(f"{s:5d}  {st.median(a):5.1f} {min(a):5.1f} {max(a):5.1f}   "
          f"{st.median(b):5.1f} {min(b):5.1f} {max(b):5.1f}   {st.median(a) / st.median(b):.3f}")
