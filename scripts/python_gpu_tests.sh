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

echo "=== torch_training_test (library $RMM_C_LIBRARY)"
"$python" "$root/tests/python/torch_training_test.py" --steps "${RMM_PY_STEPS:-30}" \
  --json "$out/torch_training.json" 2>"$out/torch_training.stderr" | tee "$out/torch_training.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || { failed=$((failed + 1)); tail -n 20 "$out/torch_training.stderr"; }

echo "=== cupy_workload_test"
"$python" "$root/tests/python/cupy_workload_test.py" --json "$out/cupy_workload.json" \
  2>"$out/cupy_workload.stderr" | tee "$out/cupy_workload.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || { failed=$((failed + 1)); tail -n 20 "$out/cupy_workload.stderr"; }

echo "python GPU tests: $failed failed"
exit $((failed > 0))
