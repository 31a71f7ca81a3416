"""Figures of the Bolt reproduction (Arslan thesis ch. 4), matplotlib only.

Usage: python3 -m fabriclab.repro_bolt --out DIR table4.1=table4_1.csv table4.2=results.csv
       fig4.2=fig4_2.csv fig4.10=fig4_10.csv fig4.11=fig4_11.csv fig4.12=fig4_12.csv fig4.13=results.csv
       fig4.14=results.csv fig4.15=fig4_15.csv fig4.16=results.csv fig4.17=results.csv

Each writes DIR/<fig>.png, .svg and the plotted rows as .csv.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fabriclab.plot import ERR, err, errorbars, figures_main, ok, per_seed, save  # noqa: E402

LABEL = {"bolt": "Bolt", "swift": "Swift", "dctcp": "DCTCP", "hpcc": "HPCC"}
COLOR = {"bolt": "#d62728", "swift": "#1f77b4", "dctcp": "#ff7f0e", "hpcc": "#2ca02c"}
PAPER_4_1 = {(False, False): 90.46, (True, False): 97.38, (False, True): 92.41, (True, True): 98.54}
PAPER_4_2 = {"swift": (23.543, 7017), "hpcc": (23.066, 5037), "bolt": (13.720, 5000)}
GROUPS = ["A", "B", "C", "D"]


def table41(rows, out):
    fig, ax = plt.subplots(figsize=(4.5, 2.8))
    keys = [(False, False), (True, False), (False, True), (True, True)]
    pts = [next((r for r in rows if (r["protocol.bolt.pru"], r["protocol.bolt.sm"]) == k), {}) for k in keys]
    ours = [100 * r["utilization"] if r else 0 for r in pts]
    xs = range(len(keys))
    ax.bar([x - 0.2 for x in xs], [PAPER_4_1[k] for k in keys], 0.4, label="thesis", color="#999999")
    ax.bar([x + 0.2 for x in xs], ours, 0.4, label="fabriclab", color="#d62728",
           yerr=err(pts, "utilization", lambda v: 100 * v), error_kw=ERR)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(["PRU %s\nSM %s" % ("on" if p else "off", "on" if s else "off") for p, s in keys])
    ax.set_ylabel("utilization (%)")
    ax.set_ylim(80, 101)
    ax.legend(fontsize=7)
    save(fig, out, "table4.1", rows, ["protocol.bolt.pru", "protocol.bolt.sm", "utilization", "first_completion_us",
                                      "last_completion_us"], "Table 4.1: utilization between first and last completion")


def table42(rows, out):
    rows = ok(rows)
    for r in rows:
        per_seed(r, "peak_queuing_ms", lambda s: s["tor_queue_max_bytes"] * 8 / 100e9 * 1e3)
        per_seed(r, "src_gbps", lambda s: (s.get("switch_feedback_bytes") or 0) * 8 / s["sim_time_s"] / 1e9)
    fig, axes = plt.subplots(1, 2, figsize=(6, 2.8))
    protos = [r["protocol"] for r in rows]
    axes[0].bar(protos, [r["peak_queuing_ms"] for r in rows], color=[COLOR.get(p, "k") for p in protos],
                yerr=err(rows, "peak_queuing_ms"), error_kw=ERR)
    axes[0].set_ylabel("peak queuing (ms)")
    axes[1].bar(protos, [r["slowdown_all_p99"] for r in rows], color=[COLOR.get(p, "k") for p in protos],
                yerr=err(rows, "slowdown_all_p99"), error_kw=ERR)
    axes[1].set_ylabel("p99 slowdown")
    for ax in axes:
        ax.set_xticks(range(len(protos)))
        ax.set_xticklabels([LABEL.get(p, p) for p in protos])
    save(fig, out, "table4.2", rows, ["protocol", "messages_started", "peak_queuing_ms", "slowdown_all_p99",
                                      "src_gbps", "drops"], "Table 4.2: N-to-1 incast of 500 KB flows")


def _capture(rows, out, name, curve, event, cols, title):
    """Throughput of the remaining flow in 1 us bins around `event`; `curve(row)` gives (label, color).
    With several seeds: the first seed's series, the mean capture time."""
    fig, ax = plt.subplots(figsize=(5, 2.8))
    for r in rows:
        label, color = curve(r)
        if (r.get("seeds") or 1) > 1:
            label += ", series of seed %g" % r.seed_rows[0].get("run.seed")
        ys = [float(v) for v in str(r["series_gbps_from_minus_50us"]).split()]
        ax.plot([k - 50 for k in range(len(ys))], ys, label=label, color=color, linewidth=0.8)
    ax.axvline(0, color="gray", linestyle=":")
    ax.set_xlabel("time since the other flow %s (us)" % event)
    ax.set_ylabel("remaining flow (Gb/s, 1 us bins)")
    ax.legend(fontsize=7)
    save(fig, out, name, rows, cols, title)


