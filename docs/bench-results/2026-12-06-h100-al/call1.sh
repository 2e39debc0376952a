#!/bin/bash
# Session al, call 1: sampled CPU profiles of the pool and fixed_size multi-thread rows, own
# streams against per-thread default streams (staging of d6939f7, session ak's pack).
bash scripts/gpu_suite.sh unpack >/dev/null
stage=$PWD/.gpu
export LD_LIBRARY_PATH="$stage/lib:${LD_LIBRARY_PATH:-}"
export RMM_BENCH_REPS=1 RMM_BENCH_REP_S=3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
mkdir -p $OUT/prof
for f in '^mt/pool/T:16/' '^mtptds/pool/T:16/' '^mt/pool/T:1/' '^mtptds/pool/T:1/' '^mt/fixed_size/T:16/' '^mtptds/fixed_size/T:16/'; do
  name=prof_$(echo "$f" | tr -c 'A-Za-z0-9_\n' '_' | sed 's/_*$//;s/^_*//')
  echo "=== $name"
  timeout 120 env RMM_SAMPLER_OUT="$OUT/prof/$name.txt" RMM_SAMPLER_HZ=4000 \
    LD_PRELOAD="$stage/lib/librmm_sampler.so" "$stage/bin/rmm_multithread_bench" \
    --benchmark_filter="$f" 2>&1 | grep -E "^mt" | cut -c1-250
done
cd $OUT && tar czf prof.tgz prof && rm -rf prof
