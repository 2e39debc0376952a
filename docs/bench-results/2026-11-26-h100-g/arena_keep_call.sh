#!/usr/bin/env bash
# Device call (a prototype, not landed): the arena keeping every free superblock until memory runs
# out (cache = the whole arena) against the landed rule (cache = 1/64 of the arena), the arena's
# multi-thread rows, alternating, three rounds. Both built from fa8228a's benchmark sources.
set -u
final=${1:?out dir}; out=/tmp/keep; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
f='^mt(ptds)?/(arena|null)/'
for r in 1 2 3; do
  for v in keep landed; do
    timeout 60 .gpu/ab/mt_$v --benchmark_filter="$f" $agg --benchmark_out=$out/mt_${v}_$r.json > /dev/null 2>&1 || echo "rc $? $v $r"
  done
done
tar -C $out -czf $final/arena_keep.tgz .
