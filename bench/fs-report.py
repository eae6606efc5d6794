#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a bench-fs run's fs-times.txt into fs.md and PNG bar charts.

Layout of the cryptoloop/dm-crypt timing study: one table per file system,
rows are commands, columns are ciphers; wall seconds, seconds inside the
cipher (the target's own counters), and overhead over the unencrypted
volume in percent. With several repetitions, the median and the range.
"""
import os
import statistics
import sys
from collections import defaultdict

from plots import grouped_bars

STEPS = {
    "ext2": ["mkfs", "mount", "write_1MB", "mount_1file", "read_1MB", "write_10MB", "mount_2files", "read_10MB"],
    "jffs2": ["mkfs", "mount", "write_1MB", "mount_1file", "read_1MB", "write_10MB", "mount_2files", "read_10MB"],
    "cramfs": ["mkfs_1file", "mount", "read_1MB", "mkfs_2files", "mount_2files", "read_10MB"],
}


def label(config):
    if config == "none":
        return "none"
    spec, key = config.split(":")
    cipher, mode = spec.split("-")[:2]
    return f"{cipher}-{mode} {int(key) * 8}b"


def cell(vals, digits):
    med = statistics.median(vals)
    if len(vals) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({min(vals):.{digits}f}–{max(vals):.{digits}f})"


def main():
    res = sys.argv[1]
    wall, ciph = defaultdict(list), defaultdict(list)
    configs = []
    with open(os.path.join(res, "fs-times.txt")) as f:
        for line in f:
            fs, config, _rep, step, w, c = line.split()
            wall[(fs, config, step)].append(float(w))
            ciph[(fs, config, step)].append(float(c))
            if config not in configs:
                configs.append(config)
    reps = max(len(v) for v in wall.values())
    out = ["# File-system timing: veil per cipher vs an unencrypted volume\n",
           "Made by `make bench-fs` (bench/fs-run): one guest boot, 2 vCPUs, QEMU TCG; "
           f"32 MB volumes on a loop file; {reps} repetition(s)"
           + (", median (min–max)" if reps > 1 else "")
           + ". Cold cache before each step (unmount, drop caches). Files are random "
           "(incompressible) data: 1 MB and 10 MB. `none` is a dm-linear volume; "
           "the cipher time is the target's `cipher_ns_*` counters over the step. "
           "Keys: 256-bit for CTR, 2×256-bit for XTS (blowfish: CTR only).\n"]
    for fs, steps in STEPS.items():
        if not any(k[0] == fs for k in wall):
            continue
        head = "| command | " + " | ".join(label(c) for c in configs) + " |"
        sep = "|---" * (len(configs) + 1) + "|"
        for title, data, digits in (("wall seconds", wall, 3), ("seconds in the cipher", ciph, 4)):
            out += [f"## {fs}: {title}\n", head, sep]
            for s in steps:
                out.append(f"| {s} | " + " | ".join(cell(data[(fs, c, s)], digits) for c in configs) + " |")
            out.append("")
        out += [f"## {fs}: overhead over unencrypted (wall, %)\n", head, sep]
        for s in steps:
            base = statistics.median(wall[(fs, "none", s)])
            vals = [(statistics.median(wall[(fs, c, s)]) / base - 1) * 100 if base else 0 for c in configs]
            out.append(f"| {s} | " + " | ".join(f"{v:+.0f}" for v in vals) + " |")
        totals = [sum(statistics.median(wall[(fs, c, s)]) for s in steps) for c in configs]
        out.append("| **all steps** | " + " | ".join(
            f"**{(t / totals[0] - 1) * 100:+.0f}**" if totals[0] else "" for t in totals) + " |\n")

        png = f"fs-{fs}.png"
        grouped_bars(os.path.join(res, png), steps,
                     [(label(c), [statistics.median(wall[(fs, c, s)]) for s in steps]) for c in configs],
                     "wall seconds", f"{fs} on a 32 MB veil volume, per cipher (QEMU TCG guest, 2 vCPUs)")
        out.append(f"![{fs}]({png})\n")
    with open(os.path.join(res, "fs.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out[:40]))
    print(f"report: {os.path.join(res, 'fs.md')}")


if __name__ == "__main__":
    main()
