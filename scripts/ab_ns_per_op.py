#!/usr/bin/env python3
"""ns per operation from an ab_call.sh archive of random_allocations_bench runs (PREFIX=ra).

ab_call.sh's own table compares real_time; this prints the harness's ns_per_op counter instead,
as the median over rounds of each round's median, with the rounds' range, and each variant's
ratio to the last one named.

    python3 scripts/ab_ns_per_op.py OUT/ab.tgz "new base"
"""
import collections
import glob
import json
import os
import statistics
import sys
import tarfile
import tempfile


def main():
    archive, variants = sys.argv[1], sys.argv[2].split()
    folder = tempfile.mkdtemp()
    with tarfile.open(archive) as tar:
        tar.extractall(folder)
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in glob.glob(os.path.join(folder, "**", "*.json"), recursive=True):
        variant = os.path.basename(path).rsplit("_", 1)[0]
        try:
            data = json.load(open(path))
        except ValueError:
            continue  # a binary cut off by its timeout
        for b in data["benchmarks"]:
            if b.get("aggregate_name") == "median" and "ns_per_op" in b:
                rows[b["run_name"]][variant].append(b["ns_per_op"])
    ref = variants[-1]
    others = variants[:-1]
    print("| n | max MiB | " + " | ".join(variants) + " | " +
          " | ".join(f"{v} / {ref}" for v in others) + " |")
    print("| --- | --- |" + " --- |" * (len(variants) + len(others)))

    def key(name):
        return (int(name.split("n:")[1].split("/")[0]), int(name.split("max:")[1].split("/")[0]))

    for name in sorted(rows, key=key):
        med = {v: statistics.median(rows[name][v]) for v in variants if rows[name][v]}
        cells = [f"{med[v]:.0f} ({min(rows[name][v]):.0f}-{max(rows[name][v]):.0f})"
                 if v in med else "-" for v in variants]
        ratios = [f"{med[v] / med[ref]:.2f}" if v in med and ref in med else "-" for v in others]
        n, m = key(name)
        print(f"| {n:,} | {m} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
