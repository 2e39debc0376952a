#!/bin/bash
# Host model (no GPU) on the device machine's CPU: the arena over a fake upstream, variants
# alternating, pinned to one core.
export LD_LIBRARY_PATH=$PWD/build-ab/lib:$LD_LIBRARY_PATH
cd build-ab/model
lscpu | grep -E "Model name|MHz|L1d|L2|L3"
for r in 1 2 3 4 5 6; do
  for row in "100000 1" "100000 4" "100000 64" "10000 4"; do
    taskset -c 5 ./m_base null $row 5
    for v in base nolock v1 v3; do echo -n "$v "; taskset -c 5 ./m_$v arena $row 5; done
  done
done
