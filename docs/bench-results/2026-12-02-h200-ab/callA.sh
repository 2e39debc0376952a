#!/bin/bash
# Session ab: A/B of the block limit 512 (new) against main e7d1f10 (base), arena rows and the
# pool's (unchanged code, a control for the host's noise), alternating order per round.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
PREFIX=ra VARIANTS="new base" FILTER='^random/(arena|pool)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-16}
