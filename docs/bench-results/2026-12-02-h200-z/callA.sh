#!/bin/bash
# Session z, calls 1 and 2: build-ab/callA.sh as run (call 2's text; call 1's ran
# VARIANTS="all map base" with FILTER='^random/arena/' for R1 rounds, then VARIANTS="map base"
# with FILTER='^random/pool/' for R2 rounds). carry=["build-ab"]: build-ab/abf holds the
# ra_<variant> binaries, build-ab/lib librmm.so.0, spdlog, fmt and Google Benchmark.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
PREFIX=ra VARIANTS="rh base" FILTER='^random/(arena|pool)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-12}
