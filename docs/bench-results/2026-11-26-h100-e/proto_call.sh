set -u
export LD_LIBRARY_PATH=$PWD/.gpu/lib
o=/tmp/p; mkdir -p $o
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
for r in 1 2; do
  for v in main proto; do
    d=.gpu/bin; [ $v = proto ] && d=.gpu/proto/bin
    timeout 100 $d/rmm_random_allocations_bench --benchmark_filter='^random/(arena|null)/' $agg --benchmark_out=$o/random_${v}_$r.json > /dev/null 2>&1 || echo "rc $? random $v $r"
    timeout 60 $d/rmm_replay_bench --benchmark_filter='^replay/arena/' $agg --benchmark_out=$o/replay_${v}_$r.json > /dev/null 2>&1 || echo "rc $? replay $v $r"
    timeout 60 $d/rmm_multithread_bench --benchmark_filter='^mt[a-z]*/arena/' $agg --benchmark_out=$o/mt_${v}_$r.json > /dev/null 2>&1 || echo "rc $? mt $v $r"
    echo "$v $r done"
  done
done
tar -C $o -czf $1/p.tgz .
