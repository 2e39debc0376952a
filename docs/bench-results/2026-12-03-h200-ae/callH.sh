#!/bin/bash
# Session ae: SSE4.1's pmaxsd for the arena's vector maxima (v2max: sse2_u32.hpp's max_biased as
# _mm_max_epi32 under __SSE4_1__, built with -march=x86-64-v2), the same build flags without the
# change (v2base), and main built as usual (base: SSE2 only); the arena's and the null resource's
# single-thread rows.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
PREFIX=ra VARIANTS="v2max v2base base" FILTER='^random/(arena|null)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-16}
