#!/bin/bash
# Does the arena's host-model time depend on huge pages? Each variant with and without glibc's
# malloc huge-page tunable (THP through madvise), alternating, pinned to one core.
export LD_LIBRARY_PATH=$PWD/build-ab/lib:$LD_LIBRARY_PATH
cd build-ab/model
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; ldd --version | head -1
grep -i huge /proc/meminfo
for r in 1 2 3 4 5 6 7 8; do
  for row in "100000 1" "100000 4"; do
    for v in base v3; do
      echo -n "$v 4k "; taskset -c 5 ./m_$v arena $row 5
      echo -n "$v thp "; GLIBC_TUNABLES=glibc.malloc.hugetlb=1 taskset -c 5 ./m_$v arena $row 5
    done
    echo -n "null 4k "; taskset -c 5 ./m_base null $row 5
    echo -n "null thp "; GLIBC_TUNABLES=glibc.malloc.hugetlb=1 taskset -c 5 ./m_base null $row 5
  done
done
