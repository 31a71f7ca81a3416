"""PayDebt's figures (Figs. 8-16) from `fabriclab repro paydebt`'s sweep tables."""

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fabriclab.plot import ERR, err, errorbars, figures_main, ok, per_seed, save  # noqa: E402

PROTOCOLS = ["paydebt", "dcqcn", "hpcc", "homa", "expresspass", "homa_aeolus", "expresspass_aeolus"]
LABEL = {"paydebt": "PayDebt", "dcqcn": "DCQCN", "hpcc": "HPCC", "homa": "Homa", "expresspass": "ExpressPass",
         "homa_aeolus": "Homa(A)", "expresspass_aeolus": "EP(A)"}
# NDP is compared on the non-blocking fabric only (Fig. 14c).
PROTOCOLS.append("ndp")
LABEL["ndp"] = "NDP"
COLS = ["shared_buffer_max_bytes", "fct_us_all_mean", "fct_us_all_p99", "fct_us_small_mean", "fct_us_small_p99",
        "drops", "packets_sent", "pfc_pauses", "stable"]


def kb(r):
    return (r.get("shared_buffer_max_bytes") or 0) / 1e3


def buffer_vs_fct(name, title):
    """Fig. 9: per protocol, the max buffer (x) against avg and p99 FCT (y) of all and of small flows."""
    def draw(rows, out):
        rows = ok(rows)
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
        for ax, group in zip(axes, ("small", "all")):
            for p in PROTOCOLS:
                r = next((r for r in rows if r.get("protocol.name") == p), None)
                if r is None:
                    continue
                mean, p99 = r.get("fct_us_%s_mean" % group), r.get("fct_us_%s_p99" % group)
                line, = ax.plot([kb(r), kb(r)], [mean or 0, p99 or 0], "-", lw=3, alpha=0.4)
                ax.plot([kb(r)], [mean or 0], "o", color=line.get_color(), label=LABEL[p])
                ax.plot([kb(r)], [p99 or 0], "^", color=line.get_color())
                for stat, y in (("mean", mean), ("p99", p99)):
                    errorbars(ax, [kb(r)], [y or 0], [r], "fct_us_%s_%s" % (group, stat), None,
                              "shared_buffer_max_bytes", lambda v: v / 1e3, color=line.get_color())
            ax.set_yscale("log")
            ax.set_xlabel("max switch buffer (KB)")
            ax.set_ylabel("FCT (us), %s flows: o avg, ^ p99" % ("0-100 KB" if group == "small" else "all"))
        axes[0].legend(fontsize=7)
        save(fig, out, name, rows, ["protocol.name"] + COLS, title)
    return draw


def by_param(name, key, xlabel, title, protocols=True, log_x=False):
    """Max buffer and small-flow avg FCT against `key`, one line per protocol (or one line)."""
    def draw(rows, out):
        rows = ok(rows)
        fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3.2))
        groups = PROTOCOLS if protocols else [None]
        for p in groups:
            rs = sorted((r for r in rows if p is None or r.get("protocol.name") == p), key=lambda r: r[key])
            if not rs:
                continue
            xs = [r[key] for r in rs]
            lab = LABEL.get(p, "PayDebt")
            la, = a.plot(xs, [kb(r) for r in rs], "o-", label=lab)
            lb, = b.plot(xs, [r.get("fct_us_small_mean") or 0 for r in rs], "o-", label=lab)
            errorbars(a, xs, [kb(r) for r in rs], rs, "shared_buffer_max_bytes", lambda v: v / 1e3,
                      color=la.get_color())
            errorbars(b, xs, [r.get("fct_us_small_mean") or 0 for r in rs], rs, "fct_us_small_mean",
                      color=lb.get_color())
        for ax in (a, b):
            ax.set_xlabel(xlabel)
            if log_x:
                ax.set_xscale("log")
        a.set_ylabel("max switch buffer (KB)")
        b.set_ylabel("0-100 KB flows: avg FCT (us)")
        a.legend(fontsize=7)
        save(fig, out, name, rows, [key] + (["protocol.name"] if protocols else []) + COLS, title)
    return draw


