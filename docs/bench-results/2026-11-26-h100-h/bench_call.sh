#!/usr/bin/env bash
# Device call B: every resource of ours and RMM's pool, arena and binning on the single-thread grid,
# the multi-thread rows (start gate, lists on the threads' stacks) and the replay; pinned pairs.
set -u
OURS_LIMIT=${OURS_LIMIT:-100}  # seconds for each of our programs (the random grid took 95 s on 2026-11-27)
final=${1:?out dir}; out=/tmp/bench_out; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
B=.gpu/bin; P=.gpu/rmm_peer/bin
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
t0=$(date +%s)
for prog in multithread_bench random_allocations_bench replay_bench; do
  timeout $OURS_LIMIT $B/rmm_$prog $agg --benchmark_out=$out/rmm_$prog.json > $out/$prog.ours.txt 2>&1 || echo "rc $? $prog ours" >> $out/errors.txt
  echo "$prog ours done at $(( $(date +%s) - t0 )) s"
  for r in arena binning pool; do
    lim=40; [ $r = pool ] && [ $prog = multithread_bench ] && lim=25
    LD_LIBRARY_PATH=.gpu/rmm_peer/lib:${LD_LIBRARY_PATH:-} timeout $lim $P/rmm_peer_$prog --benchmark_filter="^[a-z]*/rmm_$r/" $agg --benchmark_out=$out/rmm_$prog.rmm_peer_$r.json > $out/$prog.rmm_$r.txt 2>&1 || echo "rc $? $prog rmm $r" >> $out/errors.txt
  done
  echo "$prog done at $(( $(date +%s) - t0 )) s"
done
timeout 60 $B/rmm_pinned_bench $agg --benchmark_out=$out/rmm_pinned_bench.json > $out/pinned.txt 2>&1 || echo "rc $? pinned" >> $out/errors.txt
echo "pinned done at $(( $(date +%s) - t0 )) s"
cat $out/errors.txt 2>/dev/null
tar -C $out -czf $final/bench.tgz .
exit 0
