#!/bin/bash
# The host model of main (m_base, 5f0f2c5) and of this change (m_new) on the H200 host's CPU, no
# GPU: R rounds per row, the two binaries back to back in each round, pinned to core 5, arena 70 GiB.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/../../.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
R=${R:-20}
for row in "100000 1" "100000 4" "100000 256" "10000 256" "10000 4"; do
  for r in $(seq $R); do
    for b in new base; do
      echo "$row $b $(ARENA_GIB=70 taskset -c 5 ./m_$b arena $row 3 | awk '{print $5}')"
    done
  done
done
for r in $(seq 5); do echo "null $(taskset -c 5 ./m_base null 100000 1 3 | awk '{print $5}')"; done
