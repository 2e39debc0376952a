#!/bin/bash
# Session ac: A/B of 04ee612 (new: 16-block steps, the granule table, optional returns built by
# inlined callers) against main 7341ac2 (base), arena and pool rows (the pool changed too: tlsf).
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
PREFIX=ra VARIANTS="new base" FILTER='^random/(arena|pool)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-16}
