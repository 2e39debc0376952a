#!/bin/bash
# Session an, call 1: one workload repeated (RMM_BENCH_SEEDS unset, the default) against 64
# workloads cycled (RMM_BENCH_SEEDS=64), for this tree's random_allocations_bench built against
# main's headers (new) and against 37d4a84's (old, the run of 2026-11-21), alternating rounds.
# carry [".gpu/lib", "build-ab6"]; build-ab6/ra_{new,old}: g++ -std=c++17 -O3 -DNDEBUG, stripped.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
mkdir -p .gpu/abf
for v in new old; do
  cp build-ab6/ra_$v .gpu/abf/ra_$v
  printf '#!/bin/bash\nRMM_BENCH_SEEDS=64 exec "$(dirname "$0")/ra_%s" "$@"\n' $v > .gpu/abf/ra_${v}64
  chmod +x .gpu/abf/ra_${v}64
done
PREFIX=ra VARIANTS="new old new64 old64" FILTER="${FILTER:-^random/(pool|binning|null)/n:1000/}" \
  REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-4}
# Then the arena's closest single-thread row to its 100 ns target, and its neighbours, one seed.
LD_LIBRARY_PATH=$PWD/.gpu/lib .gpu/abf/ra_new --benchmark_filter='^random/(arena|null)/n:100000/max:(1|4|64)/' \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json \
  --benchmark_out=$OUT/arena_n100000.json 2>&1 | grep -E "median" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
