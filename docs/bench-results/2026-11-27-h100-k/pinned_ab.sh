# pinned A/B: pool_pinned rows, alternating rounds
export LD_LIBRARY_PATH=$PWD/.gpu/lib
out=$1; mkdir -p $out
for r in 1 2 3; do for v in new base; do
  timeout 60 .gpu/abf/pn_$v --benchmark_filter='pool_pinned' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json --benchmark_out=$out/pn_${v}_$r.json > /dev/null 2>&1 || echo "rc $? $v $r"
done; done
python3 - $out <<'PY'
import json,glob,os,sys,statistics,collections
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(sys.argv[1]+'/pn_*.json'):
    v=os.path.basename(f).split('_')[1]
    for b in json.load(open(f))['benchmarks']:
        if b.get('aggregate_name')=='median': rows[b['run_name']][v].append(b['ns_per_pair'])
for k in sorted(rows, key=lambda k:int(k.split('bytes:')[1].split('/')[0])):
    n=statistics.median(rows[k]['new']); b=statistics.median(rows[k]['base'])
    print(f"| {k} | {n:.1f} | {b:.1f} | {n/b:.2f} | {rows[k]['new']} | {rows[k]['base']}")
PY
