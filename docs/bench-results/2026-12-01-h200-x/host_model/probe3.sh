#!/bin/bash
# Per-process or over time? Each process runs 40 repetitions (about 1.5 s) and prints every one;
# 8 processes of the arena alternating with the null resource, on one core.
export LD_LIBRARY_PATH=$PWD/build-ab/lib:$LD_LIBRARY_PATH
cd build-ab/model
for r in 1 2 3 4 5 6 7 8; do
  EVERY=1 taskset -c 5 ./m_every arena 100000 1 40
  EVERY=1 taskset -c 5 ./m_every null 100000 1 40
done
