#!/bin/bash
# cmp.sh A B: instructions per operation of RES (arena, the default, or pool) itself, less the
# null resource, for host-model builds A and B; rows NS x MS (default 10000 100000 x 1 4 64)
export LD_LIBRARY_PATH=${LIBDIR:-/work/main/build}:/usr/local/cuda/lib64
ir() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 | awk '/I *refs/ {gsub(",","",$4); print $4}'; }
echo "| n | max | null | $1 | $2 | ratio |"
for n in ${NS:-10000 100000}; do for m in ${MS:-1 4 64}; do
  ops=$((4 * n))
  nl=$(( ($(ir ./$1 null $n $m 3) - $(ir ./$1 null $n $m 1)) / ops ))
  a=$(( ($(ir ./$1 ${RES:-arena} $n $m 3) - $(ir ./$1 ${RES:-arena} $n $m 1)) / ops - nl ))
  b=$(( ($(ir ./$2 ${RES:-arena} $n $m 3) - $(ir ./$2 ${RES:-arena} $n $m 1)) / ops - nl ))
  echo "| $n | $m | $nl | $a | $b | $(python3 -c "print(f'{$b/$a:.3f}')") |"
done; done
