#!/usr/bin/env bash
# Benchmarks and their peers on the GPU machine, in one session, within a time budget.
#
#   here:  RMM_GPU_BENCHMARKS=ON bash scripts/gpu_suite.sh stage   # builds, stages .gpu/ (this
#          script becomes .gpu/run_benchmarks.sh, bench_tables.py .gpu/bench_tables.py)
#   there: bash scripts/gpu_suite.sh unpack && bash .gpu/run_benchmarks.sh "$OUT"  # alone (carry=[".gpu-pack"])
#          bash scripts/gpu_suite.sh run            # or after the GPU test suite (then in
#                                                   # $OUT/step_logs.tgz, under bench/)
#
# Writes to OUT (default /tmp/rmm-bench-out), eight files (the device tool returns at most eight):
#   rmm_random_allocations_bench.json  rmm_multithread_bench.json  rmm_replay_bench.json
#   rmm_pinned_bench.json  (pinned host memory; not in tables.md)
#   rmm_realloc_bench.json (growing one allocation through reallocate: in place vs copying)
#   rmm_multigpu_bench.json (part mgpu only, which is not in the default list: see below)
#   peers.txt     output of ../shared/bench: random_alloc_raw.cu (cudaMalloc, cudaMallocAsync),
#                 torch_random_alloc.py, torch_mt_alloc.py, torch_replay.py
#   tables.md     the markdown tables (scripts/bench_tables.py)
#   bench_log.txt every step's command, stderr, exit status and time
#
# Environment:
#   RMM_BENCH_BUDGET_S  seconds for the whole script (default 450); a step gets at most what is
#                       left, and steps that no longer fit are skipped and listed
#   RMM_BENCH_FULL=1    everything: cudaMallocAsync at every row (one run of n = 100000 at
#                       4096 MiB takes about a minute), cudaMalloc at every n <= 10000, the
#                       multi-thread grid at max 64 MiB too (and cudaMalloc there). About 15 min:
#                       split it over two device calls (RMM_BENCH_PARTS=ours,torch and
#                       RMM_BENCH_PARTS=async,slow, each with RMM_BENCH_BUDGET_S=570), then
#                       `bench_tables.py OUT1 OUT2` reads the two folders together
#   RMM_BENCH_QUICK=1   smoke test: n = 1000 at 1 and 64 MiB, T in {1, 4}, 1 repetition (~2 min
#                       on a fresh machine, of which ~65 s compile the torch extensions)
#   RMM_BENCH_PARTS     comma list of: ours (our resources and the null resource: random, mt,
#                       replay), async (cudaMallocAsync rows: our harness, then the raw peer),
#                       torch (the PyTorch peers), slow (cudaMalloc rows: ours, then raw),
#                       rmm (RMM 26.x's pool, arena and binning: the same programs built
#                       against RMM by scripts/build_rmm_peer.sh, staged in .gpu/rmm_peer),
#                       mgpu (rmm_multigpu_bench: one resource per GPU, G in {1, 2, 4, 8} up to
#                       the device count; then RMM's peer of it, pool and arena, if staged);
#                       default ours,rmm,async,torch,slow, which is also the order they run in
#                       (mgpu after rmm). mgpu is not in the default: it belongs on a multi-GPU
#                       kind, in a call of its own (RMM_BENCH_PARTS=mgpu), and its JSON would
#                       be a ninth file in OUT
#   RMM_BENCH_PROGRAMS  comma list of the programs that parts ours and rmm run: random, mt,
#                       replay, pinned, realloc (default all five; RMM's peer has the first
#                       three). For a second call that fills in rows a first one's budget
#                       skipped, e.g. RMM_BENCH_PROGRAMS=mt,replay RMM_BENCH_PARTS=ours,rmm
#   RMM_BENCH_REPS      repetitions (default 5; the median is reported)
#   RMM_BENCH_REP_S     timed seconds per repetition (default 0.03; at least one run)
#   RMM_BENCH_MAX_RUN_S one workload run longer than this (default 10) skips that benchmark
#   RMM_TRACE           allocation log (default .gpu/traces/resnet50_train.csv)
#   RMM_BENCH_NO_TORCH=1 skip the PyTorch peers
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ -d "$here/bin" ]; then stage=$here; else stage=$(cd "$here/.." && pwd)/.gpu; fi
bin=$stage/bin
peer_src=$stage/peer_bench
out=${1:-${OUT:-/tmp/rmm-bench-out}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/rmm-bench.XXXXXX)
tables_py=$stage/bench_tables.py
[ -f "$tables_py" ] || tables_py=$here/bench_tables.py
[ -f "$tables_py" ] || tables_py=$(cd "$here/.." && pwd)/scripts/bench_tables.py

