#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/compare's table: MB/s medians (ranges) per module and workload,
and each median over dm-crypt no_*_workqueue's of the same boot."""
import glob
import json
import os
import re
import statistics
import sys


def main():
    res, labels = sys.argv[1], sys.argv[2:]
    cols = labels + ["dm-crypt-nowq"]
    runs = {}
    for path in glob.glob(os.path.join(res, "json", "*.json")):
        name = os.path.basename(path)[:-5]
        label = next(c for c in sorted(cols, key=len, reverse=True)
                     if name.startswith(c + "-"))
        wl = re.sub(r"-r\d+$", "", name[len(label) + 1:])
        with open(path) as f:
            jobs = json.load(f)["jobs"]
        mbs = sum(j["read"]["bw"] + j["write"]["bw"] for j in jobs) * 1024 / 1e6
        runs.setdefault((wl, label), []).append(mbs)
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


if __name__ == "__main__":
    main()
