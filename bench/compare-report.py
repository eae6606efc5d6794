#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/compare's tables: MB/s medians (ranges) per module and workload,
and each median over dm-crypt no_*_workqueue's of the same boot; then
each module against the first, round by round (rounds interleave the
modules, so a round's ratio cancels what the host did that minute)."""
import glob
import json
import os
import re
import statistics
import sys


def main():
    res, labels = sys.argv[1], sys.argv[2:]
    cols = labels + ["dm-crypt-nowq"]
    runs, by_round = {}, {}
    for path in glob.glob(os.path.join(res, "json", "*.json")):
        name = os.path.basename(path)[:-5]
        label = next(c for c in sorted(cols, key=len, reverse=True)
                     if name.startswith(c + "-"))
        m = re.match(r"(.*)-r(\d+)$", name[len(label) + 1:])
        wl, rnd = m.group(1), int(m.group(2))
        with open(path) as f:
            jobs = json.load(f)["jobs"]
        mbs = sum(j["read"]["bw"] + j["write"]["bw"] for j in jobs) * 1024 / 1e6
        runs.setdefault((wl, label), []).append(mbs)
        by_round.setdefault((wl, label), {})[rnd] = mbs
    with open(os.path.join(res, "revision.txt")) as f:
        print(f.read().strip().replace("\n", "  \n"))
    print()
    print("| workload | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for wl in sorted({w for w, _ in runs}):
        ref = statistics.median(runs.get((wl, "dm-crypt-nowq"), [0])) or 1
        cells = []
        for c in cols:
            v = runs.get((wl, c))
            if not v:
                cells.append("-")
                continue
            med = statistics.median(v)
            cells.append(f"{med:.1f} ({min(v):.0f}-{max(v):.0f}) {med / ref:.2f}x")
        print(f"| {wl} | " + " | ".join(cells) + " |")
    print("\nMB/s: median of the rounds (range), and its ratio to dm-crypt "
          "no_*_workqueue's median.")
    if len(labels) < 2:
        return
    print("\n| workload | " + " | ".join(f"{c} / {labels[0]}" for c in labels[1:]) + " |")
    print("|---" * len(labels) + "|")
    for wl in sorted({w for w, _ in runs}):
        first = by_round.get((wl, labels[0]), {})
        cells = []
        for c in labels[1:]:
            mine = by_round.get((wl, c), {})
            pr = [mine[r] / first[r] for r in mine if first.get(r)]
            cells.append(f"{statistics.median(pr) - 1:+.1%} ({min(pr) - 1:+.0%} to "
                         f"{max(pr) - 1:+.0%})" if pr else "-")
        print(f"| {wl} | " + " | ".join(cells) + " |")
    print("\nChange against the first module: the median of the per-round ratios "
          "(range).")


if __name__ == "__main__":
    main()
