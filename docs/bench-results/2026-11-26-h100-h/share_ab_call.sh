#!/usr/bin/env bash
# Device call: the arena's equal-share keep rule (c7edf56's headers, "new") against the 1/64 cache
# (3b16f99's headers, "old"), both built from c7edf56's benchmark sources into .gpu/ab/: the
# arena's multi-thread rows (own and per-thread streams, with the null resource), its replay and
# its single-thread rows, alternating, rounds as given (default 3).
set -u
final=${1:?out dir}; rounds=${2:-3}; out=/tmp/share; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
t0=$(date +%s)
for r in $(seq 1 $rounds); do
  for v in new old; do
    timeout 60 .gpu/ab/multithread_bench_$v --benchmark_filter='^mt(ptds)?/(arena|null)/' $agg --benchmark_out=$out/mt_${v}_$r.json > /dev/null 2>&1 || echo "rc $? mt $v $r"
    timeout 30 .gpu/ab/replay_bench_$v --benchmark_filter='/arena/' $agg --benchmark_out=$out/replay_${v}_$r.json > /dev/null 2>&1 || echo "rc $? replay $v $r"
    timeout 60 .gpu/ab/random_allocations_bench_$v --benchmark_filter='^random/arena/' $agg --benchmark_out=$out/random_${v}_$r.json > /dev/null 2>&1 || echo "rc $? random $v $r"
    echo "round $r $v done at $(( $(date +%s) - t0 )) s"
  done
done
tar -C $out -czf $final/share_ab.tgz .
