"""Figures of the SMaRTT-REPS reproduction (matplotlib only).

Usage: python3 -m fabriclab.repro_smartt --out DIR fig1=path/to/results.csv [fig6=... ...]

Every run of these sweeps is a finite workload, so its ``sim_time_s`` is the
completion time of its last flow, the paper's "overall completion time". Each
figure draws that time as bars, one panel per scenario, and writes
DIR/figN.png, DIR/figN.svg and DIR/figN.csv (the rows and columns it plotted).
"""

from fabriclab.plot import figures_main, ok, plt, save

LABEL = {"smartt": "SMaRTT", "eqds": "EQDS", "swift": "Swift", "mprdma": "MPRDMA", "bbr": "BBR"}
COLOR = {"smartt": "#d62728", "eqds": "#1f77b4", "swift": "#8c564b", "mprdma": "#2ca02c", "bbr": "#9467bd"}
OVERSUB = {800.0: "1:1", 400.0: "2:1", 200.0: "4:1", 100.0: "8:1"}


def mib(b):
    return "%g MiB" % (b / 1048576) if b >= 1048576 else "%g KiB" % (b / 1024)


def proto(r):
    return LABEL.get(r.get("protocol.name"), r.get("protocol.name") or "SMaRTT")


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


# figure id -> (panel of a row, bar of a row, what the rows are)
LAYOUT = {
    "fig1": (lambda r: mib(r["workload.bytes"]) + " permutation", proto),
    "fig2": (lambda r: "8:1 incast of %s" % mib(8388608),
             lambda r: {"smartt": "SMaRTT", "ecn_only": "ECN only", "rtt_only": "RTT only"}[r["protocol.smartt.signals"]]
             + ("" if r["protocol.smartt.react_every"] == 1 else "\nevery %d" % r["protocol.smartt.react_every"])),
    "fig6": (lambda r: "SMaRTT, permutation, 4:1",
             lambda r: r["protocol.smartt.lb.kind"].upper() + ("" if r["protocol.smartt.wtd"] else "\nno WTD")),
    "fig7": (lambda r: "4 MB ring AllReduce, one uplink at 200G", lambda r: r["protocol.smartt.lb.kind"].upper()),
    "fig8": (lambda r: "16:1 incast of 512 KiB", lambda r: "trimming" if r["network.trimming"] else "no trimming"),
    "fig9": (lambda r: "2 MiB permutation, 8:1", lambda r: "trimming" if r["network.trimming"] else "no trimming"),
    "fig10": (lambda r: "%d:1 incast of %s" % (r["workload.senders"], mib(r["workload.bytes"])), proto),
    "fig11": (fig11_case, proto),
    "fig12": (lambda r: "all-to-all, k = %d" % r["workload.window"], proto),
    "fig13": (lambda r: mib(r["workload.bytes"]) + " flows, one " + mib(r["workload.large_bytes"]), fig13_bar),
}
TITLE = {
    "fig1": "Fig. 1: completion time of cross-pod permutations on an 8:1 fat tree (over REPS)",
    "fig2": "Figs. 2/3: SMaRTT's signals and reaction granularity",
    "fig6": "Fig. 6: load balancers under SMaRTT (and Fig. 5b: without Wait-to-Decrease)",
    "fig7": "Fig. 7a/7b (simulated testbed): ring AllReduce over an asymmetric fabric",
    "fig8": "Fig. 8: incast with and without trimming",
    "fig9": "Fig. 9: permutation with and without trimming",
    "fig10": "Fig. 10: N:1 incasts",
    "fig11": "Fig. 11a-d: permutations of 2 MiB",
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
            r["completion_us"] = r["sim_time_s"] * 1e6
            if r["panel"] not in panels:
                panels.append(r["panel"])
        n = max(len(panels), 1)
        cols = min(n, 3)
        nrows = (n + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(3.2 * cols, 2.6 * nrows), squeeze=False)
        for i, p in enumerate(panels):
            ax = axes[i // cols][i % cols]
            pts = [r for r in rows if r["panel"] == p]
            colors = [COLOR.get(r.get("protocol.name"), "#d62728") if name not in ("fig2", "fig6", "fig7", "fig8", "fig9")
                      else "#d62728" for r in pts]
            ax.bar(range(len(pts)), [r["completion_us"] for r in pts], color=colors)
            ax.set_xticks(range(len(pts)))
            ax.set_xticklabels([r["bar"] for r in pts], fontsize=6)
            ax.set_title(p, fontsize=8)
            ax.set_ylabel("completion time (us)")
        for j in range(len(panels), nrows * cols):
            axes[j // cols][j % cols].axis("off")
        save(fig, out, name, rows, COLUMNS, TITLE[name])

    return draw


FIGURES = {name: bars(name) for name in LAYOUT}


def main(argv=None):
    figures_main(FIGURES, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
