#!/bin/bash
# Paired, fine-grained alternation: one repetition per process (after the model's growth run),
# the variants back to back, then the null, 60 times per row, so that drift over seconds cancels
# in each round's ratios. VARIANTS: the m_<variant> binaries, the reference first (call 7: the
# default; call 8: "base t3 v3"). Read the output with pairs.py.
export LD_LIBRARY_PATH=$PWD/build-ab/lib:$LD_LIBRARY_PATH
cd build-ab/model
for row in "100000 1" "100000 4" "10000 4"; do
  for i in $(seq 1 60); do
    for v in ${VARIANTS:-base v3 v1}; do echo -n "$v "; taskset -c 5 ./m_$v arena $row 1; done
    echo -n "null "; taskset -c 5 ./m_base null $row 1
  done
done
