#!/usr/bin/env bash
# Device call: the single-thread grid (n = 1,000 and 10,000) of pool, arena, binning, fixed_size
# and null, built from the same benchmark source against 6bce72e's headers (ra_base) and one-size
# batching's (ra_new) in .gpu/abf/, alternating, rounds as given (default 3).
set -u
final=${1:?out dir}; rounds=${2:-3}; out=/tmp/st_ab; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
f='^random/(pool|arena|binning|fixed_size|null)/n:(1000|10000)/'
t0=$(date +%s)
for r in $(seq 1 $rounds); do
  for v in new base; do
    timeout 100 .gpu/abf/ra_$v --benchmark_filter="$f" $agg --benchmark_out=$out/ra_${v}_$r.json > /dev/null 2>&1 || echo "rc $? $v $r"
    echo "round $r $v done at $(( $(date +%s) - t0 )) s"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(sys.argv[1] + "/ra_*.json"):
    v = f.split("/")[-1].split("_")[1]
    for b in json.load(open(f))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            d[b["run_name"].split("/iterations")[0]][v].append(b["ns_per_op"])
print("| row (ns/op) | base | new | new/base | new rounds | base rounds |")
for row in sorted(d):
    b, n = statistics.median(d[row]["base"]), statistics.median(d[row]["new"])
    print(f"| {row} | {b:.3g} | {n:.3g} | {n/b:.2f} | {' '.join(f'{x:.0f}' for x in d[row]['new'])} | {' '.join(f'{x:.0f}' for x in d[row]['base'])} |")
PY
tar -C $out -czf $final/st_ab.tgz .
