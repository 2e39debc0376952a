#!/bin/bash
# Session aj, call 2: the arena's 64-byte records A/B (r64 against main m), then the bench call.
bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p .gpu/abf && cp build-ab3/ra_* .gpu/abf/
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep "Model name"
PREFIX=ra VARIANTS="r64 m" FILTER='^random/(arena|null)/n:(10000|100000)/' REPS=3 bash scripts/ab_call.sh $OUT/ab ${R:-10}
RMM_BENCH_PARTS=${PARTS:-ours,rmm} RMM_BENCH_BUDGET_S=${B:-470} bash .gpu/run_benchmarks.sh $OUT/bench > $OUT/bench_stdout.txt 2>&1
tail -5 $OUT/bench_stdout.txt; grep -i "skip" $OUT/bench/bench_log.txt | head
