#!/usr/bin/env python3
# Scratch measurement kept with its results: see README.md. The table of
# README.md from one guest.sh out.txt: medians over the rounds per target.
#   summary.py DIR/out.txt
import re, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\d) (\S+) (\S+) MB/s ([\d.]+) \| cpu0 +(\d+)% \(irq\+softirq +(\d+)%\) \| cpu1 +(\d+)% \(irq\+softirq +(\d+)%\)(.*)', line)
    if not m: continue
    r, t, wl, mbs, c0, i0, c1, i1, rest = m.groups()
    rows.setdefault((wl, t), []).append((float(mbs), int(c0) + int(c1), max(int(c0), int(c1)), min(int(c0), int(c1)), rest))
wls = []
for wl, t in rows:
    if wl not in wls: wls.append(wl)
print('| workload | target | MB/s median (range) | both vCPUs busy, % of one (median, range) | busier / less busy vCPU % (median) |')
print('|---|---|---|---|---|')
for wl in wls:
    for t in ['crypt', 'nowq', 'veil', 'noahead']:
        v = rows.get((wl, t))
        if not v: continue
        mb = [x[0] for x in v]; b = [x[1] for x in v]
        name = {'crypt': 'dm-crypt default', 'nowq': 'dm-crypt no_*_wq', 'veil': 'veil', 'noahead': 'veil no_keystream_ahead'}[t]
        print('| %s | %s | %.1f (%.1f-%.1f) | %d (%d-%d) | %d / %d |' % (wl, name, st.median(mb), min(mb), max(mb), st.median(b), min(b), max(b), st.median([x[2] for x in v]), st.median([x[3] for x in v])))
