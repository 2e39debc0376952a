"""Paired ratios from scripts/ab_call.sh's ab.tgz: for each round, a variant's median over another's
from the same round (they ran back to back), then the median over rounds and the quartiles.
Usage: python3 paired_ratios.py AB_TGZ a/b [a/b ...]"""
import io, json, re, statistics, sys, tarfile

tf = tarfile.open(sys.argv[1])
runs = {}
for m in tf.getmembers():
    hit = re.search(r"([a-z0-9]+)_(\d+)\.json$", m.name)
    if hit:
        j = json.load(tf.extractfile(m))
        runs[(hit.group(1), int(hit.group(2)))] = {
            b["run_name"]: b["ns_per_op"] for b in j["benchmarks"]
            if b.get("aggregate_name") == "median"}
rounds = sorted({r for (_, r) in runs})
for pair in sys.argv[2:]:
    a, b = pair.split("/")
    print(f"{a} / {b} ({len(rounds)} rounds): median (quartiles)")
    for row in sorted(runs[(a, rounds[0])]):
        rs = sorted(runs[(a, r)][row] / runs[(b, r)][row] for r in rounds)
        q = len(rs) // 4
        print(f"  {row:32s} {statistics.median(rs):.3f} ({rs[q]:.3f}-{rs[-1 - q]:.3f})")
