#!/bin/bash
# Session ad: what the stream arena's lock costs. nolock: every spin_mutex's lock() a relaxed
# load and store instead of an exchange (a measurement only: correct for one thread, not for
# several), against main 272a968 (base); the arena's, the pool's and the null resource's
# single-thread rows.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
PREFIX=ra VARIANTS="nolock base" FILTER='^random/(arena|pool|null)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-16}
