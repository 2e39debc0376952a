#!/usr/bin/env bash
# Puts the A/B binaries built here into place for scripts/ab_call.sh on the GPU machine:
# build-ab8/{ra,mt}_<variant> (benchmarks built against each tree's headers) into .gpu/abf/, with
# a ra_<variant>64 wrapper for each ra binary (RMM_BENCH_SEEDS=64: 64 workloads cycled instead of
# one repeated), and build-ab8/lib/* (the libraries they link) into .gpu/lib/.
# Run from the repository root after `bash scripts/gpu_suite.sh unpack`; carry "build-ab8".
set -eu
src=${1:-build-ab8}
mkdir -p .gpu/abf .gpu/lib
cp "$src"/lib/* .gpu/lib/
for f in "$src"/ra_* "$src"/mt_*; do
  [ -e "$f" ] || continue
  b=$(basename "$f")
  cp "$f" ".gpu/abf/$b"
  if [ "${b#ra_}" != "$b" ]; then
    printf '#!/bin/bash\nRMM_BENCH_SEEDS=64 exec "$(dirname "$0")/%s" "$@"\n' "$b" > ".gpu/abf/${b}64"
    chmod +x ".gpu/abf/${b}64"
  fi
done
