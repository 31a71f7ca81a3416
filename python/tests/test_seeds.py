"""Figures of tables with several seeds per point: one mark per point, the
mean over the seeds with its 95% interval; one seed draws as before."""

import csv
import os

import matplotlib

import fabriclab as fl
from fabriclab import _seeds
from fabriclab import repro_nanotransport

COLUMNS = ["point", "protocol", "data_buffer_bytes", "run.seed", "status", "peak_rss_mb", "error",
           "tor_queue_max_bytes", "tor_queue_mean_bytes", "drops", "trims", "stable"]
QUEUE = {("ndp", 1): [1000.0, 1200.0, 1400.0], ("homa", 1): [5000.0, 5000.0, 5000.0]}


def table(seeds):
    """A sweep table in the CLI's layout: two points, `seeds` seeds each (seeds innermost)."""
    rows = []
    for (proto, _), queue in QUEUE.items():
        for s in range(seeds):
            rows.append({"point": "%s-%d" % (proto, s), "protocol": proto, "data_buffer_bytes": 1e5,
                         "run.seed": float(s + 1), "status": "ok", "peak_rss_mb": 10.0 + s, "error": None,
                         "tor_queue_max_bytes": queue[s], "tor_queue_mean_bytes": queue[s] / 10, "drops": 0.0,
                         "trims": float(s), "stable": s != 2})
    return rows


def write(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if v is None else ("true" if v is True else "false" if v is False else v)
                        for k, v in r.items()})


def test_three_seeds_give_one_row_per_point_with_the_mean_and_an_interval():
    rows = _seeds.aggregate(table(3))
    assert [r["protocol"] for r in rows] == ["ndp", "homa"]
    ndp = rows[0]
    assert ndp["seeds"] == 3
    assert ndp["tor_queue_max_bytes"] == 1200.0
    lo, hi = ndp["tor_queue_max_bytes_ci_lo"], ndp["tor_queue_max_bytes_ci_hi"]
    assert lo < 1200.0 < hi
    # sd 200 over 3 seeds: half width t(2) * 200 / sqrt(3).
    assert abs((hi - lo) / 2 - 4.303 * 200 / 3 ** 0.5) < 1e-9
    # Seeds that agree everywhere: the value, exactly, and no interval columns.
    assert ndp["drops"] == 0.0 and "drops_ci_lo" not in ndp
    # Seeds that agree at one point but not at another: a zero-width interval there.
    homa = rows[1]
    assert homa["tor_queue_max_bytes"] == homa["tor_queue_max_bytes_ci_lo"] == homa["tor_queue_max_bytes_ci_hi"] == 5000.0
    assert ndp["peak_rss_mb_ci_lo"] < 11.0 < ndp["peak_rss_mb_ci_hi"]
    # A point is stable only if every seed's run is.
    assert ndp["stable"] is False
    assert "run.seed" not in ndp and [s["run.seed"] for s in ndp.seed_rows] == [1.0, 2.0, 3.0]


def test_one_seed_leaves_the_table_as_it_is():
    rows = table(1)
    assert _seeds.aggregate(rows) == rows
    assert all("seeds" not in r and "tor_queue_max_bytes_ci_lo" not in r for r in _seeds.aggregate(rows))


def test_failed_seeds_are_left_out_of_the_mean():
    rows = table(3)
    rows[2].update(status="failed", error="killed", tor_queue_max_bytes=None)
    ndp = _seeds.aggregate(rows)[0]
    assert ndp["seeds"] == 2 and ndp["status"] == "ok"
    assert ndp["tor_queue_max_bytes"] == 1100.0


def test_a_derived_table_is_grouped_by_the_columns_every_seed_shares():
    rows = [{"protocol": p, "run.seed": s, "utilization": u, "series": "1 2 %d" % s}
            for p, us in (("bolt", [0.9, 0.92, 0.94]), ("swift", [0.8, 0.8, 0.8])) for s, u in zip((1, 2, 3), us)]
    out = _seeds.aggregate(rows)
    assert [(r["protocol"], r["seeds"]) for r in out] == [("bolt", 3), ("swift", 3)]
    assert abs(out[0]["utilization"] - 0.92) < 1e-12
    assert out[0]["series"] == "1 2 1"  # text: the first seed's


