#!/usr/bin/env bash
# Device call (the same prototype): the arena's replay and single-thread rows, keep against landed,
# alternating, three rounds.
set -u
final=${1:?out dir}; out=/tmp/keepst; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
for r in 1 2 3; do
  for v in keep landed; do
    timeout 30 .gpu/ab/replay_bench_$v --benchmark_filter='/arena/' $agg --benchmark_out=$out/replay_${v}_$r.json > /dev/null 2>&1 || echo "rc $? replay $v $r"
    timeout 60 .gpu/ab/random_allocations_bench_$v --benchmark_filter='^random/arena/n:(1000|10000)/' $agg --benchmark_out=$out/random_${v}_$r.json > /dev/null 2>&1 || echo "rc $? random $v $r"
  done
done
tar -C $out -czf $final/arena_keep_st.tgz .
