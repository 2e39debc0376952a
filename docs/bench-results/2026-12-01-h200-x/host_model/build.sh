#!/bin/bash
# build.sh OUT TREE [every]: session p's host model (../../2026-11-28-h100-p/host_model/) against
# TREE/include and this checkout's build/ (librmm), as this session built base, v1, v2, v3, thr and
# nolock; with "every", patched by rm_every.diff to print every repetition when EVERY=1 (call 6).
set -e
here=$(cd "$(dirname "$0")" && pwd)
p=$here/../../2026-11-28-h100-p/host_model
repo=$(cd "$here/../../../.." && pwd)
CCCL=${CCCL:-$(python3 -c "import nvidia.cu13, os; print(os.path.join(list(nvidia.cu13.__path__)[0], 'include/cccl'))")}
BUILD=${BUILD:-$repo/build}
src=$p/resource_model.cpp
if [ "${3:-}" = every ]; then
  src=$(mktemp --suffix=.cpp)
  patch -s -o "$src" "$p/resource_model.cpp" "$here/rm_every.diff"
fi
g++ -std=c++17 -O3 -DNDEBUG -g -I"$2/include" -isystem "$CCCL" -isystem /usr/local/cuda/include \
  -I"$repo/benchmarks" "$src" "$p/stubs.cpp" -L"$BUILD" -lrmm -L/usr/local/cuda/lib64 -lcudart \
  -lbenchmark -lpthread -o "$1"