export LD_LIBRARY_PATH="$stage/lib:${LD_LIBRARY_PATH:-}"
export RMM_TRACE=${RMM_TRACE:-$stage/traces/resnet50_train.csv}
quick=0
if [ "${RMM_BENCH_QUICK:-0}" != 0 ] || [ "${QUICK:-0}" != 0 ]; then quick=1; fi
full=${RMM_BENCH_FULL:-0}
[ "$quick" = 1 ] && full=0
export RMM_BENCH_QUICK=$quick RMM_BENCH_FULL=$full
parts=",${RMM_BENCH_PARTS:-ours,rmm,async,torch,slow},"
want() { [[ $parts == *",$1,"* ]]; }
programs=",${RMM_BENCH_PROGRAMS:-random,mt,replay,pinned,realloc},"
program() { [[ $programs == *",$1,"* ]]; }
reps=${RMM_BENCH_REPS:-5}
[ "$quick" = 1 ] && reps=${RMM_BENCH_REPS:-1}
budget=${RMM_BENCH_BUDGET_S:-450}
reserve=15  # kept for merging and the tables
start=$SECONDS
log=$out/bench_log.txt
peers=$out/peers.txt
: >"$log"
: >"$peers"
skipped=()

note() { echo "$*" | tee -a "$log"; }
left() { echo $((budget - reserve - (SECONDS - start))); }

# step NAME LIMIT_S STDOUT_FILE CMD...: runs CMD under `timeout` (at most LIMIT_S, at most the
# budget left); stdout appended to STDOUT_FILE, stderr to the log. Skipped when under 5 s remain.
step() {
  local name=$1 limit=$2 dest=$3
  shift 3
  local t
  t=$(left)
  ((t < limit)) || t=$limit
  if ((t < 5)); then
    skipped+=("$name")
    note "SKIPPED (budget) $name"
    [ "$dest" = "$peers" ] && echo "SKIPPED (budget) $name" >>"$peers"
    return 0
  fi
  local t0=$SECONDS
  echo "=== [$((SECONDS - start))s] $name (limit ${t}s): $*" >>"$log"
  timeout -k 5 "$t" "$@" >>"$dest" 2>>"$log"
  local rc=$?
  local verdict=ok
  if ((rc == 124 || rc == 137)); then
    verdict=TIMEOUT
  elif ((rc != 0)); then
    verdict="FAILED (exit $rc)"
  fi
  note "$(printf '%-44s %-16s %4ds' "$name" "$verdict" $((SECONDS - t0)))"
  if [ "$verdict" != ok ] && [ "$dest" = "$peers" ]; then echo "$verdict $name" >>"$peers"; fi
  return 0
}

# --- what runs -----------------------------------------------------------------------------------
ns=(1000 10000 100000)
maxes=(1 4 64 256 1024 4096)
mt_threads=(1 4 16)
mt_n=10000
mt_maxes=(1)
if [ "$quick" = 1 ]; then
  ns=(1000)
  maxes=(1 64)
  mt_threads=(1 4)
  mt_n=1000
