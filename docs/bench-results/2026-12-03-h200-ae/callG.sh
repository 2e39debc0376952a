#!/bin/bash
# Session ae: the host model (the real arena_memory_resource over a fake upstream, the benchmark's
# own workload, no Google Benchmark) against the bench binary on the same H200 host, alternating,
# at n = 100,000 / max 1 and 4 MiB: is there time in the real benchmark that the model lacks?
export LD_LIBRARY_PATH=$PWD/build-ab/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -i "model name"; nproc
mkdir -p $OUT/g
for r in $(seq 1 ${R:-4}); do
  for m in 1 4; do
    for res in arena null; do
      echo "model r$r $res max $m: $(taskset -c 3 build-ab/model/hm_main $res 100000 $m 7)"
      echo "model-nopin r$r $res max $m: $(build-ab/model/hm_main $res 100000 $m 7)"
    done
  done
  build-ab/abf/ra_base --benchmark_filter='^random/(arena|null)/n:100000/max:(1|4)/' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out_format=json --benchmark_out=$OUT/g/bench_$r.json > /dev/null 2>&1
  python3 - "$OUT/g/bench_$r.json" "$r" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print("bench r%s %s: %.1f" % (sys.argv[2], b["run_name"], b["ns_per_op"]))
PY
done
