#!/usr/bin/env bash
# Quick start 1: install what is missing, build the library and the demo, run the demo.
# On a machine without a GPU the demo says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default >/dev/null
cmake --build --preset default --target rmm_demo
./build/examples/basic/rmm_demo
