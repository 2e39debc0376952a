#!/bin/bash
# Session as, one device call (carry [".gpu-pack", "build-ab8"]): session ar's ASLR probe with
# fewer processes (P=4) and stack shifts every 512 bytes, capped at PROBE_S seconds (its lines are
# printed as they come, so a cut still leaves every process that finished), then the GPU suite on
# this session's staging. The probe's ab_binaries.sh puts build-ab8's librmm into .gpu/lib, so
# .gpu/ is removed before the suite unpacks its own. SKIP_SUITE=1 runs the probe alone.
set -u
lscpu | grep "Model name"
mkdir -p /tmp/probe  # the probe's JSON stays there: only a few files come back from $OUT
OUT=/tmp/probe P=${P:-4} STEP=${STEP:-512} timeout "${PROBE_S:-130}" \
  bash docs/bench-results/2026-12-07-ar/aslr_probe.sh > "$OUT/aslr_out.txt" 2>&1
echo "probe rc $? at $SECONDS s"
python3 docs/bench-results/2026-12-07-as/aslr_summary.py "$OUT/aslr_out.txt"
[ -n "${SKIP_SUITE:-}" ] && exit 0  # a call with too little device time left for the suite
rm -rf .gpu
bash scripts/gpu_suite.sh unpack && OUT=$OUT RMM_GPU_SKIP_BENCH=1 bash scripts/gpu_suite.sh run
echo "suite rc $? at $SECONDS s"
