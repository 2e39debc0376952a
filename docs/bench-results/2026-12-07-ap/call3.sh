#!/bin/bash
# Session ap, call 3: call1.sh's single-thread A/B with new = 2eda92f (and b010 = b010f95), then
# the multi-thread pool rows (T threads on T streams and on per-thread default streams),
# 2eda92f's multithread_bench against main's before this session (7b8733f).
# carry ["build-ab7"]
set -u
VARIANTS="${VARIANTS:-new b010 prev old new64 old64}" R=${R:-12} RA=${RA:-6} \
  bash docs/bench-results/2026-12-07-ap/call1.sh
mkdir -p .gpu/abf $OUT/tmp
export TMPDIR=$OUT/tmp
for v in new prev; do cp build-ab7/mt_$v .gpu/abf/mt_$v; done
PREFIX=mt VARIANTS="new prev" FILTER='^mt(ptds)?/pool/' REPS=3 TIMEOUT=150 \
  bash scripts/ab_call.sh $OUT/mt ${RM:-3}
