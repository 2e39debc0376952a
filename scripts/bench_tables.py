#!/usr/bin/env python3
"""Markdown tables from a benchmark run (standard library only).

    bench_tables.py DIR [DIR...]        # tables from DIR/*.json (Google Benchmark) + DIR/peers.txt
    bench_tables.py merge OUT.json IN.json...   # concatenate Google Benchmark JSON files

Several DIRs (a run split over device calls with RMM_BENCH_PARTS) are read together; where two
hold the same benchmark, the later DIR wins.

DIR is what scripts/run_benchmarks.sh wrote ($OUT): the JSON files of rmm_random_allocations_bench,
rmm_multithread_bench, rmm_replay_bench, rmm_pinned_bench, rmm_realloc_bench and rmm_multigpu_bench (--benchmark_out_format=json, with or without
--benchmark_report_aggregates_only) and peers.txt, the output of the ../shared/bench scripts.
For each benchmark the median over repetitions is used (the "median" aggregate if present, else
the median of the repetitions). Benchmark names are family/resource/key:value/..., e.g.
random/pool/n:1000/max:1, mt/arena/T:16/n:10000/max:1, replay/pool/resnet50_train,
mgpu/pool/G:2/T:8/n:10000/max:1.

A JSON file cut short (a run killed by its timeout) is read up to its last complete benchmark.
"""
import glob
import json
import os
import re
import statistics
import sys

OURS = ["pool", "arena", "binning", "fixed_size"]
BASELINES = ["null", "cuda_async", "cuda"]
# RMM 26.x's own resources, from the peer build of the same harness (scripts/build_rmm_peer.sh).
RMM_PEER = ["rmm_pool", "rmm_arena", "rmm_binning"]
DASH = "—"
PARTIAL = "*"  # a median over the repetitions that finished, where others failed (see keep_partial)


# --- reading ---------------------------------------------------------------------------------

