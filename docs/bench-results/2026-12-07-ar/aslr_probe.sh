#!/bin/bash
# Next session's probe (not run yet): is the pool's n = 1,000 / max 64 MiB spread from process to
# process (call 2: d18df46's rounds at 48-52 or 55-58 ns, 37d4a84's at 48-56) set by where the
# process's memory lands?
# 1. Each variant runs P times as a fresh process, alternating, once as usual and once under
#    `setarch -R` (no address randomisation: the same layout every time). If the -R runs of a
#    variant agree with each other while the usual ones spread, the layout decides it.
# 2. Under `setarch -R`, each variant once per stack shift (RMM_BENCH_STACK_SHIFT, 0 to 4,080
#    bytes in steps of STEP): if the speed follows the shift, the stack's offset decides it
#    (benchmarks/stack_shift.hpp says why that can matter on Intel cores).
# Binaries: build-ab8/ra_snew (d18df46's headers) and ra_sold (37d4a84's), built as in this
# folder's README with dc5c429's harness (the first with RMM_BENCH_STACK_SHIFT).
# carry ["build-ab8", ".gpu-pack"]; prints one line per process and row:
#   part mode-or-shift variant row median_ns
set -u
bash scripts/gpu_suite.sh unpack >/dev/null
bash scripts/ab_binaries.sh
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"
mkdir -p $OUT/aslr
filter=${FILTER:-^random/(pool|null)/n:1000/max:64/}
one() {  # one TAG VARIANT [setarch -R ...]: one process, its medians printed
  local tag=$1 v=$2
  shift 2
  local f=$OUT/aslr/${tag}_${v}.json
  timeout 60 "$@" .gpu/abf/ra_$v --benchmark_filter="$filter" --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true --benchmark_out_format=json --benchmark_out=$f \
    >/dev/null 2>&1 || echo "rc $? $tag $v"
  python3 - "$f" "$tag" "$v" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(sys.argv[2], sys.argv[3], b["run_name"].split("/iter")[0], round(b["ns_per_op"], 1))
PY
}
norand="setarch $(uname -m) -R"
for p in $(seq 1 "${P:-8}"); do
  for v in ${VARIANTS:-snew sold}; do
    one "aslr$p" "$v" env
    one "fixed$p" "$v" $norand
  done
done
echo "part 1 done at $SECONDS s"
for s in $(seq 0 "${STEP:-256}" 4080); do
  for v in ${VARIANTS:-snew sold}; do
    one "shift$s" "$v" $norand env RMM_BENCH_STACK_SHIFT=$s
  done
done
echo "part 2 done at $SECONDS s"
tar -C $OUT -czf $OUT/aslr.tgz aslr && rm -rf $OUT/aslr
