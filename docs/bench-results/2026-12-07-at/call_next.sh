#!/bin/bash
# The next session's device call (carry [".gpu-pack", "build-ab8"]; stage, then build_ab.sh):
# 1. the host's CPU (session at's was family 6, model 207: Emerald Rapids);
# 2. the pool's and the null resource's n = 1,000 rows, alternating rounds (scripts/ab_call.sh):
#    new (main: spin_lock on the allocation path) against d18 (d18df46's pool code) and old
#    (37d4a84, the run of 2026-11-21);
# 3. the GPU suite (about 440 s), unless SKIP_SUITE is set: main's spin_lock has not run on a GPU.
# Env: R (rounds, default 10), FILTER, SKIP_SUITE. About 560 s in all.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
awk -F': ' '/^(vendor_id|cpu family|model|model name|stepping|microcode)\t/ && !seen[$1]++' /proc/cpuinfo
bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p "$OUT/tmp"
export TMPDIR=$OUT/tmp  # ab_call.sh keeps each round's JSON there: it comes back if cut short
bash scripts/ab_binaries.sh
PREFIX=ra VARIANTS="${VARIANTS:-new d18 old}" FILTER="${FILTER:-^random/(pool|null)/n:1000/}" REPS=3 \
  TIMEOUT=120 bash scripts/ab_call.sh "$OUT/ab" "${R:-10}" | grep -v '^round'
echo "A/B done at $SECONDS s"
python3 docs/bench-results/2026-12-07-ap/paired_ratios.py "$OUT/ab/ab.tgz" new/old d18/old new/d18
rm -rf "$OUT/tmp"
unset TMPDIR  # it named $OUT/tmp: compute-sanitizer and mktemp failed there (session au, call 1)
[ -n "${SKIP_SUITE:-}" ] && exit 0
rm -rf .gpu  # ab_binaries.sh put build-ab8's librmm into .gpu/lib: the suite unpacks afresh
bash scripts/gpu_suite.sh unpack && OUT=$OUT RMM_GPU_SKIP_BENCH=1 bash scripts/gpu_suite.sh run
echo "suite rc $? at $SECONDS s"
