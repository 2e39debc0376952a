#!/usr/bin/env python3
"""cgfn.py CACHEGRIND_OUT [N]: the N functions (default 25) with the most instructions, each with
its simulated L1 data misses (reads and writes) and mispredicted conditional branches."""
import collections, re, sys

events, fn, per_fn = None, None, collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith('events:'):
        events = line.split()[1:]
    elif line.startswith('fn='):
        fn = line[3:].strip()
    elif line[:1].isdigit():
        counts = [int(x) for x in line.split()[1:]]
        acc = per_fn[fn]
        acc.extend([0] * (len(events) - len(acc)))
        for i, x in enumerate(counts):
            acc[i] += x
col = {e: i for i, e in enumerate(events)}
get = lambda v, e: v[col[e]] if col[e] < len(v) else 0
total = [sum(v[i] for v in per_fn.values() if i < len(v)) for i in range(len(events))]
d1 = lambda v: get(v, 'D1mr') + get(v, 'D1mw')
print('total Ir %d D1 misses %d Bcm %d' % (get(total, 'Ir'), d1(total), get(total, 'Bcm')))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
top = sorted(per_fn.items(), key=lambda kv: -get(kv[1], 'Ir'))[:n]
for f, v in top:
    print('%12d %5.1f%%  D1 misses %8d  Bcm %8d  %s' % (
        get(v, 'Ir'), 100 * get(v, 'Ir') / get(total, 'Ir'), d1(v),
        get(v, 'Bcm'), re.sub(r'\(.*', '', f)[-70:]))
