#!/bin/bash
# build.sh OUT TREE: session p's host model (../../2026-11-28-h100-p/host_model/) with arena_gib.diff
# (the arena's size from ARENA_GIB, default 40; the H200's default arena is about 70 GiB) against
# TREE/include and this checkout's build/ (librmm: cmake --preset default && cmake --build build
# --target rmm).
set -e
here=$(cd "$(dirname "$0")" && pwd)
p=$here/../../2026-11-28-h100-p/host_model
repo=$(cd "$here/../../../.." && pwd)
CCCL=${CCCL:-$(python3 -c "import nvidia.cu13, os; print(os.path.join(list(nvidia.cu13.__path__)[0], 'include/cccl'))")}
src=$(mktemp --suffix=.cpp)
patch -s -o "$src" "$p/resource_model.cpp" "$here/arena_gib.diff"
g++ -std=c++17 -O3 -DNDEBUG -g -I"$2/include" -isystem "$CCCL" -isystem /usr/local/cuda/include \
  -I"$repo/benchmarks" "$src" "$p/stubs.cpp" -L"$repo/build" -lrmm -L/usr/local/cuda/lib64 -lcudart \
  -lbenchmark -lpthread -o "$1"
