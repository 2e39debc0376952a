#!/bin/bash
# Session ae: call 3 again on another machine (v2max against v2base, both -march=x86-64-v2), with
# v3max (the same change built with -march=x86-64-v3) and base (main's code built as usual, SSE2).
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
PREFIX=ra VARIANTS="v2max v3max v2base base" FILTER='^random/arena/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-16}
