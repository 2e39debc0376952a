#!/bin/bash
# Next session's probe (not run yet): is the pool's n = 1,000 / max 64 MiB spread from process to
# process (call 2: d18df46's rounds at 48-52 or 55-58 ns, 37d4a84's at 48-56) set by where the
# process's host memory lands (ASLR)? Each variant runs P times as a fresh process, alternating,
# once as usual and once under `setarch -R` (no address randomisation: the same host layout
# every time). If the -R runs of a variant agree with each other while the usual ones spread, the
# layout decides it.
# carry ["build-ab8", ".gpu-pack"]; prints one line per process: mode variant row median.
set -u
bash scripts/gpu_suite.sh unpack >/dev/null
bash scripts/ab_binaries.sh
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/aslr
for p in $(seq 1 "${P:-8}"); do
  for v in ${VARIANTS:-new old}; do
    for mode in aslr fixed; do
      pre=""; [ $mode = fixed ] && pre="setarch $(uname -m) -R"
      f=$OUT/aslr/${mode}_${v}_$p.json
      timeout 60 $pre .gpu/abf/ra_$v --benchmark_filter="${FILTER:-^random/(pool|null)/n:1000/max:64/}" \
        --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        --benchmark_out_format=json --benchmark_out=$f >/dev/null 2>&1 || echo "rc $? $mode $v $p"
      python3 - "$f" "$mode" "$v" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(sys.argv[2], sys.argv[3], b["run_name"].split("/iter")[0], round(b["ns_per_op"], 1))
PY
    done
  done
done
tar -C $OUT -czf $OUT/aslr.tgz aslr && rm -rf $OUT/aslr
