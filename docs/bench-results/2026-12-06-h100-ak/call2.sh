#!/bin/bash
# Session ak, call 2: the class tree A/B (ct against main m, every arena and null row), then the
# bench call with RMM's peers.
bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p .gpu/abf && cp build-ab4/ra_* .gpu/abf/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
PREFIX=ra VARIANTS="ct m" FILTER='^random/(arena|null)/' REPS=3 bash scripts/ab_call.sh $OUT/ab ${R:-10}
RMM_BENCH_PARTS=${PARTS:-ours,rmm} RMM_BENCH_BUDGET_S=${B:-420} bash .gpu/run_benchmarks.sh $OUT/bench > $OUT/bench_stdout.txt 2>&1
tail -5 $OUT/bench_stdout.txt; grep -i "skip" $OUT/bench/bench_log.txt | head
cd $OUT && tar czf bench.tgz bench && rm -rf bench
