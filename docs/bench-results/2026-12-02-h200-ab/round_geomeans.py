#!/usr/bin/env python3
"""round_geomeans.py DIR [NEW BASE]: per round, the geometric mean of NEW / BASE over a resource's
rows (all rows, and the rows of max 1 and 4 MiB), its median over the rounds and the rounds won;
DIR holds ab_call.sh's <variant>_<round>.json (unpack ab.tgz there). The pool's code is the same
in both builds here, so its ratios show what the host and the binaries' layout alone do."""
import glob, json, math, re, statistics as st, sys

d = sys.argv[1]
new, base = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("new", "base")

def load(f):
    return {b["run_name"].split("/iter")[0]: b["ns_per_op"]
            for b in json.load(open(f))["benchmarks"] if b.get("aggregate_name") == "median"}

rounds = sorted(int(re.findall(r"_(\d+)\.json", f)[0]) for f in glob.glob(f"{d}/{base}_*.json"))
print(f"| resource | rows | median over rounds of the geomean {new} / {base} | rounds won |")
print("| --- | --- | --- | --- |")
for res in ("arena", "pool"):
    for label, want in (("all", lambda r: True),
                        ("max 1 and 4 MiB", lambda r: re.search(r"max:(1|4)$", r) is not None)):
        gs = []
        for i in rounds:
            a, b = load(f"{d}/{new}_{i}.json"), load(f"{d}/{base}_{i}.json")
            ks = [k for k in b if k.startswith(f"random/{res}/") and want(k) and k in a]
            if ks:
                gs.append(math.exp(sum(math.log(a[k] / b[k]) for k in ks) / len(ks)))
        if gs:
            print(f"| {res} | {label} | {st.median(gs):.3f} | {sum(g < 1 for g in gs)}/{len(gs)} |")
