"""Paired ratios over this session's H100 calls together (call1-3/ab.tgz): each round's ratio of
two variants run back to back, then the median over every round of every call that ran both, the
quartiles, and in how many rounds the ratio was below 1. Usage (from this folder): python3 pooled.py"""
import collections, json, re, statistics, tarfile

ORDER = ["1", "4", "64", "256", "1024", "4096"]
PAIRS = [("new", "old"), ("dup", "new"), ("dup", "old"), ("trim", "new"), ("trim", "old")]
ratios = collections.defaultdict(list)  # (pair, max) -> per-round ratios
for call in ("call1", "call2", "call3"):
    runs = {}
    tf = tarfile.open(f"{call}/ab.tgz")
    for m in tf.getmembers():
        hit = re.search(r"([a-z0-9]+)_(\d+)\.json$", m.name)
        if not hit:
            continue
        for b in json.load(tf.extractfile(m))["benchmarks"]:
            row = re.search(r"/max:(\d+)/", b["run_name"])
            if b.get("aggregate_name") == "median" and row:
                runs[(hit.group(1), int(hit.group(2)), row.group(1))] = b["ns_per_op"]
    for (v, r, mx), t in runs.items():
        for a, b in PAIRS:
            if v == a and (b, r, mx) in runs:
                ratios[(f"{a} / {b}", mx)].append(t / runs[(b, r, mx)])
print("| pair (rounds at max 1 / 64 MiB) | " + " | ".join(f"max {m} MiB" for m in ORDER) + " |")
print("| --- |" + " --- |" * len(ORDER))
for a, b in PAIRS:
    p = f"{a} / {b}"
    cells = []
    for m in ORDER:
        rs = sorted(ratios[(p, m)])
        q = len(rs) // 4
        cells.append(f"{statistics.median(rs):.3f} ({rs[q]:.3f}-{rs[-1 - q]:.3f}; {sum(x < 1 for x in rs)}/{len(rs)})")
    print(f"| {p} ({len(ratios[(p, '1')])} / {len(ratios[(p, '64')])}) | " + " | ".join(cells) + " |")
