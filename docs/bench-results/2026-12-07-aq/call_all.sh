#!/bin/bash
# Session aq, one device call (machines were scarce): the GPU suite on aba7d79's staging with the
# compile matrix cut to nvcc C++20 (RMM_GPU_MATRIX), then call_ab.sh with what is left of 580 s;
# everything but the suite's summary.txt and step_logs.tgz packed into aq.tgz (8 files come back).
# carry [".gpu-pack", "build-ab8"]
set -u
bash scripts/gpu_suite.sh unpack >/dev/null
OUT=$OUT RMM_GPU_SKIP_BENCH=1 RMM_GPU_MATRIX="nvcc:20" bash scripts/gpu_suite.sh run > $OUT/suite.log 2>&1
tail -25 $OUT/suite.log
echo "suite done at $SECONDS s"
mkdir -p $OUT/x
left=$((580 - SECONDS))
OUT=$OUT/x R=${R:-8} RA=${RA:-2} timeout $left bash docs/bench-results/2026-12-07-aq/call_ab.sh
echo "all done at $SECONDS s"
tar -C $OUT -czf $OUT/aq.tgz x suite.log && rm -rf $OUT/x $OUT/suite.log
ls $OUT
