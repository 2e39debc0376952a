"""Executed jumps that cross or end on a 32-byte boundary (the JCC-erratum condition), from a
callgrind --dump-instr=yes profile and the binary's disassembly. Usage: jcc_jumps.py BINARY CALLGRIND"""
import collections, re, subprocess, sys
binary, prof = sys.argv[1], sys.argv[2]
dis = subprocess.run(["objdump", "-d", "-w", "-C", binary], capture_output=True, text=True).stdout
insns = []  # (addr, length, mnemonic)
fn_of = {}
cur = "?"
for line in dis.splitlines():
    h = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if h:
        cur = h.group(1)
    m = re.match(r"^\s+([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(\S*)", line)
    if m:
        insns.append((int(m.group(1), 16), len(m.group(2).split()), m.group(3)))
        fn_of[int(m.group(1), 16)] = cur
counts = collections.Counter()
ob = None; skip = False; mine = False
for line in open(prof):
    if line.startswith("ob="):
        mine = line.strip().endswith(binary.split("/")[-1])
    if line.startswith("calls="):
        skip = True; continue
    m = re.match(r"^(0x[0-9a-f]+)\s+\d+\s+(\d+)", line)
    if m:
        if not skip and mine:
            counts[int(m.group(1), 16)] += int(m.group(2))
        skip = False
fusible = ("cmp", "test", "add", "sub", "and", "inc", "dec")
tot_j = hit_j = 0
hot = []
lock_max = 0
entry = {}
for a, _, _ in insns:
    entry[fn_of[a]] = min(a, entry.get(fn_of[a], a))
lock_max = max(counts.get(a, 0) for fn, a in entry.items() if re.search(r"stream_ordered_core<.*>::allocate_on\(", fn))
for i, (a, n, mn) in enumerate(insns):
    c = counts.get(a, 0)
    if not re.search(sys.argv[3] if len(sys.argv) > 3 else "rmm::", fn_of[a]):
        continue
    if not c or not (mn.startswith("j") or mn.startswith("call") or mn.startswith("ret")):
        continue
    start = a
    if mn.startswith("j") and not mn.startswith("jmp") and i > 0 and insns[i-1][2].startswith(fusible) \
            and insns[i-1][0] + insns[i-1][1] == a:
        start = insns[i-1][0]
    end = a + n
    tot_j += c
    if start // 32 != (end - 1) // 32 or end % 32 == 0:
        hit_j += c
        hot.append((c, hex(a), mn, start != a, fn_of[a][:90]))
print(f"{binary}: allocations (allocate_on calls) {lock_max}; executed jumps {tot_j} ({tot_j / (2 * lock_max):.1f} per op); "
      f"on a 32-byte boundary {hit_j} ({hit_j / (2 * lock_max):.2f} per op, {100 * hit_j / tot_j:.1f} %)")
for c, a, mn, fused, f in sorted(hot, reverse=True)[:14]:
    print(f"   {c / (2 * lock_max):6.3f} per op  {a} {mn}{' (fused)' if fused else ''}  {f}")
