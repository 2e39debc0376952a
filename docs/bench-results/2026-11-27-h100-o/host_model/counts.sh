#!/bin/bash
# Run in a folder holding ./before and ./after, built as host_model.cpp says.
# instructions per operation (callgrind-free: cachegrind without cache simulation), before/after
echo "| n | max MiB | null | before | after | after / before |"
echo "| --- | --- | --- | --- | --- | --- |"
ir() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 | awk '/I *refs/ {gsub(",","",$4); print $4}'; }
for n in 1000 10000 100000; do for m in 1 4 64 256 1024 4096; do
  ops=$((2 * 2 * n))
  r=""
  for b in null before after; do
    exe=./after; mode=arena; [ $b = before ] && exe=./before; [ $b = null ] && mode=null
    a1=$(ir $exe $mode $n $m 1); a3=$(ir $exe $mode $n $m 3)
    r="$r $(( (a3 - a1) / ops ))"
  done
  set -- $r
  echo "| $n | $m | $1 | $2 | $3 | $(python3 -c "print(f'{$3/$2:.2f}')") |"
done; done
