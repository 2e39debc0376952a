#!/usr/bin/env bash
# Device call: arena rows (ours + RMM's), pinned rows, and the single-thread A/B against 37d4a84.
set -u
final=${1:?out dir}; out=/tmp/bench_out; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
B=.gpu/bin; P=.gpu/rmm_peer/bin
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
t0=$(date +%s)
for prog in random_allocations_bench multithread_bench replay_bench; do
  timeout 120 $B/rmm_$prog --benchmark_filter='^[a-z]*/(arena|null)/' $agg --benchmark_out=$out/rmm_$prog.json > $out/$prog.ours.txt 2>&1 || echo "rc $? $prog ours" >> $out/errors.txt
  LD_LIBRARY_PATH=.gpu/rmm_peer/lib:${LD_LIBRARY_PATH:-} timeout 120 $P/rmm_peer_$prog --benchmark_filter='^[a-z]*/rmm_arena/' $agg --benchmark_out=$out/rmm_$prog.rmm_peer_arena.json > $out/$prog.rmm.txt 2>&1 || echo "rc $? $prog rmm" >> $out/errors.txt
  echo "$prog done at $(( $(date +%s) - t0 )) s"
done
timeout 90 $B/rmm_pinned_bench $agg --benchmark_out=$out/rmm_pinned_bench.json > $out/pinned.txt 2>&1 || echo "rc $? pinned" >> $out/errors.txt
echo "pinned done at $(( $(date +%s) - t0 )) s"
f='^random/(pool|binning|fixed_size|null)/'
for r in 1 2 3; do
  timeout 100 $B/rmm_random_allocations_bench --benchmark_filter="$f" $agg --benchmark_out=$out/ab_head_$r.json > $out/ab_head_$r.txt 2>&1 || echo "rc $? ab head $r" >> $out/errors.txt
  LD_LIBRARY_PATH=.gpu/ab37/lib:.gpu/lib:${LD_LIBRARY_PATH:-} timeout 100 .gpu/ab37/bin/rmm_random_allocations_bench --benchmark_filter="$f" $agg --benchmark_out=$out/ab_37d4a84_$r.json > $out/ab_37_$r.txt 2>&1 || echo "rc $? ab 37 $r" >> $out/errors.txt
  echo "ab round $r done at $(( $(date +%s) - t0 )) s"
done
RMM_PROFILE_ROWS="mt:^mt/arena/T:2/ mt:^mt/arena/T:16/ mt:^mt/pool/T:16/ mt:^mt/pool/T:1/ random:^random/pool/n:1000/max:64/" timeout 150 bash .gpu/profile_gpu.sh $out/prof > $out/prof.txt 2>&1 || echo "rc $? profile" >> $out/errors.txt
echo "profiles done at $(( $(date +%s) - t0 )) s"
cat $out/errors.txt 2>/dev/null
tar -C $out -czf $final/bench.tgz .
exit 0
