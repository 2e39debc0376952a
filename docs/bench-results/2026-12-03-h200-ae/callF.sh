#!/bin/bash
# Session ae: the granule table with each granule's inner start (gran), the same with the first 16
# blocks of a superblock inline in its record (gsbo: ../2026-12-03-h200-ad/variants/sbo.diff on
# top), against main c2807c4 (base: built from 272a968, the same library code); the arena's and
# the null resource's single-thread rows.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
PREFIX=ra VARIANTS="gran gsbo base" FILTER='^random/(arena|null)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-16}
