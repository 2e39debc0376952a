#!/usr/bin/env python3
"""paired.py DIR VARIANT... : per row, the median over rounds of VARIANT / last VARIANT (the
reference) within each round, with the rounds the variant won, from ab_call.sh's round JSONs
(DIR holds <variant>_<round>.json; unpack ab.tgz there)."""
import glob, json, re, statistics as st, sys

def load(f):
    r = {}
    for b in json.load(open(f))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            r[b["run_name"].split("/iter")[0]] = b["ns_per_op"]
    return r

d, vs = sys.argv[1], sys.argv[2:]
runs = {v: [load(f) for f in sorted(glob.glob(f"{d}/{v}_*.json"),
                                    key=lambda s: int(re.findall(r"_(\d+)\.json", s)[0]))]
        for v in vs}
ref = vs[-1]
key = lambda r: (r.split("/")[1], int(re.findall(r"n:(\d+)", r)[0]), int(re.findall(r"max:(\d+)", r)[0]))
print("| row | " + " | ".join(f"{v} / {ref} (rounds won)" for v in vs[:-1]) + " |")
print("| --- |" + " --- |" * (len(vs) - 1))
for row in sorted(runs[ref][0], key=key):
    cells = []
    for v in vs[:-1]:
        rs = [a[row] / b[row] for a, b in zip(runs[v], runs[ref]) if row in a and row in b]
        cells.append(f"{st.median(rs):.3f} ({sum(x < 1 for x in rs)}/{len(rs)})")
    print(f"| {row} | " + " | ".join(cells) + " |")
