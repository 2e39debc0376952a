#!/bin/bash
# Session ag: the global arena's free list keying allocated blocks only (keyed: free blocks have
# no address-map key, one probe for a large free's look-up and erase, expect_large_size's test
# inlined) against main bfe168b (base2, the same source built from main's headers); the arena's
# and the null resource's single-thread rows, alternating rounds. VARIANTS picks the binaries
# build-ab/abf/ra_<variant> (default "keyed base2"; callL.sh adds expect).
variants=${VARIANTS:-keyed base2}
mkdir -p .gpu/abf .gpu/lib && cp build-ab/lib/* .gpu/lib/
for v in $variants; do cp "build-ab/abf/ra_$v" .gpu/abf/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"; cat /proc/loadavg
PREFIX=ra VARIANTS="$variants" FILTER='^random/(arena|null)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-10}
