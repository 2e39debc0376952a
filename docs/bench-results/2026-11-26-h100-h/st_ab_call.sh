#!/usr/bin/env bash
# Device call: the single-thread grid of pool, binning, fixed_size (and null), HEAD's staging
# (16bdf4f, whose library code is 7f3abda's) against 37d4a84 (the code of the 2026-11-21 run, as
# staged for 2026-11-26-h100-d into .gpu/ab37/), alternating, three rounds.
set -u
final=${1:?out dir}; out=/tmp/st_ab; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
f='^random/(pool|binning|fixed_size|null)/'
t0=$(date +%s)
for r in 1 2 3; do
  timeout 100 .gpu/bin/rmm_random_allocations_bench --benchmark_filter="$f" $agg --benchmark_out=$out/ab_head_$r.json > /dev/null 2>&1 || echo "rc $? head $r"
  LD_LIBRARY_PATH=.gpu/ab37/lib:$LD_LIBRARY_PATH timeout 100 .gpu/ab37/bin/rmm_random_allocations_bench --benchmark_filter="$f" $agg --benchmark_out=$out/ab_37d4a84_$r.json > /dev/null 2>&1 || echo "rc $? 37 $r"
  echo "round $r done at $(( $(date +%s) - t0 )) s"
done
tar -C $out -czf $final/st_ab.tgz .
