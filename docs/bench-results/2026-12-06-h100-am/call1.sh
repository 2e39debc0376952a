#!/bin/bash
# Session am, call 1: the GPU suite on this session's staging, then the new pool tests built
# against main's core before this change (build-ab5/old_core_pool_tests: tests/mr/
# pool_memory_resource_gpu_tests.cpp of this session compiled with c662f54's include/), then the
# A/B of the multi-thread program (ab.sh). Carry [".gpu-pack", "build-ab5"].
bash scripts/gpu_suite.sh unpack >/dev/null
OUT=$OUT RMM_GPU_SKIP_BENCH=1 bash scripts/gpu_suite.sh run 2>&1 | tail -30
echo "=== the new pool tests on the old core"
LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64 timeout 120 build-ab5/old_core_pool_tests \
  "pool: a new thread adopts*" "pool: a finished thread*" "pool: new threads*" > $OUT/old_core_tests.txt 2>&1
echo "rc=$?" >> $OUT/old_core_tests.txt; tail -25 $OUT/old_core_tests.txt
echo "=== A/B"
R=${R:-5} REPS=${REPS:-3} bash docs/bench-results/2026-12-06-h100-am/ab.sh 2>&1 | tail -30
