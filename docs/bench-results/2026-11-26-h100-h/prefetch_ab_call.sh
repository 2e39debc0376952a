#!/usr/bin/env bash
# Device call: the GPU suite of 571ec09 (prefetch of 16 blocks for one-size resources), then an
# A/B of its headers ("new") against c7edf56's ("old"), both built from 571ec09's benchmark
# sources into .gpu/ab/: fixed_size, binning and pool multi-thread rows (own and per-thread
# streams) and their single-thread rows, alternating, rounds as given (default 3).
set -u
final=${1:?out dir}; rounds=${2:-3}; out=/tmp/prefetch; rm -rf $out; mkdir -p "$out" "$final"
OUT=$out RMM_GPU_SKIP_BENCH=1 RMM_GPU_MATRIX="nvcc:20" timeout 420 bash scripts/gpu_suite.sh run > $out/suite.txt 2>&1
echo "suite rc $?"; tail -22 $out/suite.txt
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
t0=$(date +%s)
for r in $(seq 1 $rounds); do
  for v in new old; do
    timeout 40 .gpu/ab/multithread_bench_$v --benchmark_filter='^mt(ptds)?/(fixed_size|binning|pool)/' $agg --benchmark_out=$out/mt_${v}_$r.json > /dev/null 2>&1 || echo "rc $? mt $v $r"
    timeout 30 .gpu/ab/random_allocations_bench_$v --benchmark_filter='^random/(fixed_size|binning)/' $agg --benchmark_out=$out/random_${v}_$r.json > /dev/null 2>&1 || echo "rc $? random $v $r"
    echo "round $r $v done at $(( $(date +%s) - t0 )) s"
  done
done
tar -C $out -czf $final/prefetch.tgz .
