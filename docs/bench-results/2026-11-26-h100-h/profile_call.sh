#!/usr/bin/env bash
# Device call: profiles of fixed_size and binning at T = 16 on their own streams and on per-thread
# default streams (571ec09's staging), to explain why they do not scale.
set -u
final=${1:?out dir}; mkdir -p "$final"
RMM_PROFILE_ROWS="mt:^mt/fixed_size/T:16/ mt:^mtptds/fixed_size/T:16/ mt:^mt/binning/T:16/ mt:^mt/fixed_size/T:1/" timeout 300 bash .gpu/profile_gpu.sh $final > $final/prof.txt 2>&1 || echo "rc $? profile"
tail -5 $final/prof.txt
