set -u
export LD_LIBRARY_PATH=$PWD/.gpu/lib
for r in pool arena null pool; do
  for v in legacy created thread thread_local_release; do
    timeout 60 .gpu/bin/mt_probe $v 300 $r
  done
done 2>&1 | tee $1/probe.txt
