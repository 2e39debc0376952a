#!/usr/bin/env bash
# Device call C: torch-mt (T = 1..16) and the profiles of the multi-thread rows at T = 16.
set -u
final=${1:?out dir}; out=/tmp/peer_out; rm -rf $out; mkdir -p "$out" "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
for t in 1 2 4 8 16; do
  (cd /tmp && timeout 150 python3 $OLDPWD/.gpu/peer_bench/torch_mt_alloc.py $t 10000 1 5) >> $out/peers.txt 2>>$out/torch_err.txt || echo "rc $? torch $t" >> $out/errors.txt
done
echo "torch done at $(( $(date +%s) - t0 )) s"
RMM_PROFILE_ROWS="mt:^mt/pool/T:16/ mt:^mt/arena/T:16/ mt:^mt/pool/T:1/ mt:^mt/arena/T:1/" timeout 200 bash .gpu/profile_gpu.sh $out/prof > $out/prof.txt 2>&1 || echo "rc $? profile" >> $out/errors.txt
echo "profiles done at $(( $(date +%s) - t0 )) s"
cat $out/errors.txt 2>/dev/null
tar -C $out -czf $final/peers.tgz .
exit 0
