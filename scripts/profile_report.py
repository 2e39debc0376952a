#!/usr/bin/env python3
"""Turns the output of benchmarks/profiling/sampler.cpp into a readable flat profile.

    python3 scripts/profile_report.py PROFILE.txt [PROFILE2.txt ...] \
        --binary-dir build-gpu --binary-dir build-gpu/benchmarks [--top 25]

For every sample address inside a binary found (by file name) under a --binary-dir, addr2line -i
names the whole inline chain (build with -g: RelWithDebInfo, or the benchmarks, which add -g), so
time inside header-only code inlined into the benchmark is attributed to the allocator function
that it belongs to. Other modules (libc, libcuda, libcudart) are named by the nearest exported
symbol that dladdr found on the profiled machine. Prints, per profile: the busy-thread average
(cpu / wall), the share per module, the top innermost functions ("self") and the top functions
anywhere in the inline chain ("inclusive", within our binaries).
"""
import argparse
import collections
import os
import re
import subprocess
import sys


def load(path):
    info, maps, pcs, stacks = {}, [], [], []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#") or not line:
                continue
            if line.startswith("map "):
                parts = line[4:].split(None, 5)
                if len(parts) >= 6 and "x" in parts[1]:
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    maps.append((lo, hi, int(parts[2], 16), parts[5]))
            elif line.startswith("stack "):
                fields = line.split()
                stacks.append((int(fields[1]), [int(x, 16) for x in fields[2:]]))
            elif line.startswith("pc "):
                _, pc, count, module, symbol = line.split(" ", 4)
                pcs.append((int(pc, 16), int(count), module, symbol))
            else:
                key, value = line.split(" ", 1)
                info[key] = float(value)
    return info, maps, pcs, stacks


def load_segments(binary):
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
    segs = []
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            off, vaddr, filesz = int(fields[1], 16), int(fields[2], 16), int(fields[4], 16)
            segs.append((off, vaddr, filesz))
    return segs


def to_vaddr(segs, file_offset):
    for off, vaddr, size in segs:
        if off <= file_offset < off + size:
            return file_offset - off + vaddr
    return file_offset


def short(name, width=110):
    name = re.sub(r"\(anonymous namespace\)::", "", name)
    name = re.sub(r"rmm::mr::detail::", "", name)
    name = re.sub(r"rmm::mr::", "", name)
    name = re.sub(r"std::__cxx11::", "std::", name)
    # Drop template arguments and parameter lists: they make every line unreadable.
    prev = None
    while prev != name:
        prev = name
        name = re.sub(r"<[^<>]*>", "", name)
    name = re.sub(r"\([^()]*\)", "()", name)
    return name if len(name) <= width else name[: width - 3] + "..."


# Wrappers of the benchmark harness and the standard library: in every chain, so not telling.
GENERIC = {"guarded", "bm_random", "bm_mt", "bm_replay", "measure", "Run", "operator()", "_M_run",
           "__invoke", "__invoke_impl", "_M_invoke", "main", "??"}


def symbolize(binary, addrs):
    """addr -> list of function names, innermost first (addr2line -i chain)."""
    if not addrs:
        return {}
    args = ["addr2line", "-f", "-i", "-C", "-a", "-e", binary] + [hex(a) for a in addrs]
    out = subprocess.run(args, capture_output=True, text=True).stdout.splitlines()
    result, current, i = {}, None, 0
    while i < len(out):
        line = out[i]
        if line.startswith("0x") and re.fullmatch(r"0x[0-9a-f]+", line):
            current = int(line, 16)
            result[current] = []
            i += 1
            continue
        if current is not None and i + 1 < len(out):
            result[current].append(line)
            i += 2  # function, then file:line
        else:
            i += 1
    return result


