"""Figures of the SMaRTT-REPS reproduction (matplotlib only).

Usage: python3 -m fabriclab.repro_smartt --out DIR fig1=path/to/results.csv [fig6=... ...]

Every run of these sweeps is a finite workload, so its ``sim_time_s`` is the
completion time of its last flow, the paper's "overall completion time". Most
figures draw that time as bars, one panel per scenario; Fig. 2 draws the
senders' windows from each point's traces.csv and Fig. 6b the packet RTT
distributions from ``rtt_us`` of summary.json. Each writes DIR/figN.png,
DIR/figN.svg and DIR/figN.csv (the rows and columns it plotted). With several
seeds per point, bars are the mean over the seeds with a 95% interval, and
Fig. 2 draws the windows of the first seed.
"""

import csv
import os
import sys

from fabriclab.plot import ERR, err, errorbars, figures_main, ok, per_seed, plt, save

# figure id -> the table it was given (Fig. 2 finds the points' traces beside it)
TABLE = {}

LABEL = {"smartt": "SMaRTT", "eqds": "EQDS", "swift": "Swift", "mprdma": "MPRDMA", "bbr": "BBR"}
COLOR = {"smartt": "#d62728", "eqds": "#1f77b4", "swift": "#8c564b", "mprdma": "#2ca02c", "bbr": "#9467bd"}
OVERSUB = {800.0: "1:1", 400.0: "2:1", 200.0: "4:1", 100.0: "8:1"}


def mib(b):
    return "%g MiB" % (b / 1048576) if b >= 1048576 else "%g KiB" % (b / 1024)


def proto(r):
    return LABEL.get(r.get("protocol.name"), r.get("protocol.name") or "SMaRTT")


def signals(r, sep=" "):
    name = {"smartt": "SMaRTT", "ecn_only": "ECN only", "rtt_only": "RTT only"}[r["protocol.smartt.signals"]]
    every = r["protocol.smartt.react_every"]
    return name + ("" if every == 1 else "%severy %d ACKs" % (sep, every))


def fig11_case(r):
    if r.get("workload.count") == 4:
        return "(c) 4 parallel, 8:1"
    if r.get("workload.large_bytes") == 4194304:
        return "(d) one 4 MiB flow, 8:1"
    return ("(a) " if r.get("topology.fabric_rate_gbps") == 400 else "(b) ") + OVERSUB.get(
        r.get("topology.fabric_rate_gbps"), "?")


def fig13_bar(r):
    cap = r.get("protocol.eqds.cwnd_cap")
    if r.get("protocol.name") == "eqds" and cap not in (None, "none"):
        return "EQDS+" + LABEL[cap]
    return proto(r)


def count(v):
    """A count as a label: whole, or (a mean over seeds) with one decimal."""
    return "%d" % v if v == int(v) else "%.1f" % v


def reuse_once(r):
    """A second label line for REPS reusing each entropy once (lb.reuse = "once")."""
    return "\nreuse once" if r.get("protocol.smartt.lb.reuse") == "once" else ""


def balancer(r):
    """The load balancer of a Fig. 7 row: REPS names whose state it keeps."""
    kind = r["protocol.smartt.lb.kind"]
    if kind != "reps":
        return kind.upper()
    return "REPS\nper " + r.get("protocol.smartt.lb.scope", "message") + reuse_once(r)


