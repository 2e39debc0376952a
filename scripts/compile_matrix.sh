#!/usr/bin/env bash
# The compile matrix: installs the library, then builds tests/consumer against the installed
# package (find_package(rmm)) with every supported toolchain: g++ and clang++ as C++17 and C++20,
# and nvcc (host compiler g++) as C++17 and C++20, warnings as errors. Each configuration compiles
# the consumer program that uses every public class, then runs it (without a GPU it checks only
# what needs none and says so). The configurations in RMM_MATRIX_HEADERS also compile every public
# header alone, one translation unit each: by default only clang++ C++20. The default build's
# rmm_header_check already compiles every header alone with g++ C++17, every configuration's
# consumer program includes every public header, and a missing #include depends on the standard
# library's mode (C++17 or C++20), not on the compiler. Measured on CI's kind of 2-core machine:
# nvcc C++20 took 269 s with the headers alone and 47 s without; clang++ C++20 takes 61-83 s with
# them where the other g++ and clang++ configurations take 18-34 s without.
#
#   bash scripts/compile_matrix.sh                 # all six
#   RMM_MATRIX="clang++:20 nvcc:17" bash scripts/compile_matrix.sh
#   RMM_MATRIX_HEADERS=all bash scripts/compile_matrix.sh   # headers alone in every configuration
#   RMM_PREFIX=<installed rmm> RMM_CCCL_INCLUDE_DIR=<CCCL headers> bash scripts/compile_matrix.sh
#                                                  # against a package built elsewhere
#
# RMM_MATRIX_RUNNER: a command to run the consumer program under (compute-sanitizer on the GPU
# machine). Prints one line per configuration and "compile_matrix: N passed, M failed"; exits
# non-zero if any failed. Logs of failures are printed in full.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
configs=${RMM_MATRIX:-"g++:17 g++:20 clang++:17 clang++:20 nvcc:17 nvcc:20"}
headers_alone=${RMM_MATRIX_HEADERS:-"clang++:20"}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${RMM_PREFIX:-}" ]; then
  # An installed package made elsewhere (the GPU machine has no spdlog/fmt to build librmm).
  ln -s "$(cd "$RMM_PREFIX" && pwd)" "$work/prefix"
else
  [ -f build/CMakeCache.txt ] || cmake --preset default >/dev/null
  cmake --build --preset default --target rmm >/dev/null
  cmake --install build --prefix "$work/prefix" >/dev/null
fi
# RMM_CCCL_INCLUDE_DIR: CCCL's headers where no pip package can be found (the GPU machine).
cccl_arg=()
[ -z "${RMM_CCCL_INCLUDE_DIR:-}" ] || cccl_arg=(-DRMM_CCCL_INCLUDE_DIR="$RMM_CCCL_INCLUDE_DIR")

passed=0
failed=0
summary=""
for config in $configs; do
  compiler=${config%%:*}
  std=${config##*:}
  dir="$work/${compiler//+/x}-$std"
  alone=OFF
  if [ "$headers_alone" = all ] || [[ " $headers_alone " == *" $config "* ]]; then
    alone=ON
  fi
  args=(-G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release "${cccl_arg[@]}"
        -DRMM_CONSUMER_HEADERS_ALONE=$alone)
  if [ "$compiler" = nvcc ]; then
    args+=(-DRMM_CONSUMER_CUDA=ON -DCMAKE_CUDA_STANDARD="$std" -DCMAKE_CXX_STANDARD="$std"
           -DCMAKE_CUDA_COMPILER=nvcc -DCMAKE_CUDA_HOST_COMPILER=g++ -DCMAKE_CXX_COMPILER=g++)
  else
    args+=(-DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_CXX_STANDARD="$std")
  fi
  start=$SECONDS
  if { cmake -S tests/consumer -B "$dir" "${args[@]}" &&
       cmake --build "$dir" &&
       ${RMM_MATRIX_RUNNER:-} "$dir/rmm_consumer"; } >"$dir.log" 2>&1; then
    result=passed
    passed=$((passed + 1))
    # What the program said it skipped, and the sanitizer's verdict when it ran under one.
    grep -E "refused on this machine|no CUDA device|ERROR SUMMARY|LEAK SUMMARY" "$dir.log" || true
  else
    result=FAILED
    failed=$((failed + 1))
    cat "$dir.log"
  fi
  headers=$(sed -n 's/.*rmm_consumer: .*, \([0-9]*\) public headers/\1/p' "$dir.log" | head -n 1)
  ran=$(grep -c ': ok$' "$dir.log" || true)
  grep -q 'no CUDA device' "$dir.log" && ran="host-only"
  [ "$alone" = ON ] || headers=no
  line=$(printf '%-10s C++%s  %-6s  %s headers alone + consumer program (ran: %s), %ss' \
         "$compiler" "$std" "$result" "${headers:-?}" "$ran" $((SECONDS - start)))
  echo "$line"
  summary+="$line"$'\n'
done
# Configurations checked by their outcome: misconfigurations are refused with a message that
# says what to do (not errors deep in CCCL); -DCCCL_DIR is accepted.
expect() {  # name, refused|accepted, message the log must hold, command...
  local name=$1 want=$2 expected=$3
  shift 3
  local start=$SECONDS log="$work/expect.log" result=FAILED got=accepted
  "$@" >"$log" 2>&1 || got=refused
  if [ "$got" = "$want" ] && grep -q "$expected" "$log"; then
    result=passed
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    cat "$log"
  fi
  line=$(printf '%-18s %-6s  %s: %s, %ss' "$name" "$result" "$want" "$expected" $((SECONDS - start)))
  echo "$line"
  summary+="$line"$'\n'
}
consumer_configure=(cmake -S tests/consumer -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix")
fake="$work/fake-cccl-3.6/cuda/std/__cccl"
mkdir -p "$fake" && echo "#define CCCL_VERSION 3006000" >"$fake/version.h"
expect "other CCCL ABI" refused "was built with CCCL" \
  "${consumer_configure[@]}" -B "$work/fake" -DRMM_CCCL_INCLUDE_DIR="$work/fake-cccl-3.6"
expect "CCCL < 3.5 (cmake)" refused "rmm needs CCCL >= 3.5.0" \
  "${consumer_configure[@]}" -B "$work/old" -DRMM_CCCL_INCLUDE_DIR=/usr/local/cuda/include/cccl
echo "#include <rmm/mr/pool_memory_resource.hpp>" >"$work/old_first.cpp"
expect "CCCL < 3.5 (#error)" refused "rmm needs CCCL >= 3.5.0" \
  g++ -std=c++17 -fsyntax-only -isystem /usr/local/cuda/include/cccl -I"$work/prefix/include" \
  -isystem /usr/local/cuda/include "$work/old_first.cpp"
# The pip wheel's own cmake dir (its config cannot find its headers: rmm looks relative to it).
pip_cccl_dir=$(python3 -c 'import importlib.metadata as m
d = m.distribution("nvidia-cuda-cccl")
print(next(d.locate_file(f).parent.resolve() for f in d.files if f.name == "cccl-config.cmake"))' \
  2>/dev/null || true)
if [ -n "$pip_cccl_dir" ]; then
  expect "CCCL_DIR" accepted "rmm: using CCCL 3\.[5-9].*(CCCL_DIR=" \
    "${consumer_configure[@]}" -B "$work/cccl-dir" -DCCCL_DIR="$pip_cccl_dir"
fi

printf '\n%s' "$summary"
echo "compile_matrix: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