def by_label(name, key, title):
    """Fig. 16b: bars of max buffer and small-flow avg FCT per debt mode."""
    def draw(rows, out):
        rows = ok(rows)
        fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3.2))
        labels = [r[key] for r in rows]
        a.bar(labels, [kb(r) for r in rows], yerr=err(rows, "shared_buffer_max_bytes", lambda v: v / 1e3),
              error_kw=ERR)
        b.bar(labels, [r.get("fct_us_small_mean") or 0 for r in rows], yerr=err(rows, "fct_us_small_mean"),
              error_kw=ERR)
        a.set_ylabel("max switch buffer (KB)")
        b.set_ylabel("0-100 KB flows: avg FCT (us)")
        save(fig, out, name, rows, [key] + COLS, title)
    return draw


def testbed(name, dists, title):
    """Fig. 8: small-flow avg/p99 FCT and drop ratio per variant, drop-less (16 MB) vs 128 KB per queue."""
    variants = [("paydebt", 8, "PayDebt"), ("homa", 8, "Homa"), ("homa", 2, "Homa 2q")]
    modes = [(16000000, "16MB"), (128000, "128KB/q")]

    def draw(rows, out):
        rows = ok(rows)
        fig, axes = plt.subplots(1, len(dists), figsize=(4.2 * len(dists), 3.2), squeeze=False)
        for ax, (dist, dname) in zip(axes[0], dists):
            labels, means, p99s, loss, used = [], [], [], [], []
            for q, qname in modes:
                for p, n, vname in variants:
                    r = next((r for r in rows if r.get("protocol.name") == p and r.get("network.priorities") == n
                              and r.get("network.queue_buffer_bytes") == q
                              and (dist is None or r.get("workload.size_dist") == dist)), None)
                    if r is None:
                        continue
                    used.append(r)
                    labels.append("%s\n%s" % (vname, qname))
                    means.append(r.get("fct_us_small_mean") or 0)
                    p99s.append(r.get("fct_us_small_p99") or 0)
                    loss.append(per_seed(r, "drop_ratio_pct",
                                         lambda s: 100 * (s.get("drops") or 0) / max(s.get("packets_sent") or 1, 1)))
            xs = range(len(labels))
            ax.bar([x - 0.2 for x in xs], means, 0.4, label="avg", color="#1f77b4",
                   yerr=err(used, "fct_us_small_mean"), error_kw=ERR)
            ax.bar([x + 0.2 for x in xs], p99s, 0.4, label="p99", color="#aec7e8",
                   yerr=err(used, "fct_us_small_p99"), error_kw=ERR)
            ax.set_yscale("log")
            ax.set_xticks(list(xs))
            ax.set_xticklabels(labels, fontsize=6)
            ax.set_ylabel("0-100 KB flows: FCT (us)")
            ax.set_title(dname, fontsize=8)
            tw = ax.twinx()
            tw.plot(list(xs), loss, "v", color="#d62728", label="drop ratio")
            errorbars(tw, list(xs), loss, used, "drop_ratio_pct", color="#d62728")
            tw.set_ylabel("drop ratio (%)")
            ax.legend(fontsize=6, loc="upper left")
        cols = ["network.queue_buffer_bytes", "workload.size_dist", "protocol.name", "network.priorities"] + COLS
        save(fig, out, name, rows, cols, title)
    return draw


def fairness(rows, out):
    """Fig. 11: per-flow throughput over time (100 us bins), one panel per protocol
    (with several seeds: the first seed's series, the mean Jain index)."""
    fig, axes = plt.subplots(1, len(rows), figsize=(4.5 * len(rows), 3), squeeze=False)
    for ax, r in zip(axes[0], rows):
        p = r["protocol.name"]
        for i in range(8):
            ys = [float(v) for v in str(r.get("flow%d_gbps" % i) or "").split()]
            ax.plot([0.1 * k for k in range(len(ys))], ys, linewidth=0.8, label="flow %d" % i)
        shown = "" if (r.get("seeds") or 1) < 2 else ", series of seed %g" % r.seed_rows[0].get("run.seed")
        ax.set_title("%s (Jain %.3f%s)" % (LABEL.get(p, p), r.get("jain_mean") or 0, shown), fontsize=8)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("throughput (Gb/s)")
    axes[0][0].legend(fontsize=6, ncol=2)
    save(fig, out, "fig11", rows, ["protocol.name", "jain_mean", "jain_min", "steady_bins"],
         "Fig. 11: 8 flows join and leave one bottleneck")


