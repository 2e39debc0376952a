#!/bin/bash
# Session af: main's arena (ra_base, default build) and the null resource, every single-thread
# row, each repetition reported (not only the aggregates), with the quiet-CPU counters, to see
# whether the rows over 100 ns/op are the arena's own time or repetitions in a slowed core.
mkdir -p .gpu/abf .gpu/lib $OUT/reps && cp build-ab/abf/ra_base .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"; nproc
t0=$(date +%s)
for r in 1 2 3; do
  cat /proc/loadavg
  timeout 200 .gpu/abf/ra_base --benchmark_filter='^random/(arena|null)/' --benchmark_repetitions=9 \
    --benchmark_out_format=json --benchmark_out=$OUT/reps/round_$r.json > /dev/null 2>&1 || echo "rc $? round $r"
  echo "round $r done at $(($(date +%s) - t0)) s"
done
