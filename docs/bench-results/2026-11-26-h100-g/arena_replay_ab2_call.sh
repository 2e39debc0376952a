#!/usr/bin/env bash
# Device call: the arena's replay only, 26706dc's headers against this session's, six rounds,
# the order alternating between rounds.
set -u
final=${1:?out dir}; out=/tmp/arab2; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
for r in 1 2 3 4 5 6; do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for v in $order; do
    timeout 30 .gpu/ab/replay_bench_$v --benchmark_filter='/arena/' $agg --benchmark_out=$out/replay_${v}_$r.json > /dev/null 2>&1 || echo "rc $? replay $v $r"
  done
done
tar -C $out -czf $final/arena_replay_ab2.tgz .
