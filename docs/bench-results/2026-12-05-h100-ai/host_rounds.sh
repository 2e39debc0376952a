#!/bin/bash
# rounds.sh R "n max" GIB BINS...: alternating rounds (order reversed on even rounds), ratio to first
R=$1; row=$2; gib=$3; shift 3
export LD_LIBRARY_PATH=/work/main/build:/usr/local/cuda/lib64
: > /tmp/hm/rounds.out
for r in $(seq $R); do
  if [ $((r % 2)) -eq 0 ]; then order=$(echo "$@" | tr ' ' '\n' | tac); else order="$@"; fi
  for b in $order; do echo "$r $b $(ARENA_GIB=$gib taskset -c 1 /tmp/hm/$b arena $row 5 | awk '{print $5}')" >> /tmp/hm/rounds.out; done
done
python3 - "$@" <<'PY'
import sys, statistics as st
bins=sys.argv[1:]
d={b:{} for b in bins}
for l in open('/tmp/hm/rounds.out'):
    r,b,v=l.split(); d[b][r]=float(v)
base=d[bins[0]]
for b in bins:
    rs=[d[b][k]/base[k] for k in base]
    print(f"{b:8s} median {st.median(d[b].values()):6.1f} ratio-to-{bins[0]} {st.median(rs):.3f} wins {sum(1 for x in rs if x<1)}/{len(rs)}")
PY
