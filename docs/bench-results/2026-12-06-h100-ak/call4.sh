#!/bin/bash
# Session ak, call 4: the staged bench binary (CMake's build, as the bench call runs it) against
# ra_ct (the same source and headers, built by hand for the A/B), alternating.
bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p .gpu/abf && cp build-ab4/ra_* .gpu/abf/ && cp .gpu/bin/rmm_random_allocations_bench .gpu/abf/ra_bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
PREFIX=ra VARIANTS="bench ct" FILTER='^random/(arena|pool|null)/n:(10000|100000)/' REPS=3 bash scripts/ab_call.sh $OUT/ab ${R:-8}
