#!/usr/bin/env bash
# Quick start 2: install what is missing, build everything, run the tests with CTest.
# GPU suites report "Skipped" where there is no GPU; scripts/gpu_suite.sh runs them on one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default >/dev/null
cmake --build --preset default
ctest --preset default
