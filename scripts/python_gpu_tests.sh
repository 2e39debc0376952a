#!/usr/bin/env bash
# librmm_c inside PyTorch and CuPy, on the GPU machine (Python 3.12, torch, torchvision,
# transformers, cupy; no network):
#
#   RMM_C_LIBRARY=.gpu/lib/librmm_c.so bash scripts/python_gpu_tests.sh [OUT_DIR]
#
# (scripts/gpu_suite.sh python does this with the staged library.) Runs
# tests/python/torch_training_test.py (RMM_PY_STEPS steps, default 30) and
# tests/python/cupy_workload_test.py; writes their Markdown tables and JSON to OUT_DIR
# (default $OUT or /tmp/rmm-python-out) and exits nonzero if either fails.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
: "${RMM_C_LIBRARY:=$root/.gpu/lib/librmm_c.so}"
[ -f "$RMM_C_LIBRARY" ] || { echo "no librmm_c.so at $RMM_C_LIBRARY (set RMM_C_LIBRARY)"; exit 2; }
RMM_C_LIBRARY=$(cd "$(dirname "$RMM_C_LIBRARY")" && pwd)/$(basename "$RMM_C_LIBRARY")
export RMM_C_LIBRARY
# librmm.so (and spdlog, fmt) beside it; the package from the staged copy if there is one.
export LD_LIBRARY_PATH="$(dirname "$RMM_C_LIBRARY"):${LD_LIBRARY_PATH:-}"
package_dir="$root/python"
[ -d "$root/.gpu/python/rmm_plugins" ] && package_dir="$root/.gpu/python"
export PYTHONPATH="$package_dir:${PYTHONPATH:-}"
out="${1:-${OUT:-/tmp/rmm-python-out}}"
mkdir -p "$out"
python=${PYTHON:-python3}
failed=0

# RMM_PY_LOG_ONLY=1: only the logged run and its replay below (a short device call).
if [ "${RMM_PY_LOG_ONLY:-0}" != 1 ]; then
echo "=== torch_training_test (library $RMM_C_LIBRARY)"
"$python" "$root/tests/python/torch_training_test.py" --steps "${RMM_PY_STEPS:-30}" \
  --json "$out/torch_training.json" 2>"$out/torch_training.stderr" | tee "$out/torch_training.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || { failed=$((failed + 1)); tail -n 20 "$out/torch_training.stderr"; }

echo "=== cupy_workload_test"
"$python" "$root/tests/python/cupy_workload_test.py" --json "$out/cupy_workload.json" \
  2>"$out/cupy_workload.stderr" | tee "$out/cupy_workload.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || { failed=$((failed + 1)); tail -n 20 "$out/cupy_workload.stderr"; }
fi

# Issue 13, item 4: the PyTorch test with logging on (RMM_C_LOG) writes an allocation log that
# rmm-replay replays (through the real resources, with the capacity search). A short run.
replay_tool="$root/.gpu/bin/rmm-replay"
if [ -x "$replay_tool" ]; then
  echo "=== torch_training_test with RMM_C_LOG, then rmm-replay on its log"
  rm -f "$out/torch_resnet50_rmm_pool_log.csv"
  RMM_C_LOG="$out/torch_resnet50_rmm_pool_log.csv" "$python" \
    "$root/tests/python/torch_training_test.py" --steps "${RMM_PY_LOG_STEPS:-5}" \
    --models resnet50 --allocators default,rmm:pool >"$out/torch_logged.md" \
    2>"$out/torch_logged.stderr"
  logged=$?
  rows=$(($(wc -l <"$out/torch_resnet50_rmm_pool_log.csv" 2>/dev/null || echo 1) - 1))
  echo "log rows: $rows"
  if [ "$logged" -eq 0 ] && [ "$rows" -gt 1000 ] &&
    "$replay_tool" "$out/torch_resnet50_rmm_pool_log.csv" --search \
      >"$out/torch_log_replay.txt" 2>&1; then
    cat "$out/torch_log_replay.txt"
  else
    echo "the logged run or its replay failed (exit $logged, $rows rows)"
    tail -n 20 "$out/torch_logged.stderr" "$out/torch_log_replay.txt" 2>/dev/null
    failed=$((failed + 1))
  fi
  gzip -f "$out/torch_resnet50_rmm_pool_log.csv" 2>/dev/null
fi

echo "python GPU tests: $failed failed"
exit $((failed > 0))
