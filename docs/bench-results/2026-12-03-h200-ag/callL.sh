#!/bin/bash
# Session ag, call 2: as call 1 (callK.sh) with a third variant, expect: only the test of
# expect_large_size inlined, to see whether the small rows move with a layout change alone.
# Session ag: the global arena's free list keying allocated blocks only (keyed: free blocks have
# no address-map key, one probe for a large free's look-up and erase, expect_large_size's test
# inlined), expect (that inlined test alone), against main bfe168b (base2, the same source built from main's headers); the arena's
# and the null resource's single-thread rows, alternating rounds.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/ra_keyed build-ab/abf/ra_expect build-ab/abf/ra_base2 .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"; cat /proc/loadavg
PREFIX=ra VARIANTS="keyed expect base2" FILTER='^random/(arena|null)/' REPS=3 TIMEOUT=150 bash scripts/ab_call.sh $OUT/ab ${R:-10}
