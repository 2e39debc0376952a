# per-process medians of two arena rows, 8 processes each way
export LD_LIBRARY_PATH=$PWD/.gpu/lib
run() { for i in 1 2 3 4 5 6 7 8; do "$@" .gpu/abf/ra_lb --benchmark_filter='^random/arena/n:(1000|100000)/max:1/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json 2>/dev/null | python3 -c "
import json,sys
d=json.load(sys.stdin)
print(' '.join('%s:%.0f'%(b['run_name'].split('/')[2],b['ns_per_op']) for b in d['benchmarks'] if b.get('aggregate_name')=='median'))"; done; }
echo "== plain"; run
echo "== setarch -R"; run setarch -R
echo "== taskset 7"; run taskset -c 7
echo "== plain again"; run
