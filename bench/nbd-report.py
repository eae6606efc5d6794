#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn make bench-nbd's fio JSON into nbd.md and a latency plot.

Devices are nbd<delay>_<cipher> (nbd<delay>_raw for the raw NBD device);
every figure is the median over the rounds with the range next to it. The
added latency of a target is its p50 minus the raw device's p50 at the
same delay and request size.
"""
import os
import re
import statistics
import sys

from plots import grouped_bars
from report import CRYPTS, LABEL, cell, load, med

SIZES = ["rand-read-4k-qd1", "rand-read-64k-qd1", "rand-read-1m-qd1"]


def delay_us(d):
    """A netem delay ("200us", "2ms", "1s") in µs."""
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)?", d)
    return float(m.group(1)) * {"us": 1, "ms": 1000, "s": 1000000, None: 1}[m.group(2)]


def delays(runs):
    return sorted({re.match(r"nbd(.*)_", k[1]).group(1) for k in runs}, key=delay_us)


def added(runs, delay, cipher, wl, target):
    raw = runs.get((2, f"nbd{delay}_raw", wl, "raw"))
    t = runs.get((2, f"nbd{delay}_{cipher}", wl, target))
    return med(t, "p50") - med(raw, "p50") if raw and t else None


def best_added(runs, delay, cipher, wl):
    """The dm-crypt configuration that adds the least p50, and what it adds."""
    best = None
    for t in CRYPTS:
        a = added(runs, delay, cipher, wl, t)
        if a is not None and (best is None or a < best[1]):
            best = (t, a)
    return best


def noise(runs, delay, wl):
    """The raw device's p50 spread over the rounds: added latency below it
    is not measured."""
    raw = runs.get((2, f"nbd{delay}_raw", wl, "raw"))
    if not raw:
        return 0
    vals = [r["p50"] for r in raw]
    return max(vals) - min(vals)


def best_mbs(runs, delay, cipher, wl):
    vals = [med(r, "mbs") for r in (runs.get((2, f"nbd{delay}_{cipher}", wl, t)) for t in CRYPTS) if r]
    return max(vals) if vals else None


def table(runs, delay, cipher):
    crypts = [t for t in CRYPTS if any((2, f"nbd{delay}_{cipher}", w, t) in runs for w in SIZES)]
    veils = [t for t in ("veil", "veil-ahead-1m")
             if any((2, f"nbd{delay}_{cipher}", w, t) in runs for w in SIZES)]
    head = ["request", "raw p50 µs"] + [f"{t} p50 µs (added)" for t in crypts + veils] + \
        ["veil's added / best dm-crypt's", "veil MB/s", "best dm-crypt MB/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for w in SIZES:
        raw = runs.get((2, f"nbd{delay}_raw", w, "raw"))
        row = [w.split("-")[2], cell(raw, "p50", "{:.0f}")]
        for t in crypts + veils:
            r = runs.get((2, f"nbd{delay}_{cipher}", w, t))
            a = added(runs, delay, cipher, w, t)
            row.append(f"{cell(r, 'p50', '{:.0f}')} ({a:+.0f})" if a is not None else "-")
        va, ba = added(runs, delay, cipher, w, "veil"), best_added(runs, delay, cipher, w)
        if va is None or not ba:
            row.append("-")
        elif ba[1] <= noise(runs, delay, w):
            row.append(f"- ({LABEL[ba[0]]} adds {ba[1]:+.0f}, within the raw device's spread)")
        else:
            row.append(f"**{va / ba[1]:.2f}** ({LABEL[ba[0]]})")
        v = runs.get((2, f"nbd{delay}_{cipher}", w, "veil"))
        row += [cell(v, "mbs"), f"{best_mbs(runs, delay, cipher, w) or 0:.1f}"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def goal_ctr(runs, d, w, veil, out):
    """veil's added p50 against dm-crypt's default table's (the goal's
    comparison), the best dm-crypt configuration's as information."""
    va, ca = added(runs, d, "ctr", w, veil), added(runs, d, "ctr", w, "dm-crypt")
    if va is None or ca is None:
        return
    ba = best_added(runs, d, "ctr", w)
    name = f"{d} CTR {w}: {veil}'s added p50 ≤ 10% of dm-crypt's"
    best = f"; best dm-crypt ({LABEL[ba[0]]}) {ba[1]:+.0f} µs" if ba else ""
    if ca <= noise(runs, d, w):
        out.append(f"| {name} | - | {veil} {va:+.0f} µs, dm-crypt {ca:+.0f} µs{best}: within the raw "
                   f"device's spread of {noise(runs, d, w):.0f} µs | not measurable |")
        return
    ok = va <= 0.1 * ca
    out.append(f"| {name} | ≤ {0.1 * ca:.0f} µs | {va:+.0f} µs = {va / ca:.2f} of dm-crypt's "
               f"{ca:+.0f} µs{best} | {'met' if ok else 'MISSED'} |")


