import json,glob,statistics,sys,re
d=sys.argv[1]
def load(v,r):
    j=json.load(open(f"{d}/{v}_{r}.json"))
    out={}
    for b in j["benchmarks"]:
        if b.get("aggregate_name")=="median":
            out[b["run_name"]]=b["ns_per_op"]
    return out
rounds=sorted({int(re.search(r'_(\d+)\.json',f).group(1)) for f in glob.glob(d+"/new_*.json")})
rows=sorted(load("new",1))
for a,b in [("new","old"),("new64","old64")]:
    print(a,"/",b)
    for row in rows:
        rs=[load(a,r)[row]/load(b,r)[row] for r in rounds]
        rs.sort()
        print(f"  {row:35s} median {statistics.median(rs):.3f}  q1 {rs[len(rs)//4]:.3f} q3 {rs[3*len(rs)//4]:.3f}  n={len(rs)}")
