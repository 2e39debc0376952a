"""Per operation (allocate or free) of the real benchmark binary, in functions matching a regex:
instructions, conditional jumps, unconditional jumps, calls, returns, stores/loads of the stack
(rsp/rbp-relative operands), from callgrind --dump-instr=yes. Usage: work_per_op.py BINARY CALLGRIND [REGEX]"""
import collections, re, subprocess, sys
binary, prof = sys.argv[1], sys.argv[2]
pat = sys.argv[3] if len(sys.argv) > 3 else "rmm::mr|random_workload"
dis = subprocess.run(["objdump", "-d", "-w", "-C", binary], capture_output=True, text=True).stdout
ins = {}; cur = "?"
for line in dis.splitlines():
    h = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if h: cur = h.group(1)
    m = re.match(r"^\s+([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(\S*)\s*(.*)", line)
    if m: ins[int(m.group(1), 16)] = (m.group(3), m.group(4), cur)
counts = collections.Counter(); skip = False; mine = False
for line in open(prof):
    if line.startswith("ob="): mine = line.strip().endswith(binary.split("/")[-1])
    if line.startswith("calls="): skip = True; continue
    m = re.match(r"^(0x[0-9a-f]+)\s+\d+\s+(\d+)", line)
    if m:
        if not skip and mine: counts[int(m.group(1), 16)] += int(m.group(2))
        skip = False
entry = {}  # function -> its lowest address
for a, (_, _, fn) in ins.items():
    entry[fn] = min(a, entry.get(fn, a))
# one allocate_on call per allocation: ops = allocations + frees
ops = 2 * max(counts.get(a, 0) for fn, a in entry.items() if re.search(r"stream_ordered_core<.*>::allocate_on\(", fn))
k = collections.Counter(); byfn = collections.Counter()
for a, c in counts.items():
    if a not in ins or not re.search(pat, ins[a][2]): continue
    mn, opnd, fn = ins[a]
    k["instructions"] += c; byfn[fn] += c
    if mn.startswith("j") and not mn.startswith("jmp"): k["conditional jumps"] += c
    elif mn.startswith("jmp"): k["jmp"] += c
    elif mn.startswith("call"): k["call"] += c
    elif mn.startswith("ret"): k["ret"] += c
    if mn.startswith("push"): k["push"] += c
    if mn.startswith("pop"): k["pop"] += c
    if "(%rsp)" in opnd or "(%rbp)" in opnd:
        # AT&T: the destination is last
        if re.search(r"\(%r[sb]p\)$", opnd) and not mn.startswith(("cmp", "test", "lea")): k["stack stores (mov to rsp/rbp)"] += c
        else: k["stack loads/other"] += c
print(f"{binary}: ops {ops}")
for key, c in k.items(): print(f"  {key:32s} {c / ops:7.1f} per op")
for fn, c in byfn.most_common(12): print(f"  {c / ops:7.1f}  {fn[:110]}")
