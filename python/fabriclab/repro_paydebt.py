"""PayDebt's figures (Figs. 9, 12, 15, 16) from `fabriclab repro paydebt`'s sweep tables."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fabriclab.plot import figures_main, ok, save  # noqa: E402

PROTOCOLS = ["paydebt", "dcqcn", "hpcc", "homa", "expresspass", "homa_aeolus", "expresspass_aeolus"]
LABEL = {"paydebt": "PayDebt", "dcqcn": "DCQCN", "hpcc": "HPCC", "homa": "Homa", "expresspass": "ExpressPass",
         "homa_aeolus": "Homa(A)", "expresspass_aeolus": "EP(A)"}
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
            a.plot(xs, [kb(r) for r in rs], "o-", label=lab)
            b.plot(xs, [r.get("fct_us_small_mean") or 0 for r in rs], "o-", label=lab)
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
        a.bar(labels, [kb(r) for r in rows])
        b.bar(labels, [r.get("fct_us_small_mean") or 0 for r in rows])
        a.set_ylabel("max switch buffer (KB)")
        b.set_ylabel("0-100 KB flows: avg FCT (us)")
        save(fig, out, name, rows, [key] + COLS, title)
    return draw


FIGURES = {
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
}


def main(argv=None):
    figures_main(FIGURES, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