def fig411(rows, out):
    def curve(r):
        p = r["protocol.name"]
        return "%s (capture %s us)" % (LABEL.get(p, p), r["capture_us"]), COLOR.get(p, "k")
    _capture(rows, out, "fig4.11", curve, "completed", ["protocol.name", "completion_us", "capture_us", "base_rtt_us"],
             "Fig. 4.11: bandwidth capture after a completion")


def fig412(rows, out):
    def curve(r):
        sm = r["protocol.bolt.sm"] in (True, "true", "True")
        return ("Bolt, SM %s (ramp-up %s us)" % ("on" if sm else "off", r["capture_us"]),
                "#d62728" if sm else "#9467bd")
    _capture(rows, out, "fig4.12", curve, "was rerouted", ["protocol.bolt.sm", "reroute_us", "capture_us",
                                                             "base_rtt_us"], "Fig. 4.12: bandwidth capture after a reroute")


def _groups(rows, out, name, title):
    rows = ok(rows)
    fig, axes = plt.subplots(1, 2, figsize=(7, 2.8))
    for ax, stat in zip(axes, ["p50", "p99"]):
        for r in rows:
            p = r["protocol"]
            ys = [r["slowdown_%s_%s" % (g, stat)] for g in GROUPS]
            ax.plot(GROUPS, ys, marker="o", label=LABEL.get(p, p), color=COLOR.get(p, "k"))
            for g, y in zip(GROUPS, ys):
                errorbars(ax, [g], [y], [r], "slowdown_%s_%s" % (g, stat), color=COLOR.get(p, "k"))
        ax.set_ylabel("%s slowdown" % stat)
        ax.set_xlabel("size group (A < MSS <= B < BDP <= C < 8 BDP <= D)")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    cols = ["protocol"] + ["slowdown_%s_%s" % (g, s) for s in ["p50", "p99"] for g in GROUPS] + ["tor_queue_max_bytes"]
    save(fig, out, name, rows, cols, title)


BOTTLENECK_P99 = "queue_port_percentiles_switch0->host0_p99"


def _senders(r):
    """The number of hosts in a row's workload.senders (written as a TOML array)."""
    return len([x for x in str(r["workload.senders"]).strip("[]").split(",") if x.strip()])


def fig413(rows, out):
    rows = sorted(ok(rows), key=_senders)
    for r in rows:
        r["senders"] = _senders(r)
        # summary.json leaves the count out when no switch sent any (a lone sender never queues)
        r["src_gbps"] = (r.get("switch_feedback_bytes") or 0) * 8 / r["sim_time_s"] / 1e9
        r["queue_p99_us"] = r[BOTTLENECK_P99] * 8 / 100e9 * 1e6
    xs = [r["senders"] for r in rows]
    fig, axes = plt.subplots(2, 1, figsize=(4.5, 4.6), sharex=True)
    secs = rows[0]["sim_time_s"] if rows else 1.0
    panels = [("src_gbps", "SRC bandwidth (Gb/s)", 0.33, "thesis: 0.33 Gb/s", "switch_feedback_bytes",
               lambda b: b * 8 / secs / 1e9),
              ("queue_p99_us", "p99 bottleneck queue (us)", 6.4, "thesis: below 6.4 us", BOTTLENECK_P99,
               lambda b: b * 8 / 100e9 * 1e6)]
    for ax, (col, label, paper, note, raw, f) in zip(axes, panels):
        ys = [r[col] for r in rows]
        ax.plot(xs, ys, marker="o", color=COLOR["bolt"], label="Bolt")
        errorbars(ax, xs, ys, rows, raw, f=f, color=COLOR["bolt"])
        ax.axhline(paper, ls="--", color="k", lw=0.8, label=note)
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    axes[1].set_xscale("log", base=2)
    axes[1].set_xticks([1, 2, 4, 8, 16, 32, 63])
    axes[1].set_xticklabels(["1", "2", "4", "8", "16", "32", "63"])
    axes[1].set_xlabel("senders to one receiver")
    cols = ["senders", "src_gbps", "switch_feedback_bytes", "switch_feedback_packets", "queue_p99_us", BOTTLENECK_P99]
    save(fig, out, "fig4.13", rows, cols, "Fig. 4.13: star, READ RPC (approximated) at 80% of the receiver's link")


