#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a bench run's json/*.json (fio) into fio.md and PNG plots.

File names are <cpus>-<device>-<target>-<workload>-r<round>.json. Every
figure is the median over the rounds, with the range (min-max) next to it.
"""
import glob
import json
import os
import re
import statistics
import sys

from plots import grouped_bars

TARGETS = ["raw", "dm-crypt", "dm-crypt-nowq", "dm-crypt-hipri", "veil",
           "veil-nowq", "veil-nomask", "veil-nofan", "veil-no-ahead", "veil-ahead-1m"]
CRYPTS = ["dm-crypt", "dm-crypt-nowq", "dm-crypt-hipri"]
LABEL = {"dm-crypt": "dm-crypt default", "dm-crypt-nowq": "dm-crypt no_*_workqueue",
         "dm-crypt-hipri": "dm-crypt high_priority"}


def load(res):
    """{(cpus, dev, workload, target): [{mbs, iops, p50, p99} per round]}"""
    runs = {}
    for path in sorted(glob.glob(os.path.join(res, "json", "*.json"))):
        name = os.path.basename(path)[:-5]
        m = re.match(r"(.*)-r(\d+)$", name)
        rnd = int(m.group(2)) if m else 1
        name = m.group(1) if m else name
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
        run = {
            "round": rnd,
            "mbs": side["bw_bytes"] / 1e6,
            "iops": side["iops"],
            "p50": pct.get("50.000000", 0) / 1000.0,
            "p99": pct.get("99.000000", 0) / 1000.0,
        }
        run.update(cpu_share(path[:-5] + ".cpu", run["mbs"]))
        runs.setdefault((int(cpus), dev, wl, target), []).append(run)
    return runs


def cpu_share(path, mbs):
    """From guest-bench.sh's .cpu file: the vCPUs' busy share (percent of
    one vCPU), the vCPU time per MB moved (µs), and for veil its cipher's
    time per MB through the cipher (µs); {} for a run without the file."""
    try:
        with open(path) as f:
            fields = dict(kv.split("=") for kv in f.read().split())
    except OSError:
        return {}
    out = {"busy": float(fields["busy_pct"])}
    if mbs:
        out["cpu_us_mb"] = out["busy"] / 100 / mbs * 1e6
    if int(fields.get("cipher_bytes", 0)):
        out["cipher_us_mb"] = int(fields["cipher_ns"]) / int(fields["cipher_bytes"]) * 1e3
        chunks = {w: int(fields[f"chunks_{w}"]) for w in ("submitter", "queue", "helper")}
        total = sum(chunks.values())
        out.update({f"{w}_pct": 100 * n / total for w, n in chunks.items() if total})
    return out


def med(rounds, field):
    return statistics.median(r[field] for r in rounds)


def rng(rounds, field):
    vals = [r[field] for r in rounds]
    return min(vals), max(vals)


def cell(rounds, field, fmt="{:.1f}"):
    """Median (range) of field over the rounds that have it, or "-"."""
    rounds = [r for r in rounds or [] if field in r]
    if not rounds:
        return "-"
    lo, hi = rng(rounds, field)
    text = fmt.format(med(rounds, field))
    return text if len(rounds) < 2 else f"{text} ({fmt.format(lo)}–{fmt.format(hi)})"


def keys(runs, idx):
    return sorted({k[idx] for k in runs})


def workloads(runs, cpus, dev):
    order = ["seq-read-1m-qd1", "seq-write-1m-qd1", "seq-read-512k-qd1", "seq-write-512k-qd1",
             "rand-read-128k-qd1", "rand-read-4k-qd1", "rand-write-4k-qd1",
             "rand-read-4k-qd32-1job", "rand-read-4k-qd32", "rand-write-4k-qd32",
             "seq-read-1m-qd8", "seq-write-1m-qd8", "seq-read-512k-qd8", "seq-write-512k-qd8",
             "rand-read-64k-qd1", "rand-read-256k-qd1"]
    have = {k[2] for k in runs if k[:2] == (cpus, dev)}
    return [w for w in order if w in have] + sorted(have - set(order))


def best_crypt(runs, cpus, dev, wl):
    """The dm-crypt configuration with the highest median MB/s, and it."""
    best = None
    for t in CRYPTS:
        r = runs.get((cpus, dev, wl, t))
        if r and (best is None or med(r, "mbs") > best[1]):
            best = (t, med(r, "mbs"))
    return best


def paired_ratios(a, b):
    """Per-round ratios a/b (rounds interleave, so round n pairs with n)."""
    bb = {r["round"]: r["mbs"] for r in b}
    return [r["mbs"] / bb[r["round"]] for r in a if bb.get(r["round"])]


def qd1_of_qd8(runs, cpus, dev, w):
    """veil's median at QD1 over its median at QD8 for the same request
    size and direction (the two CPUs' cipher limit), or None."""
    if not w.endswith("-qd1"):
        return None
    v = runs.get((cpus, dev, w, "veil"))
    v8 = runs.get((cpus, dev, w[:-1] + "8", "veil"))
    return med(v, "mbs") / med(v8, "mbs") if v and v8 and med(v8, "mbs") else None


def table(runs, cpus, dev, targets):
    head = ["workload"] + [f"{t} MB/s" for t in targets] + \
        ["best dm-crypt", "veil / best dm-crypt", "per round: median (range)",
         "veil / dm-crypt default",
         "veil QD1 / veil QD8"] + [f"{t} p50 µs" for t in targets]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for w in workloads(runs, cpus, dev):
        r = [runs.get((cpus, dev, w, t)) for t in targets]
        v = runs.get((cpus, dev, w, "veil"))
        best = best_crypt(runs, cpus, dev, w)
        ratio_best = f"**{med(v, 'mbs') / best[1]:.2f}x**" if v and best and best[1] else "-"
        pr = paired_ratios(v, runs.get((cpus, dev, w, best[0]))) if v and best else []
        per_round = (f"{statistics.median(pr):.2f} ({min(pr):.2f}–{max(pr):.2f})"
                     if len(pr) > 1 else "-")
        c = runs.get((cpus, dev, w, "dm-crypt"))
        ratio_def = f"{med(v, 'mbs') / med(c, 'mbs'):.2f}x" if v and c and med(c, "mbs") else "-"
        q = qd1_of_qd8(runs, cpus, dev, w)
        row = [w] + [cell(x, "mbs") for x in r] + \
            [LABEL.get(best[0], "-") if best else "-", ratio_best, per_round, ratio_def,
             f"{q:.2f}" if q else "-"] + \
            [cell(x, "p50", "{:.0f}") for x in r]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def cpu_table(runs, cpus, dev, targets):
    """How busy the vCPUs were per workload and target, the vCPU time per
    MB, and veil's cipher time and chunks; "" for runs without the busy
    share."""
    have = {k[3] for k, v in runs.items() if k[:2] == (cpus, dev) and any("busy" in r for r in v)}
    targets = [t for t in targets if t in have]
    if not targets:
        return ""
    veils = [t for t in targets if t.startswith("veil")]
    where = ("submitter_pct", "queue_pct", "helper_pct")
    head = ["workload"] + [f"{t} busy %" for t in targets] + \
        [f"{t} vCPU µs/MB" for t in targets] + [f"{t} cipher µs/MB" for t in veils] + \
        [f"{t} chunks: submitter / queue / helpers %" for t in veils]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for w in workloads(runs, cpus, dev):
        r = {t: runs.get((cpus, dev, w, t), []) for t in targets}
        split = {t: [x for x in r[t] if where[0] in x] for t in veils}
        row = [w] + [cell(r[t], "busy", "{:.0f}") for t in targets] + \
            [cell(r[t], "cpu_us_mb", "{:.0f}") for t in targets] + \
            [cell(r[t], "cipher_us_mb", "{:.0f}") for t in veils] + \
            [" / ".join(f"{med(split[t], k):.0f}" for k in where) if split[t] else "-"
             for t in veils]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def plot_ratios(runs, res, cpus, dev):
    wls = [w for w in workloads(runs, cpus, dev) if (cpus, dev, w, "veil") in runs]
    series = []
    for t in CRYPTS:
        if not any((cpus, dev, w, t) in runs for w in wls):
            continue
        vals, lows, highs = [], [], []
        for w in wls:
            pr = paired_ratios(runs[(cpus, dev, w, "veil")], runs.get((cpus, dev, w, t), []))
            vals.append(statistics.median(pr) if pr else 0)
            lows.append(min(pr) if pr else 0)
            highs.append(max(pr) if pr else 0)
        series.append((f"veil / {LABEL[t]}", vals, (lows, highs)))
    name = f"ratio-{dev}-{cpus}cpu.png"
    grouped_bars(os.path.join(res, name), wls, series, "veil throughput / dm-crypt's",
                 f"veil over each dm-crypt configuration, {dev}, {cpus} vCPU(s) "
                 "(median, range over rounds)", hline=1.0)
    return name


def plot_latency(runs, res, cpus, dev, targets):
    wls = [w for w in workloads(runs, cpus, dev) if (cpus, dev, w, targets[0]) in runs]
    series = []
    for t in targets:
        rs = [runs.get((cpus, dev, w, t)) for w in wls]
        series.append((t, [med(r, "p50") if r else 0 for r in rs],
                       ([rng(r, "p50")[0] if r else 0 for r in rs],
                        [rng(r, "p50")[1] if r else 0 for r in rs])))
    name = f"p50-{dev}-{cpus}cpu.png"
    grouped_bars(os.path.join(res, name), wls, series, "p50 latency, µs (log scale)",
                 f"median latency on {dev}, {cpus} vCPU(s)", log=True)
    return name


def kernel_major(res):
    try:
        with open(os.path.join(res, "revision.txt")) as f:
            m = re.search(r"kernel: (\d+)\.(\d+)", f.read())
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    except OSError:
        return (0, 0)


def mask_counters(res):
    """{dev: (aead_mask_hit, aead_mask_miss)} from the veil status lines in env-2.txt."""
    out = {}
    try:
        with open(os.path.join(res, "env-2.txt")) as f:
            for m in re.finditer(r"^(aead[jd]) veil: .*aead_mask_hit=(\d+) aead_mask_miss=(\d+)",
                                 f.read(), re.M):
                out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    except OSError:
        pass
    return out


def goals(runs, res):
    out = []
    kmaj = kernel_major(res)
    large_goal = 1.5 if kmaj < (6, 12) else 1.2

    def line(goal, target, measured, ok):
        out.append(f"| {goal} | {target} | {measured} | {'met' if ok else 'MISSED'} |")

    for dev in ("brd", "nullblk", "async", "aeadj", "aeadd"):
        for w in workloads(runs, 2, dev):
            v, best = runs.get((2, dev, w, "veil")), best_crypt(runs, 2, dev, w)
            if not v or not best:
                continue
            r = med(v, "mbs") / best[1]
            pr = paired_ratios(v, runs[(2, dev, w, best[0])])
            spread = f" (per round {min(pr):.2f}–{max(pr):.2f})" if len(pr) > 1 else ""
            line(f"{dev} {w}: veil / best dm-crypt ({LABEL[best[0]]})", "≥ 1.00x",
                 f"{r:.2f}x{spread}", r >= 1.0)
    for w in ("seq-read-1m-qd1", "seq-write-1m-qd1", "seq-read-512k-qd1", "seq-write-512k-qd1"):
        v, best = runs.get((2, "brd", w, "veil")), best_crypt(runs, 2, "brd", w)
        if v and best:
            r = med(v, "mbs") / best[1]
            line(f"brd {w}: veil / best dm-crypt", f"≥ {large_goal:.2f}x", f"{r:.2f}x",
                 r >= large_goal)
        q = qd1_of_qd8(runs, 2, "brd", w)
        if q:
            line(f"brd {w}: veil / veil at QD8 (the CPUs' cipher limit)", "≥ 0.95",
                 f"{q:.2f}", q >= 0.95)
    # The machinery alone: the null cipher against dm-crypt without its
    # workqueues, throughput and 4 KiB latency.
    nowq = "dm-crypt-nowq"
    for w in ("rand-read-4k-qd1", "rand-write-4k-qd1", "seq-read-1m-qd1", "seq-write-1m-qd1"):
        v, c = runs.get((2, "nullcipher", w, "veil")), runs.get((2, "nullcipher", w, nowq))
        if v and c:
            r = med(v, "mbs") / med(c, "mbs")
            line(f"null cipher {w}: veil / dm-crypt no_*_workqueue, MB/s", "≥ 1.00x",
                 f"{r:.2f}x", r >= 1.0)
            if "4k" in w:
                line(f"null cipher {w}: veil's p50 against dm-crypt no_*_workqueue's",
                     f"≤ {med(c, 'p50'):.0f} µs", f"{med(v, 'p50'):.0f} µs",
                     med(v, "p50") <= med(c, "p50"))
    masks = mask_counters(res)
    for dev in ("aeadj", "aeadd"):
        w = "seq-write-1m-qd1"
        v, best = runs.get((2, dev, w, "veil")), best_crypt(runs, 2, dev, w)
        if v and best:
            r = med(v, "mbs") / best[1]
            line(f"{dev} {w}: veil / best dm-crypt", "≥ 1.50x", f"{r:.2f}x", r >= 1.5)
        # Only for a section that ran (BENCH_DEVICES may leave it out).
        if dev in masks and any(k[1] == dev for k in runs):
            hit, miss = masks[dev]
            line(f"{dev}: writes' sectors through a write mask (aead_mask_hit of hit + miss)",
                 "> 0", f"{hit} of {hit + miss}", hit > 0)
    w = "rand-read-64k-qd1"
    raw, c, v = (runs.get((2, "nullblk", w, t)) for t in ("raw", "dm-crypt", "veil"))
    if raw and c and v:
        added_c = med(c, "p50") - med(raw, "p50")
        added_v = med(v, "p50") - med(raw, "p50")
        line(f"null_blk CTR {w}: veil's added p50 over raw ≤ 0.4 of dm-crypt's",
             f"≤ {0.4 * added_c:.0f} µs", f"{added_v:.0f} µs (dm-crypt {added_c:.0f} µs)",
             added_v <= 0.4 * added_c)
    return "\n".join(["| goal (2 vCPUs) | target | measured | |", "|---|---|---|---|"] + out)


def main():
    res = sys.argv[1]
    runs = load(res)
    if not runs:
        sys.exit("report: no fio results")
    rev = ""
    if os.path.exists(os.path.join(res, "revision.txt")):
        with open(os.path.join(res, "revision.txt")) as f:
            rev = f.read().strip()
    nrounds = max(len(v) for v in runs.values())
    parts = ["# fio: raw vs dm-crypt vs veil\n",
             "Made by `make bench` (bench/run): one guest boot per vCPU count, all "
             f"targets in the same boot, same cipher and key, {nrounds} interleaved "
             "round(s): each round runs every workload on every target in turn, the "
             "targets in an order rotated by one each round. Each "
             "figure is the median over the rounds, the range (min–max) in brackets. "
             "Throughput in MB/s (10^6 bytes/s), total latency (submission + "
             "completion) in µs. \"best dm-crypt\" is, per workload, the dm-crypt "
             "configuration with the highest median; \"per round\" is veil over it "
             "in each round (the same minute of the host), median and range: "
             "a range across 1.00 means the rounds do not tell the two apart.\n",
             "```\n" + rev + "\n```\n",
             "## Goals\n", goals(runs, res), ""]
    for cpus in sorted(keys(runs, 0), reverse=True):
        for dev in keys(runs, 1):
            targets = [t for t in TARGETS if any(k[:2] == (cpus, dev) and k[3] == t for k in runs)]
            if not targets:
                continue
            desc = {"brd": "brd ramdisk, aes-xts-plain64",
                    "nullcipher": "brd ramdisk, the null cipher (cipher_null-ecb): "
                                  "the targets' machinery alone",
                    "nullblk": "null_blk, 100 µs completion delay, aes-ctr-plain64",
                    "async": "brd ramdisk, an async driver: "
                             "capi:cryptd(xts(ecb(aes-generic)))-plain64",
                    "aeadj": "dm-integrity (journal) on brd, capi:gcm(aes)-random",
                    "aeadd": "dm-integrity (direct, no journal) on brd, "
                             "capi:gcm(aes)-random"}.get(dev, dev)
            parts.append(f"## {desc}, {cpus} vCPU(s)\n")
            parts.append(table(runs, cpus, dev, targets))
            busy = cpu_table(runs, cpus, dev, targets)
            if busy:
                parts.append(f"\nvCPU time, {cpus} vCPU(s): how busy the vCPUs were in the "
                             "middle of each run (percent of one vCPU, all CPUs together: "
                             f"{cpus * 100} is all of them), the vCPU time per MB "
                             "moved, veil's cipher time per MB through its "
                             "cipher, and where veil's chunks ran: in the submitter (its "
                             "map or its read's completion), on the crypt queue, by "
                             "helpers (medians; from its status over each run).\n")
                parts.append(busy)
            parts.append(f"\n![ratios {dev} {cpus} cpu]({plot_ratios(runs, res, cpus, dev)})\n")
            parts.append(f"![p50 {dev} {cpus} cpu]({plot_latency(runs, res, cpus, dev, targets)})\n")
    for env in sorted(glob.glob(os.path.join(res, "env-*.txt"))):
        with open(env) as f:
            parts.append(f"## Environment and veil counters ({os.path.basename(env)})\n\n```\n{f.read().strip()}\n```\n")
    with open(os.path.join(res, "fio.md"), "w") as f:
        f.write("\n".join(parts) + "\n")
    print("\n".join(parts[:6]))
    print(f"report: {os.path.join(res, 'fio.md')}")


if __name__ == "__main__":
    main()
