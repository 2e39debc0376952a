# pairs.py FILE base,a,b: for probe4.sh / probe5.sh output (each round: the variants, then the
# null, one process each, back to back), per row: the medians of ns/op, then for each variant its
# median ratio to the first of the arena's own time ((variant - null) / (base - null), round by
# round) and in how many rounds it was faster. Prints markdown table rows.
import re,statistics,math,sys
f=sys.argv[1]; vs=sys.argv[2].split(',')
recs=[]
for l in open(f):
    m=re.match(r'(\w+) (?:arena|null) n=(\d+) max=(\d+) median ([\d.]+)',l)
    if m: recs.append((m.group(1),m.group(2),m.group(3),float(m.group(4))))
for row in [('100000','1'),('100000','4'),('10000','4')]:
    rs=[r for r in recs if (r[1],r[2])==row]
    k=len(vs)+1
    quads=[rs[i:i+k] for i in range(0,len(rs),k)]
    d={v:[] for v in vs+['null']}
    res={v:([],[]) for v in vs[1:]}
    for q in quads:
        x={r[0]:r[3] for r in q}
        for kk in x: d[kk].append(x[kk])
        for v in vs[1:]:
            res[v][0].append(x[v]/x[vs[0]]); res[v][1].append((x[v]-x['null'])/(x[vs[0]]-x['null']))
    print(f"| {row[0]}, {row[1]} | " + " | ".join(f"{statistics.median(d[v]):.0f}" for v in vs+['null']) + " | " +
          " | ".join(f"{statistics.median(res[v][1]):.3f} ({sum(1 for x in res[v][0] if x<1)}/{len(res[v][0])})" for v in vs[1:]) + " |")
