#!/bin/bash
# variants.sh: the header trees of session s's host-model experiments, each a copy of this
# checkout's include/ with one change, and the model built against each: session p's
# resource_model.cpp with this folder's resource_model.diff (INIT_MIB, upstream calls).
# Usage: bash variants.sh OUTDIR
#   d8     this tree (the pool grows by max(request, 32 MiB, an eighth of its size))
#   d1     growth_divisor 1 (by its size, as 37d4a84 did)
#   m64    min_growth 64 MiB          m128   min_growth 128 MiB
#   hash   address_map takes the top bits of the Fibonacci product
#   nl     spin_mutex::lock a plain store (no locked instruction; single-thread model only)
#   a      the free list's block descriptor alignas(64)
# Run: LD_LIBRARY_PATH=<build dir> OUTDIR/model_<v> pool 1000 1 300 (INIT_MIB=324 for one chunk)
set -eu
out=${1:?outdir}
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
here=$(cd "$(dirname "$0")" && pwd)
shard=include/rmm/mr/detail/mechanics/pool_shard.hpp
mkdir -p "$out"
make_tree() {  # name, sed-file, sed-expression
  rm -rf "$out/t_$1" && mkdir -p "$out/t_$1" && cp -r "$repo/include" "$out/t_$1/"
  [ -z "$2" ] || sed -i "$3" "$out/t_$1/$2"
}
make_tree d8 "" ""
make_tree d1 $shard 's/growth_divisor = 8;/growth_divisor = 1;/'
make_tree m64 $shard 's/min_growth     = std::size_t{32} << 20U;/min_growth     = std::size_t{64} << 20U;/'
make_tree m128 $shard 's/min_growth     = std::size_t{32} << 20U;/min_growth     = std::size_t{128} << 20U;/'
make_tree hash include/rmm/mr/detail/algorithms/address_map.hpp \
  's/return static_cast<std::size_t>(h >> 32U) \& mask();/return static_cast<std::size_t>(h >> (64U - static_cast<unsigned>(__builtin_ctzll(slots_.size()))));/'
make_tree nl include/rmm/mr/detail/algorithms/spin_mutex.hpp \
  '/if (!locked_.exchange(true, std::memory_order_acquire)) {/,/lock_contended();/c\    locked_.store(true, std::memory_order_relaxed);'
make_tree a include/rmm/mr/detail/algorithms/tlsf_free_list.hpp 's/^  struct block {$/  struct alignas(64) block {/'
p_model=$repo/docs/bench-results/2026-11-28-h100-p/host_model
patch -s -o "$out/resource_model.cpp" "$p_model/resource_model.cpp" "$here/resource_model.diff"
CCCL=${CCCL:-$(python3 -c "import nvidia.cu13, os; print(os.path.join(list(nvidia.cu13.__path__)[0], 'include/cccl'))")}
BUILD=${BUILD:-$repo/build-gpu}
for v in d8 d1 m64 m128 hash nl a; do
  g++ -std=c++17 -O3 -DNDEBUG -g -I"$out/t_$v/include" -I"$BUILD/include" -isystem "$CCCL" \
    -isystem /usr/local/cuda/include -I"$repo/benchmarks" "$out/resource_model.cpp" \
    "$p_model/stubs.cpp" -L"$BUILD" -lrmm -L/usr/local/cuda/lib64 -lcudart -lbenchmark -lpthread \
    -o "$out/model_$v"
done
