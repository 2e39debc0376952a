#!/usr/bin/env bash
# Device call: the single-thread rows that bench_call.sh's 100 s timeout cut off (ours, n = 100,000,
# max 256-4096 MiB; their own JSON), then profiles of fixed_size at T = 8 and 16 and binning at
# T = 16 on their own streams, and fixed_size at T = 16 on per-thread streams, after one-size
# batching (5565f8f's staging), to explain why fixed_size stops scaling where binning does not.
set -u
final=${1:?out dir}; mkdir -p "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
agg="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
timeout 150 .gpu/bin/rmm_random_allocations_bench --benchmark_filter='^random/[a-z_]*/n:100000/max:(256|1024|4096)/' $agg --benchmark_out=$final/rmm_random_allocations_bench.rest.json > $final/random_rest.txt 2>&1 || echo "rc $? random rest"
RMM_PROFILE_ROWS="mt:^mt/fixed_size/T:16/ mt:^mt/fixed_size/T:8/ mt:^mtptds/fixed_size/T:16/ mt:^mt/binning/T:16/" timeout 300 bash .gpu/profile_gpu.sh $final > $final/prof.txt 2>&1 || echo "rc $? profile"
tail -5 $final/prof.txt
