#!/usr/bin/env bash
# Device call 2 of session p: (a) the pool and null single-thread rows, new / head / b37, 10
# alternating rounds; (b) the whole multi-thread program once, as the bench call runs it (every
# resource, 5 repetitions), under the sampling profiler, to catch the pool's T = 8 dip.
set -u
final=${1:?out dir}; mkdir -p "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
PREFIX=ra VARIANTS="new head b37" FILTER='^random/(pool|null)/n:(1000|10000)/' TIMEOUT=60 \
  bash scripts/ab_call.sh $final/st_ab 10 | tail -30
echo "ab done at $(( $(date +%s) - t0 )) s"
timeout 200 env RMM_SAMPLER_OUT=$final/prof_mt_all.txt RMM_SAMPLER_HZ=2000 LD_PRELOAD=$PWD/.gpu/lib/librmm_sampler.so \
  .gpu/abf/mt_new --benchmark_repetitions=5 --benchmark_report_aggregates_only=false \
  --benchmark_out_format=json --benchmark_out=$final/mt_all.json 2>&1 | grep -E "^mt/(pool|arena)/.*(median|cv)" | cut -c1-150
echo "mt done at $(( $(date +%s) - t0 )) s"