def report(path, binary_dirs, top, callers=1):
    info, maps, pcs, stacks = load(path)
    total = sum(c for _, c, _, _ in pcs) or 1
    print(f"## {os.path.basename(path)}\n")
    wall, cpu = info.get("wall_seconds", 0.0), info.get("cpu_seconds", 0.0)
    print(f"samples {int(info.get('samples', 0))}, wall {wall:.2f} s, cpu {cpu:.2f} s, "
          f"busy threads on average {cpu / wall if wall else 0:.2f}\n")

    local = {}
    for d in binary_dirs:
        if os.path.isdir(d):
            for name in os.listdir(d):
                full = os.path.join(d, name)
                if os.path.isfile(full):
                    local.setdefault(name, full)

    mapping_of = lambda pc: next((m for m in maps if m[0] <= pc < m[1]), None)
    symbol_of = {pc: (module, symbol) for pc, _, module, symbol in pcs}
    by_module = collections.Counter()
    per_binary = collections.defaultdict(list)  # local binary -> [(vaddr, count)]
    foreign = collections.Counter()
    for pc, count, module, symbol in pcs:
        mapping = next((m for m in maps if m[0] <= pc < m[1]), None)
        path_in_map = mapping[3] if mapping else module
        base = os.path.basename(path_in_map)
        base_key = re.sub(r"\.so(\.[0-9]+)*$", ".so", base)
        by_module[base_key or "?"] += count
        binary = local.get(base) or local.get(base_key)
        if mapping and binary:
            per_binary[binary].append((pc - mapping[0] + mapping[2], count))
        else:
            foreign[f"{base_key}: {symbol.split('+')[0]}"] += count

    print("| module | share |\n| --- | --- |")
    for name, c in by_module.most_common(12):
        print(f"| {name} | {100.0 * c / total:.1f} % |")
    print()

    self_count = collections.Counter()
    inclusive = collections.Counter()
    for binary, entries in per_binary.items():
        segs = load_segments(binary)
        vaddrs = {off: to_vaddr(segs, off) for off, _ in entries}
        names = symbolize(binary, sorted(set(vaddrs.values())))
        for off, count in entries:
            chain = names.get(vaddrs[off], []) or ["??"]
            self_count[short(chain[0])] += count
            for fn in set(short(f) for f in chain):
                if fn not in GENERIC:
                    inclusive[fn] += count
    for key, c in foreign.items():
        self_count[key] += c

    # Time outside our binaries (libc, the CUDA driver), charged to the first caller of ours.
    names_cache = {}

    def our_function(addr):
        m = mapping_of(addr)
        if not m:
            return None
        base = os.path.basename(m[3])
        binary = local.get(base) or local.get(re.sub(r"\.so(\.[0-9]+)*$", ".so", base))
        if not binary:
            return None
        key = (binary, addr)
        if key not in names_cache:
            segs = load_segments(binary)
            vaddr = to_vaddr(segs, addr - 1 - m[0] + m[2])
            chain = symbolize(binary, [vaddr]).get(vaddr, []) or ["??"]
            names_cache[key] = " < ".join(
                [short(f, 60) for f in chain if short(f) not in GENERIC][:3]) or short(chain[0])
        return names_cache[key]

    charged = collections.Counter()
    for count, stack in stacks:
        pc = stack[0]
        m = mapping_of(pc)
        base = os.path.basename(m[3]) if m else "?"
        if local.get(base) or local.get(re.sub(r"\.so(\.[0-9]+)*$", ".so", base)):
            continue
        module, symbol = symbol_of.get(pc, (base, "?"))
        ours = [f for f in (our_function(a) for a in stack[1:]) if f][:callers]
        where = " || ".join(ours) or "no caller of ours"
        charged[f"{re.sub(r'[.]so.*$', '', base)}:{symbol.split('+')[0]} from {where}"] += count

    print("| self (innermost function or exported symbol) | share |\n| --- | --- |")
    for name, c in self_count.most_common(top):
        print(f"| `{name}` | {100.0 * c / total:.1f} % |")
    print()
    if charged:
        print(f"| outside our code (libc, CUDA), by the {callers} innermost frame(s) of ours "
              "(outermost last) | share |\n| --- | --- |")
        for name, c in charged.most_common(top):
            print(f"| `{name}` | {100.0 * c / total:.1f} % |")
        print()
    print("| inclusive (anywhere in the inline chain, our binaries) | share |\n| --- | --- |")
    for name, c in inclusive.most_common(top):
        print(f"| `{name}` | {100.0 * c / total:.1f} % |")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("profiles", nargs="+")
    parser.add_argument("--binary-dir", action="append", default=[])
    parser.add_argument("--top", type=int, default=25)
    # Which lock a thread waits for shows only further out: 4 names the caller of the caller.
    parser.add_argument("--callers", type=int, default=1,
                        help="frames of ours named for time outside our code (default 1)")
    args = parser.parse_args()
    for p in args.profiles:
        report(p, args.binary_dir, args.top, args.callers)


if __name__ == "__main__":
    sys.exit(main())
