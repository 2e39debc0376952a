set -u
export LD_LIBRARY_PATH=$PWD/.gpu/lib
o=/tmp/fb; mkdir -p $o
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
for p in random_allocations_bench multithread_bench replay_bench; do
  timeout 100 .gpu/bin/rmm_$p --benchmark_filter='^[a-z]*/(arena|null)/' $agg --benchmark_out=$o/rmm_$p.json > /dev/null 2>&1 || echo "rc $? $p"
done
LD_LIBRARY_PATH=.gpu/rmm_peer/lib:$LD_LIBRARY_PATH timeout 60 .gpu/rmm_peer/bin/rmm_peer_multithread_bench --benchmark_filter='^[a-z]*/rmm_arena/' $agg --benchmark_out=$o/rmm_multithread_bench.rmm_peer_arena.json > /dev/null 2>&1 || echo "rc $? peer"
tar -C $o -czf $1/fb.tgz .
