#!/usr/bin/env bash
# A/B of benchmark binaries built from one source against different header trees, for one device
# call: runs each variant's binary in turn (in reverse order on even rounds), for ROUNDS rounds,
# and prints a table of the medians of the rounds' medians with each variant's ratio to the first
# one named.
#
#   VARIANTS="new base" FILTER='^mt(ptds)?/fixed_size/' bash scripts/ab_call.sh OUT [ROUNDS]
#
#   OUT       folder for ab.tgz (every round's Google Benchmark JSON) and ab_table.md
#   ROUNDS    alternating rounds (default 3)
#   VARIANTS  binaries .gpu/abf/${PREFIX}_<variant> (default "new base"; the last is the reference)
#   PREFIX    mt (multithread_bench, counter Mops_per_s, default) or ra (random_allocations_bench,
#             counter ns_per_op); the table: scripts/ab_table.py
#   FILTER    --benchmark_filter (default: every row)
#   REPS      --benchmark_repetitions per round (default 3); TIMEOUT seconds per binary (default 60)
# Libraries come from .gpu/lib (carry ".gpu/abf" and ".gpu/lib").
set -u
final=${1:?out dir}
rounds=${2:-3}
prefix=${PREFIX:-mt}
variants=${VARIANTS:-new base}
out=$(mktemp -d)
mkdir -p "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
for r in $(seq 1 "$rounds"); do
  order=$variants
  if [ $((r % 2)) -eq 0 ]; then  # even rounds run the variants in reverse: no fixed first place
    order=$(echo "$variants" | tr ' ' '\n' | tac | tr '\n' ' ')
  fi
  for v in $order; do
    timeout "${TIMEOUT:-60}" ".gpu/abf/${prefix}_$v" --benchmark_filter="${FILTER:-.}" \
      --benchmark_repetitions="${REPS:-3}" --benchmark_report_aggregates_only=true \
      --benchmark_out_format=json --benchmark_out="$out/${v}_$r.json" >/dev/null 2>&1 ||
      echo "rc $? $v round $r"
    echo "round $r $v done at $(($(date +%s) - t0)) s"
  done
done
python3 scripts/ab_table.py "$out" "$prefix" $variants | tee "$final/ab_table.md"
tar -C "$out" -czf "$final/ab.tgz" .
rm -rf "$out"
