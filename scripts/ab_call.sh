#!/usr/bin/env bash
# A/B of benchmark binaries built from one source against different header trees, for one device
# call: runs each variant's binary in turn, alternating, for ROUNDS rounds, and prints a table of
# the medians of the rounds' medians with each variant's ratio to the first one named.
#
#   VARIANTS="new base" FILTER='^mt(ptds)?/fixed_size/' bash scripts/ab_call.sh OUT [ROUNDS]
#
#   OUT       folder for ab.tgz (every round's Google Benchmark JSON) and ab_table.md
#   ROUNDS    alternating rounds (default 3)
#   VARIANTS  binaries .gpu/abf/${PREFIX}_<variant> (default "new base"; the last is the reference)
#   PREFIX    mt (multithread_bench, counter Mops_per_s, default) or ra (random_allocations_bench,
#             real time per operation)
#   FILTER    --benchmark_filter (default: every row)
#   REPS      --benchmark_repetitions per round (default 3); TIMEOUT seconds per binary (default 60)
# Libraries come from .gpu/lib (carry ".gpu/abf" and ".gpu/lib").
set -u
final=${1:?out dir}
rounds=${2:-3}
prefix=${PREFIX:-mt}
variants=${VARIANTS:-new base}
out=$(mktemp -d)
mkdir -p "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
for r in $(seq 1 "$rounds"); do
  for v in $variants; do
    timeout "${TIMEOUT:-60}" ".gpu/abf/${prefix}_$v" --benchmark_filter="${FILTER:-.}" \
      --benchmark_repetitions="${REPS:-3}" --benchmark_report_aggregates_only=true \
      --benchmark_out_format=json --benchmark_out="$out/${v}_$r.json" >/dev/null 2>&1 ||
      echo "rc $? $v round $r"
    echo "round $r $v done at $(($(date +%s) - t0)) s"
  done
done
python3 - "$out" "$prefix" $variants <<'PY' | tee "$final/ab_table.md"
import collections, glob, json, os, statistics, sys
folder, prefix, variants = sys.argv[1], sys.argv[2], sys.argv[3:]
ref = variants[-1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(os.path.join(folder, "*.json")):
    v = os.path.basename(f).rsplit("_", 1)[0]
    try:
        data = json.load(open(f))
    except ValueError:
        continue  # a binary cut off by its timeout
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        value = b["Mops_per_s"] if prefix == "mt" else b["real_time"]
        rows[b["run_name"]][v].append(value)
unit = "M ops/s, higher is better" if prefix == "mt" else "time, lower is better"
others = [v for v in variants if v != ref]
print(f"Medians of the rounds' medians ({unit}); ratios to {ref}.\n")
print("| row | " + " | ".join(variants) + " | " + " | ".join(f"{v} / {ref}" for v in others) + " |")
print("| --- |" + " --- |" * (len(variants) + len(others)))
for row in sorted(rows):
    med = {v: statistics.median(rows[row][v]) for v in variants if rows[row][v]}
    cells = [f"{med[v]:.3g}" if v in med else "-" for v in variants]
    ratios = []
    for v in others:
        if v in med and ref in med and med[ref] > 0:
            ratios.append(f"{med[v] / med[ref]:.2f}")
        else:
            ratios.append("-")
    print(f"| {row} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
PY
tar -C "$out" -czf "$final/ab.tgz" .
rm -rf "$out"
