#!/usr/bin/env bash
# Device call: the arena's multi-thread rows with batches that grow with the stream arena's
# holdings (this staging) against fixed 16 MiB batches (.gpu/ab/, 64bca12's binary), alternating,
# three rounds; then the replay (bisection efficiency) of this staging.
set -u
final=${1:?out dir}; out=/tmp/arena_ab; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
f='^mt(ptds)?/(arena|null)/'
for r in 1 2 3; do
  timeout 60 .gpu/bin/rmm_multithread_bench --benchmark_filter="$f" $agg --benchmark_out=$out/ab_new_$r.json > /dev/null 2>&1 || echo "rc $? new $r"
  timeout 60 .gpu/ab/rmm_multithread_bench --benchmark_filter="$f" $agg --benchmark_out=$out/ab_old_$r.json > /dev/null 2>&1 || echo "rc $? old $r"
done
timeout 60 .gpu/bin/rmm_replay_bench --benchmark_filter='arena' $agg --benchmark_out=$out/rmm_replay_bench.json > /dev/null 2>&1 || echo "rc $? replay"
timeout 60 .gpu/bin/rmm_random_allocations_bench --benchmark_filter='^random/(arena|null)/' $agg --benchmark_out=$out/rmm_random_allocations_bench.json > /dev/null 2>&1 || echo "rc $? random"
tar -C $out -czf $final/arena_ab.tgz .