def test_a_quantity_derived_per_seed_gets_its_own_interval():
    r = _seeds.aggregate(table(3))[0]
    v = _seeds.per_seed(r, "ratio", lambda s: s["tor_queue_max_bytes"] / s["tor_queue_mean_bytes"])
    assert v == 10.0 and r["ratio_ci_lo"] == r["ratio_ci_hi"] == 10.0  # computed per seed, then averaged
    one = table(1)[0]
    assert _seeds.per_seed(one, "ratio", lambda s: s["tor_queue_max_bytes"] / 100) == 10.0
    assert "ratio_ci_lo" not in one


def test_estimate_and_t_quantiles():
    assert _seeds.estimate([5.0]) == (5.0, None, None)
    assert _seeds.estimate([]) == (None, None, None)
    mean, lo, hi = _seeds.estimate([1.0, 2.0, 3.0])
    assert mean == 2.0 and lo < 2.0 < hi
    assert _seeds.t975(1) == 12.706 and _seeds.t975(1000) == 1.96


def figure_csv(tmp_path, seeds):
    src = tmp_path / ("table%d.csv" % seeds)
    write(table(seeds), src)
    out = tmp_path / ("out%d" % seeds)
    repro_nanotransport.main(["--out", str(out), "fig3.2a=%s" % src])
    with open(os.path.join(out, "fig3.2a.csv"), newline="") as f:
        return list(csv.DictReader(f))


def test_figure_csv_has_one_row_per_point_and_the_interval_columns(tmp_path):
    rows = figure_csv(tmp_path, 3)
    assert len(rows) == 2
    r = rows[0]
    assert r["seeds"] == "3"
    assert float(r["tor_queue_max_bytes_ci_lo"]) < float(r["tor_queue_max_bytes"]) < float(
        r["tor_queue_max_bytes_ci_hi"])
    single = figure_csv(tmp_path, 1)
    assert len(single) == 2
    assert list(single[0]) == ["protocol", "data_buffer_bytes", "tor_queue_max_bytes", "tor_queue_mean_bytes",
                               "drops", "trims"]


def seeded(local_table, seeds):
    """The quickstart sweep's table as if it had run `seeds` seeds per point (values perturbed)."""
    import pandas as pd

    copies = []
    for s in range(1, seeds + 1):
        t = local_table.copy()
        t.insert(list(t.columns).index("status"), "run.seed", s)
        t["goodput_gbps"] = t["goodput_gbps"] * (1 + 0.05 * (s - 2))
        t["tor_queue_max_bytes"] = t["tor_queue_max_bytes"] * (1 + 0.1 * (s - 2))
        copies.append(t)
    return pd.concat(copies).sort_values(["protocol.name", "workload.load", "run.seed"], kind="stable")


def errorbar_count(fig):
    return sum(isinstance(c, matplotlib.container.ErrorbarContainer) for c in fig.axes[0].containers)


def test_queue_vs_goodput_draws_the_mean_with_error_bars(local_table):
    fig = fl.plot.queue_vs_goodput(seeded(local_table, 3))
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 2 and line.get_linestyle() == "-"]
    assert len(lines) == 2  # still one line per protocol over the two loads
    markers = [line for line in ax.get_lines() if len(line.get_xdata()) == 1 and line.get_marker() not in ("_", "|")]
    assert len(markers) == 4  # one marker per point, not per seed
    assert errorbar_count(fig) == 2
    assert "mean of 3 seeds" in fig._suptitle.get_text()
    one = fl.plot.queue_vs_goodput(seeded(local_table, 1))
    assert errorbar_count(one) == 0
    assert "seeds" not in one._suptitle.get_text()
