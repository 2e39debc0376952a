#!/bin/bash
# Session ai, device time short: the GPU programs whole (unsanitized), then compute-sanitizer
# memcheck (leak check) over the tests that drive the arena (arena*, stress*, faults*, lifetime*),
# then a short A/B of the arena's and the null resource's rows (ra_v7 = this tree, ra_base = main).
bash scripts/gpu_suite.sh unpack >/dev/null || exit 2
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
b=.gpu/bin; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -i "model name"
S="compute-sanitizer --tool memcheck --leak-check full --error-exitcode 101"
for x in rmm_gpu_tests rmm_gpu_tests_ptds; do
  timeout 170 $b/$x >$OUT/$x.log 2>&1; rc=$?
  echo "$x rc=$rc $(grep -E '^(All tests passed|test cases:)' $OUT/$x.log | tail -1) t=$((SECONDS - t0))"
done
for x in rmm_gpu_tests rmm_gpu_tests_ptds; do
  timeout 150 $S $b/$x "arena*,stress*,faults*,lifetime*" >$OUT/san_$x.log 2>&1; rc=$?
  echo "san_$x rc=$rc $(grep -E '^(All tests passed|test cases:)' $OUT/san_$x.log | tail -1)" \
    "$(grep -E 'ERROR SUMMARY' $OUT/san_$x.log | tail -1) t=$((SECONDS - t0))"
done
if [ $((SECONDS - t0)) -lt ${AB_UNTIL:-330} ]; then
  mkdir -p .gpu/abf && cp build-ab2/ra_* .gpu/abf/
  PREFIX=ra VARIANTS="v7 base" FILTER='^random/(arena|null)/' REPS=3 TIMEOUT=60 \
    bash scripts/ab_call.sh $OUT/ab ${R:-4}
fi
echo "done t=$((SECONDS - t0))"
