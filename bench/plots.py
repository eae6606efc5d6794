# SPDX-License-Identifier: GPL-2.0
"""Grouped bar charts for the bench reports."""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def grouped_bars(path, groups, series, ylabel, title, hline=None, log=False):
    """Save a bar chart: one group per name in groups, one bar per series.

    series is a list of (label, values), values in the order of groups.
    """
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / max(len(series), 1)
    for i, (name, vals) in enumerate(series):
        ax.bar([x + i * width for x in range(len(groups))], vals, width, label=name)
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
