#!/bin/bash
# Session as, one device call (carry [".gpu-pack", "build-ab8"]): the GPU suite on this session's
# staging, then, on an Intel host and in the time left under the 600 s limit, session ar's ASLR
# probe with fewer processes (P=4) and shifts every 512 bytes. The suite goes first: the probe's
# ab_binaries.sh puts build-ab8's librmm into .gpu/lib, which the suite must not run with.
set -u
bash scripts/gpu_suite.sh unpack && OUT=$OUT RMM_GPU_SKIP_BENCH=1 bash scripts/gpu_suite.sh run
echo "suite rc $? at $SECONDS s"
lscpu | grep "Model name"
left=$((585 - SECONDS))
if lscpu | grep -q Intel && [ "$left" -gt 30 ]; then
  mkdir -p /tmp/probe  # its JSON stays there: only a few files come back from $OUT
  OUT=/tmp/probe P=${P:-4} STEP=${STEP:-512} timeout "$left" \
    bash docs/bench-results/2026-12-07-ar/aslr_probe.sh > "$OUT/aslr_out.txt" 2>&1
  echo "probe rc $? at $SECONDS s"
  python3 docs/bench-results/2026-12-07-as/aslr_summary.py "$OUT/aslr_out.txt"
fi
