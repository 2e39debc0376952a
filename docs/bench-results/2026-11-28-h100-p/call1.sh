#!/usr/bin/env bash
# Device call 1 of session p: (a) the pool's multi-thread rows on own streams, 10 repetitions,
# then T = 8 alone under the sampling profiler; (b) the single-thread grid (n = 1,000 and 10,000)
# of pool, binning, fixed_size and null, alternating this tree (new), 4a3118d's headers (head) and
# 37d4a84's own benchmark and headers (b37, the code of the 2026-11-21 run), 3 rounds.
# Carry .gpu/abf and .gpu/lib.
set -u
final=${1:?out dir}; mkdir -p "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
timeout 120 .gpu/abf/mt_new --benchmark_filter='^mt/pool/' --benchmark_repetitions=10 \
  --benchmark_out_format=json --benchmark_out=$final/mt_pool.json 2>&1 | grep -E "^mt/.*(median|cv)" | cut -c1-160
echo "mt done at $(( $(date +%s) - t0 )) s"
timeout 60 env RMM_SAMPLER_OUT=$final/prof_mt_pool_T8.txt RMM_SAMPLER_HZ=4000 LD_PRELOAD=$PWD/.gpu/lib/librmm_sampler.so \
  .gpu/abf/mt_new --benchmark_filter='^mt/pool/T:8/' --benchmark_repetitions=5 2>&1 | grep -E "^mt/" | cut -c1-200
echo "profile done at $(( $(date +%s) - t0 )) s"
PREFIX=ra VARIANTS="new head b37" FILTER='^random/(pool|binning|fixed_size|null)/n:(1000|10000)/' TIMEOUT=100 \
  bash scripts/ab_call.sh $final/st_ab 3
echo "all done at $(( $(date +%s) - t0 )) s"
