#!/usr/bin/env bash
# The whole GPU suite in one call to the GPU machine.
#
#   scripts/gpu_suite.sh stage   # here: build for sm_90 and copy binaries + the shared libraries
#                                # the GPU machine lacks (spdlog, fmt) into .gpu/ (git-ignored)
#                                # and packs it into .gpu-pack/gpu.tar.xz (git-ignored) to carry
#   scripts/gpu_suite.sh unpack  # there: .gpu/ from .gpu-pack/gpu.tar.xz unless .gpu/ is that
#                                # pack already (run, multi and python unpack first themselves)
#   scripts/gpu_suite.sh run     # there: run every GPU test program, then again under
#                                # compute-sanitizer (memcheck with leak check); prints a summary
#                                # into $OUT/summary.txt, the logs into $OUT/step_logs.tgz
#   scripts/gpu_suite.sh multi   # there, on 2 or more GPUs: the multi-GPU suite (docs/multi-gpu.md)
#   scripts/gpu_suite.sh python  # there: librmm_c inside PyTorch and CuPy
#                                # (scripts/python_gpu_tests.sh with the staged librmm_c.so)
#
# With RMM_GPU_BENCHMARKS=ON, stage also builds the benchmarks and stages scripts/run_benchmarks.sh
# as .gpu/run_benchmarks.sh, which run starts after the tests (RMM_GPU_SKIP_BENCH=1: not).
#
# With the device tool: run(command="bash scripts/gpu_suite.sh run", carry=[".gpu-pack"]).
# Why a pack: the device tool carries at most 64 MiB with the tracked tree; the tracked tree is
# about 31 MB (most of it docs/bench-results, whose JSON is stored as .json.xz for this reason)
# and .gpu/ about 38 MiB; xz brings .gpu/ to ~10.
# The GPU machine has CUDA 13.0, cmake and nvcc but none of our Debian dependencies, so the
# programs are built here and carried. See docs/gpu-testing.md.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
stage_dir="$root/.gpu"

