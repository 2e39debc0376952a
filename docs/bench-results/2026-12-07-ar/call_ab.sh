#!/bin/bash
# Session ar: d18df46 (`new`, the core's one-stream hit path) against 37d4a84 (`old`, the run of
# 2026-11-21) and 593f5dc (`p593`, main before d18df46) on the pool's n = 1,000 rows, alternating
# rounds; `*64` the same binary with RMM_BENCH_SEEDS=64 (64 workloads cycled instead of one
# repeated). Then the arena's n = 100,000 rows against 7b8733f (`prev`, main before session ap).
# Then multithread_bench, d18df46 against 593f5dc, the pool's and the arena's rows on own streams
# and on per-thread default streams (the paths d18df46 changes once several streams exist).
# carry ["build-ab8", ".gpu-pack"]; build-ab8/{ra,mt}_*: the benchmarks built with
# g++ -std=c++17 -O3 -DNDEBUG against each tree's headers, linked with build-ab8/lib/librmm.so.0.
# Env: R (pool rounds, 16), RA (arena rounds, 4), RM (multi-thread rounds, 3), SKIP_AB, SKIP_MT.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p $OUT/tmp
export TMPDIR=$OUT/tmp  # ab_call.sh keeps each round's JSON there: it comes back even if cut short
bash scripts/ab_binaries.sh
if [ "${SKIP_AB:-0}" = 0 ]; then
  PREFIX=ra VARIANTS="${VARIANTS:-new old p593 new64 old64 p59364}" \
    FILTER="${FILTER:-^random/(pool|null)/n:1000/}" REPS=3 TIMEOUT=120 \
    bash scripts/ab_call.sh $OUT/ab ${R:-16}
  echo "pool A/B done at $SECONDS s"
  PREFIX=ra VARIANTS="new prev" FILTER='^random/(arena|null)/n:100000/max:(1|4|64)/' REPS=3 \
    TIMEOUT=120 bash scripts/ab_call.sh $OUT/arena ${RA:-4}
  echo "arena A/B done at $SECONDS s"
fi
if [ "${SKIP_MT:-0}" = 0 ]; then
  PREFIX=mt VARIANTS="new p593" FILTER='^mt(ptds)?/(pool|arena)/' REPS=3 TIMEOUT=150 \
    bash scripts/ab_call.sh $OUT/mt ${RM:-3}
  echo "mt A/B done at $SECONDS s"
fi
rm -rf $OUT/tmp
