#!/bin/bash
# Run in a folder holding ./before and ./after, built as host_model.cpp says: median over 5
# alternating processes of each process's median of 9 runs (ns per operation).
echo "| n | max MiB | null | before | after | after / before |"
echo "| --- | --- | --- | --- | --- | --- |"
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for n in 1000 10000 100000; do for m in 1 4 64 256 1024 4096; do
  nb=""; bb=""; ab=""
  for i in 1 2 3 4 5; do
    nb="$nb $(./after null $n $m 9 | awk '{print $5}')"
    bb="$bb $(./before arena $n $m 9 | awk '{print $5}')"
    ab="$ab $(./after arena $n $m 9 | awk '{print $5}')"
  done
  x=$(echo $nb | tr ' ' '\n' | med); b=$(echo $bb | tr ' ' '\n' | med); a=$(echo $ab | tr ' ' '\n' | med)
  echo "| $n | $m | $x | $b | $a | $(python3 -c "print(f'{$a/$b:.2f}')") |"
done; done