stage() {
  set -e
  local build="$root/build-gpu"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DRMM_BUILD_TESTS=ON -DRMM_BUILD_DEMO=ON \
    -DRMM_BUILD_BENCHMARKS="${RMM_GPU_BENCHMARKS:-OFF}" >/dev/null
  cmake --build "$build" -j"$(nproc)"
  rm -rf "$stage_dir" && mkdir -p "$stage_dir/bin" "$stage_dir/lib"
  # rmm_ipc_child: the second process of the pinned-pool IPC test, found beside rmm_gpu_tests.
  local programs=(tests/rmm_gpu_tests tests/rmm_gpu_tests_ptds tests/rmm_host_tests
                  tests/process_is_exiting_test examples/basic/rmm_demo tests/rmm_ipc_child
                  tests/rmm_multi_gpu_tests tests/rmm_multi_gpu_child)
  if [ -f "$build/tools/replay/rmm-replay" ]; then
    programs+=(tools/replay/rmm-replay)
  fi
  if [ -f "$build/tests/c/rmm_c_gpu_tests" ]; then
    programs+=(tests/c/rmm_c_gpu_tests tests/c/rmm_c_config_tests)
  fi
  for p in "${programs[@]}"; do
    strip --strip-debug -o "$stage_dir/bin/$(basename "$p")" "$build/$p"
  done
  if [ -d "$build/benchmarks" ]; then
    find "$build/benchmarks" -maxdepth 1 -type f -executable -name '*bench*' \
      -exec sh -c 'strip --strip-debug -o "$1/bin/$(basename "$2")" "$2"' _ "$stage_dir" {} \;
  fi
  cp -a "$build"/librmm.so* "$stage_dir/lib/"
  # librmm_c (the C interface) and its Python package, for `python` below.
  if [ -f "$build/librmm_c.so" ]; then
    strip --strip-debug -o "$stage_dir/lib/librmm_c.so" "$build/librmm_c.so"
    mkdir -p "$stage_dir/python"
    cp -r "$root/python/rmm_plugins" "$stage_dir/python/"
    find "$stage_dir/python" -name __pycache__ -prune -exec rm -rf {} +
  fi
  # The installed package and CCCL's headers, for the compile matrix there (its g++ 13.3 and
  # nvcc build tests/consumer against them; the machine has no pip CCCL and no spdlog to build
  # librmm itself).
  # Stripped: the carried tree must stay under the device tool's 64 MiB.
  cmake --install "$build" --prefix "$stage_dir/prefix" --strip >/dev/null
  local cccl
  cccl=$(sed -n 's/^RMM_CCCL_INCLUDE_DIR:PATH=//p' "$build/CMakeCache.txt")
  tar -C "$cccl" -czf "$stage_dir/cccl.tgz" cuda cub thrust nv
  # Shared libraries the GPU machine does not have, resolved from what the programs link.
  ldd "$stage_dir"/bin/* 2>/dev/null | awk '/=> \//{print $3}' | sort -u |
    grep -E 'libspdlog|libfmt|libbenchmark' | xargs -r -I{} cp -L {} "$stage_dir/lib/"
  if [ -d "$root/../shared/bench" ]; then cp -r "$root/../shared/bench" "$stage_dir/peer_bench"; fi
  if [ -d "$root/../shared/traces" ]; then cp -r "$root/../shared/traces" "$stage_dir/traces"; fi
  # The benchmark runner (run() below starts it if present) and its table maker.
  case "${RMM_GPU_BENCHMARKS:-OFF}" in
    ON | on | On | 1 | TRUE | true | YES | yes)
      cp "$root/scripts/run_benchmarks.sh" "$stage_dir/run_benchmarks.sh"
      cp "$root/scripts/bench_tables.py" "$stage_dir/bench_tables.py"
      cp "$root/scripts/profile_gpu.sh" "$stage_dir/profile_gpu.sh"
      cp "$build/benchmarks/librmm_sampler.so" "$stage_dir/lib/"
      # RMM itself as a peer (the same programs built against librmm-cu13 from pip).
      bash "$root/scripts/build_rmm_peer.sh" "$stage_dir/rmm_peer" ||
        echo "stage: the RMM peer was not built (see above); its rows will be missing"
      ;;
  esac
  du -sh "$stage_dir"
  pack
}

pack_file="$root/.gpu-pack/gpu.tar.xz"

pack_id() { md5sum "$pack_file" | cut -d' ' -f1; }

pack() {
  mkdir -p "$root/.gpu-pack"
  rm -f "$stage_dir/.pack_id"
  tar -C "$stage_dir" -cf - . | xz -T0 -6 >"$pack_file"
  pack_id >"$stage_dir/.pack_id"  # .gpu/ is this pack: unpack leaves it
  du -sh "$pack_file"
}

# .gpu/ from the pack (on the GPU machine, carry=[".gpu-pack"]), unless .gpu/ already is that
# pack: the machine keeps ignored folders between calls, and a .gpu/ from an earlier staging
# would otherwise run instead of the new one.
unpack() {
  if [ ! -f "$pack_file" ]; then
    [ -d "$stage_dir/bin" ] && return 0
    echo "no .gpu/ and no .gpu-pack/gpu.tar.xz: run 'scripts/gpu_suite.sh stage' here and carry .gpu-pack"
    exit 2
  fi
  local id
  id=$(pack_id)
  if [ -f "$stage_dir/.pack_id" ] && [ "$(cat "$stage_dir/.pack_id")" = "$id" ]; then
    return 0
  fi
  rm -rf "$stage_dir" && mkdir -p "$stage_dir"
  xz -dc "$pack_file" | tar -C "$stage_dir" -xf - && echo "$id" >"$stage_dir/.pack_id"
}

# One step of a run: its output in $out/NAME.log, a line in the summary.
summary=()
failed=0
out=""
step() {  # name, command...
  local name=$1
  shift
  echo "=== $name: $*"
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  tail -n 4 "$out/$name.log"
  local verdict="passed"
  [ $rc -eq 0 ] || { verdict="FAILED (exit $rc)"; failed=$((failed + 1)); }
  local catch_line
  catch_line=$(grep -E "^(All tests passed|test cases:|compile_matrix:)" "$out/$name.log" | tail -n 1)
  local san_line
  san_line=$(grep -E "ERROR SUMMARY|LEAK SUMMARY" "$out/$name.log" | tail -n 1)
  summary+=("$(printf '%-34s %-18s %s %s' "$name" "$verdict" "$catch_line" "$san_line")")
}

print_summary() {
  echo
  echo "=== GPU suite summary"
  printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
  echo "$(( ${#summary[@]} - failed )) passed, $failed failed"
  pack_out
}

# The device tool returns at most 8 files a call, and a run writes 20 logs: everything in $out but
# summary.txt and the benchmarks' tables.md goes into one archive, step_logs.tgz, so that all of
# it comes back (tar -xzf step_logs.tgz). RMM_GPU_PACK=0 leaves the files as they are.
pack_out() {
  [ "${RMM_GPU_PACK:-1}" != 0 ] || return 0
  local names=() f
  for f in "$out"/* "$out"/.[!.]*; do
    [ -e "$f" ] || continue
    case "${f##*/}" in summary.txt | tables.md | step_logs.tgz) ;; *) names+=("${f##*/}") ;; esac
  done
  [ ${#names[@]} -gt 0 ] || return 0
  if tar -C "$out" -czf "$out/step_logs.tgz" -- "${names[@]}"; then
    (cd "$out" && rm -rf -- "${names[@]}")
    echo "packed ${#names[@]} files into $out/step_logs.tgz"
  else
    echo "pack_out: tar failed; the files stay as they are"
  fi
}

run() {
  [ -d "$stage_dir/bin" ] || { echo "no .gpu/ staging: run 'scripts/gpu_suite.sh stage' first"; exit 2; }
  export LD_LIBRARY_PATH="$stage_dir/lib:${LD_LIBRARY_PATH:-}"
  out="${OUT:-/tmp/rmm-gpu-out}"
  mkdir -p "$out"
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  summary=()
  failed=0

  local bin="$stage_dir/bin"
  step gpu_tests "$bin/rmm_gpu_tests"
  step gpu_tests_ptds "$bin/rmm_gpu_tests_ptds"
  step host_tests "$bin/rmm_host_tests"
  step process_is_exiting_test "$bin/process_is_exiting_test"
  step demo "$bin/rmm_demo"
  # librmm_c: one process per configured resource (tests/c/CMakeLists.txt lists the same).
  if [ -x "$bin/rmm_c_gpu_tests" ]; then
    step rmm_c_config_tests "$bin/rmm_c_config_tests"
    local entry resource initial maximum
    for entry in "cuda||" "cuda_async|64MB|" "pool|256MB|50%" "expandable||" "arena|1GB|" \
                 "binning||"; do
      IFS='|' read -r resource initial maximum <<<"$entry"
      local log=""  # the pool run also checks the allocation log (RMM_C_LOG)
      [ "$resource" = pool ] && log="$out/rmm_c_pool_log.csv" && rm -f "$log"
      step "rmm_c_gpu_tests_$resource" env RMM_C_RESOURCE="$resource" RMM_C_LOG="$log" \
        RMM_C_INITIAL_POOL_SIZE="$initial" RMM_C_MAXIMUM_POOL_SIZE="$maximum" "$bin/rmm_c_gpu_tests"
    done
    step rmm_c_gpu_tests_configure env RMM_C_RESOURCE=bogus RMM_C_TEST_CONFIGURE=pool \
      "$bin/rmm_c_gpu_tests"
    # The expandable pool with defragmentation turned off (RMM_C_DEFRAGMENT_THRESHOLD).
    step rmm_c_gpu_tests_expandable_no_defragment env RMM_C_RESOURCE=expandable \
      RMM_C_DEFRAGMENT_THRESHOLD=off "$bin/rmm_c_gpu_tests"
  fi
  # memcheck + leak check. Tests tagged [expected_api_errors] provoke CUDA API failures on purpose
  # (out-of-memory probes, invalid device ids): they run with API-error reporting off, so that
  # only memory-access errors and leaks count; everything else runs with full reporting.
  local san=("$sanitizer" --tool memcheck --leak-check full --error-exitcode 101)
  local quiet=("${san[@]}" --report-api-errors no)
  step sanitizer_gpu_tests "${san[@]}" "$bin/rmm_gpu_tests" "~[expected_api_errors]"
  step sanitizer_gpu_tests_ptds "${san[@]}" "$bin/rmm_gpu_tests_ptds" "~[expected_api_errors]"
  step sanitizer_gpu_tests_api_errors "${quiet[@]}" "$bin/rmm_gpu_tests" "[expected_api_errors]"
  step sanitizer_process_exit "${san[@]}" "$bin/process_is_exiting_test"
  step sanitizer_demo "${quiet[@]}" "$bin/rmm_demo"
  # The compile matrix with this machine's compilers (g++ 13.3, nvcc): every public header alone
  # and the consumer program, C++17 and C++20, built against the staged package and run here.
  if [ -f "$stage_dir/cccl.tgz" ]; then
    local cccl_dir=/tmp/rmm-cccl
    rm -rf "$cccl_dir" && mkdir -p "$cccl_dir" && tar -C "$cccl_dir" -xzf "$stage_dir/cccl.tgz"
    step compile_matrix env RMM_PREFIX="$stage_dir/prefix" RMM_CCCL_INCLUDE_DIR="$cccl_dir" \
      RMM_MATRIX_RUNNER="${san[*]}" RMM_MATRIX_HEADERS=all \
      RMM_MATRIX="${RMM_GPU_MATRIX:-g++:17 g++:20 nvcc:17 nvcc:20}" bash "$root/scripts/compile_matrix.sh"
  fi

  if [ -x "$stage_dir/run_benchmarks.sh" ] && [ "${RMM_GPU_SKIP_BENCH:-0}" != 1 ]; then
    bash "$stage_dir/run_benchmarks.sh" "$out/bench" || failed=$((failed + 1))
    cp "$out/bench/tables.md" "$out/" 2>/dev/null || true
  fi

  print_summary
  return $((failed > 0))
}

# The multi-GPU suite (issue 14; docs/multi-gpu.md), on a machine with two or more GPUs: the
# multi-GPU tests, again under compute-sanitizer, the conformance suite with every other device
# current, and (RMM_GPU_SKIP_BENCH=1: not) the multi-GPU benchmark.
multi() {
  [ -x "$stage_dir/bin/rmm_multi_gpu_tests" ] || { echo "no staged rmm_multi_gpu_tests: run 'scripts/gpu_suite.sh stage' first"; exit 2; }
  export LD_LIBRARY_PATH="$stage_dir/lib:${LD_LIBRARY_PATH:-}"
  out="${OUT:-/tmp/rmm-gpu-out}"
  mkdir -p "$out"
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader || true
  nvidia-smi topo -m || true
  local count
  count=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
  echo "multi: $count GPUs"
  summary=()
  failed=0
  local bin="$stage_dir/bin"
  step multi_gpu_tests "$bin/rmm_multi_gpu_tests"
  # The children (rmm_multi_gpu_child) are not followed: one of them aborts on purpose.
  step sanitizer_multi_gpu_tests "$sanitizer" --tool memcheck --leak-check full \
    --error-exitcode 101 --target-processes application-only "$bin/rmm_multi_gpu_tests"
  local d
  for ((d = 1; d < count; d++)); do
    step "conformance_device_$d" env RMM_TEST_DEVICE=$d "$bin/rmm_gpu_tests" "[conformance]"
  done
  if [ -x "$stage_dir/run_benchmarks.sh" ] && [ "${RMM_GPU_SKIP_BENCH:-0}" != 1 ]; then
    RMM_BENCH_PARTS=mgpu bash "$stage_dir/run_benchmarks.sh" "$out/mgpu" || failed=$((failed + 1))
  fi
  print_summary
  return $((failed > 0))
}

# librmm_c inside PyTorch and CuPy (not part of `run`: it needs torch, torchvision, transformers
# and cupy, and takes minutes).
python_tests() {
  [ -f "$stage_dir/lib/librmm_c.so" ] || { echo "no .gpu/lib/librmm_c.so: run 'scripts/gpu_suite.sh stage' first"; exit 2; }
  export LD_LIBRARY_PATH="$stage_dir/lib:${LD_LIBRARY_PATH:-}"
  RMM_C_LIBRARY="$stage_dir/lib/librmm_c.so" bash "$root/scripts/python_gpu_tests.sh" \
    "${OUT:-/tmp/rmm-gpu-out}/python"
}

case "${1:-}" in
  stage) stage ;;
  pack) pack ;;
  unpack) unpack ;;
  run) unpack && run ;;
  multi) unpack && multi ;;
  python) unpack && python_tests ;;
  *) echo "usage: $0 stage|pack|unpack|run|multi|python"; exit 2 ;;
esac
