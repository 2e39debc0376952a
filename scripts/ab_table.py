#!/usr/bin/env python3
"""The table of an A/B made by scripts/ab_call.sh: for each row, each variant's median over the
rounds of each round's median, with the rounds' range, and each variant's ratio to the last one
named.

    python3 scripts/ab_table.py FOLDER_OR_AB_TGZ PREFIX VARIANT... (the reference last)

PREFIX mt reads the Mops_per_s counter (higher is better); ra reads ns_per_op (lower is better;
until 2026-11-27 ab_call.sh compared real_time, a run's time, for ra).
"""
import collections
import glob
import json
import os
import statistics
import sys
import tarfile
import tempfile


def medians(folder, counter):
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in glob.glob(os.path.join(folder, "**", "*.json"), recursive=True):
        variant = os.path.basename(path).rsplit("_", 1)[0]
        try:
            data = json.load(open(path))
        except ValueError:
            continue  # a binary cut off by its timeout
        for b in data["benchmarks"]:
            if b.get("aggregate_name") == "median" and counter in b:
                rows[b["run_name"]][variant].append(b[counter])
    return rows


def main():
    source, prefix, variants = sys.argv[1], sys.argv[2], sys.argv[3:]
    if os.path.isfile(source):
        folder = tempfile.mkdtemp()
        with tarfile.open(source) as tar:
            tar.extractall(folder)
    else:
        folder = source
    counter, unit = ("Mops_per_s", "M ops/s, higher is better") if prefix == "mt" else (
        "ns_per_op", "ns per operation, lower is better")
    rows = medians(folder, counter)
    ref, others = variants[-1], variants[:-1]
    print(f"Medians of the rounds' medians ({unit}; the rounds' range in brackets); "
          f"ratios to {ref}.\n")
    print("| row | " + " | ".join(variants) + " | " +
          " | ".join(f"{v} / {ref}" for v in others) + " |")
    print("| --- |" + " --- |" * (len(variants) + len(others)))
    for row in sorted(rows):
        values = rows[row]
        med = {v: statistics.median(values[v]) for v in variants if values[v]}
        cells = [f"{med[v]:.3g} ({min(values[v]):.3g}-{max(values[v]):.3g})" if v in med else "-"
                 for v in variants]
        ratios = [f"{med[v] / med[ref]:.2f}" if v in med and med.get(ref, 0) > 0 else "-"
                  for v in others]
        name = row.replace("/iterations:1/manual_time", "")
        print(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
