#!/usr/bin/env bash
# The RMM peer: this project's benchmark programs (random allocations, multi-thread, replay,
# multi-GPU) compiled unchanged against RMM 26.x itself, its headers and librmm.so from the pip
# package librmm-cu13 (with rapids-logger), so that RMM's pool, arena and binning run the same
# workloads as ours, in their own processes (RMM's librmm.so and ours cannot share one). Nothing
# of RMM is copied into this repository: the wheels are downloaded (or taken from
# RMM_PEER_WHEELS) into a cache outside the tree, and only the built programs and RMM's two
# shared libraries are staged.
#
#   bash scripts/build_rmm_peer.sh [DEST]     # default DEST: .gpu/rmm_peer (bin/ and lib/)
#
# With RMM_BENCH_PEER_RMM defined the programs name every row rmm_<resource>
# (bench_common.hpp's resource_label); scripts/run_benchmarks.sh runs them (part "rmm") and
# scripts/bench_tables.py puts their columns beside ours. Needs g++ with C++20 (RMM 26.x requires
# it), Google Benchmark and the CUDA toolkit; exits non-zero, saying why, if anything is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dest=${1:-$root/.gpu/rmm_peer}
version=${RMM_PEER_VERSION:-26.10.0}
logger_version=${RMM_PEER_LOGGER_VERSION:-0.3.0}
cache=${RMM_PEER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmm-peer/$version}
mkdir -p "$cache"
if [ -n "${RMM_PEER_WHEELS:-}" ]; then
  cp "$RMM_PEER_WHEELS"/librmm_cu13-"$version"-*.whl "$RMM_PEER_WHEELS"/rapids_logger-"$logger_version"-*.whl "$cache"/
elif ! ls "$cache"/librmm_cu13-"$version"-*.whl >/dev/null 2>&1; then
  python3 -m pip download --quiet --no-deps -d "$cache" \
    "librmm-cu13==$version" "rapids-logger==$logger_version"
fi
rm -rf "$cache/x" && mkdir -p "$cache/x"
for w in "$cache"/librmm_cu13-"$version"-*.whl "$cache"/rapids_logger-"$logger_version"-*.whl; do
  python3 -m zipfile -e "$w" "$cache/x"
done
rmm=$cache/x/librmm
logger=$cache/x/rapids_logger
[ -f "$rmm/include/rmm/mr/pool_memory_resource.hpp" ] || { echo "build_rmm_peer: no RMM headers in the wheel" >&2; exit 1; }
rm -rf "$dest" && mkdir -p "$dest/bin" "$dest/lib" "$cache/obj"
cuda=${CUDA_HOME:-/usr/local/cuda}
flags=(-std=c++20 -O2 -DNDEBUG -DRMM_BENCH_PEER_RMM -I"$root/benchmarks" -I"$root/tools/replay"
       -isystem "$rmm/include/rapids" -isystem "$rmm/include" -isystem "$logger/include"
       -isystem "$cuda/include")
for prog in random_allocations_bench multithread_bench replay_bench multigpu_bench; do
  g++ "${flags[@]}" -c "$root/benchmarks/$prog.cpp" -o "$cache/obj/$prog.o"
  g++ "$cache/obj/$prog.o" -o "$dest/bin/rmm_peer_$prog" -L"$rmm/lib64" -L"$logger/lib64" \
    -lrmm -lrapids_logger -lbenchmark -L"$cuda/lib64" -lcudart -lpthread \
    -Wl,-rpath,'$ORIGIN/../lib'
done
cp -L "$rmm/lib64/librmm.so" "$logger/lib64/librapids_logger.so" "$dest/lib/"
ldd "$dest"/bin/* 2>/dev/null | awk '/=> \//{print $3}' | sort -u | grep -E 'libbenchmark' |
  xargs -r -I{} cp -L {} "$dest/lib/"
echo "build_rmm_peer: RMM $version peer programs in $dest/bin"
