"""Figures of the nanoTransport reproduction (Arslan thesis Fig. 3.2), matplotlib only.

Usage: python3 -m fabriclab.repro_nanotransport --out DIR fig3.2a=fig3_2.csv fig3.2b=fig3_2.csv

Both panels read the union of the two sweeps (NDP and Homa-Tr with trimming, Homa drop-tail):
one row per protocol and data buffer. Each writes DIR/<fig>.png, .svg and the plotted rows as .csv.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fabriclab.plot import ERR, err, figures_main, ok, save  # noqa: E402

PROTOCOLS = ["ndp", "homa", "homa_tr"]
LABEL = {"ndp": "NDP", "homa": "Homa", "homa_tr": "Homa-Tr"}
COLOR = {"ndp": "#2ca02c", "homa": "#1f77b4", "homa_tr": "#d62728"}


def _bars(rows, ax, column, scale, ylabel):
    buffers = sorted({r["data_buffer_bytes"] for r in rows}, reverse=True)
    width = 0.8 / len(PROTOCOLS)
    for k, p in enumerate(PROTOCOLS):
        pts = [next((r for r in rows if r["protocol"] == p and r["data_buffer_bytes"] == b), {}) for b in buffers]
        ys = [r[column] * scale if r else 0 for r in pts]
        ax.bar([i + (k - 1) * width for i in range(len(buffers))], ys, width, label=LABEL[p], color=COLOR[p],
               yerr=err(pts, column, lambda v: v * scale), error_kw=ERR)
    ax.set_xticks(range(len(buffers)))
    ax.set_xticklabels(["%g KB buffer" % (b / 1e3) for b in buffers])
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    return buffers


def fig_queue(rows, out):
    rows = ok(rows)
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.8))
    _bars(rows, axes[0], "tor_queue_max_bytes", 1e-3, "max bottleneck queue (KB)")
    _bars(rows, axes[1], "tor_queue_mean_bytes", 1e-3, "time-mean bottleneck queue (KB)")
    cols = ["protocol", "data_buffer_bytes", "tor_queue_max_bytes", "tor_queue_mean_bytes", "drops", "trims"]
    save(fig, out, "fig3.2a", rows, cols, "Fig. 3.2a: bottleneck queue under the 10-to-1 incast at 200 Gb/s")


def fig_slowdown(rows, out):
    rows = ok(rows)
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.8))
    _bars(rows, axes[0], "slowdown_all_mean", 1, "mean message slowdown")
    _bars(rows, axes[1], "slowdown_all_p99", 1, "p99 (largest) message slowdown")
    for ax in axes:
        ax.set_yscale("log")
    cols = ["protocol", "data_buffer_bytes", "slowdown_all_mean", "slowdown_all_p50", "slowdown_all_p99", "drops",
            "trims"]
    save(fig, out, "fig3.2b", rows, cols, "Fig. 3.2b: message slowdown under the 10-to-1 incast at 200 Gb/s")


FIGURES = {"fig3.2a": fig_queue, "fig3.2b": fig_slowdown}


def main(argv=None):
    figures_main(FIGURES, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
