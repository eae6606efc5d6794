#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench/results/json/*.json (fio) into fio.md and PNG plots.

File names are <cpus>-<device>-<target>-<workload>.json.
"""
import glob
import json
import os
import sys

from plots import grouped_bars

TARGETS = ["raw", "dm-crypt", "veil", "veil-no-ahead", "veil-ahead-1m"]


def load(res):
    runs = {}
    for path in glob.glob(os.path.join(res, "json", "*.json")):
        name = os.path.basename(path)[:-5]
        cpus, dev, rest = name.split("-", 2)
        target = next(t for t in sorted(TARGETS, key=len, reverse=True)
                      if rest.startswith(t + "-"))
        wl = rest[len(target) + 1:]
        with open(path) as f:
            text = f.read()
        if "{" not in text:
            print(f"report: no fio output in {path}, left out", file=sys.stderr)
            continue
        data = json.loads(text[text.index("{"):])
        job = data["jobs"][0]
        side = job["read"] if "read" in wl else job["write"]
        # Total latency, submission included: veil encrypts writes while
        # submitting, so completion latency alone would flatter it.
        pct = side["lat_ns"].get("percentile") or side["clat_ns"].get("percentile", {})
        runs[(int(cpus), dev, wl, target)] = {
            "mbs": side["bw_bytes"] / 1e6,
            "iops": side["iops"],
            "p50": pct.get("50.000000", 0) / 1000.0,
            "p99": pct.get("99.000000", 0) / 1000.0,
        }
    return runs


def keys(runs, idx):
    return sorted({k[idx] for k in runs})


def table(runs, cpus, dev, targets):
    wls = [w for w in keys(runs, 2) if (cpus, dev, w, targets[0]) in runs]
    head = ["workload"] + [f"{t} MB/s" for t in targets] + ["veil/dm-crypt"] + \
        [f"{t} IOPS" for t in targets] + \
        [f"{t} p50 µs" for t in targets] + [f"{t} p99 µs" for t in targets]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for w in wls:
        r = [runs.get((cpus, dev, w, t)) for t in targets]
        if None in r:
            continue
        c, v = runs.get((cpus, dev, w, "dm-crypt")), runs.get((cpus, dev, w, "veil"))
        ratio = v["mbs"] / c["mbs"] if c and v and c["mbs"] else 0
        row = [w] + [f"{x['mbs']:.1f}" for x in r] + [f"**{ratio:.2f}x**"] + \
            [f"{x['iops']:.0f}" for x in r] + [f"{x['p50']:.0f}" for x in r] + \
            [f"{x['p99']:.0f}" for x in r]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def plot(runs, res, cpus, dev, targets):
    wls = [w for w in keys(runs, 2) if (cpus, dev, w, targets[0]) in runs]
    name = f"fio-{dev}-{cpus}cpu.png"
    grouped_bars(os.path.join(res, name), wls,
                 [(t, [runs.get((cpus, dev, w, t), {"mbs": 0})["mbs"] for w in wls]) for t in targets],
                 "MB/s (log scale)", f"fio on {dev}, {cpus} vCPU(s), QEMU TCG guest", log=True)
    return name


def plot_scaling(runs, res):
    wls = [w for w in keys(runs, 2) if (1, "brd", w, "veil") in runs and (2, "brd", w, "veil") in runs]
    series = []
    for cpus in (1, 2):
        vals = []
        for w in wls:
            c, v = runs[(cpus, "brd", w, "dm-crypt")], runs[(cpus, "brd", w, "veil")]
            vals.append(v["mbs"] / c["mbs"] if c["mbs"] else 0)
        series.append((f"{cpus} vCPU", vals))
    grouped_bars(os.path.join(res, "scaling-brd.png"), wls, series, "veil / dm-crypt throughput",
                 "veil vs dm-crypt, aes-xts-plain64 on brd, by vCPU count", hline=1.0)
    return "scaling-brd.png"


def checks(runs):
    out = []

    def ratio(w):
        c, v = runs.get((2, "brd", w, "dm-crypt")), runs.get((2, "brd", w, "veil"))
        return v["mbs"] / c["mbs"] if c and v and c["mbs"] else None

    for w in ("seq-read-1m-qd1", "seq-write-1m-qd1"):
        r = ratio(w)
        if r is not None:
            out.append(f"| {w}, 2 vCPUs, brd, veil/dm-crypt | ≥ 1.70x | {r:.2f}x | {'met' if r >= 1.7 else 'MISSED'} |")
    for w in keys(runs, 2):
        if "4k" in w:
            r = ratio(w)
            if r is not None:
                out.append(f"| {w}, 2 vCPUs, brd, veil/dm-crypt | ≥ 0.95x | {r:.2f}x | {'met' if r >= 0.95 else 'MISSED'} |")
    w = "rand-read-64k-qd1"
    raw, c, v = (runs.get((2, "nullblk", w, t)) for t in ("raw", "dm-crypt", "veil"))
    if raw and c and v:
        added_c = c["p50"] - raw["p50"]
        added_v = v["p50"] - raw["p50"]
        ok = added_v <= added_c / 2
        out.append(f"| {w}, null_blk, p50 added over raw: veil ≤ half of dm-crypt's | ≤ {added_c / 2:.0f} µs | "
                   f"{added_v:.0f} µs (dm-crypt {added_c:.0f} µs) | {'met' if ok else 'MISSED'} |")
    return "\n".join(["| goal | target | measured | |", "|---|---|---|---|"] + out)


def main():
    res = sys.argv[1]
    runs = load(res)
    if not runs:
        sys.exit("report: no fio results")
    parts = ["# fio: raw vs dm-crypt vs veil\n",
             "Made by `make bench` (bench/run); one guest boot per vCPU count, "
             "all targets in the same boot, same cipher and key. Throughput in MB/s "
             "(10^6 bytes/s), total latency (submission + completion) percentiles in µs.\n",
             "## Goals (issue 3)\n", checks(runs), ""]
    for cpus in sorted(keys(runs, 0), reverse=True):
        for dev in keys(runs, 1):
            targets = [t for t in TARGETS if any(k[:2] == (cpus, dev) and k[3] == t for k in runs)]
            if not targets:
                continue
            desc = "brd ramdisk, aes-xts-plain64" if dev == "brd" else \
                "null_blk, 100 µs completion delay, aes-ctr-plain64"
            parts.append(f"## {desc}, {cpus} vCPU(s)\n")
            parts.append(table(runs, cpus, dev, targets))
            parts.append(f"\n![{dev} {cpus} cpu]({plot(runs, res, cpus, dev, targets)})\n")
    if any(k[0] == 1 for k in runs) and any(k[0] == 2 for k in runs):
        parts.append("## Scaling\n")
        parts.append(f"![scaling]({plot_scaling(runs, res)})\n")
    for env in sorted(glob.glob(os.path.join(res, "env-*.txt"))):
        with open(env) as f:
            parts.append(f"## Environment and veil counters ({os.path.basename(env)})\n\n```\n{f.read().strip()}\n```\n")
    with open(os.path.join(res, "fio.md"), "w") as f:
        f.write("\n".join(parts) + "\n")
    print("\n".join(parts[:5]))
    print(f"report: {os.path.join(res, 'fio.md')}")


if __name__ == "__main__":
    main()
