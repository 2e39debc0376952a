#!/bin/bash
# rounds.sh R "n max" GIB BINS...: R rounds, each running every host-model binary once (3 repetitions,
# pinned to core 1) in turn; per binary the median of the rounds and the median ratio of each
# round to the first binary's, with the rounds it won. Run from the binaries' folder.
R=$1; row=$2; gib=$3; shift 3
export LD_LIBRARY_PATH=/work/main/build:/usr/local/cuda/lib64
for r in $(seq $R); do for b in "$@"; do echo "$b $(ARENA_GIB=$gib taskset -c 1 ./$b arena $row 3 | awk '{print $5}')"; done; done > rounds.out
python3 - "$@" <<'PY'
import sys, statistics as st
bins=sys.argv[1:]
d={b:[] for b in bins}
for l in open('rounds.out'):
    b,v=l.split(); d[b].append(float(v))
base=d[bins[0]]
for b in bins:
    r=[x/y for x,y in zip(d[b],base)]
    print(f"{b:6s} median {st.median(d[b]):6.1f} ratio-to-{bins[0]} {st.median(r):.3f} wins {sum(1 for x in r if x<1)}/{len(r)}")
PY