def _bins(rows):
    """The size bins of rows with `output.fct_bins_bytes` columns, in size order:
    (key, low, high) with `fct_us_<key>_mean` etc. (low exclusive, high None for the open bin)."""
    bounds = sorted({int(m.group(1)) for r in rows for c in r for m in [re.match(r"fct_us_le_(\d+)_mean$", c)] if m})
    out, lo = [], 0
    for hi in bounds:
        out.append(("le_%d" % hi, lo, hi))
        lo = hi
    if bounds:
        out.append(("gt_%d" % bounds[-1], bounds[-1], None))
    return out


def _size(b):
    if b >= 1e6:
        return "%g MB" % (b / 1e6)
    return "%g KB" % (b / 1e3) if b >= 1000 else "%d B" % b


def _bin_label(lo, hi):
    """A bin by its upper bound (it starts just above the previous one's)."""
    return "> %s" % _size(lo) if hi is None else "<= %s" % _size(hi)


def fct_by_size(name, title, up_to=None):
    """Figs. 9d, 9e and 10: avg (top) and p99 (bottom) FCT per flow-size bin, one line
    per protocol; bins up to `up_to` bytes when given. A bin with no completed flow
    in a run is left out of that protocol's line."""
    def draw(rows, out):
        rows = ok(rows)
        bins = [b for b in _bins(rows) if up_to is None or (b[2] is not None and b[2] <= up_to)]
        fig, axes = plt.subplots(2, 1, figsize=(7, 5.2), sharex=True)
        xs = list(range(len(bins)))
        for p in PROTOCOLS:
            r = next((r for r in rows if r.get("protocol.name") == p), None)
            if r is None:
                continue
            for ax, stat in zip(axes, ("mean", "p99")):
                cols = ["fct_us_%s_%s" % (k, stat) for k, _, _ in bins]
                pts = [(x, r.get(c), c) for x, c in zip(xs, cols)
                       if r.get(c) and r.get("fct_us_%s_count" % bins[x][0])]
                if not pts:
                    continue
                line, = ax.plot([x for x, _, _ in pts], [y for _, y, _ in pts], "o-", ms=3, label=LABEL[p])
                for x, y, c in pts:
                    errorbars(ax, [x], [y], [r], c, color=line.get_color())
        for ax, stat in zip(axes, ("avg", "p99")):
            ax.set_yscale("log")
            ax.set_ylabel("%s FCT (us)" % stat)
        axes[1].set_xticks(xs)
        axes[1].set_xticklabels([_bin_label(lo, hi) for _, lo, hi in bins], rotation=30, ha="right", fontsize=7)
        axes[1].set_xlabel("flow size (payload bytes)")
        axes[0].legend(fontsize=7, ncol=2)
        cols = ["protocol.name"] + ["fct_us_%s_%s" % (k, s) for k, _, _ in bins for s in ("count", "mean", "p99")]
        save(fig, out, name, rows, cols, title)
    return draw


