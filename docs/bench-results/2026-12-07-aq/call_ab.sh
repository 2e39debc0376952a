#!/bin/bash
# Session aq: the pool's n = 1,000 rows, 593f5dc's tree (`new`, carve takes the spare descriptor
# inline) against 37d4a84 (`old`, the run of 2026-11-21), alternating rounds; `*64` the same binary
# with RMM_BENCH_SEEDS=64 (64 workloads cycled instead of one repeated). Then the arena's
# n = 100,000 rows against 7b8733f (`prev`, main before session ap). Then the multi-thread rows of
# the arena and binning, ours (multithread_bench against this tree) beside RMM 26.10's (the staged
# peer), own streams and per-thread default streams, T = 1 .. 16.
# carry ["build-ab8", ".gpu-pack"]; build-ab8/{ra,mt}_*: the benchmarks built with
# g++ -std=c++17 -O3 -DNDEBUG against each tree's headers, linked with build-ab8/lib/librmm.so.0.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
[ -d .gpu/rmm_peer ] || bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p .gpu/abf .gpu/lib $OUT/tmp
export TMPDIR=$OUT/tmp  # ab_call.sh keeps each round's JSON there: it comes back even if cut short
cp build-ab8/lib/* .gpu/lib/
for f in build-ab8/ra_*; do
  v=${f#build-ab8/ra_}
  cp "$f" .gpu/abf/ra_$v
  printf '#!/bin/bash\nRMM_BENCH_SEEDS=64 exec "$(dirname "$0")/ra_%s" "$@"\n' $v > .gpu/abf/ra_${v}64
  chmod +x .gpu/abf/ra_${v}64
done
if [ "${SKIP_AB:-0}" = 0 ]; then
  PREFIX=ra VARIANTS="${VARIANTS:-new old new64 old64}" \
    FILTER="${FILTER:-^random/(pool|null)/n:1000/}" REPS=3 TIMEOUT=120 \
    bash scripts/ab_call.sh $OUT/ab ${R:-16}
  PREFIX=ra VARIANTS="new prev" FILTER='^random/(arena|null)/n:100000/max:(1|4|64)/' REPS=3 \
    TIMEOUT=120 bash scripts/ab_call.sh $OUT/arena ${RA:-3}
fi
if [ "${SKIP_MT:-0}" = 0 ]; then
  mkdir -p $OUT/mt
  export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
  for res in arena binning; do
    timeout 120 build-ab8/mt_new --benchmark_filter="^mt(ptds)?/$res/" --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true --benchmark_out_format=json \
      --benchmark_out=$OUT/mt/ours_$res.json >/dev/null 2>$OUT/mt/ours_$res.err || echo "rc $? ours $res"
    LD_LIBRARY_PATH=$PWD/.gpu/rmm_peer/lib:$LD_LIBRARY_PATH timeout 150 \
      .gpu/rmm_peer/bin/rmm_peer_multithread_bench --benchmark_filter="^mt(ptds)?/rmm_$res/" \
      --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json \
      --benchmark_out=$OUT/mt/rmm_$res.json >/dev/null 2>$OUT/mt/rmm_$res.err || echo "rc $? rmm $res"
    echo "mt $res done at $SECONDS s"
  done
fi
