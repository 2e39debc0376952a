#!/bin/bash
# build.sh OUT TREE: rm_every.cpp against TREE/include (and this checkout's build-gpu for
# the configured headers and librmm), e.g. ./build.sh after /work/main; ./build.sh before /tmp/base
here=$(cd "$(dirname "$0")" && pwd)
CCCL=${CCCL:-$(python3 -c "import nvidia.cu13, os; print(os.path.join(list(nvidia.cu13.__path__)[0], 'include/cccl'))")}
BUILD=${BUILD:-/work/main/build-gpu}
g++ -std=c++17 -O3 -DNDEBUG -g -I$2/include -I$BUILD/include -isystem $CCCL -isystem /usr/local/cuda/include \
  -I/work/main/benchmarks $here/rm_every.cpp $here/stubs.cpp -L$BUILD -lrmm -L/usr/local/cuda/lib64 -lcudart -lbenchmark -lpthread -o $1
