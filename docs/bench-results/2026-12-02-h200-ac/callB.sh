#!/bin/bash
# Session ac: which part of 04ee612 helps on the H200: new (all), nbp (no granule table), l16o (16-block steps and the arena's optional only), base (main 7341ac2).
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/* .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name\|L2\|L3\|MHz"
PREFIX=ra VARIANTS="new nbp l16o base" FILTER='^random/arena/n:(100000|10000)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-10}
