#!/usr/bin/env bash
# Device call (a prototype, not landed): spin_mutex with exponential backoff between probes (1 to
# 64 pauses) that yields only after 4096 probes ("spin"), against HEAD's (128 single-pause probes,
# then yield; "base"), both built from 5d4d98a's sources into .gpu/ab3/: the multi-thread rows of
# every resource of ours (own and per-thread streams), alternating, rounds as given (default 3).
set -u
final=${1:?out dir}; rounds=${2:-3}; out=/tmp/spin; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
t0=$(date +%s)
for r in $(seq 1 $rounds); do
  for v in spin base; do
    timeout 90 .gpu/ab3/multithread_bench_$v --benchmark_filter='^mt(ptds)?/(pool|arena|binning|fixed_size)/' $agg --benchmark_out=$out/mt_${v}_$r.json > /dev/null 2>&1 || echo "rc $? $v $r"
    echo "round $r $v done at $(( $(date +%s) - t0 )) s"
  done
done
tar -C $out -czf $final/spin_ab.tgz .
