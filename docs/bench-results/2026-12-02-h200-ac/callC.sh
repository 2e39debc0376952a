#!/bin/bash
# Session ac, call 5: the arena's and the null resource's rows, new (04ee612) against base (7341ac2), after the noisy bench call.
mkdir -p .gpu/abf .gpu/lib && cp build-ab/abf/ra_new build-ab/abf/ra_base .gpu/abf/ && cp build-ab/lib/* .gpu/lib/
PREFIX=ra VARIANTS="new base" FILTER='^random/(arena|null)/' REPS=3 TIMEOUT=100 bash scripts/ab_call.sh $OUT/ab ${R:-6}
