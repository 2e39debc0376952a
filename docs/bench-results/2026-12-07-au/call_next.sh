#!/bin/bash
# The next session's device call (session au's plan). Here first: stage, then
#   VARIANTS="new g1 trim old" bash docs/bench-results/2026-12-07-at/build_ab.sh
# then run(command='bash docs/bench-results/2026-12-07-au/call_next.sh', carry=[".gpu-pack",
# "build-ab8"]). About 90 s with the default 16 rounds; the GPU suite is not run (main's code passed
# it in session au; run it separately, about 560 s on an H200, if the code changed since).
# Everything that matters goes to files under $OUT (the output's tail is cut at 12,000 characters):
#   host.txt    the GPU and the host's CPU
#   ab/         every round's JSON (ab.tgz) and the table of medians (ab_table.md)
#   ratios.txt  paired median ratios: main against 37d4a84; g1 (main growing by doubling, 10 regions
#               at max 64 MiB like 37d4a84) and trim (trim.patch) against main
# Env: R (rounds, default 16), FILTER (default the pool's n = 1,000 rows), VARIANTS (default
# "new g1 trim old"), PAIRS (default "new/old g1/new trim/new g1/old").
set -u
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  awk -F': ' '/^(vendor_id|cpu family|model|model name|stepping|microcode)\t/ && !seen[$1]++' /proc/cpuinfo
} | tee "$OUT/host.txt"
bash scripts/gpu_suite.sh unpack >/dev/null
bash scripts/ab_binaries.sh
mkdir -p "$OUT/tmp"
# TMPDIR only for ab_call.sh (its rounds' JSON come back if cut short): exported for the rest of
# the call, it named a folder deleted below (session au's first call lost its sanitizer runs so).
TMPDIR=$OUT/tmp PREFIX=ra VARIANTS="${VARIANTS:-new g1 trim old}" \
  FILTER="${FILTER:-^random/pool/n:1000/}" REPS=3 TIMEOUT=120 \
  bash scripts/ab_call.sh "$OUT/ab" "${R:-16}" | grep -v '^round'
echo "A/B done at $SECONDS s"
# shellcheck disable=SC2086 # PAIRS is a list
python3 docs/bench-results/2026-12-07-ap/paired_ratios.py "$OUT/ab/ab.tgz" \
  ${PAIRS:-new/old g1/new trim/new g1/old} | tee "$OUT/ratios.txt"
rm -rf "$OUT/tmp"
