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
#   ra_g1trim both g1 and trim on 1930921, worktree /tmp/av_g1trim (session av)
#   ra_dup    the same as ra_new, built again: the pair new/dup is the noise floor (session av)
#   ra_trim   1930921 with ../2026-12-07-au/trim.patch (check_size and stream_key's comparison as
#             one branch each; on main since 5732988), worktree /tmp/av_trim (sessions au, av)
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
# A worktree of COMMIT at DIR, made if missing, with the pool's growth divisor set to DIVISOR and
# PATCH applied (either may be empty); the divisor's edit is checked, as a failed sed would
# silently build main again.
worktree() {  # DIR COMMIT DIVISOR PATCH
  local dir=$1 shard=$1/include/rmm/mr/detail/mechanics/pool_shard.hpp
  if [ ! -d "$dir" ]; then
    git worktree add -f "$dir" "$2" >/dev/null
    if [ -n "$4" ]; then git -C "$dir" apply "$root/$4"; fi
    if [ -n "$3" ]; then
      sed -i "s/growth_divisor = 8;/growth_divisor = $3;/" "$shard"
      grep -q "growth_divisor = $3;" "$shard"
    fi
  fi
  echo "$dir"
}
# trim.patch landed on main as 5732988: trim and g1trim apply it to 1930921, the main it was made
# on, so that they rebuild what session av measured.
trim_patch=docs/bench-results/2026-12-07-au/trim.patch
tree_of() {  # the header tree of a variant, with its worktree made if missing
  case $1 in
    new | dup) echo "$root" ;;  # dup: this checkout again, a second binary (the noise floor)
    d18) worktree /tmp/d18 6a6e126 "" "" ;;
    old) worktree /tmp/old 37d4a84 "" "" ;;
    g[0-9] | g[0-9][0-9]) worktree "/tmp/au_$1" HEAD "${1#g}" "" ;;  # g<N>: growth divisor N
    trim) worktree /tmp/av_trim 1930921 "" "$trim_patch" ;;
    g1trim) worktree /tmp/av_g1trim 1930921 1 "$trim_patch" ;;
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
