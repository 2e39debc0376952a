#!/bin/bash
# The next session's device call (carry [".gpu-pack", "build-ab8"]; build_ab.sh first): which
# Intel core the host has, then the pool's n = 1,000 rows for d18df46 (snew) against 37d4a84
# (sold), each also built with jumps kept off 32-byte boundaries (snewj, soldj), alternating
# rounds (scripts/ab_call.sh). If snewj/soldj reads about 1.0 while snew/sold reads 1.06, the
# code's placement against the JCC-erratum microcode, not its work, makes d18df46 slower there.
# Env: R (rounds, default 10), FILTER.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
awk -F': ' '/^(vendor_id|cpu family|model|model name|stepping|microcode)\t/ && !seen[$1]++' /proc/cpuinfo
grep -m1 -o -w -E 'avx512f|amx_tile|avx512_fp16' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
bash scripts/gpu_suite.sh unpack >/dev/null
mkdir -p "$OUT/tmp"
export TMPDIR=$OUT/tmp  # ab_call.sh keeps each round's JSON there: it comes back if cut short
bash scripts/ab_binaries.sh
PREFIX=ra VARIANTS="snew sold snewj soldj" FILTER="${FILTER:-^random/(pool|null)/n:1000/}" REPS=3 \
  TIMEOUT=120 bash scripts/ab_call.sh "$OUT/ab" "${R:-10}"
echo "A/B done at $SECONDS s"
python3 docs/bench-results/2026-12-07-ap/paired_ratios.py "$OUT/ab/ab.tgz" snew/sold snewj/soldj \
  snewj/snew soldj/sold
