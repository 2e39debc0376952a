#!/bin/bash
# Session ag: the global arena's free list keying allocated blocks only (keyed: free blocks have
# no address-map key, one probe for a large free's look-up and erase, expect_large_size's test
# inlined) against main bfe168b (base2, the same source built from main's headers); the arena's
# and the null resource's single-thread rows, alternating rounds.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/ra_keyed build-ab/abf/ra_base2 .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"; cat /proc/loadavg
PREFIX=ra VARIANTS="keyed base2" FILTER='^random/(arena|null)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-10}
