#!/bin/bash
# cg.sh RES n m bins...: per-op instructions, D1 misses, branch mispredicts ((R3 - R1) / 4n)
export LD_LIBRARY_PATH=/work/main/build:/usr/local/cuda/lib64
cg() { valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --D1=49152,12,64 --LL=2097152,16,64 --cachegrind-out-file=/dev/null "$@" 2>&1 | awk '/I *refs/ {gsub(",","",$4); ir=$4} /D1  misses/ {gsub(",","",$4); d1=$4} /Mispredicts/ {gsub(",","",$3); bm=$3} END {print ir, d1, bm}'; }
res=$1; n=$2; m=$3; shift 3
for b in "$@"; do
  r3=$(cg ./$b $res $n $m 3); r1=$(cg ./$b $res $n $m 1)
  echo "$b $res $n $m $r3 $r1" | awk '{o=4*$3; printf "%-6s %s n=%s max=%s ir/op %.1f d1/op %.3f bm/op %.3f\n",$1,$2,$3,$4,($5-$8)/o,($6-$9)/o,($7-$10)/o}'
done