# figure id -> (panel of a row, bar of a row, what the rows are)
LAYOUT = {
    "fig1": (lambda r: mib(r["workload.bytes"]) + " permutation", proto),
    "fig3": (lambda r: "8:1 incast of %s" % mib(8388608), lambda r: signals(r, "\n")),
    "fig5b": (lambda r: mib(r["workload.bytes"]) + " permutation, 1:1",
              lambda r: "WTD" if r["protocol.smartt.wtd"] else "no WTD"),
    "fig6": (lambda r: "SMaRTT, permutation, 4:1",
             lambda r: r["protocol.smartt.lb.kind"].upper() + ("" if r["protocol.smartt.wtd"] else "\nno WTD")
             + reuse_once(r)),
    "fig7": (lambda r: "4 MB ring AllReduce, one uplink at 200G", balancer),
    "fig7c": (lambda r: "4 MB ring AllReduce, tor0-spine1 down at 50 us",
              lambda r: "%s\n%s lost" % (balancer(r), count(r["link_down_drops"]))),
    "fig8": (lambda r: "16:1 incast of 512 KiB", lambda r: "trimming" if r["network.trimming"] else "no trimming"),
    "fig9": (lambda r: "2 MiB permutation, 8:1", lambda r: "trimming" if r["network.trimming"] else "no trimming"),
    "fig10": (lambda r: "%d:1 incast of %s" % (r["workload.senders"], mib(r["workload.bytes"])), proto),
    "fig11": (fig11_case, proto),
    "fig11q": (lambda r: fig11_case(r) + ", the authors' queues", proto),
    "fig12": (lambda r: "all-to-all, k = %d" % r["workload.window"], proto),
    "fig13": (lambda r: mib(r["workload.bytes"]) + " flows, one " + mib(r["workload.large_bytes"]), fig13_bar),
}
TITLE = {
    "fig1": "Fig. 1: completion time of cross-pod permutations on an 8:1 fat tree (over REPS)",
    "fig3": "Fig. 3: SMaRTT's signals and reaction granularity",
    "fig5b": "Fig. 5b: Wait-to-Decrease on a non-blocking tree (SMaRTT over REPS)",
    "fig6": "Fig. 6: load balancers under SMaRTT (and REPS without Wait-to-Decrease)",
    "fig7": "Fig. 7a/7b (simulated testbed): ring AllReduce over an asymmetric fabric",
    "fig7c": "Fig. 7c (simulated testbed): a T0-T1 link fails during a ring AllReduce",
    "fig8": "Fig. 8: incast with and without trimming",
    "fig9": "Fig. 9: permutation with and without trimming",
    "fig10": "Fig. 10: N:1 incasts",
    "fig11": "Fig. 11a-d: permutations of 2 MiB",
    "fig11q": "Fig. 11a/b with the authors' htsim queues between switches (1/N of the buffer)",
    "fig12": "Fig. 12: windowed all-to-all",
    "fig13": "Fig. 13: EQDS with a sender window cap",
}
COLUMNS = ["panel", "bar", "completion_us", "slowdown_all_p50", "slowdown_all_p99", "trims", "drops",
           "messages_completed", "messages_started"]


