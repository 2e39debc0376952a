#!/bin/bash
# Session av's last device call: the GPU test programs on main with trim.patch applied (staged
# here with stage_tests.sh on a full staging of main), in the order that matters if
# the call is cut short: both test binaries, then under compute-sanitizer memcheck with leak
# check (the suite's own arguments): rmm_gpu_tests, the API-error tests, the exit test, then the
# per-thread default stream build last (about 135 s each of the two large runs on an H200).
# run(command='bash docs/bench-results/2026-12-07-av/gpu_tests_call.sh', carry=[".gpu-pack"]).
# $OUT/summary.txt gets one line per step as it ends; $OUT/<step>.log the last 40 lines of each.
set -u
bash scripts/gpu_suite.sh unpack >/dev/null
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
bin=.gpu/bin
san=("$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)" --tool memcheck --leak-check full --error-exitcode 101)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
step() {  # name, command...
  local name=$1 t0=$SECONDS
  shift
  "$@" >/tmp/step.log 2>&1
  local rc=$?
  tail -n 40 /tmp/step.log >"$OUT/$name.log"
  printf '%-26s rc=%-3s %4ss  %s  %s\n' "$name" "$rc" "$((SECONDS - t0))" \
    "$(grep -E '^(All tests passed|test cases:)' /tmp/step.log | tail -n 1)" \
    "$(grep -E 'ERROR SUMMARY' /tmp/step.log | tail -n 1)" | tee -a "$OUT/summary.txt"
}
step gpu_tests "$bin/rmm_gpu_tests"
step gpu_tests_ptds "$bin/rmm_gpu_tests_ptds"
step san_gpu_tests "${san[@]}" "$bin/rmm_gpu_tests" "~[expected_api_errors]"
step san_api_errors "${san[@]}" --report-api-errors no "$bin/rmm_gpu_tests" "[expected_api_errors]"
step san_process_exit "${san[@]}" "$bin/process_is_exiting_test"
step san_gpu_tests_ptds "${san[@]}" "$bin/rmm_gpu_tests_ptds" "~[expected_api_errors]"
