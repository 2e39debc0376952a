#!/bin/bash
# Session ad: block_array with its first 16 blocks inline in the superblock record (sbo), against
# main 272a968 (base); the arena's and the null resource's single-thread rows.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
PREFIX=ra VARIANTS="sbo base" FILTER='^random/(arena|null)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-16}