fi
[ "$full" = 1 ] && mt_maxes=(1 64)
# Raw cudaMalloc rows of the peer: a cross-check of our harness's cudaMalloc rows (which the
# binary chooses itself: n = 1000 at every size, n = 10000 up to 64 MiB; RMM_BENCH_FULL: all).
raw_cuda_rows() {
  local n m
  for n in "${ns[@]}"; do
    for m in "${maxes[@]}"; do
      if ((n > 10000)); then continue; fi
      if [ "$full" = 1 ] || { ((n <= 1000)) && ((m <= 64)); } || { ((n <= 10000)) && ((m == 1)); }; then
        echo "$n $m"
      fi
    done
  done
}

# Raw cudaMallocAsync rows of the peer: the rows the binary runs (see want_cuda_async in
# benchmarks/random_allocations_bench.cpp): a call costs 25-350 us from 256 MiB up.
raw_async_rows() {
  local n m
  for n in "${ns[@]}"; do
    for m in "${maxes[@]}"; do
      if [ "$full" = 1 ] || ((n <= 1000 || m <= 64)) || { ((n <= 10000)) && ((m <= 256)); }; then
        echo "$n $m"
      fi
    done
  done
}

{
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)"
  echo "# mode: quick=$quick full=$full repetitions=$reps budget=${budget}s parts=${parts:1:-1} programs=${programs:1:-1}"
} >>"$peers"
note "run_benchmarks: stage $stage, out $out, quick=$quick full=$full reps=$reps budget=${budget}s"
if [ ! -d "$bin" ]; then
  note "no $bin: run 'RMM_GPU_BENCHMARKS=ON scripts/gpu_suite.sh stage' first"
  exit 2
fi

torch_ok=0
if [ "${RMM_BENCH_NO_TORCH:-0}" = 0 ] && want torch && [ -d "$peer_src" ]; then
  if torch_version=$(timeout 120 python3 -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>>"$log"); then
    torch_ok=1
    echo "# torch: $torch_version" >>"$peers"
  else
    note "torch not importable: PyTorch peers skipped"
  fi
fi

# --- 1. build the peers: random_alloc_raw (nvcc) and the three torch extensions, in parallel ---
raw_bin=""
if [ -f "$peer_src/random_alloc_raw.cu" ] && { want async || want slow || [ "$torch_ok" = 1 ]; }; then
  t0=$SECONDS
  if [ "$torch_ok" = 1 ]; then
    # First call of each script compiles its extension (cached in ~/.cache/torch_extensions);
    # all three at once, on a trivial workload.
    (cd "$work" && timeout -k 5 300 python3 "$peer_src/torch_random_alloc.py" 1 1 1 >/dev/null 2>"$work/c1.log"; echo $? >"$work/c1.rc") &
    (cd "$work" && timeout -k 5 300 python3 "$peer_src/torch_mt_alloc.py" 1 1 1 1 >/dev/null 2>"$work/c2.log"; echo $? >"$work/c2.rc") &
    (cd "$work" && timeout -k 5 300 python3 "$peer_src/torch_replay.py" "$RMM_TRACE" 1 >/dev/null 2>"$work/c3.log"; echo $? >"$work/c3.rc") &
  fi
  nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if ! want async && ! want slow; then
    :
  elif timeout 180 "$nvcc_bin" -O2 -arch=sm_90 -o "$work/random_alloc_raw" "$peer_src/random_alloc_raw.cu" 2>>"$log"; then
    raw_bin=$work/random_alloc_raw
  else
    note "nvcc random_alloc_raw.cu failed: raw peers skipped"
  fi
  wait
  torch_built=()
  for i in 1 2 3; do
    cat "$work/c$i.log" >>"$log" 2>/dev/null
    torch_built+=("$(cat "$work/c$i.rc" 2>/dev/null || echo 1)")
  done
  note "$(printf '%-44s %-16s %4ds' "build peers (torch exit: ${torch_built[*]:-none})" ok $((SECONDS - t0)))"
fi
torch_rc() { [ "$torch_ok" = 1 ] && [ "${torch_built[$1]:-1}" = 0 ]; }

