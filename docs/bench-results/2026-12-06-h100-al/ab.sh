#!/bin/bash
# Session al, calls 2 and 7: A/B of the multi-thread program, finished threads' slots reclaimed (new,
# the staged binary of this session) against main before it (old: session ak's staged binary of
# d6939f7), own streams and per-thread default streams, pool, fixed_size, binning and the arena
# (the arena does not use the changed core: a control). Calls 8 and 9: OLD=build-ab5/mt_e908
# (e90894b's staged binary) against a staging with piece_map_branchfree.diff (not kept).
bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p .gpu/abf && cp .gpu/bin/rmm_multithread_bench .gpu/abf/mt_new && cp ${OLD:-build-ab5/mt_old} .gpu/abf/mt_old
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
PREFIX=mt VARIANTS="new old" FILTER="${FILTER:-^mt(ptds)?/(pool|fixed_size|binning|arena)/}" \
  REPS=${REPS:-3} TIMEOUT=${TIMEOUT:-200} bash scripts/ab_call.sh $OUT/ab ${R:-3}
