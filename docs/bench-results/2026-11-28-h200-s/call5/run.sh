#!/bin/bash
# On the GPU machine: hardware counters of the host model, d8 against d1 (and one chunk).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null | sed 's/^/perf_event_paranoid /'
grep -m1 "model name" /proc/cpuinfo
for r in 1 2 3; do
  for v in d8 d1 d8i324 m128; do
    case $v in
      d8i324) cmd=(env INIT_MIB=324 ./model_d8 pool 1000 1 3000) ;;
      *) cmd=(./model_$v pool 1000 1 3000) ;;
    esac
    echo "=== round $r $v"
    taskset -c 5 ./pmu_run -- "${cmd[@]}"
  done
done
echo "=== arena n=100000 max=1"
taskset -c 5 ./pmu_run -- ./model_d8 arena 100000 1 30
echo "=== null n=100000 max=1"
taskset -c 5 ./pmu_run -- ./model_d8 null 100000 1 30