# --- 2. our benchmarks ----------------------------------------------------------------------------
gbench() {  # gbench BINARY TAG FILTER LIMIT
  local name=$1 tag=$2 filter=$3 limit=$4
  step "$name $filter" "$limit" "$log" "$bin/$name" --benchmark_filter="$filter" \
    --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
    --benchmark_out="$work/json/$name.$tag.json" --benchmark_out_format=json
}
groups() {  # distinct FAMILY/RESOURCE/ prefixes that BINARY registers, in order
  "$bin/$1" --benchmark_list_tests=true 2>/dev/null | awk -F/ '{print $1 "/" $2 "/"}' | awk '!seen[$0]++'
}
mkdir -p "$work/json"
# Per-step limits; in full mode the slow rows need longer (RMM_BENCH_MAX_RUN_S still bounds a row).
lim() { if [ "$full" = 1 ]; then echo 570; else echo "$1"; fi; }
random_bin=rmm_random_allocations_bench
mt_bin=rmm_multithread_bench
replay_bin=rmm_replay_bench
pinned_bin=rmm_pinned_bench
realloc_bin=rmm_realloc_bench
mgpu_bin=rmm_multigpu_bench
# One process per resource (per n for the baselines), so that a timeout loses one group only.
if want ours; then
  if program random && [ -x "$bin/$random_bin" ]; then
    for g in $(groups $random_bin); do
      case $g in random/cuda/ | random/cuda_async/) continue ;; esac
      gbench $random_bin "${g//\//_}" "^$g" 150
    done
  fi
  if program mt && [ -x "$bin/$mt_bin" ]; then
    for g in $(groups $mt_bin); do
      case $g in mt/cuda/) continue ;; esac  # full mode only: part "slow"
      gbench $mt_bin "${g//\//_}" "^$g" 120
    done
  fi
  if program replay && [ -x "$bin/$replay_bin" ]; then
    for g in $(groups $replay_bin); do
      gbench $replay_bin "${g//\//_}" "^$g" 90
    done
  fi
  if program realloc && [ -x "$bin/$realloc_bin" ]; then  # growing one allocation: in place vs allocate-copy-free
    gbench $realloc_bin realloc "^realloc/" 120
  fi
  if program pinned && [ -x "$bin/$pinned_bin" ]; then  # pinned host memory: pool vs cudaMallocHost / cudaHostAlloc
    for g in $(groups $pinned_bin); do
      gbench $pinned_bin "${g//\//_}" "^$g" 90
    done
  fi
fi

# RMM itself: the same three programs built against RMM's headers and librmm.so, in their own
# processes, with RMM's libraries first on the search path (ours is in $stage/lib too).
# The replay (seconds) and the multi-thread rows first, the single-thread grid last: RMM's
# grid takes minutes (its arena over 20 s a run at n = 100,000), and when it went first the
# budget twice ran out before RMM's multi-thread arena and binning rows (2026-12-07).
peer_rmm=$stage/rmm_peer
if want rmm && [ -d "$peer_rmm/bin" ]; then
  for name in $replay_bin $mt_bin $random_bin; do
    exe=$peer_rmm/bin/rmm_peer_${name#rmm_}
    [ -x "$exe" ] || continue
    case $name in
      "$random_bin") program random || continue ;;
      "$mt_bin") program mt || continue ;;
      *) program replay || continue ;;
    esac
    for res in pool arena binning; do
      step "rmm peer $name $res" 150 "$log" env LD_LIBRARY_PATH="$peer_rmm/lib:$LD_LIBRARY_PATH" \
        "$exe" --benchmark_filter="^[a-z]*/rmm_$res/" --benchmark_repetitions="$reps" \
        --benchmark_report_aggregates_only=true \
        --benchmark_out="$work/json/$name.rmm_peer_$res.json" --benchmark_out_format=json
    done
  done
fi

