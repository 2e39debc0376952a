# The multi-thread programs with the threads' start gate (7f7dd8f), ours and RMM's, and torch-mt.
set -u
export LD_LIBRARY_PATH=$PWD/.gpu/lib
o=/tmp/mt; mkdir -p $o
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
timeout 150 .gpu/bin/rmm_multithread_bench $agg --benchmark_out=$o/rmm_multithread_bench.json > $o/ours.txt 2>&1 || echo "rc $? ours"
for r in pool arena binning; do
  LD_LIBRARY_PATH=.gpu/rmm_peer/lib:$LD_LIBRARY_PATH timeout 100 .gpu/rmm_peer/bin/rmm_peer_multithread_bench --benchmark_filter="^[a-z]*/rmm_$r/" $agg --benchmark_out=$o/rmm_multithread_bench.rmm_peer_$r.json > $o/peer_$r.txt 2>&1 || echo "rc $? peer $r"
done
for t in 1 2 4 8 16; do
  (cd /tmp && timeout 200 python3 $OLDPWD/.gpu/peer_bench/torch_mt_alloc.py $t 10000 1 5) >> $o/peers.txt 2>>$o/torch_err.txt || echo "rc $? torch $t"
done
python3 .gpu/bench_tables.py $o > $o/tables.md 2>$o/tables_err.txt
cat $o/tables.md | sed -n '/Multi-thread/,$p' | head -40
tar -C $o -czf $1/mt.tgz .