def load_json(path):
    """Google Benchmark JSON; a truncated file is repaired up to its last complete benchmark."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    # Truncated: keep everything up to the last benchmark object that closed.
    cut = text.rfind("\n    }")
    while cut > 0:
        try:
            return json.loads(text[: cut + len("\n    }")] + "\n  ]\n}\n")
        except ValueError:
            cut = text.rfind("\n    }", 0, cut)
    return None


def merge(out, inputs):
    merged = {"context": None, "benchmarks": []}
    for path in inputs:
        data = load_json(path)
        if not data:
            print(f"merge: skipping {path} (missing or unreadable)", file=sys.stderr)
            continue
        if merged["context"] is None:
            merged["context"] = data.get("context", {})
        merged["benchmarks"].extend(data.get("benchmarks", []))
    merged["context"] = merged["context"] or {}
    with open(out, "w") as f:
        json.dump(merged, f, indent=2)
    print(f"merge: {len(merged['benchmarks'])} entries -> {out}", file=sys.stderr)


def parse_name(run_name):
    """('random', 'pool', {'n': '1000', 'max': '1'}, ['resnet50_train'])"""
    parts = run_name.split("/")
    params, words = {}, []
    for p in parts[2:]:
        if ":" in p:
            k, v = p.split(":", 1)
            if k not in ("iterations", "repeats", "threads", "min_time"):
                params[k] = v
        elif p not in ("manual_time", "real_time", "process_time"):
            words.append(p)
    return parts[0], (parts[1] if len(parts) > 1 else ""), params, words


class Results:
    """Median counters per benchmark, keyed by (family, resource, params...)."""

    def __init__(self):
        self.rows = {}  # run_name -> {"counters": {...}, "error": str|None}

    def add_file(self, data):
        iterations = {}
        for b in data.get("benchmarks", []):
            run_name = b.get("run_name") or re.sub(r"_(mean|median|stddev|cv)$", "", b["name"])
            if b.get("error_occurred"):
                row = self.rows.setdefault(run_name, {"counters": {}, "error": None})
                if not row["error"] or row["error"].startswith("skipped: an earlier run"):
                    row["error"] = b.get("error_message", "error")  # the first, telling one
                continue
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") == "median":
                    row = self.rows.setdefault(run_name, {"counters": {}, "error": None})
                    row["counters"] = counters_of(b)
                    keep_partial(row)
            else:
                iterations.setdefault(run_name, []).append(counters_of(b))
        for run_name, runs in iterations.items():
            row = self.rows.setdefault(run_name, {"counters": {}, "error": None})
            if row["counters"]:
                continue  # the aggregate is there too
            keys = set().union(*runs)
            row["counters"] = {k: statistics.median(r[k] for r in runs if k in r) for k in keys}
            keep_partial(row)

    def find(self, family, resource, **params):
        for run_name, row in self.rows.items():
            fam, res, p, _ = parse_name(run_name)
            if fam == family and res == resource and all(p.get(k) == str(v) for k, v in params.items()):
                return row
        return None

    def keys(self, family):
        return [parse_name(r) for r in self.rows if parse_name(r)[0] == family]


def keep_partial(row):
    """A row with a median: repetitions that failed beside ones that finished (one ran over
    RMM_BENCH_MAX_RUN_S, and the later ones were skipped) make it partial, marked in its cells."""
    if row["error"]:
        row["partial"] = row["error"]
    row["error"] = None


def counters_of(b):
    skip = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
            "aggregate_name", "aggregate_unit", "iterations", "time_unit", "family_index",
            "per_family_instance_index", "label", "error_occurred", "error_message"}
    c = {k: v for k, v in b.items() if k not in skip and isinstance(v, (int, float))}
    return c


def parse_peers(paths):
    peers = {"raw": {}, "torch": {}, "torch_mt": {}, "torch_replay": [], "notes": [], "failed": []}
    lines = []
    for path in paths:
        try:
            lines += open(path, errors="replace").read().splitlines()
        except OSError:
            pass
    for line in lines:
        m = re.match(r"raw (\S+)\s+n=(\d+)\s+max=(\d+)\s*MiB median ([\d.]+) ms", line)
        if m:
            api, n, mib, ms = m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4))
            peers["raw"][(api, n, mib)] = ms * 1e6 / (2 * n)
            continue
        m = re.match(r"torch-caching n=(\d+)\s+max=(\d+)\s*MiB median ([\d.]+) ms", line)
        if m:
            n, mib, ms = int(m.group(1)), int(m.group(2)), float(m.group(3))
            peers["torch"][(n, mib)] = ms * 1e6 / (2 * n)
            continue
        m = re.match(r"torch-mt\s+T=(\d+)\s+n/thread=(\d+)\s+max=(\d+)\s*MiB median\s+([\d.]+) ms\s+([\d.]+) Mops/s", line)
        if m:
            t, n, mib, mops = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(5))
            peers["torch_mt"][(t, n, mib)] = mops
            continue
        m = re.match(r"torch-replay (\S+)\s+(\S+)\s+replay median\s+([\d.]+) ms \(\s*([\d.]+) ns/op\)\s+"
                     r"peak live\s+(\d+) MiB\s+peak reserved (\d+) MiB\s+efficiency ([\d.]+)", line)
        if m:
            peers["torch_replay"].append({
                "conf": m.group(1), "log": m.group(2), "ns": float(m.group(4)),
                "peak_live": int(m.group(5)), "reserved": int(m.group(6)), "eff": float(m.group(7))})
            continue
        if line.startswith("# ") and ":" in line:
            peers["notes"].append(line[2:])
        if line.startswith("FAILED") or line.startswith("TIMEOUT") or line.startswith("SKIPPED"):
            peers["failed"].append(line)
    return peers


# --- formatting ------------------------------------------------------------------------------

def fmt(v, digits=3):
    if v is None:
        return DASH
    if isinstance(v, str):
        return v
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    decimals = max(0, digits - 1 - int(f"{abs(v):e}".split("e")[1]))
    return f"{v:.{decimals}f}"


def cell(row, counter, digits=3):
    if row is None:
        return DASH, None
    if row["error"]:
        short = "skipped" if "skipped" in row["error"] or "RMM_BENCH_MAX_RUN_S" in row["error"] else "error"
        return short, None
    v = row["counters"].get(counter)
    return fmt(v, digits) + (PARTIAL if row.get("partial") and v is not None else ""), v


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def ratio(other, best):
    if other is None or best is None or best == 0:
        return DASH
    return f"{other / best:.2f}×"


def present(results, family, candidates):
    found = {res for _, res, _, _ in results.keys(family)}
    return [c for c in candidates if c in found] + sorted(found - set(candidates))


def random_table(results, peers):
    keys = results.keys("random")
    grid = sorted({(int(p["n"]), int(p["max"])) for _, _, p, _ in keys if "n" in p and "max" in p}
                  | set(peers["torch"]) | {(n, m) for (_, n, m) in peers["raw"]})
    if not grid:
        return None
    resources = present(results, "random", OURS + RMM_PEER + BASELINES)
    ours = [r for r in resources if r not in BASELINES + RMM_PEER]
    header = (["n", "max MiB"] + resources + ["raw cuda_async", "raw cuda", "torch",
              "best of ours", "cudaMallocAsync ÷ best", "torch ÷ best"])
    rows = []
    for n, mib in grid:
        line, values = [f"{n:,}", mib], {}
        for res in resources:
            text, v = cell(results.find("random", res, n=n, max=mib), "ns_per_op")
            values[res] = v
            line.append(text)
        raw_async = peers["raw"].get(("cuda_async", n, mib))
        raw_cuda = peers["raw"].get(("cuda", n, mib))
        torch = peers["torch"].get((n, mib))
        line += [fmt(raw_async), fmt(raw_cuda), fmt(torch)]
        best = min(((values[r], r) for r in ours if values.get(r) is not None), default=(None, None))
        async_ns = values.get("cuda_async") if values.get("cuda_async") is not None else raw_async
        line += [f"{best[1]} {fmt(best[0])}" if best[1] else DASH, ratio(async_ns, best[0]),
                 ratio(torch, best[0])]
        rows.append(line)
    return ("### Random allocations, one thread (ns per operation, median; lower is better)\n\n"
            "Columns pool … cuda: this library's harness (`rmm_random_allocations_bench`); "
            "raw … and torch: the peers in `../shared/bench` (ns/op = median ms / 2n). "
            "Ratios > 1 mean the best of our resources is faster.\n\n" + table(header, rows))


def mt_table(results, peers, family="mt"):
    keys = results.keys(family)
    torch_mt = peers["torch_mt"] if family == "mt" else {}  # torch's threads use own streams
    grid = sorted({(int(p["T"]), int(p["n"]), int(p["max"])) for _, _, p, _ in keys
                   if {"T", "n", "max"} <= set(p)} | set(torch_mt))
    if not grid:
        return None
    resources = present(results, family, OURS + RMM_PEER + BASELINES)
    ours = [r for r in resources if r not in BASELINES + RMM_PEER]
    header = ["T", "n/thread", "max MiB"] + resources + [
        "best of ours", "best, with start", "torch-mt (with start)", "best ÷ torch"]
    rows = []
    for t, n, mib in grid:
        line, values, found = [t, f"{n:,}", mib], {}, {}
        for res in resources:
            found[res] = results.find(family, res, T=t, n=n, max=mib)
            text, values[res] = cell(found[res], "Mops_per_s")
            line.append(text)
        torch = torch_mt.get((t, n, mib))
        best = max(((values[r], r) for r in ours if values.get(r) is not None), default=(None, None))
        with_start = None
        if best[1]:
            # Older runs have no such counter: their Mops_per_s was timed with the start.
            _, with_start = cell(found[best[1]], "Mops_per_s_with_start")
            with_start = best[0] if with_start is None else with_start
        line += [f"{best[1]} {fmt(best[0])}" if best[1] else DASH, fmt(with_start), fmt(torch),
                 ratio(with_start, torch)]
        rows.append(line)
    streams = "T streams" if family == "mt" else "their per-thread default streams"
    return (f"### Multi-thread random allocations, T threads on {streams} (aggregate Mops/s, "
            "median; higher is better)\n\n"
            "Resource columns: timed from the opening of the gate that all T started threads wait "
            "at. `best, with start`: the same runs timed from before the threads start, as "
            "torch_mt_alloc.py times its own; `best ÷ torch` compares those two.\n\n"
            + table(header, rows))


def mt_reserved_table(results, family="mt"):
    """The multi-thread rows' counter reserved_MiB (device memory the resource keeps after its
    runs, everything freed); None for runs older than the counter."""
    keys = results.keys(family)
    grid = sorted({(int(p["T"]), int(p["n"]), int(p["max"])) for _, _, p, _ in keys
                   if {"T", "n", "max"} <= set(p)})
    resources = present(results, family, OURS + RMM_PEER + BASELINES)
    rows, seen = [], False
    for t, n, mib in grid:
        line = [t, f"{n:,}", mib, f"{16000 // t:,}"]
        for res in resources:
            text, v = cell(results.find(family, res, T=t, n=n, max=mib), "reserved_MiB", 4)
            seen = seen or v is not None
            line.append(text)
        rows.append(line)
    if not seen:
        return None
    streams = "T streams" if family == "mt" else "their per-thread default streams"
    return (f"### Device memory kept after the runs, T threads on {streams} (MiB, median; "
            "lower is better)\n\n"
            "`reserved_MiB`: device memory in use after the last run (every block freed) less "
            "before the resource was made. Each thread's live bytes stay under 16000 / T MiB "
            "(column `live cap per thread`).\n\n"
            + table(["T", "n/thread", "max MiB", "live cap per thread"] + resources, rows))


def mgpu_table(results):
    """rmm_multigpu_bench: aggregate Mops/s per resource for each G (GPUs) and T (threads, T / G
    per GPU); RMM's columns (rmm_pool, rmm_arena) beside ours when its peer ran."""
    keys = results.keys("mgpu")
    grid = sorted({(int(p["n"]), int(p["max"]), int(p["T"]) // int(p["G"]), int(p["G"]))
                   for _, _, p, _ in keys if {"G", "T", "n", "max"} <= set(p) and int(p["G"]) > 0})
    if not grid:
        return None
    resources = present(results, "mgpu", OURS + RMM_PEER + BASELINES)
    ours = [r for r in resources if r not in BASELINES + RMM_PEER]
    rmm = [r for r in resources if r in RMM_PEER]
    header = (["G", "T", "T/GPU", "n/thread", "max MiB"] + resources + ["best of ours"] +
              (["best ÷ RMM's best"] if rmm else []) + ["best ÷ best at G=1"])
    rows, best_g1 = [], {}
    for n, mib, per_gpu, g in grid:
        t = per_gpu * g
        line, values = [g, t, per_gpu, f"{n:,}", mib], {}
        for res in resources:
            text, v = cell(results.find("mgpu", res, G=g, T=t, n=n, max=mib), "Mops_per_s")
            values[res] = v
            line.append(text)
        best = max(((values[r], r) for r in ours if values.get(r) is not None), default=(None, None))
        line.append(f"{best[1]} {fmt(best[0])}" if best[1] else DASH)
        if rmm:
            rmm_best = max((values[r] for r in rmm if values.get(r) is not None), default=None)
            line.append(ratio(best[0], rmm_best))
        if g == 1:
            best_g1[(n, mib, per_gpu)] = best[0]
        line.append(ratio(best[0], best_g1.get((n, mib, per_gpu))))
        rows.append(line)
    return ("### Multi-GPU random allocations, one resource per GPU, T threads over G GPUs "
            "(aggregate Mops/s, median; higher is better)\n\n"
            "`rmm_multigpu_bench`: thread t runs on GPU t % G, on its own stream, with that GPU's "
            "resource; the timed region ends after every GPU used is synchronised. "
            "`best ÷ best at G=1`: the best of ours against the best of ours on one GPU with the "
            "same threads per GPU (perfect scaling: G×).\n\n" + table(header, rows))


def replay_table(results, peers):
    keys = results.keys("replay")
    if not keys and not peers["torch_replay"]:
        return None
    rows = []
    logs = {res: (words[0] if words else "") for _, res, _, words in keys}
    for res in present(results, "replay",
                       OURS + RMM_PEER + ["expandable_pool", "cuda_async_mr", "cuda_async", "null", "null_map"]):
        row = results.find("replay", res)
        text, _ = cell(row, "ns_per_event")
        c = row["counters"] if row and not row["error"] else {}
        rows.append([res, logs.get(res, ""), text] +
                    [fmt(c.get(k)) for k in ("efficiency", "capacity_MiB", "efficiency_grow",
                                             "upstream_peak_MiB", "peak_live_MiB")])
    for t in peers["torch_replay"]:
        rows.append([f"torch ({t['conf']})", os.path.splitext(t["log"])[0], fmt(t["ns"]), DASH, DASH,
                     fmt(t["eff"]), fmt(float(t["reserved"])), fmt(float(t["peak_live"]))])
    header = ["resource", "log", "ns/event", "efficiency (bisection)", "capacity MiB",
              "efficiency (growing)", "reserved peak MiB", "peak live MiB"]
    return ("### Replay of an allocation log\n\n"
            "efficiency (bisection) = peak live / smallest capacity that replays without running out "
            "of memory; efficiency (growing) = peak live / the most the default (growing) "
            "configuration took from its upstream (cudaMallocAsync: reserved high watermark; torch: "
            "max_memory_reserved). `null_map` is the null resource under torch_replay.py's "
            "unordered_map loop: the peer harness's own cost per event.\n\n" + table(header, rows))


def pinned_table(results):
    keys = results.keys("pinned")
    sizes = sorted({int(p["bytes"]) for _, _, p, _ in keys if "bytes" in p})
    if not sizes:
        return None
    resources = present(results, "pinned",
                        ["pool_pinned", "cuda_async_pinned", "pinned_host_mr", "cuda_host_alloc"])
    header = ["bytes"] + resources + ["cudaHostAlloc ÷ cuda_async_pinned", "cudaHostAlloc ÷ pool_pinned"]
    rows = []
    for b in sizes:
        line, values = [f"{b:,}"], {}
        for res in resources:
            text, v = cell(results.find("pinned", res, bytes=b), "ns_per_pair")
            values[res] = v
            line.append(text)
        line.append(ratio(values.get("cuda_host_alloc"), values.get("cuda_async_pinned")))
        line.append(ratio(values.get("cuda_host_alloc"), values.get("pool_pinned")))
        rows.append(line)
    return ("### Pinned host memory: allocate-free pairs (ns per pair, median; lower is better)\n\n"
            "`rmm_pinned_bench`: pool_pinned is `pool_memory_resource` over `pinned_host_memory_resource`; cuda_async_pinned is `cuda_async_pinned_memory_resource` (a driver "
            "pool of pinned host memory, stream-ordered); pinned_host_mr is "
            "`pinned_host_memory_resource` (cudaHostAlloc / cudaFreeHost per call); cuda_host_alloc "
            "is the raw calls.\n\n" + table(header, rows))


def realloc_table(results):
    keys = results.keys("realloc")
    steps = sorted({int(p["step_MiB"]) for _, _, p, _ in keys if "step_MiB" in p})
    if not steps:
        return None
    kinds = ["in_place", "move", "raw_copy"]
    header = (["step MiB"] + [f"{k} ms" for k in kinds] + ["in_place µs/step"] +
              ["move ÷ in_place", "raw_copy ÷ in_place"])
    rows = []
    for step in steps:
        line, values = [str(step)], {}
        for k in kinds:
            text, v = cell(results.find("realloc", k, step_MiB=step), "ms_per_growth")
            values[k] = v
            line.append(text)
        line.append(cell(results.find("realloc", "in_place", step_MiB=step), "us_per_step")[0])
        line += [ratio(values.get("move"), values.get("in_place")),
                 ratio(values.get("raw_copy"), values.get("in_place"))]
        rows.append(line)
    return ("### Growing one allocation to 1 GiB through reallocate (ms per growth, median)\n\n"
            "`rmm_realloc_bench`: `gpu_allocator_adaptor::reallocate` with the resizable flag, over "
            "`virtual_memory_resource` (in_place: maps granules after the end) and over "
            "`cuda_memory_resource` (move: allocate, copy, free); raw_copy is cudaMalloc, "
            "cudaMemcpy and cudaFree without the adaptor.\n\n" + table(header, rows))


def tables(folders):
    results = Results()
    files = [f for folder in folders for f in sorted(glob.glob(os.path.join(folder, "*.json")))]
    for path in files:
        data = load_json(path)
        if data:
            results.add_file(data)
        else:
            print(f"bench_tables: cannot read {path}", file=sys.stderr)
    peers = parse_peers([os.path.join(folder, "peers.txt") for folder in folders])
    parts = ["## Benchmark results"]
    if peers["notes"]:
        parts.append("\n".join(f"- {n}" for n in peers["notes"]))
    for t in (random_table(results, peers), mt_table(results, peers), mt_table(results, peers, "mtptds"),
              mt_reserved_table(results), mt_reserved_table(results, "mtptds"),
              mgpu_table(results), replay_table(results, peers), pinned_table(results),
              realloc_table(results)):
        if t:
            parts.append(t)
    errors = sorted((r, row["error"]) for r, row in results.rows.items() if row["error"])
    errors += sorted((r, f"{PARTIAL} the median of the repetitions that finished; the others: {row['partial']}")
                     for r, row in results.rows.items() if row.get("partial"))
    if errors:
        parts.append("### Errors and skipped rows\n\n" + "\n".join(f"- `{r}`: {e}" for r, e in errors))
    if peers["failed"]:
        parts.append("### Peer steps that did not finish\n\n" + "\n".join(f"- {l}" for l in peers["failed"]))
    return "\n\n".join(parts) + "\n"


def main(argv):
    if len(argv) >= 3 and argv[1] == "merge":
        merge(argv[2], argv[3:])
        return 0
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    sys.stdout.write(tables(argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