def fig414(rows, out):
    rows = ok(rows)
    bins = [("slowdown_bins_le_43694", "up to 0.7 BDP"), ("slowdown_bins_le_62420", "0.7 to 1 BDP")]
    fig, axes = plt.subplots(1, 2, figsize=(7, 2.8))
    for ax, (col, name) in zip(axes, bins):
        for p in ["bolt", "swift", "hpcc"]:
            pts = sorted((r["topology.host_rate_gbps"], r) for r in rows if r["protocol"] == p)
            xs = [x for x, _ in pts]
            ys = [r[col + "_p99"] for _, r in pts]
            ax.plot(xs, ys, marker="o", label=LABEL.get(p, p), color=COLOR.get(p, "k"))
            errorbars(ax, xs, ys, [r for _, r in pts], col + "_p99", color=COLOR.get(p, "k"))
        ax.set_title("flows %s (at 100 Gb/s)" % name, fontsize=8)
        ax.set_xlabel("link rate (Gb/s)")
        ax.set_ylabel("p99 slowdown")
        ax.set_xticks([100, 200, 400])
        ax.legend(fontsize=7)
    cols = ["protocol", "topology.host_rate_gbps"] + [c + s for c, _ in bins for s in ["_count", "_p99"]]
    save(fig, out, "fig4.14", rows, cols, "Fig. 4.14: 63-to-1 star, READ RPC (approximated) at 80% load")


def fig416(rows, out):
    _groups(rows, out, "fig4.16", "Fig. 4.16: 64-host fat tree, Hadoop at 80% load")


def fig417(rows, out):
    _groups(rows, out, "fig4.17", "Fig. 4.17: 64-host fat tree, READ RPC (approximated) at 80% load")


def _series(r, col):
    v = r.get(col)
    return [float(x) for x in str(v).split()] if v not in (None, "") else []


def fig410(rows, out):
    """Figs. 4.6/4.10: per protocol, the bottleneck queue (1 us) and each flow's throughput (5 us)
    around the arrival at 100 us and the completion near 650 us (first seed)."""
    order = {"bolt": 0, "hpcc": 1, "swift": 2}
    rows = sorted(rows, key=lambda r: order.get(r["protocol.name"], 9))
    fig, axes = plt.subplots(2, len(rows), figsize=(3.3 * len(rows), 4.4), sharex=True, squeeze=False)
    for j, r in enumerate(rows):
        p = r["protocol.name"]
        q = _series(r, "series_queue_kb")
        axes[0][j].plot(range(len(q)), q, color=COLOR.get(p, "k"), linewidth=0.8)
        axes[0][j].axhline(100, color="gray", linestyle="--", linewidth=0.6)
        axes[0][j].set_title("%s (drained in %s RTTs, peak %s KB)" % (LABEL.get(p, p), _fmt(r.get("drain_rtts")),
                                                                     _fmt(r.get("peak_kb"), 0)), fontsize=7)
        for i in (0, 1):
            ys = _mean5(_series(r, "series_gbps_flow%d" % i))
            axes[1][j].plot([5 * k + 2.5 for k in range(len(ys))], ys, linewidth=0.8, label="flow %d" % i)
        for ax in (axes[0][j], axes[1][j]):
            for x in (r.get("join_us"), r.get("completion_us")):
                if x is not None and x != "":
                    ax.axvline(float(x), color="gray", linestyle=":", linewidth=0.6)
        axes[1][j].set_xlabel("time (us)")
        axes[1][j].set_ylim(0, 110)
        axes[1][j].legend(fontsize=6)
    axes[0][0].set_ylabel("bottleneck queue (KB)\n(dashed: 1 BDP)")
    axes[1][0].set_ylabel("throughput (Gb/s, 5 us means)")
    save(fig, out, "fig4.10", rows, ["protocol.name", "join_us", "completion_us", "base_rtt_us", "peak_kb", "drained_us",
                                     "drain_rtts", "min_util", "min_util_at_us"],
         "Figs. 4.6/4.10: a flow joins at 100 us, the other completes near 650 us")


def _mean5(ys):
    """Means of 5 consecutive 1 us bins (a 1 us bin holds about 8 full packets at 100 Gb/s)."""
    return [sum(ys[k:k + 5]) / len(ys[k:k + 5]) for k in range(0, len(ys), 5)]


