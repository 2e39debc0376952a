#!/usr/bin/env bash
# Device call: A/B of one-size batching. Multi-thread rows of fixed_size and binning (own and
# per-thread streams), built from the same benchmark source against header trees in .gpu/abf/:
# base (6bce72e: batches of 8 MiB, prefetch adds 16, a full batch returns all), new (batches of
# 32 blocks with no byte limit, prefetch fills to 16, a full batch keeps its newest 16, adoption
# of half a list); VARIANTS may name prototypes also built there (v64: 64 blocks, fill to and
# keep 32). Alternating, rounds as given (default 3).
set -u
final=${1:?out dir}; rounds=${2:-3}; out=/tmp/batchab; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
t0=$(date +%s)
for r in $(seq 1 $rounds); do
  for v in ${VARIANTS:-new base}; do
    timeout 60 .gpu/abf/mt_$v --benchmark_filter="${FILTER:-^mt(ptds)?/(fixed_size|binning)/}" $agg --benchmark_out=$out/mt_${v}_$r.json > /dev/null 2>&1 || echo "rc $? mt $v $r"
    echo "round $r $v done at $(( $(date +%s) - t0 )) s"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(sys.argv[1] + "/mt_*.json"):
    v = f.split("/")[-1].split("_")[1]
    for b in json.load(open(f))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            d[b["run_name"]][v].append(b["Mops_per_s"])
vs = sorted({v for r in d.values() for v in r})
print("| row | " + " | ".join(vs) + " | " + " | ".join(f"{v}/base" for v in vs if v != "base") + " |")
for row in sorted(d):
    med = {v: statistics.median(d[row][v]) for v in vs if d[row][v]}
    ratios = [f"{med[v]/med['base']:.2f}" if v in med and 'base' in med else "-" for v in vs if v != "base"]
    print(f"| {row} | " + " | ".join(f"{med.get(v, float('nan')):.3g}" for v in vs) + " | " + " | ".join(ratios) + " |")
PY
tar -C $out -czf $final/batchab.tgz .
