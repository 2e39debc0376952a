#!/usr/bin/env bash
# Device call of session j (fixed_size shards): the multi-thread rows of every resource of ours
# and of RMM 26.10's arena, binning and pool (own and per-thread streams, 5 repetitions, with the
# new counter reserved_MiB), then the single-thread rows of ours at n = 10,000 (null and
# cudaMallocAsync beside them). Trimmed from 2026-11-26-h100-h/bench_call.sh to fit the session's
# remaining device time.
set -u
final=${1:?out dir}; out=/tmp/bench_out; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
B=.gpu/bin; P=.gpu/rmm_peer/bin
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
t0=$(date +%s)
timeout 120 $B/rmm_multithread_bench $agg --benchmark_out=$out/rmm_multithread_bench.json > $out/multithread_bench.ours.txt 2>&1 || echo "rc $? mt ours" >> $out/errors.txt
echo "mt ours done at $(( $(date +%s) - t0 )) s"
for r in arena binning pool; do
  lim=30; [ $r = pool ] && lim=20
  LD_LIBRARY_PATH=.gpu/rmm_peer/lib:${LD_LIBRARY_PATH:-} timeout $lim $P/rmm_peer_multithread_bench --benchmark_filter="^[a-z]*/rmm_$r/" $agg --benchmark_out=$out/rmm_multithread_bench.rmm_peer_$r.json > $out/multithread_bench.rmm_$r.txt 2>&1 || echo "rc $? mt rmm $r" >> $out/errors.txt
done
echo "mt rmm done at $(( $(date +%s) - t0 )) s"
timeout 60 $B/rmm_random_allocations_bench --benchmark_filter='^random/(pool|binning|fixed_size|null|cuda_async)/n:10000/' $agg --benchmark_out=$out/rmm_random_allocations_bench.json > $out/random.ours.txt 2>&1 || echo "rc $? random ours" >> $out/errors.txt
echo "random done at $(( $(date +%s) - t0 )) s"
cat $out/errors.txt 2>/dev/null
tar -C $out -czf $final/bench.tgz .
exit 0
