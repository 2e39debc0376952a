#!/bin/bash
# Restages only what gpu_tests_call.sh runs, after a header change, onto an earlier full staging
# (.gpu/ from `RMM_GPU_BENCHMARKS=ON bash scripts/gpu_suite.sh stage`): a full stage rebuilds 189
# targets (21 in the first 4 minutes on 2 cores), these 96. Builds the test programs and librmm in
# build-gpu/, copies them stripped into .gpu/ as stage does, and repacks .gpu-pack/gpu.tar.xz.
set -eu
ninja -C build-gpu rmm_gpu_tests rmm_gpu_tests_ptds process_is_exiting_test rmm_ipc_child
for p in rmm_gpu_tests rmm_gpu_tests_ptds process_is_exiting_test rmm_ipc_child; do
  strip --strip-debug -o ".gpu/bin/$p" "build-gpu/tests/$p"
done
cp -a build-gpu/librmm.so* .gpu/lib/
bash scripts/gpu_suite.sh pack
