#!/bin/bash
# Instructions per operation of the real resources over a fake upstream (resource_model.cpp),
# less the harness (null): ./before and ./after, for RES (arena or pool), every row of the grid.
export LD_LIBRARY_PATH=${LIBDIR:-/work/main/build-gpu}:/usr/local/cuda/lib64
ir() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 | awk '/I *refs/ {gsub(",","",$4); print $4}'; }
res=${RES:-arena}
echo "| n | max MiB | null | $res before | $res after | after / before (own) |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in ${NS:-1000 10000 100000}; do for m in ${MS:-1 4 64 256 1024 4096}; do
  ops=$((4 * n))
  nl=$(( ($(ir ./after null $n $m 3) - $(ir ./after null $n $m 1)) / ops ))
  b=$(( ($(ir ./before $res $n $m 3) - $(ir ./before $res $n $m 1)) / ops - nl ))
  a=$(( ($(ir ./after $res $n $m 3) - $(ir ./after $res $n $m 1)) / ops - nl ))
  echo "| $n | $m | $nl | $b | $a | $(python3 -c "print(f'{$a/$b:.2f}')") |"
done; done
