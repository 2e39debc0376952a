#!/bin/bash
# Builds the A/B binaries of call_next.sh into build-ab8/ (git-ignored): random_allocations_bench
# compiled with g++ -std=c++17 -O3 -DNDEBUG against each tree's headers (this checkout's
# benchmarks/ harness for all), linked with the staged librmm, as in ../2026-12-07-aq/README.md:
#   ra_new    this checkout's headers (main: the core's allocation path holds a spin_lock)
#   ra_d18    6a6e126's headers (d18df46's pool code, with std::unique_lock), worktree /tmp/d18
#   ra_old    37d4a84's headers (the run of 2026-11-21), worktree /tmp/old
#   ra_g1     this checkout's HEAD with the pool's growth divisor 1 (doubling, as 37d4a84 grew:
#             10 upstream regions at max 64 MiB instead of 42), worktree /tmp/au_g1 (session au);
#             g<N> likewise with divisor N, worktree /tmp/au_g<N> (session av)
#   ra_g1trim both g1 and trim, worktree /tmp/av_g1trim (session av)
#   ra_dup    the same as ra_new, built again: the pair new/dup is the noise floor (session av)
#   ra_trim   this checkout's HEAD with ../2026-12-07-au/trim.patch (check_size and stream_key's
#             comparison as one branch each), worktree /tmp/au_trim (session au)
# VARIANTS="..." builds a subset; JCC=1 adds ra_<v>j for each, built with
# -Wa,-mbranches-within-32B-boundaries (session at's call 4: no effect on the Emerald Rapids host).
# Run from the repository root after `RMM_GPU_BENCHMARKS=ON bash scripts/gpu_suite.sh stage`
# (build-gpu/ must hold librmm). About 1 minute per binary on 2 cores.
set -eu
root=$(pwd)
[ -e build-gpu/librmm.so.0.1.0 ] || { echo "stage first (build-gpu/librmm.so.0.1.0)" >&2; exit 1; }
CCCL=$(python3 -c "import nvidia.cu13, os; print(os.path.join(list(nvidia.cu13.__path__)[0], 'include/cccl'))")
lib=/usr/lib/x86_64-linux-gnu
mkdir -p build-ab8/lib
tree_of() {  # the header tree of a variant, with its worktree made if missing
  case $1 in
    new) echo "$root" ;;
    d18) [ -d /tmp/d18 ] || git worktree add -f /tmp/d18 6a6e126 >/dev/null; echo /tmp/d18 ;;
    old) [ -d /tmp/old ] || git worktree add -f /tmp/old 37d4a84 >/dev/null; echo /tmp/old ;;
    g[0-9] | g[0-9][0-9])  # g<N>: growth divisor N
      if [ ! -d "/tmp/au_$1" ]; then
        git worktree add -f "/tmp/au_$1" HEAD >/dev/null
        sed -i "s/growth_divisor = 8;/growth_divisor = ${1#g};/" \
          "/tmp/au_$1/include/rmm/mr/detail/mechanics/pool_shard.hpp"
        grep -q "growth_divisor = ${1#g};" "/tmp/au_$1/include/rmm/mr/detail/mechanics/pool_shard.hpp"
      fi
      echo "/tmp/au_$1" ;;
    g1trim)  # g1 and trim together (session av)
      if [ ! -d /tmp/av_g1trim ]; then
        git worktree add -f /tmp/av_g1trim HEAD >/dev/null
        git -C /tmp/av_g1trim apply "$root/docs/bench-results/2026-12-07-au/trim.patch"
        sed -i 's/growth_divisor = 8;/growth_divisor = 1;/' \
          /tmp/av_g1trim/include/rmm/mr/detail/mechanics/pool_shard.hpp
      fi
      echo /tmp/av_g1trim ;;
    dup) echo "$root" ;;  # this checkout again, a second binary: the noise floor (session av)
    trim)
      if [ ! -d /tmp/au_trim ]; then
        git worktree add -f /tmp/au_trim HEAD >/dev/null
        git -C /tmp/au_trim apply "$root/docs/bench-results/2026-12-07-au/trim.patch"
      fi
      echo /tmp/au_trim ;;
    *) echo "unknown variant $1" >&2; exit 1 ;;
  esac
}
one() {  # one NAME TREE [extra flags]
  local v=$1 tree=$2
  shift 2
  c++ -std=c++17 -DNDEBUG -I"$tree/include" -Ibuild-gpu/include -Ibenchmarks -isystem "$CCCL" \
    -isystem /usr/local/cuda/include -O3 -g "$@" -c benchmarks/random_allocations_bench.cpp \
    -o "/tmp/ra_$v.o"
  c++ "/tmp/ra_$v.o" -o "build-ab8/ra_$v" build-gpu/librmm.so.0.1.0 "$lib/libbenchmark.so.1.7.1" \
    /usr/local/cuda/lib64/libcudart.so -lpthread
  strip "build-ab8/ra_$v"
}
for v in ${VARIANTS:-new d18 old}; do
  t=$(tree_of "$v")
  one "$v" "$t"
  if [ -n "${JCC:-}" ]; then one "${v}j" "$t" -Wa,-mbranches-within-32B-boundaries; fi
done
for l in build-gpu/librmm.so.0 "$lib/libspdlog.so.1.10" "$lib/libfmt.so.9" "$lib/libbenchmark.so.1debian"; do
  cp -L "$l" build-ab8/lib/
done
ls -l build-ab8
