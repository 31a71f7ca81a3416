"""Figures of the SIRD reproduction, in the style of the paper's (matplotlib only).

Usage: python3 -m fabriclab.plot --out DIR fig5=path/to/results.csv [fig3=... ...]

Each figure function reads a sweep table (one row per run, the tidy table of
``fabriclab sweep``) and writes DIR/figN.png, DIR/figN.svg and DIR/figN.csv,
the rows and columns it plotted.

A table with several seeds per point (``run.seed``) is reduced to one row per
point when it is read (fabriclab._seeds): the figures draw the mean over the
seeds with its 95% interval (Student's t) as error bars, and figN.csv gains
``<column>_ci_lo``, ``<column>_ci_hi`` and ``seeds``. With one seed per point
nothing changes.
"""

import argparse
import csv
import math
import os
import random
import textwrap
import warnings

# No backend is forced here: in Jupyter the figures the functions return show inline (the
# script below, which only writes files, picks Agg).
import matplotlib
import matplotlib.pyplot as plt
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from fabriclab._seeds import aggregate, interval, per_seed  # noqa: F401

PROTOCOLS = ["sird", "homa", "dcpim", "expresspass", "dctcp", "swift"]
LABEL = {"sird": "SIRD", "homa": "Homa", "dcpim": "dcPIM", "expresspass": "ExpressPass", "dctcp": "DCTCP", "swift": "Swift"}
COLOR = {"sird": "#d62728", "homa": "#1f77b4", "dcpim": "#2ca02c", "expresspass": "#9467bd", "dctcp": "#ff7f0e", "swift": "#8c564b"}
MARKER = {"sird": "o", "homa": "s", "dcpim": "^", "expresspass": "v", "dctcp": "D", "swift": "P"}
CONFIGS = ["balanced", "core", "incast"]
WORKLOADS = ["wka", "wkb", "wkc"]
GROUPS = ["A", "B", "C", "D"]

plt.rcParams.update({"font.size": 8, "axes.grid": True, "grid.alpha": 0.3, "figure.dpi": 110})


def _num(v):
    if v in ("", None):
        return None
    if v in ("true", "false"):
        return v == "true"
    try:
        return float(v)
    except ValueError:
        return v


def read(path):
    """Rows of a CSV table with numbers, booleans and empty cells (None)
    parsed, one row per point (the mean over its seeds, see fabriclab._seeds)."""
    with open(path, newline="") as f:
        return aggregate([{k: _num(v) for k, v in r.items()} for r in csv.DictReader(f)])


def scenario(row):
    base = row.get("base") or ""
    return os.path.basename(str(base)).replace(".toml", "")


def ok(rows):
    return [r for r in rows if r.get("status") == "ok"]


def max_seeds(rows):
    """The most seeds any of the rows is the mean of (1 for rows of single runs)."""
    return max((r.get("seeds") or 1 for r in rows), default=1)


def seeds_note(rows):
    """What a figure of rows averaged over seeds shows, for its title ("" for single runs)."""
    n = max_seeds(rows)
    if n < 2:
        return ""
    return " [mean of %d seeds per point; error bars: 95%% interval (Student's t)]" % n


def with_intervals(rows, columns):
    """``columns``, each followed by its interval columns where a row has them, then ``seeds``."""
    out = []
    for c in columns:
        out.append(c)
        for extra in (c + "_ci_lo", c + "_ci_hi"):
            if extra not in columns and any(extra in r for r in rows):
                out.append(extra)
    if max_seeds(rows) > 1 and "seeds" not in out:
        out.append("seeds")
    return out


def err(rows, col, f=None):
    """Error bar lengths ``[below, above]`` of ``f(r[col])`` (default: the value)
    from each row's 95% interval over seeds, for matplotlib's ``yerr``/``xerr``;
    None when no row has an interval (a single seed: nothing is drawn)."""
    if not any(interval(r, col) for r in rows):
        return None
    f = f or (lambda v: v)
    below, above = [], []
    for r in rows:
        iv, v = interval(r, col), r.get(col)
        if iv is None or v is None:
            below.append(0.0)
            above.append(0.0)
            continue
        m = f(v)
        below.append(max(m - f(iv[0]), 0.0))
        above.append(max(f(iv[1]) - m, 0.0))
    return [below, above]


ERR = {"elinewidth": 0.8, "capsize": 2}


def errorbars(ax, xs, ys, rows, ycol=None, f=None, xcol=None, fx=None, color=None):
    """Draws the rows' 95% intervals over seeds around the points (xs, ys):
    vertical ones of ``ycol`` (as drawn: ``f(value)``), horizontal ones of
    ``xcol``; nothing for rows of single runs."""
    ye = err(rows, ycol, f) if ycol else None
    xe = err(rows, xcol, fx) if xcol else None
    if ye is None and xe is None:
        return
    ax.errorbar(xs, ys, yerr=ye, xerr=xe, fmt="none", ecolor=color, **ERR)


