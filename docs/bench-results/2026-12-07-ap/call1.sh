#!/bin/bash
# Session ap, calls 1-3: the pool's n = 1,000 rows for several header trees, alternating rounds:
#   new  = this session's tree (calls 1-2: b010f95, allocated-only keys, inlined free path, whole
#          regions in address order; call 3: 2eda92f, unlink_free inlined too, and b010 = b010f95),
#   mid  = 48c8bd9 (the first two only), prev = 7b8733f (main before this session),
#   old  = 37d4a84 (the run of 2026-11-21);
#   *64  = the same binary with RMM_BENCH_SEEDS=64 (64 workloads cycled instead of one repeated).
# Then the arena's n = 100,000 rows (the tlsf change reaches its global arena), new against prev.
# carry ["build-ab7"]; build-ab7/ra_*: benchmarks/random_allocations_bench.cpp built with
# g++ -std=c++17 -O3 -DNDEBUG against each tree's headers, linked with build-ab7/lib/librmm.so.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
mkdir -p .gpu/abf .gpu/lib $OUT/tmp
export TMPDIR=$OUT/tmp  # ab_call.sh keeps each round's JSON there: it comes back even if the call is cut short
cp build-ab7/lib/* .gpu/lib/
for f in build-ab7/ra_*; do
  v=${f#build-ab7/ra_}
  cp build-ab7/ra_$v .gpu/abf/ra_$v
  printf '#!/bin/bash\nRMM_BENCH_SEEDS=64 exec "$(dirname "$0")/ra_%s" "$@"\n' $v > .gpu/abf/ra_${v}64
  chmod +x .gpu/abf/ra_${v}64
done
PREFIX=ra VARIANTS="${VARIANTS:-new mid prev old new64 prev64 old64}" \
  FILTER="${FILTER:-^random/(pool|null)/n:1000/}" REPS=3 TIMEOUT=120 \
  bash scripts/ab_call.sh $OUT/ab ${R:-6}
PREFIX=ra VARIANTS="new prev" FILTER='^random/(arena|null)/n:100000/max:(1|4|64)/' REPS=3 \
  TIMEOUT=120 bash scripts/ab_call.sh $OUT/arena ${RA:-3}
