# cgfn.py CACHEGRIND_OUT [N]: the N functions with the most instructions, with their L1 misses and mispredicts.
import sys, collections, re
def load(p):
    ev=None; fn=None; d=collections.defaultdict(lambda:[0]*13)
    for line in open(p):
        if line.startswith('events:'): ev=line.split()[1:]; continue
        if line.startswith('fn='): fn=line[3:].strip(); continue
        if line[0].isdigit():
            v=line.split()[1:]
            for i,x in enumerate(v): d[fn][i]+=int(x)
    return ev,d
ev,d=load(sys.argv[1])
tot=[sum(x[i] for x in d.values()) for i in range(13)]
idx={e:i for i,e in enumerate(ev)}
def short(f):
    f=re.sub(r'\(.*','',f); return f[-70:]
rows=sorted(d.items(), key=lambda kv:-kv[1][0])[:int(sys.argv[2]) if len(sys.argv)>2 else 25]
print("total Ir %d D1mr %d Bcm %d"%(tot[0],tot[idx['D1mr']],tot[idx['Bcm']]))
for f,v in rows:
    print("%12d %5.1f%%  D1mr %8d  Bcm %8d  %s"%(v[0],100*v[0]/tot[0],v[idx['D1mr']]+v[idx['D1mw']],v[idx['Bcm']],short(f)))