def token_queue(rows, out):
    """Fig. 11c: PayDebt's token/debt queue at the bottleneck's reverse port over
    time (10 us bins: mean and largest sample), against K_t, with the active flows."""
    ts = [r["time_us"] / 1e3 for r in rows]
    fig, ax = plt.subplots(figsize=(8, 3.2))
    kt = rows[0]["k_t_bytes"] if rows else 0
    ax.plot(ts, [r["token_queue_max_bytes"] for r in rows], lw=0.4, alpha=0.4, color="tab:blue",
            label="token queue, largest sample per 10 us")
    ax.plot(ts, [r["token_queue_bytes"] for r in rows], lw=0.8, color="tab:blue", label="token queue, 10 us mean")
    # The level it oscillates about: the mean over the surrounding 100 us (10 bins).
    level = [sum(r["token_queue_bytes"] for r in rows[max(0, i - 5):i + 5]) / len(rows[max(0, i - 5):i + 5])
             for i in range(len(rows))]
    ax.plot(ts, level, lw=1.2, color="black", label="token queue, 100 us mean")
    ax.axhline(kt, color="tab:red", ls="--", lw=1, label="K_t = 1 BDP (%d B)" % kt)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("token queue (bytes)")
    tw = ax.twinx()
    tw.plot(ts, [r["active_flows"] for r in rows], color="gray", lw=1, drawstyle="steps-post", label="active flows")
    tw.set_ylabel("active flows")
    tw.set_ylim(0, 9)
    tw.grid(False)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = tw.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper right")
    cols = ["time_us", "token_queue_bytes", "token_queue_max_bytes", "port_queue_bytes", "active_flows", "k_t_bytes"]
    save(fig, out, "fig11c", rows, cols, "Fig. 11c: PayDebt's token queue at the bottleneck (lowest seed's run)")


FIGURES = {
    "fig3": buffer_vs_fct("fig3", "Fig. 3: Memcached, non-blocking, load 0.8 of the host links: Homa and Homa(A)"),
    "fig9a": buffer_vs_fct("fig9a", "Fig. 9a: Memcached, 4:1, load 0.8 (wire) of the core"),
    "fig9b": buffer_vs_fct("fig9b", "Fig. 9b: Hadoop, 4:1, load 0.8 of the core"),
    "fig9c": buffer_vs_fct("fig9c", "Fig. 9c: web search, 4:1, load 0.8 of the core"),
    "fig12": by_param("fig12", "workload.load", "load (of the core)", "Fig. 12: web search, load sweep"),
    "fig15": by_param("fig15", "network.shared_buffer.bytes", "shared buffer (bytes)",
                      "Fig. 15: Hadoop, 8 MB / 4 MB / 800 KB buffers", log_x=True),
    "fig16a": by_param("fig16a", "workload.senders", "incast flows (1 BDP each)", "Fig. 16a: incast"),
    "fig16b": by_label("fig16b", "protocol.paydebt.debt", "Fig. 16b: debt timing, Hadoop"),
    "fig16c": by_param("fig16c", "protocol.paydebt.k_d_bdp", "K_d (x BDP)", "Fig. 16c: K_d, Hadoop", protocols=False),
    "fig16d": by_param("fig16d", "protocol.paydebt.k_t_bdp", "K_t (x BDP)", "Fig. 16d: K_t, Hadoop", protocols=False),
    "fig8": testbed("fig8", [("wkb", "Hadoop"), ("wkc", "web search")], "Fig. 8: simulated testbed (2:1 dumbbell)"),
    "fig8c": testbed("fig8c", [(None, "Memcached")], "Fig. 8: simulated testbed (2:1 dumbbell), Memcached"),
    "fig11": fairness,
    "fig11c": token_queue,
    "fig9d": fct_by_size("fig9d", "Fig. 9d: Memcached, 4:1, load 0.8: FCT by flow size"),
    "fig9e": fct_by_size("fig9e", "Fig. 9e: web search, 4:1, load 0.8: FCT by flow size"),
    "fig10": fct_by_size("fig10", "Fig. 10: web search, 4:1, load 0.8: FCT of flows up to 100 KB by size",
                         up_to=100000),
    "fig13": by_param("fig13", "workload.load", "load (of the core)", "Fig. 13: web search at 100 Gbps, load sweep"),
    "fig14a": buffer_vs_fct("fig14a", "Fig. 14a: web search, 2:1, load 0.8 of the core"),
    "fig14b": buffer_vs_fct("fig14b", "Fig. 14b: web search, 8:1, load 0.8 of the core"),
    "fig14c": buffer_vs_fct("fig14c", "Fig. 14c: web search, non-blocking, load 0.8"),
}


def main(argv=None):
    figures_main(FIGURES, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
