#!/bin/bash
# Session av's device call: session au's call_next.sh with two more variants and the noise floor.
# Here first: stage (RMM_GPU_BENCHMARKS=ON bash scripts/gpu_suite.sh stage), then
#   VARIANTS="new dup g1 g2 trim g1trim old" bash docs/bench-results/2026-12-07-at/build_ab.sh
# then run(command='bash docs/bench-results/2026-12-07-av/call.sh', carry=[".gpu-pack", "build-ab8"]).
#   new     main's headers            dup     the same, built again (new/dup: the noise floor)
#   g1, g2  main growing by doubling / by half the pool (growth divisor 1 / 2 instead of 8)
#   trim    main with ../2026-12-07-au/trim.patch      g1trim  both      old  37d4a84 (2026-11-21)
# Results under $OUT: host.txt, ab/ (ab.tgz, ab_table.md), ratios.txt.
VARIANTS="new dup g1 g2 trim g1trim old" \
  PAIRS="new/old dup/new g1/new g2/new trim/new g1trim/new g1/old trim/old g1trim/old" \
  R="${R:-14}" exec bash docs/bench-results/2026-12-07-au/call_next.sh
