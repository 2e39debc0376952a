#!/usr/bin/env python3
"""reps.py DIR: per row of DIR/round_*.json (Google Benchmark JSON, every repetition), the median
ns/op over all repetitions, over those whose core stayed quiet (probe_after_ns <= 1.2 x probe_ns)
and over the others, and the median of ns/op / probe_ns (the row in units of the core's probe).
reps.py --aggregates FILE: the last column for a JSON of medians only (rmm_random_allocations_bench
as run_benchmarks.sh runs it), from each row's median ns/op and median probe_ns."""
import collections, glob, json, statistics, sys

med = lambda a: f'{statistics.median(a):.1f}' if a else '-'
if sys.argv[1] == '--aggregates':
    print('| row | median ns/op | median probe_ns | ns/op / probe_ns |\n|---|---|---|---|')
    for b in json.load(open(sys.argv[2]))['benchmarks']:
        if b.get('aggregate_name') == 'median' and '/arena/' in b['name']:
            print(f"| {b['name'].split('/iterations')[0]} | {b['ns_per_op']:.1f} | "
                  f"{b['probe_ns']:.2f} | {b['ns_per_op'] / b['probe_ns']:.1f} |")
    sys.exit()
rows = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + '/round_*.json')):
    for b in json.load(open(f))['benchmarks']:
        if b.get('run_type') == 'iteration':
            rows[b['name'].split('/iterations')[0]].append(
                (b['ns_per_op'], b['probe_ns'], b['probe_after_ns']))
print('| row | reps | median all | quiet reps | median quiet | median busy | probe median | '
      'probe_after median | ns/op / probe_ns |\n|---|---|---|---|---|---|---|---|---|')
for name, v in rows.items():
    quiet = [x[0] for x in v if x[2] <= 1.2 * x[1]]
    busy = [x[0] for x in v if x[2] > 1.2 * x[1]]
    print(f'| {name} | {len(v)} | {med([x[0] for x in v])} | {len(quiet)} | {med(quiet)} | '
          f'{med(busy)} | {statistics.median(x[1] for x in v):.2f} | '
          f'{statistics.median(x[2] for x in v):.2f} | {med([x[0] / x[1] for x in v])} |')
