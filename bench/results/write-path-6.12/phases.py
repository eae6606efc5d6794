#!/usr/bin/env python3
# Scratch analysis kept with its results: see README.md.
# Reads a function_graph trace (global clock, funcgraph-abstime, -proc,
# -tail) of 1 MiB writes and prints, per traced function, how often it ran
# on each CPU and its median duration; for veil, the phases of each write.
import re
import statistics
import sys
from collections import defaultdict

LINE = re.compile(r'^\s*(\d+\.\d+)\s*\|\s*(\d+)\)\s*(.*?)\s*\|\s*([!#*@$+ ]*[\d.]+ us)?\s*\|\s*(.*)$')


def events(path):
    """(cpu, name, start_us, end_us) for every traced call."""
    stack = defaultdict(list)
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        t = float(m.group(1)) * 1e6
        cpu = int(m.group(2))
        dur = m.group(4)
        dur = float(re.sub(r'[^\d.]', '', dur.replace(' us', ''))) if dur else None
        call = m.group(5).strip()
        name = re.sub(r'\s*\[.*?\]', '', call)
        if call.endswith('{'):
            stack[cpu].append((name.split('(')[0].strip(), t))
        elif call.startswith('}'):
            if stack[cpu]:
                fn, t0 = stack[cpu].pop()
                yield cpu, fn, t0, t0 + (dur or t - t0)
        elif call.endswith(';') and dur is not None:
            fn = name.split('(')[0].strip()
            yield cpu, fn, t, t + dur


def main(path):
    ev = sorted(events(path), key=lambda e: e[2])
    per = defaultdict(lambda: defaultdict(list))
    for cpu, fn, t0, t1 in ev:
        per[fn][cpu].append(t1 - t0)
    print(f'{path}:')
    for fn in sorted(per):
        parts = [f'cpu{c}: {len(d)} x {statistics.median(d):.0f} us'
                 for c, d in sorted(per[fn].items())]
        print(f'  {fn}: ' + ', '.join(parts))
    maps = [e for e in ev if e[1] == 'veil_io_map']
    if not maps:
        return
    ends = [e for e in ev if e[1] == 'veil_write_end_io']
    rows = []
    for i, (cpu, _, t0, t1) in enumerate(maps[:-1]):
        nxt = maps[i + 1][2]
        inw = [e for e in ev if t0 <= e[2] < nxt]
        chunks = [e for e in inw if e[1] == 'veil_job_run_chunk']
        alloc = [e for e in inw if e[1] == 'veil_pages_alloc']
        if not chunks or not alloc:
            continue  # a read (udev's probe), not a write
        brd = [e for e in inw if e[1] == 'brd_submit_bio']
        end = [e for e in ends if t0 <= e[2] < nxt]
        last_chunk = max(c[3] for c in chunks)
        other = [c for c in chunks if c[0] != cpu]
        rows.append({
            'alloc': sum(a[3] - a[2] for a in alloc),
            'chunks_here': len(chunks) - len(other),
            'chunks_other': len(other),
            'crypt_here': sum(c[3] - c[2] for c in chunks if c[0] == cpu),
            'crypt_other': sum(c[3] - c[2] for c in other),
            'first_other': (min(c[2] for c in other) - t0) if other else None,
            'chunks_done': last_chunk - t0,
            'map': t1 - t0,
            'brd': sum(b[3] - b[2] for b in brd),
            'brd_on_submitter': sum(1 for b in brd if b[0] == cpu),
            'end': (end[0][2] - t0) if end else None,
        })
    print(f'  veil writes: {len(rows)}; medians in us:')
    for k in rows[0]:
        vals = [r[k] for r in rows if r[k] is not None]
        if vals:
            print(f'    {k}: {statistics.median(vals):.0f} '
                  f'({min(vals):.0f}-{max(vals):.0f})')


for p in sys.argv[1:]:
    main(p)
