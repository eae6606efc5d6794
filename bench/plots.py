# SPDX-License-Identifier: GPL-2.0
"""Grouped bar charts for the bench reports."""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def grouped_bars(path, groups, series, ylabel, title, hline=None, log=False):
    """Save a bar chart: one group per name in groups, one bar per series.

    series is a list of (label, values) or (label, values, (lows, highs)),
    values in the order of groups; lows and highs draw error bars (the
    range over rounds).
    """
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / max(len(series), 1)
    for i, entry in enumerate(series):
        name, vals = entry[0], entry[1]
        err = None
        if len(entry) > 2:
            lows, highs = entry[2]
            err = [[max(v - lo, 0) for v, lo in zip(vals, lows)],
                   [max(hi - v, 0) for v, hi in zip(vals, highs)]]
        ax.bar([x + i * width for x in range(len(groups))], vals, width, label=name,
               yerr=err, capsize=2 if err else 0)
    if log:
        ax.set_yscale("log")
    if hline is not None:
        ax.axhline(hline, color="grey", lw=0.8)
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(groups))])
    ax.set_xticklabels(groups, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