# Multi-GPU: ours one process per resource, then RMM's peer (its pool and arena).
if want mgpu; then
  if [ -x "$bin/$mgpu_bin" ]; then
    for g in $(groups $mgpu_bin); do
      gbench $mgpu_bin "${g//\//_}" "^$g" 150
    done
  fi
  exe=$peer_rmm/bin/rmm_peer_${mgpu_bin#rmm_}
  if [ -x "$exe" ]; then
    for res in pool arena; do
      step "rmm peer $mgpu_bin $res" 150 "$log" env LD_LIBRARY_PATH="$peer_rmm/lib:$LD_LIBRARY_PATH" \
        "$exe" --benchmark_filter="^mgpu/rmm_$res/" --benchmark_repetitions="$reps" \
        --benchmark_report_aggregates_only=true \
        --benchmark_out="$work/json/$mgpu_bin.rmm_peer_$res.json" --benchmark_out_format=json
    done
  fi
fi

# --- 3. cudaMallocAsync: our harness's rows, then the raw peer on the same rows -----------------
if want async; then
  if [ -x "$bin/$random_bin" ]; then
    for n in "${ns[@]}"; do
      gbench $random_bin "random_cuda_async_$n" "^random/cuda_async/n:$n/" "$(lim 120)"
    done
  fi
  if [ -n "$raw_bin" ]; then
    while read -r n m; do
      step "raw cuda_async $n $m" "$(lim 60)" "$peers" "$raw_bin" cuda_async "$n" "$m" "$reps"
    done < <(raw_async_rows)
  fi
fi

# --- 4. PyTorch's caching allocator ----------------------------------------------------------------
if torch_rc 0; then
  for n in "${ns[@]}"; do
    for m in "${maxes[@]}"; do
      step "torch_random_alloc $n $m" 60 "$peers" python3 "$peer_src/torch_random_alloc.py" "$n" "$m" "$reps"
    done
  done
fi
if torch_rc 1; then
  for m in "${mt_maxes[@]}"; do
    for t in "${mt_threads[@]}"; do
      step "torch_mt_alloc $t $mt_n $m" 60 "$peers" python3 "$peer_src/torch_mt_alloc.py" "$t" "$mt_n" "$m" "$reps"
    done
  done
fi
if torch_rc 2; then
  step "torch_replay default" 60 "$peers" python3 "$peer_src/torch_replay.py" "$RMM_TRACE" "$reps"
  step "torch_replay expandable_segments" 60 "$peers" \
    env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 "$peer_src/torch_replay.py" "$RMM_TRACE" "$reps"
fi

# --- 5. the slow cudaMalloc rows, last --------------------------------------------------------------
if want slow; then
  if [ -x "$bin/$random_bin" ]; then
    for n in "${ns[@]}"; do
      if ((n <= 10000)); then gbench $random_bin "random_cuda_$n" "^random/cuda/n:$n/" "$(lim 150)"; fi
    done
  fi
  if [ "$full" = 1 ] && [ -x "$bin/$mt_bin" ]; then
    gbench $mt_bin mt_cuda "^mt/cuda/" "$(lim 300)"
  fi
  if [ -n "$raw_bin" ]; then
    while read -r n m; do
      step "raw cuda $n $m" "$(lim 90)" "$peers" "$raw_bin" cuda "$n" "$m" "$reps"
    done < <(raw_cuda_rows)
  fi
fi

# --- 6. collect -----------------------------------------------------------------------------------
for name in rmm_random_allocations_bench rmm_multithread_bench rmm_replay_bench rmm_pinned_bench \
  rmm_realloc_bench rmm_multigpu_bench; do
  files=("$work/json/$name".*.json)
  [ -e "${files[0]}" ] || continue
  python3 "$tables_py" merge "$out/$name.json" "${files[@]}" 2>>"$log"
done
python3 "$tables_py" "$out" >"$out/tables.md" 2>>"$log" || note "bench_tables.py failed"
note "run_benchmarks: done in $((SECONDS - start))s; skipped for the budget: ${#skipped[@]}${skipped:+ (${skipped[*]})}"
cat "$out/tables.md"
rm -rf "$work"
exit 0
