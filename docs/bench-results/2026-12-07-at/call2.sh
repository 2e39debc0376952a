#!/bin/bash
# Session at, a second device call if the first one's probe shows that the stack's offset sets the
# pool's n = 1,000 / max 64 MiB speed: the stack-shift scan alone (aslr_probe.sh's part 2), every
# 256 bytes from 0 to 3,840, PASSES times, both variants under `setarch -R`; then aslr_summary.py
# for each pass. carry [".gpu-pack", "build-ab8"].
set -u
lscpu | grep "Model name"
mkdir -p /tmp/probe
for p in $(seq 1 "${PASSES:-2}"); do
  OUT=/tmp/probe P=0 STEP=${STEP:-256} timeout "${PASS_S:-150}" \
    bash docs/bench-results/2026-12-07-ar/aslr_probe.sh > "$OUT/shift_pass$p.txt" 2>&1
  echo "pass $p rc $? at $SECONDS s"
  python3 docs/bench-results/2026-12-07-as/aslr_summary.py "$OUT/shift_pass$p.txt" | sed -n '/Part 2/,$p'
done
# call2/summarise.py summarises the passes (run in the folder that holds them).