def _fmt(v, digits=2):
    try:
        return ("%." + str(digits) + "f") % float(v)
    except (TypeError, ValueError):
        return "-"


def fig415(rows, out):
    """Fig. 4.15: each flow's throughput at its receiver (100 us bins, first seed), with the events."""
    fig, ax = plt.subplots(figsize=(6, 2.8))
    for r in rows[:1]:
        bin_ms = float(r.get("bin_us") or 100) / 1e3
        i = 0
        while r.get("series_gbps_flow%d" % i) not in (None, ""):
            ys = _series(r, "series_gbps_flow%d" % i)
            ax.plot([k * bin_ms for k in range(len(ys))], ys, linewidth=0.7, label="flow %d" % i)
            i += 1
        for x in str(r.get("events_ms") or "").split():
            ax.axvline(float(x), color="gray", linestyle=":", linewidth=0.6)
        conv = r.get("convergence_ms")
        conv = "never" if conv in (None, "") else _fmt(conv) + " ms"
        ax.set_title("largest convergence %s, smallest Jain index %s" % (conv,
                                                                      _fmt(r.get("jain_min"), 4)), fontsize=8)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("throughput (Gb/s, 100 us bins)")
    ax.set_ylim(0, 110)
    ax.legend(fontsize=7)
    save(fig, out, "fig4.15", rows, ["protocol.name", "convergence_ms", "convergence_per_event_ms", "events_ms",
                                     "jain_min", "jain_per_interval", "completion_offset_ms", "completions_ms",
                                     "fair_completions_ms"], "Fig. 4.15: Bolt flows joining and leaving every 10 ms")


# The authors' notebook for Fig. 4.2 (Swift-feedbackDelay-benchmark-withArtificialDelay.ipynb), read off their queue plot.
PAPER_4_2_DELAY = {0.0: 12.1, 1.0: 19.5, 2.0: 20.9, 4.0: 23.0, 8.0: 33.9, 16.0: 52.7}
PAPER_4_2_WHERE = {"ingress": 21.0, "egress": 36.0, "receiver": 55.0}


def fig42(rows, out):
    fig, axes = plt.subplots(1, 2, figsize=(7, 2.8), gridspec_kw={"width_ratios": [2, 1]}, sharey=True)
    delay = sorted((r for r in rows if r["panel"] == "delay"), key=lambda r: r["notify_delay_us"])
    xs = range(len(delay))
    axes[0].bar([x - 0.2 for x in xs], [PAPER_4_2_DELAY.get(r["notify_delay_us"], 0) for r in delay], 0.4,
                label="thesis (authors' notebook)", color="#999999")
    axes[0].bar([x + 0.2 for x in xs], [r["drain_us"] or 0 for r in delay], 0.4, label="fabriclab", color="#1f77b4")
    axes[0].set_xticks(list(xs))
    axes[0].set_xticklabels(["%g" % r["notify_delay_us"] for r in delay])
    axes[0].set_xlabel("constant notification delay (us), generated at ingress")
    axes[0].set_ylabel("time to drain the queue (us)")
    axes[0].legend(fontsize=7)
    order = ["receiver", "egress", "ingress"]
    where = [next((r for r in rows if r["panel"] == "where" and r["protocol.swift.notify"] == k), {}) for k in order]
    xs = range(len(order))
    axes[1].bar([x - 0.2 for x in xs], [PAPER_4_2_WHERE[k] for k in order], 0.4, color="#999999")
    axes[1].bar([x + 0.2 for x in xs], [(r.get("drain_us") or 0) for r in where], 0.4, color="#1f77b4")
    axes[1].set_xticks(list(xs))
    axes[1].set_xticklabels(["Rcvr", "Egr", "Ing"])
    axes[1].set_xlabel("where the notification is generated")
    save(fig, out, "fig4.2", rows, ["panel", "protocol.swift.notify", "notify_delay_us", "drain_us", "peak_kb",
                                    "peak_after_join_us", "level_kb"],
         "Fig. 4.2: drain time after a second Swift flow joins (dumbbell, all links 100 Gb/s)")


FIGURES = {"fig4.2": fig42, "table4.1": table41, "table4.2": table42, "fig4.10": fig410, "fig4.11": fig411,
           "fig4.12": fig412, "fig4.13": fig413, "fig4.14": fig414, "fig4.15": fig415, "fig4.16": fig416,
           "fig4.17": fig417}


def main(argv=None):
    figures_main(FIGURES, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
