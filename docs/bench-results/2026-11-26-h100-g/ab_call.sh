#!/usr/bin/env bash
# Device call: the pool's multi-thread rows, this staging (piece hints) against d09b891's binary
# (.gpu/ab/), alternating, three rounds; then bench_call.sh (every resource, RMM's, pinned).
set -u
final=${1:?out dir}; out=/tmp/ab_out; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
f='^mt(ptds)?/(pool|null)/'
for r in 1 2 3; do
  timeout 60 .gpu/bin/rmm_multithread_bench --benchmark_filter="$f" $agg --benchmark_out=$out/ab_new_$r.json > /dev/null 2>&1 || echo "rc $? new $r"
  timeout 60 .gpu/ab/rmm_multithread_bench --benchmark_filter="$f" $agg --benchmark_out=$out/ab_old_$r.json > /dev/null 2>&1 || echo "rc $? old $r"
done
tar -C $out -czf $final/ab.tgz .
bash docs/bench-results/2026-11-26-h100-g/bench_call.sh $final