def goals(runs):
    out = ["| goal (2 vCPUs) | target | measured | |", "|---|---|---|---|"]
    for d in delays(runs):
        for w in SIZES:
            if delay_us(d) == 2000:
                goal_ctr(runs, d, w, "veil", out)
                if (2, f"nbd{d}_ctr", w, "veil-ahead-1m") in runs:
                    goal_ctr(runs, d, w, "veil-ahead-1m", out)
            v = runs.get((2, f"nbd{d}_xts", w, "veil"))
            b = best_mbs(runs, d, "xts", w)
            if v and b:
                r = med(v, "mbs") / b
                out.append(f"| {d} XTS {w}: veil / best dm-crypt MB/s | ≥ 1.00x | {r:.2f}x | "
                           f"{'met' if r >= 1.0 else 'MISSED'} |")
    return "\n".join(out)


def plot(runs, res):
    cats, series = [], {}
    for d in delays(runs):
        for c in ("ctr", "xts"):
            for w in SIZES:
                cats.append(f"{d} {c} {w.split('-')[2]}")
                for t in CRYPTS + ["veil", "veil-ahead-1m"]:
                    a = added(runs, d, c, w, t)
                    series.setdefault(t, []).append(max(a, 0) if a is not None else 0)
    ser = [(LABEL.get(t, t), v) for t, v in series.items() if any(v)]
    grouped_bars(os.path.join(res, "nbd-added-p50.png"), cats, ser,
                 "added p50 over raw NBD, µs", "latency added to NBD reads at QD1 (median of rounds)")
    return "nbd-added-p50.png"


def main():
    res = sys.argv[1]
    runs = load(res)
    if not runs:
        sys.exit(f"nbd-report: no results in {res}/json")
    parts = ["# NBD reads at QD1: raw, dm-crypt and veil", ""]
    try:
        with open(os.path.join(res, "revision.txt")) as f:
            parts += ["```", f.read().strip(), "```", ""]
    except OSError:
        pass
    parts += ["Made by `make bench-nbd` (bench/nbd-run). Medians of the rounds with the range; "
              "added = p50 minus the raw NBD device's p50 at the same delay and size. netem's "
              "delay is on both ends of the link: a delay of 2ms adds 4 ms to each round trip. "
              "fio's p50 comes from its latency buckets (about 3% wide), so differences below "
              "the raw device's spread between rounds are not measured.", ""]
    for d in delays(runs):
        for c in ("ctr", "xts"):
            parts += [f"## {d}, aes-{c}-plain64", "", table(runs, d, c), ""]
    parts += ["## Goals", "", goals(runs), ""]
    try:
        with open(os.path.join(res, "counters.txt")) as f:
            parts += ["## veil's keystream counters (CTR), per round and delay", "", "```",
                      f.read().strip(), "```", ""]
    except OSError:
        pass
    parts += [f"![added p50]({plot(runs, res)})", ""]
    with open(os.path.join(res, "nbd.md"), "w") as f:
        f.write("\n".join(parts))
    print("\n".join(parts))


if __name__ == "__main__":
    main()