def save(fig, out, name, rows, columns, title):
    """Writes the figure (PNG, SVG) and the data behind it (CSV); for rows
    averaged over seeds, the title says so and the CSV has their intervals."""
    title += seeds_note(rows)
    columns = with_intervals(rows, columns)
    fig.suptitle(textwrap.fill(title, int(fig.get_figwidth() * 14)), fontsize=9)
    # Room for the suptitle above and the shared legend below.
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    fig.savefig(os.path.join(out, name + ".png"))
    fig.savefig(os.path.join(out, name + ".svg"))
    plt.close(fig)
    with open(os.path.join(out, name + ".csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in columns])


PLAIN = FuncFormatter(lambda v, _: "%g" % v)


class PlainLogLocator(LogLocator):
    """Major ticks of a log axis, as many as its range needs to be read:
    every decade over a wide range, 1-2-5 within a few decades, 1-2-3-5
    within one or two, 1 to 9 within less than one. (Labelling only the
    decades, with 2 and 5 as minor labels, left an axis from 1 to 4, as in
    Fig. 8, reading "1" and "2".)"""

    def __init__(self):
        super().__init__(base=10.0, subs=(1.0,))

    def tick_values(self, vmin, vmax):
        lo, hi = sorted((vmin, vmax))
        decades = math.log10(hi / lo) if 0 < lo < hi else 0.0
        if decades <= 0.8:
            subs = tuple(float(k) for k in range(1, 10))
        elif decades <= 1.6:
            subs = (1.0, 2.0, 3.0, 5.0)
        elif decades <= 3.5:
            subs = (1.0, 2.0, 5.0)
        else:
            subs = (1.0,)
        self.set_params(subs=subs)
        return super().tick_values(vmin, vmax)


def log_y(ax):
    """Log scale with plain tick labels (2, 5, 10 rather than 2x10^0), enough
    of them to read the axis (PlainLogLocator); the other minor ticks unlabelled."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(PlainLogLocator())
    ax.yaxis.set_major_formatter(PLAIN)
    ax.yaxis.set_minor_locator(LogLocator(base=10.0, subs=tuple(float(k) for k in range(1, 10))))
    ax.yaxis.set_minor_formatter(NullFormatter())


def legend(fig, protocols, bars=False):
    """The shared legend below the panels: lines with markers, or patches for bar charts."""
    if bars:
        handles = [Patch(color=COLOR[p], label=LABEL[p]) for p in protocols]
    else:
        handles = [
            plt.Line2D([], [], color=COLOR[p], marker=MARKER[p], linestyle="-", label=LABEL[p]) for p in protocols
        ]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False, bbox_to_anchor=(0.5, 0.0))


def rows_of(t):
    """Rows (dicts) of a sweep table: a pandas/polars DataFrame or a list of
    dicts; NaN -> None; one row per point (the mean over its seeds)."""
    if hasattr(t, "to_dicts"):  # polars
        t = t.to_dicts()
    elif hasattr(t, "to_dict"):  # pandas
        t = t.to_dict("records")
    return aggregate([{k: _plain(v) for k, v in r.items()} for r in t])


def _plain(v):
    """A DataFrame cell as read() gives it: NaN -> None, numpy scalars -> Python numbers."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    return None if isinstance(v, float) and math.isnan(v) else v


def grid_shape(scenarios):
    """3x3 for the paper's nine scenarios, else one row per configuration present."""
    cfgs = sorted({s.split("-")[0] for s in scenarios}, key=lambda c: (c not in CONFIGS, c))
    return [[s for s in scenarios if s.split("-")[0] == c] for c in cfgs]


def _queue_vs_goodput(rows, column, ylabel, layout):
    rows = ok(rows)
    ncols = max(len(r) for r in layout)
    fig, axes = plt.subplots(len(layout), ncols, figsize=(max(3 * ncols, 5), max(2.5 * len(layout), 3.2)), squeeze=False)
    used = []
    present = [p for p in PROTOCOLS if any(r.get("protocol.name") == p for r in rows)]
    for i, line in enumerate(layout):
        for j, sc in enumerate(line):
            ax = axes[i][j]
            for p in present:
                pts = sorted(
                    (r for r in rows if scenario(r) == sc and r.get("protocol.name") == p),
                    key=lambda r: r["workload.load"],
                )
                if not pts:
                    continue
                used.extend(pts)
                xs = [r["goodput_gbps"] for r in pts]
                ys = [max(r[column], 1.0) / 1e6 for r in pts]
                ax.plot(xs, ys, color=COLOR[p], linewidth=1)
                # The interval as it is: a lower end at or below 0 runs to the bottom of the log axis.
                errorbars(ax, xs, ys, pts, column, lambda v: v / 1e6, "goodput_gbps", color=COLOR[p])
                for r, x, y in zip(pts, xs, ys):
                    filled = r.get("stable") is True
                    ax.plot(x, y, marker=MARKER[p], color=COLOR[p], markersize=4,
                            markerfacecolor=COLOR[p] if filled else "white")
            log_y(ax)
            ax.set_title(sc or "all points", fontsize=8)
            if i == len(layout) - 1:
                ax.set_xlabel("goodput (Gbps/host)")
            if j == 0:
                ax.set_ylabel(ylabel)
        for j in range(len(line), ncols):
            axes[i][j].set_visible(False)
    legend(fig, present)
    return fig, used


# The summary's queue columns (bytes) and their axis labels (the plot draws MB).
QUEUE_LABELS = {
    "tor_queue_max_bytes": "max ToR queuing (MB)",
    "tor_queue_mean_bytes": "mean ToR queuing (MB)",
    "tor_queue_avg_max_bytes": "max ToR queuing, 10 us averages (MB)",
    "tor_queue_avg_mean_bytes": "mean ToR queuing, 10 us averages (MB)",
    "switch_queue_max_bytes": "max switch queuing (MB)",
    "switch_queue_mean_bytes": "mean switch queuing (MB)",
    "shared_buffer_max_bytes": "max shared buffer use (MB)",
}
QUEUE_LABELS.update(
    ("%s_queue_%s_bytes" % (what, key), "%s %s queuing (MB)" % (pct, name))
    for what, name in (("tor_downlink", "ToR downlink"), ("tor_total", "ToR (all ports)"))
    for key, pct in (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"))
)


def queue_label(column, ylabel=None):
    """The y label of a queue column: ``ylabel`` if given, else the known
    column's; a column without a known label needs ``ylabel``."""
    if ylabel is not None:
        return ylabel
    if column not in QUEUE_LABELS:
        raise ValueError("no axis label known for column %r: pass ylabel=..., or use one of %s"
                         % (column, ", ".join(QUEUE_LABELS)))
    return QUEUE_LABELS[column]


def queue_vs_goodput(t, column="tor_queue_max_bytes", ylabel=None):
    """ToR queuing vs achieved goodput (SIRD Fig. 5 / 12): one panel per
    scenario (base file) in the table ``t``, one line per protocol over the
    loads, hollow markers for unstable runs. Returns the matplotlib Figure.

    ``column`` is the queue column in bytes (drawn in MB); the y label
    follows it (``QUEUE_LABELS``: "max ToR queuing (MB)" for
    tor_queue_max_bytes, "mean ToR queuing (MB)" for tor_queue_mean_bytes,
    ...). Any other column needs ``ylabel``; without one, and for a column
    the table lacks, ValueError names the column."""
    ylabel = queue_label(column, ylabel)
    rows = rows_of(t)
    if rows and not any(column in r for r in rows):
        raise ValueError("column %r is not in the table" % (column,))
    scenarios = sorted({scenario(r) for r in ok(rows)})
    fig, _ = _queue_vs_goodput(rows, column, ylabel, grid_shape(scenarios) or [[""]])
    what = ylabel[:-len(" (MB)")] if ylabel.endswith(" (MB)") else ylabel
    fig.suptitle("%s vs goodput (hollow markers: unstable)" % what + seeds_note(rows), fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    return fig


def _save_queue_vs_goodput(rows, out, name, column, ylabel, title):
    """Fig. 5 / Fig. 12 of the reproduction: the nine scenarios in a 3x3 grid."""
    layout = [[c + "-" + w for w in WORKLOADS] for c in CONFIGS]
    fig, used = _queue_vs_goodput(rows, column, ylabel, layout)
    cols = ["base", "protocol.name", "workload.load", "stable", "goodput_gbps", column]
    save(fig, out, name, used, cols, title + " (hollow markers: unstable)")


# The SIRD evaluation's ToR queue: its authors' 10 us averages (experiments/sird/*.toml,
# output.tor_queue_average_us; crates/repro/src/sird QUEUE_MAX and QUEUE_MEAN).
SIRD_QUEUE_MAX, SIRD_QUEUE_MEAN = "tor_queue_avg_max_bytes", "tor_queue_avg_mean_bytes"


def fig5(rows, out):
    _save_queue_vs_goodput(rows, out, "fig5", SIRD_QUEUE_MAX, QUEUE_LABELS[SIRD_QUEUE_MAX],
                     "Fig. 5: maximum ToR queuing vs achieved goodput (rows: balanced, core, incast)")


def fig12(rows, out):
    _save_queue_vs_goodput(rows, out, "fig12", SIRD_QUEUE_MEAN, QUEUE_LABELS[SIRD_QUEUE_MEAN],
                     "Fig. 12: mean ToR queuing vs achieved goodput (rows: balanced, core, incast)")


def fig4(rows, out):
    """Normalised goodput, queuing and slowdown; one dot per scenario, capped with an overflow band."""
    panels = [("goodput_norm", "normalised goodput (best / x)", None),
              ("queue_norm", "normalised peak ToR queuing", 200.0),
              ("slowdown_norm", "normalised p99 slowdown at 50% load", 10.0)]
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
    rnd = random.Random(1)
    shape = {"wka": "o", "wkb": "s", "wkc": "^"}
    shade = {"balanced": "#444444", "core": "#1f77b4", "incast": "#d62728"}
    for ax, (col, label, cap) in zip(axes, panels):
        top = 1.0
        for k, p in enumerate(PROTOCOLS):
            for r in rows:
                if r.get("protocol") != p or r.get(col) is None:
                    continue
                v = r[col]
                y = min(v, cap * 1.3) if cap else v
                top = max(top, y)
                cfg, wk = str(r["scenario"]).split("-")
                x = k + rnd.uniform(-0.25, 0.25)
                ax.plot(x, y, marker=shape[wk], color=shade[cfg], markersize=4, linestyle="none", alpha=0.8)
                errorbars(ax, [x], [y], [r], col, (lambda u: min(u, cap * 1.3)) if cap else None, color=shade[cfg])
        if cap:
            ax.axhspan(cap, cap * 1.5, color="#eeeeee")
            ax.set_ylim(0.9, cap * 1.5)
            log_y(ax)
        ax.set_xticks(range(len(PROTOCOLS)))
        ax.set_xticklabels([LABEL[p] for p in PROTOCOLS], rotation=30)
        ax.set_ylabel(label)
    handles = [plt.Line2D([], [], color=shade[c], marker="o", linestyle="none", label=c) for c in CONFIGS]
    handles += [plt.Line2D([], [], color="gray", marker=shape[w], linestyle="none", label=w.upper()) for w in WORKLOADS]
    fig.legend(handles=handles, loc="lower center", ncol=6, frameon=False)
    cols = list(rows[0].keys()) if rows else []
    save(fig, out, "fig4", rows, cols,
         "Fig. 4: normalised to the best protocol per scenario (1 = best; grey band: capped at 200x / 10x)")


def group_err(r, groups, stat):
    """Error bars of one row's ``slowdown_<group>_<stat>`` over the groups (None for a single seed)."""
    per = [err([r], "slowdown_%s_%s" % (g, stat)) for g in groups]
    if all(e is None for e in per):
        return None
    return [[e[i][0] if e else 0.0 for e in per] for i in (0, 1)]


# The size groups of the SIRD evaluation as the simulator assigns them (size_group in
# crates/fabriclab/src/metrics/mod.rs): A < MSS <= B < 1 BDP <= C < 8 BDP <= D, with the run's
# mss_bytes and bdp_bytes (summary columns). Lower bounds, in (MSS, BDP) units, of B, C and D.
GROUP_LOWER = {"B": (1, 0), "C": (0, 1), "D": (0, 8)}
GROUPS_RULE = "A < MSS <= B < 1 BDP <= C < 8 BDP <= D"


def _size(n):
    """Bytes as a short size: 1460 B, 100 KB, 1.2 MB (decimal units)."""
    if n < 10_000:
        return "%d B" % n
    if n < 1_000_000:
        return "%.3g KB" % (n / 1e3)
    return "%.3g MB" % (n / 1e6)


def _span(lo, hi):
    """``lo`` to ``hi`` bytes, the unit written once when they share it: 100-800 KB, 1460 B-100 KB."""
    a, b = _size(lo), _size(hi)
    if a.split()[1] == b.split()[1]:
        return "%s-%s" % (a.split()[0], b)
    return "%s-%s" % (a, b)


def group_ranges(mss=None, bdp=None):
    """The size range of each group A-D, in bytes when the run's MSS and BDP
    are known (``mss_bytes``, ``bdp_bytes``), else in MSS and BDP."""
    if not mss or not bdp:
        return {"A": "< MSS", "B": "MSS-1 BDP", "C": "1-8 BDP", "D": ">= 8 BDP"}
    lo = {g: m * mss + b * bdp for g, (m, b) in GROUP_LOWER.items()}
    return {"A": "< " + _size(lo["B"]), "B": _span(lo["B"], lo["C"]), "C": _span(lo["C"], lo["D"]),
            "D": ">= " + _size(lo["D"])}


def group_labels(ref):
    """Tick labels of groups A-D for a panel: name, size range and share of
    the messages, from one row of the panel (None: names and ranges only)."""
    ref = ref or {}
    ranges = group_ranges(ref.get("mss_bytes"), ref.get("bdp_bytes"))
    total = ref.get("slowdown_all_count") or 0
    labels = []
    for g in GROUPS:
        n = ref.get("slowdown_%s_count" % g)
        share = ""
        if n is not None and total:
            pct = 100.0 * n / total
            share = "\n<1% of msgs" if 0 < pct < 0.5 else "\n%.0f%% of msgs" % pct
        labels.append("%s\n%s%s" % (g, ranges[g], share))
    return labels


def _note(ax, text, where="center"):
    """A note inside a panel: why it is empty (centre) or what it leaves out (top)."""
    if where == "center":
        ax.text(0.5, 0.5, textwrap.fill(text, 40), transform=ax.transAxes, ha="center", va="center",
                fontsize=7, color="#555555")
    else:
        ax.text(0.02, 0.98, text, transform=ax.transAxes, ha="left", va="top", fontsize=6, color="#555555")


def _slowdown_bars(rows, layout, empty=None, dropped=None):
    """Median (solid) and p99 (light) slowdown per size group, one panel per scenario.

    ``empty(scenario)`` says why a panel without rows is empty (drawn in it);
    ``dropped[scenario]`` lists protocols left out as unstable (noted in it)."""
    ncols = max(len(r) for r in layout)
    fig, axes = plt.subplots(len(layout), ncols, figsize=(max(10 * ncols / 3, 5), 3 * len(layout)), squeeze=False)
    used = []
    shown = {sc for line in layout for sc in line}
    present = [p for p in PROTOCOLS if any(r.get("protocol.name") == p and scenario(r) in shown for r in rows)]
    width = 0.8 / max(len(present), 1)
    dropped = dropped or {}
    for i, line in enumerate(layout):
        for j, sc in enumerate(line):
            ax = axes[i][j]
            for k, p in enumerate(present):
                r = next((r for r in rows if scenario(r) == sc and r.get("protocol.name") == p), None)
                if r is None:
                    continue
                used.append(r)
                xs = [g + (k - (len(present) - 1) / 2) * width for g in range(len(GROUPS))]
                p99 = [r.get("slowdown_%s_p99" % g) or 0 for g in GROUPS]
                p50 = [r.get("slowdown_%s_p50" % g) or 0 for g in GROUPS]
                ax.bar(xs, p99, width, color=COLOR[p], alpha=0.35, yerr=group_err(r, GROUPS, "p99"), error_kw=ERR)
                ax.bar(xs, p50, width, color=COLOR[p], yerr=group_err(r, GROUPS, "p50"), error_kw=ERR)
            ref = next((r for r in rows if scenario(r) == sc), None)
            ax.set_xticks(range(len(GROUPS)))
            ax.set_xticklabels(group_labels(ref), fontsize=6)
            ax.set_xlim(-0.5, len(GROUPS) - 0.5)
            ax.set_title(sc or "all points", fontsize=8)
            if ref is None:
                ax.set_yticks([])
                _note(ax, empty(sc) if empty else "no run to draw")
            else:
                log_y(ax)
                if dropped.get(sc):
                    _note(ax, "not drawn (unstable): " + ", ".join(LABEL[p] for p in dropped[sc]), "top")
            if j == 0:
                ax.set_ylabel("slowdown (solid p50, light p99)")
            if i == len(layout) - 1:
                ax.set_xlabel("message size group\n(%s)" % GROUPS_RULE, fontsize=7)
        for j in range(len(line), ncols):
            axes[i][j].set_visible(False)
    if present:
        legend(fig, present, bars=True)
    return fig, used


def _same(a, b):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _unstable_by_scenario(rows):
    """Protocols (paper order) of the rows that are not stable, per scenario."""
    out = {}
    for p in PROTOCOLS:
        for r in rows:
            if r.get("protocol.name") == p and r.get("stable") is not True:
                if p not in out.setdefault(scenario(r), []):
                    out[scenario(r)].append(p)
    return out


def slowdown_by_group(t, load=None, stable_only=True):
    """Slowdown by message size group (SIRD Fig. 6 / 11) at one load (default
    0.5 if the table has it, else its median load): one panel per scenario,
    one pair of bars (p50, p99) per protocol and group. Returns the Figure.

    The groups are the simulator's (``GROUPS_RULE``), labelled with their size
    range in bytes (from the table's mss_bytes and bdp_bytes) and their share of
    the messages. A load the table does not have raises ValueError naming the
    loads it has. With ``stable_only`` (default), unstable runs are not drawn:
    each panel names the protocols it leaves out, an empty panel says why, and a
    UserWarning lists them."""
    every = rows_of(t)
    rows = ok(every)
    loads = sorted({r["workload.load"] for r in rows if r.get("workload.load") is not None})
    if not loads:
        raise ValueError("the table has no completed run (status ok) with a workload.load to draw")
    if load is None:
        load = 0.5 if 0.5 in loads else loads[len(loads) // 2]
    elif not any(_same(load, l) for l in loads):
        failed = any(_same(load, r.get("workload.load")) for r in every)
        raise ValueError("load %s %s; loads present: %s" % (
            load, "has no completed run (status ok) in the table" if failed else "is not in the table",
            ", ".join("%g" % l for l in loads)))
    at = [r for r in rows if _same(r.get("workload.load"), load)]
    kept = [r for r in at if r.get("stable") is True or not stable_only]
    dropped = _unstable_by_scenario(at) if stable_only else {}
    scenarios = sorted({scenario(r) for r in at})
    fig, _ = _slowdown_bars(kept, grid_shape(scenarios) or [[""]],
                            empty=lambda sc: "no stable run at load %g (unstable: %s)"
                            % (load, ", ".join(LABEL[p] for p in dropped.get(sc, [])) or "none"),
                            dropped=dropped)
    title = "slowdown by size group at load %s" % load + seeds_note(kept)
    if dropped:
        names = sorted({p for ps in dropped.values() for p in ps}, key=PROTOCOLS.index)
        note = "unstable, not drawn (stable_only=True): " + ", ".join(LABEL[p] for p in names)
        title += "\n" + note
        warnings.warn("slowdown_by_group at load %g: %s" % (load, note), stacklevel=2)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    return fig


def slowdown_bars(rows, out, name, configs, title):
    """Fig. 6 / 11 of the reproduction: stable runs at 50% load, three workloads per configuration.
    A panel left empty says why (no run, none at 50% load, or which ones were unstable); a panel
    that leaves out unstable protocols names them. Returns the Figure (saved and closed)."""
    done = ok(rows)
    at = [r for r in done if r.get("workload.load") == 0.5]
    kept = [r for r in at if r.get("stable") is True]
    dropped = _unstable_by_scenario(at)

    def empty(sc):
        if not any(scenario(r) == sc for r in done):
            return "no completed run of %s in the table" % sc
        if not any(scenario(r) == sc for r in at):
            return "no run at 50% load"
        return "no stable run at 50%% load (unstable: %s)" % ", ".join(LABEL[p] for p in dropped.get(sc, []))

    fig, used = _slowdown_bars(kept, [[c + "-" + w for w in WORKLOADS] for c in configs], empty, dropped)
    cols = ["base", "protocol.name"] + ["slowdown_%s_%s" % (g, s) for g in GROUPS + ["all"] for s in ("count", "p50", "p99")]
    save(fig, out, name, used, cols, title)
    return fig


def fig6(rows, out):
    return slowdown_bars(rows, out, "fig6", ["balanced"], "Fig. 6: slowdown by size group at 50% load (balanced)")


def fig11(rows, out):
    return slowdown_bars(rows, out, "fig11", ["core", "incast"],
                         "Fig. 11: slowdown by size group at 50% load (core, incast)")


# Spectrum 4's buffer scaled to the simulated ToR (SIRD §2): per 100 Gbps port and per ToR, MB.
PORT_BUFFER_MB, TOR_BUFFER_MB = 0.31, 10.0
QUEUE_PCTS = (("p50", "p50", ":"), ("p90", "p90", "-."), ("p99", "p99", "-"), ("p999", "p99.9", "--"))


def fig2(rows, out):
    """Homa's time-weighted queue percentiles against load: per ToR downlink
    (left) and per ToR, all its ports (right), with the paper's buffers dotted."""
    rows = sorted((r for r in ok(rows) if r.get("protocol", "homa") == "homa"),
                  key=lambda r: r["workload.load"])
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    cols = ["protocol", "workload.load", "stable", "drops"]
    for ax, what, buffer_mb, title in ((axes[0], "tor_downlink", PORT_BUFFER_MB, "per ToR downlink"),
                                       (axes[1], "tor_total", TOR_BUFFER_MB, "per ToR (all ports)")):
        for pct, label, style in QUEUE_PCTS:
            col = "%s_queue_%s_bytes" % (what, pct)
            cols.append(col)
            pts = [r for r in rows if r.get(col) is not None]
            xs, ys = [r["workload.load"] * 100 for r in pts], [r[col] / 1e6 for r in pts]
            line, = ax.plot(xs, ys, linestyle=style, marker="o", markersize=3, label=label)
            errorbars(ax, xs, ys, pts, col, lambda v: v / 1e6, color=line.get_color())
        ax.axhline(buffer_mb, color="k", linestyle=":", linewidth=1)
        ax.annotate("%g MB" % buffer_mb, (0, buffer_mb), xycoords=("axes fraction", "data"), fontsize=6,
                    xytext=(2, 2), textcoords="offset points")
        ax.set_title(title, fontsize=8)
        ax.set_xlabel("load (% of host link)")
        ax.set_ylabel("queue occupancy (MB)")
        ax.legend(fontsize=6)
    save(fig, out, "fig2", rows, cols,
         "Fig. 2: Homa's queue occupancy percentiles (fraction of port x time, ToR x time) vs load, "
         "balanced WKc, infinite buffers (dotted: Spectrum 4 scaled, 0.31 MB per port, 10 MB per ToR)")


def fig3(rows, out):
    """Mean ToR queuing vs goodput while sweeping Homa's k and SIRD's B."""
    rows = ok(rows)
    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    for p, key, fmt in (("homa", "protocol.homa.overcommitment", "k=%g"), ("sird", "protocol.sird.b_bdp", "B=%g")):
        pts = sorted((r for r in rows if r.get("protocol.name") == p), key=lambda r: r[key])
        xs, ys = [r["goodput_gbps"] for r in pts], [r[SIRD_QUEUE_MEAN] / 1e3 for r in pts]
        ax.plot(xs, ys, marker=MARKER[p], color=COLOR[p], label=LABEL[p])
        errorbars(ax, xs, ys, pts, SIRD_QUEUE_MEAN, lambda v: v / 1e3, "goodput_gbps", color=COLOR[p])
        for r in pts:
            ax.annotate(fmt % r[key], (r["goodput_gbps"], r[SIRD_QUEUE_MEAN] / 1e3), fontsize=6,
                        xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("goodput (Gbps/host)")
    ax.set_ylabel("mean ToR queuing (KB)")
    ax.legend()
    cols = ["protocol.name", "protocol.homa.overcommitment", "protocol.sird.b_bdp", "stable", "goodput_gbps",
            SIRD_QUEUE_MEAN, SIRD_QUEUE_MAX]
    save(fig, out, "fig3", rows, cols, "Fig. 3: overcommitment, Homa (k) vs SIRD (B), WKc at 95% load")


def _label_sthr(v):
    return "SThr=inf" if v is not None and math.isinf(v) else "SThr=%g BDP" % v


def fig7(rows, out):
    rows = [r for r in ok(rows) if r.get("workload.load") == 0.95]
    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    sthrs = sorted({r["protocol.sird.sthr_bdp"] for r in rows})
    for s in sthrs:
        pts = sorted((r for r in rows if r["protocol.sird.sthr_bdp"] == s), key=lambda r: r["protocol.sird.b_bdp"])
        xs, ys = [r["protocol.sird.b_bdp"] for r in pts], [r["goodput_gbps"] for r in pts]
        line, = ax.plot(xs, ys, marker="o", label=_label_sthr(s))
        errorbars(ax, xs, ys, pts, "goodput_gbps", color=line.get_color())
    ax.set_xlabel("B (x BDP)")
    ax.set_ylabel("max goodput (Gbps/host)")
    ax.legend()
    cols = ["protocol.sird.b_bdp", "protocol.sird.sthr_bdp", "workload.load", "stable", "goodput_gbps",
            SIRD_QUEUE_MAX, "slowdown_all_p50", "slowdown_all_p99"]
    save(fig, out, "fig7", rows, cols, "Fig. 7: maximum goodput across B and SThr (balanced WKc, 95% load)")


def fig8(rows, out):
    """Slowdown vs UnschT (left) and by priority use (right); both slowdown axes log with
    plain labels at every major tick in range (log_y). Returns the Figure (saved and closed)."""
    rows = [r for r in ok(rows) if r.get("workload.load") == 0.5 and scenario(r) == "balanced-wkc"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    default = [r for r in rows if r.get("protocol.sird.priority_lane") == "control_and_unscheduled"]
    default.sort(key=lambda r: r["protocol.sird.unsch_t_bdp"])
    xs = [r["protocol.sird.unsch_t_bdp"] for r in default]
    for g, color in (("all", "black"), ("B", "#1f77b4"), ("D", "#d62728")):
        p50 = [r.get("slowdown_%s_p50" % g) for r in default]
        p99 = [r.get("slowdown_%s_p99" % g) for r in default]
        left.plot(xs, p50, marker="o", color=color, label=g + " p50")
        left.plot(xs, p99, marker="s", linestyle="--", color=color, label=g + " p99")
        errorbars(left, xs, p50, default, "slowdown_%s_p50" % g, color=color)
        errorbars(left, xs, p99, default, "slowdown_%s_p99" % g, color=color)
    left.set_xscale("log", base=2)
    left.xaxis.set_major_formatter(PLAIN)
    log_y(left)
    left.set_xlabel("UnschT (x BDP)")
    left.set_ylabel("slowdown")
    left.legend(fontsize=6, ncol=2)
    lanes = ["none", "control", "control_and_unscheduled"]
    prio = [next((r for r in rows if r.get("protocol.sird.priority_lane") == l and r.get("protocol.sird.unsch_t_bdp") == 1.0), None)
            for l in lanes]
    width = 0.25
    for k, (lane, r) in enumerate(zip(lanes, prio)):
        if r is None:
            continue
        groups = ["all"] + GROUPS
        x = [i + (k - 1) * width for i in range(len(groups))]
        right.bar(x, [r.get("slowdown_%s_p99" % g) or 0 for g in groups], width, alpha=0.35, color="C%d" % k,
                  yerr=group_err(r, groups, "p99"), error_kw=ERR)
        right.bar(x, [r.get("slowdown_%s_p50" % g) or 0 for g in groups], width, color="C%d" % k,
                  label=lane.replace("_and_", " + "), yerr=group_err(r, groups, "p50"), error_kw=ERR)
        right.set_xticks(range(len(groups)))
        ranges = group_ranges(r.get("mss_bytes"), r.get("bdp_bytes"))
        right.set_xticklabels(["all"] + ["%s\n%s" % (g, ranges[g]) for g in GROUPS], fontsize=6)
    log_y(right)
    right.set_ylabel("slowdown (solid p50, light p99)")
    right.legend(fontsize=6)
    cols = ["protocol.sird.unsch_t_bdp", "protocol.sird.priority_lane", "goodput_gbps", SIRD_QUEUE_MAX,
            SIRD_QUEUE_MEAN] + ["slowdown_%s_%s" % (g, s) for g in ["all"] + GROUPS for s in ("count", "p50", "p99")]
    save(fig, out, "fig8", rows, cols,
         "Fig. 8: slowdown at 50% load, balanced WKc; left: UnschT, right: priority use")
    return fig


def fig9(rows, out):
    rows = ok(rows)
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    rates = sorted({r["topology.host_rate_gbps"] for r in rows})
    for k, paced in enumerate((True, False)):
        pts = [next((r for r in rows if r["topology.host_rate_gbps"] == rate
                     and r["protocol.sird.credit_pacing"] is paced), {}) for rate in rates]
        ys = [r["tor_queue_max_bytes"] / 1538.0 if r else 0 for r in pts]
        ax.bar([i + (k - 0.5) * 0.35 for i in range(len(rates))], ys, 0.35, label="paced" if paced else "unpaced",
               yerr=err(pts, "tor_queue_max_bytes", lambda v: v / 1538.0), error_kw=ERR)
    ax.set_xticks(range(len(rates)))
    ax.set_xticklabels(["%g Gbps" % r for r in rates])
    ax.set_ylabel("peak receiver queue (packets)")
    ax.legend()
    cols = ["topology.host_rate_gbps", "protocol.sird.credit_pacing", "tor_queue_max_bytes", "tor_queue_mean_bytes",
            "goodput_gbps"]
    save(fig, out, "fig9", rows, cols, "Fig. 9 analogue: 6-to-1 incast of 1 MB, SIRD credits paced or not")


def fig10(rows, out):
    rows = ok(rows)
    for r in rows:
        line = 4 * r["topology.host_rate_gbps"] * 1460.0 / 1538.0
        per_seed(r, "receivers_goodput_gbps", lambda s: s["goodput_gbps"] * s["hosts"])
        per_seed(r, "fraction_of_line_rate", lambda s, line=line: s["goodput_gbps"] * s["hosts"] / line)
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    rates = sorted({r["topology.host_rate_gbps"] for r in rows})
    sthrs = sorted({r["protocol.sird.sthr_bdp"] for r in rows})
    width = 0.8 / max(len(sthrs), 1)
    for k, s in enumerate(sthrs):
        pts = [next((r for r in rows if r["topology.host_rate_gbps"] == rate and r["protocol.sird.sthr_bdp"] == s), {})
               for rate in rates]
        ys = [100 * r["fraction_of_line_rate"] if r else 0 for r in pts]
        ax.bar([i + (k - (len(sthrs) - 1) / 2) * width for i in range(len(rates))], ys, width, label=_label_sthr(s),
               yerr=err(pts, "fraction_of_line_rate", lambda v: 100 * v), error_kw=ERR)
    ax.axhline(75, color="gray", linestyle=":", linewidth=1)
    ax.set_xticks(range(len(rates)))
    ax.set_xticklabels(["%g Gbps links" % r for r in rates])
    ax.set_ylabel("4 receivers' goodput (% of line rate)")
    ax.set_ylim(0, 130)
    ax.legend(fontsize=6, ncol=2, loc="upper center")
    cols = ["topology.host_rate_gbps", "protocol.sird.sthr_bdp", "receivers_goodput_gbps", "fraction_of_line_rate"]
    save(fig, out, "fig10", rows, cols,
         "Fig. 10 analogue: congested sender (dotted: the testbed's 75% with SThr = inf)")


FIGURES = {"fig2": fig2, "fig3": fig3, "fig4": fig4, "fig5": fig5, "fig6": fig6, "fig7": fig7, "fig8": fig8, "fig9": fig9,
           "fig10": fig10, "fig11": fig11, "fig12": fig12}


def figures_main(figures, description, argv=None):
    """The command line every paper's plotting module offers to `fabriclab repro`:
    `--out DIR figN=TABLE.csv ...`, each figure drawn by `figures[figN](rows, out)`."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", required=True, help="directory for figN.png/.svg/.csv")
    ap.add_argument("figures", nargs="+", metavar="figN=TABLE.csv")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    for spec in a.figures:
        name, _, path = spec.partition("=")
        if name not in figures:
            ap.error("unknown figure %r; figures: %s" % (name, ", ".join(figures)))
        figures[name](read(path), a.out)


def main(argv=None):
    figures_main(FIGURES, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    matplotlib.use("Agg")
    main()
