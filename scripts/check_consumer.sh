#!/usr/bin/env bash
# Installs the library, moves the installed tree elsewhere (relocatable package), and builds the
# consumer project in examples/basic against it with find_package(rmm CONFIG REQUIRED).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
[ -f build/CMakeCache.txt ] || cmake --preset default >/dev/null
cmake --build --preset default --target rmm
work=$(mktemp -d)
cmake --install build --prefix "$work/staged" >/dev/null
mv "$work/staged" "$work/relocated"
cmake -S examples/basic -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/relocated"
cmake --build "$work/consumer"
if grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](spdlog|fmt)/' "$work/relocated/include/rmm"; then
  echo "check_consumer: an installed public header mentions spdlog or fmt" >&2
  exit 1
fi
"$work/consumer/rmm_demo"
echo "check_consumer: consumer project built against the relocated package and ran"
rm -rf "$work"