def bars(name):
    panel_of, bar_of = LAYOUT[name]

    def draw(rows, out):
        rows = ok(rows)
        panels = []
        for r in rows:
            r["panel"], r["bar"] = panel_of(r), bar_of(r)
            per_seed(r, "completion_us", lambda s: s["sim_time_s"] * 1e6)
            if r["panel"] not in panels:
                panels.append(r["panel"])
        n = max(len(panels), 1)
        cols = min(n, 3)
        nrows = (n + cols - 1) // cols
        widest = max((sum(r["panel"] == p for r in rows) for p in panels), default=1)
        width = max(3.2, 0.95 * widest)  # room for each bar's (multi-line) label
        fig, axes = plt.subplots(nrows, cols, figsize=(width * cols, 2.6 * nrows), squeeze=False)
        for i, p in enumerate(panels):
            ax = axes[i // cols][i % cols]
            pts = [r for r in rows if r["panel"] == p]
            colors = [COLOR.get(r.get("protocol.name"), "#d62728") if name not in ("fig3", "fig5b", "fig6", "fig7", "fig7c", "fig8", "fig9")
                      else "#d62728" for r in pts]
            ax.bar(range(len(pts)), [r["completion_us"] for r in pts], color=colors, yerr=err(pts, "completion_us"),
                   error_kw=ERR)
            ax.set_xticks(range(len(pts)))
            ax.set_xticklabels([r["bar"] for r in pts], fontsize=6)
            ax.set_title(p, fontsize=8)
            ax.set_ylabel("completion time (us)")
        for j in range(len(panels), nrows * cols):
            axes[j // cols][j % cols].axis("off")
        save(fig, out, name, rows, COLUMNS, TITLE[name])

    return draw


def read_traces(path, kind):
    """The rows of one traces.csv of `kind`, as (host, flow) -> ([time_us], [value])."""
    series = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["kind"] == kind:
                t, v = series.setdefault((int(r["host"]), int(r["flow"])), ([], []))
                t.append(float(r["time_us"]))
                v.append(float(r["value"]))
    return series


def fig2(rows, out):
    """cwnd over time of every sender, one panel per point (Fig. 2; Fig. 3b's every-50 variant last)."""
    rows = ok(rows)
    points = os.path.join(os.path.dirname(TABLE.get("fig2", ".")), "points")
    n = max(len(rows), 1)
    fig, axes = plt.subplots(1, n, figsize=(3.0 * n, 2.6), squeeze=False, sharey=True)
    data = []
    for ax, r in zip(axes[0], rows):
        path = os.path.join(points, r["point"], "traces.csv")
        series = read_traces(path, "cwnd") if os.path.exists(path) else {}
        for (host, flow), (t, v) in sorted(series.items()):
            ax.step(t, [x / 1048576 for x in v], where="post", lw=0.8)
            data += [{"panel": signals(r), "host": host, "flow": flow, "time_us": a, "cwnd_bytes": b}
                     for a, b in zip(t, v)]
        shown = "" if (r.get("seeds") or 1) < 2 else " (seed %g)" % r.seed_rows[0].get("run.seed")
        ax.set_title(signals(r) + shown + ("" if series else " (no traces.csv)"), fontsize=8)
        ax.set_xlabel("time (us)")
    axes[0][0].set_ylabel("cwnd (MiB)")
    save(fig, out, "fig2", data, ["panel", "host", "flow", "time_us", "cwnd_bytes"],
         "Fig. 2: cwnd of the 8:1 incast's senders (8 MiB each), windows starting at 1.25 BDP")


def fig6b(rows, out):
    """Packet RTT distributions per load balancer: box p25-p75, whiskers p1-p99, median."""
    rows = [r for r in ok(rows) if r.get("rtt_us_count")]
    fig, ax = plt.subplots(figsize=(4.8, 2.8))
    stats = []
    for r in rows:
        r["bar"] = LAYOUT["fig6"][1](r)
        stats.append({"label": r["bar"], "med": r["rtt_us_p50"], "q1": r["rtt_us_p25"], "q3": r["rtt_us_p75"],
                      "whislo": r["rtt_us_p1"], "whishi": r["rtt_us_p99"], "fliers": []})
    if stats:
        ax.bxp(stats, showfliers=False)
        # With several seeds: the 95% interval of the median over seeds.
        errorbars(ax, range(1, len(rows) + 1), [r["rtt_us_p50"] for r in rows], rows, "rtt_us_p50", color="black")
        target = 1.5 * min(r["rtt_us_min"] for r in rows)
        ax.axhline(target, ls="--", lw=0.8, color="grey")
        ax.text(0.6, target, "target RTT", fontsize=6, va="bottom", color="grey")
    ax.tick_params(axis="x", labelsize=6)
    ax.set_ylabel("packet RTT (us)")
    save(fig, out, "fig6b", rows, ["bar"] + ["rtt_us_" + c for c in
                                             ("count", "min", "p1", "p25", "p50", "p75", "p99", "max")],
         "Fig. 6b: packet RTTs under SMaRTT per load balancer (whiskers p1-p99; target = 1.5 x the smallest RTT)")


FIGURES = {name: bars(name) for name in LAYOUT}
FIGURES.update({"fig2": fig2, "fig6b": fig6b})


def main(argv=None):
    for spec in sys.argv[1:] if argv is None else argv:
        name, sep, path = spec.partition("=")
        if sep:
            TABLE[name] = path
    figures_main(FIGURES, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
