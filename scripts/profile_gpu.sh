#!/usr/bin/env bash
# CPU profiles of chosen benchmark rows on the GPU machine, which has no perf or nsys: each row
# runs alone under the sampling profiler (benchmarks/profiling/sampler.cpp, LD_PRELOAD).
#
#   here:  RMM_GPU_BENCHMARKS=ON bash scripts/gpu_suite.sh stage    # stages .gpu/ (this script
#          becomes .gpu/profile_gpu.sh, the sampler .gpu/lib/librmm_sampler.so)
#   there: bash scripts/gpu_suite.sh unpack && bash .gpu/profile_gpu.sh "$OUT"  # carry .gpu-pack
#          -> $OUT/profiles.tar.gz (one raw profile per row)
#   here:  tar xzf profiles.tar.gz && python3 scripts/profile_report.py prof_*.txt \
#            --binary-dir build-gpu --binary-dir build-gpu/benchmarks
#          (the unstripped binaries of the same staging, for the inline chains)
#
# RMM_PROFILE_ROWS: space-separated list of binary:filter (default: the rows that miss the
# issue 3 targets, and the null resource for the harness's own share).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -d "$here/bin" ]; then stage=$here; else stage=$(cd "$here/.." && pwd)/.gpu; fi
out=${1:-${OUT:-/tmp/rmm-profile-out}}
mkdir -p "$out"
work=$(mktemp -d /tmp/rmm-prof.XXXXXX)
export LD_LIBRARY_PATH="$stage/lib:${LD_LIBRARY_PATH:-}"
export RMM_TRACE=${RMM_TRACE:-$stage/traces/resnet50_train.csv}
export RMM_BENCH_REPS=${RMM_BENCH_REPS:-1} RMM_BENCH_REP_S=${RMM_BENCH_REP_S:-3}
rows=${RMM_PROFILE_ROWS:-"random:pool/n:100000/max:4096/ random:pool/n:10000/max:1024/
random:pool/n:1000/max:4096/ random:pool/n:10000/max:1/ random:null/n:100000/max:4096/
random:arena/n:10000/max:1/ random:fixed_size/n:100000/max:1/ mt:arena/T:16/ mt:pool/T:16/
mt:fixed_size/T:16/ replay:arena/ replay:pool/"}
for row in $rows; do
  kind=${row%%:*}
  filter=${row#*:}
  case $kind in
    random) exe=rmm_random_allocations_bench ;;
    mt) exe=rmm_multithread_bench ;;
    replay) exe=rmm_replay_bench ;;
    *) echo "unknown row $row"; continue ;;
  esac
  name=prof_${kind}_$(echo "$filter" | tr -c 'A-Za-z0-9_\n' '_' | sed 's/_*$//')
  echo "=== $name: $exe --benchmark_filter=$filter"
  timeout 120 env RMM_SAMPLER_OUT="$work/$name.txt" RMM_SAMPLER_HZ=4000 \
    LD_PRELOAD="$stage/lib/librmm_sampler.so" "$stage/bin/$exe" \
    --benchmark_filter="$filter" 2>&1 | grep -E "^(random|mt|replay)/" |
    cut -c1-200
  head -n 5 "$work/$name.txt" | tr '\n' ' '
  echo
done
tar czf "$out/profiles.tar.gz" -C "$work" .
