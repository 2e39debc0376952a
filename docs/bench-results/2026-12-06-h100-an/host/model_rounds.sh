#!/bin/bash
# rounds.sh R: R alternating rounds of model_old and model_d8 on the pool's n = 1,000 rows, one
# workload repeated (VARY unset) and 64 cycled (VARY=64); prints one line per measurement.
for r in $(seq 1 $1); do
  for mx in 1 4 64 256 1024 4096; do
    for vary in "" 64; do
      order="old d8"; [ $((r % 2)) -eq 0 ] && order="d8 old"
      for v in $order; do
        res=$(VARY=$vary taskset -c 1 ./model_$v pool 1000 $mx 300 | head -1 | sed -E 's/.*median ([0-9.]+).*/\1/')
        echo "$r $mx ${vary:-1} $v $res"
      done
    done
  done
done
