#!/bin/bash
# Session am: A/B of the multi-thread program, finished threads' slots adopted after one event
# wait (new: this session's staged binary) against main before it (old: c662f54's
# rmm_multithread_bench, built here with the staging's flags and carried in build-ab5/), own
# streams and per-thread default streams, pool, fixed_size, binning and the arena (the arena
# does not use the changed core: a control). The JSON keeps reserved_MiB per row.
bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p .gpu/abf && cp .gpu/bin/rmm_multithread_bench .gpu/abf/mt_new && cp ${OLD:-build-ab5/mt_old} .gpu/abf/mt_old
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
PREFIX=mt VARIANTS="new old" FILTER="${FILTER:-^mt(ptds)?/(pool|fixed_size|binning|arena)/}" \
  REPS=${REPS:-3} TIMEOUT=${TIMEOUT:-200} bash scripts/ab_call.sh $OUT/ab ${R:-3}
