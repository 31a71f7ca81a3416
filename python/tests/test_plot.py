import matplotlib
import matplotlib.patches
import matplotlib.pyplot
import pytest

import fabriclab as fl


def test_queue_vs_goodput_draws_one_line_per_protocol(local_table):
    fig = fl.plot.queue_vs_goodput(local_table)
    assert isinstance(fig, matplotlib.figure.Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "all points"  # one base file: no `base` column
    # Per protocol: one line over the loads plus one marker per point.
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 2]
    assert len(lines) == 2


def test_slowdown_by_group_draws_bars(local_table):
    fig = fl.plot.slowdown_by_group(local_table, load=0.3, stable_only=False)
    assert isinstance(fig, matplotlib.figure.Figure)
    ax = fig.axes[0]
    # Two protocols x four groups x (p99, p50) bars.
    assert len(ax.patches) == 16
    assert "0.3" in fig._suptitle.get_text()


# Synthetic sweep rows (the columns the figures read), so that each test sets up exactly the
# case it checks: which runs are stable, which loads and scenarios the table has.
MSS, BDP = 1460, 100_000


def row(sc, protocol, load, stable, slowdown=1.0, **extra):
    r = {"base": "experiments/sird/%s.toml" % sc, "protocol.name": protocol, "workload.load": load,
         "status": "ok", "stable": stable, "goodput_gbps": 80.0 * load, "tor_queue_max_bytes": 5e5,
         "tor_queue_mean_bytes": 1e5, "tor_queue_avg_max_bytes": 4e5, "tor_queue_avg_mean_bytes": 1e5, "mss_bytes": MSS, "bdp_bytes": BDP, "slowdown_all_count": 100,
         "slowdown_all_p50": 1.2 * slowdown, "slowdown_all_p99": 3.0 * slowdown}
    for g, n in zip("ABCD", (50, 30, 15, 5)):
        r["slowdown_%s_count" % g] = n
        r["slowdown_%s_p50" % g] = 1.1 * slowdown
        r["slowdown_%s_p99" % g] = 3.5 * slowdown
    r.update(extra)
    return r


def panel_notes(ax):
    return " ".join(t.get_text().replace("\n", " ") for t in ax.texts)


def test_queue_vs_goodput_labels_the_axis_after_its_column():
    rows = [row("balanced-wkc", "sird", 0.5, True), row("balanced-wkc", "sird", 0.7, True)]
    mean = fl.plot.queue_vs_goodput(rows, column="tor_queue_mean_bytes")
    assert mean.axes[0].get_ylabel() == "mean ToR queuing (MB)"
    assert mean._suptitle.get_text().startswith("mean ToR queuing vs goodput")
    # The data drawn is the column asked for (in MB), not the max.
    assert {round(y, 6) for line in mean.axes[0].get_lines() for y in line.get_ydata()} == {0.1}
    assert fl.plot.queue_vs_goodput(rows).axes[0].get_ylabel() == "max ToR queuing (MB)"
    own = fl.plot.queue_vs_goodput(rows, column="tor_queue_mean_bytes", ylabel="ToR queue, time average (MB)")
    assert own.axes[0].get_ylabel() == "ToR queue, time average (MB)"


def test_queue_vs_goodput_refuses_to_guess_a_label_for_an_unknown_column():
    rows = [dict(row("balanced-wkc", "sird", 0.5, True), my_queue_bytes=2e5)]
    with pytest.raises(ValueError, match="my_queue_bytes.*ylabel.*tor_queue_max_bytes.*tor_queue_mean_bytes"):
        fl.plot.queue_vs_goodput(rows, column="my_queue_bytes")
    fig = fl.plot.queue_vs_goodput(rows, column="my_queue_bytes", ylabel="my queue (MB)")
    assert fig.axes[0].get_ylabel() == "my queue (MB)"
    with pytest.raises(ValueError, match="'no_such_bytes' is not in the table"):
        fl.plot.queue_vs_goodput(rows, column="no_such_bytes", ylabel="x")


def test_slowdown_by_group_names_groups_by_their_size_range():
    fig = fl.plot.slowdown_by_group([row("balanced-wkc", "sird", 0.5, True)])
    ax = fig.axes[0]
    # The simulator's groups (size_group in crates/fabriclab/src/metrics/mod.rs):
    # A < MSS <= B < 1 BDP <= C < 8 BDP <= D, in bytes from the run's mss_bytes and bdp_bytes.
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "A\n< 1460 B\n50% of msgs", "B\n1460 B-100 KB\n30% of msgs",
        "C\n100-800 KB\n15% of msgs", "D\n>= 800 KB\n5% of msgs"]
    assert "A < MSS <= B < 1 BDP <= C < 8 BDP <= D" in ax.get_xlabel()
    # Without the MSS and BDP columns the ranges are given in MSS and BDP.
    bare = row("balanced-wkc", "sird", 0.5, True)
    del bare["mss_bytes"], bare["bdp_bytes"]
    labels = [t.get_text() for t in fl.plot.slowdown_by_group([bare]).axes[0].get_xticklabels()]
    assert [lab.split("\n")[1] for lab in labels] == ["< MSS", "MSS-1 BDP", "1-8 BDP", ">= 8 BDP"]


def test_slowdown_by_group_ranges_follow_the_runs_mss_and_bdp(local_table):
    t = local_table[local_table["status"] == "ok"]
    mss, bdp = int(t["mss_bytes"].iloc[0]), int(t["bdp_bytes"].iloc[0])
    fig = fl.plot.slowdown_by_group(local_table, load=0.3, stable_only=False)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels[0].startswith("A\n< %s\n" % fl.plot._size(mss))
    assert labels[3].startswith("D\n>= %s\n" % fl.plot._size(8 * bdp))


def test_slowdown_by_group_legend_shows_bars_not_line_markers():
    fig = fl.plot.slowdown_by_group([row("balanced-wkc", "sird", 0.5, True), row("balanced-wkc", "homa", 0.5, True)])
    (leg,) = fig.legends
    assert [t.get_text() for t in leg.get_texts()] == ["SIRD", "Homa"]
    handles = getattr(leg, "legend_handles", None) or leg.legendHandles  # renamed in matplotlib 3.7
    assert all(isinstance(h, matplotlib.patches.Patch) for h in handles)
    assert not fig.axes[0].get_lines()


def test_slowdown_by_group_rejects_a_load_not_in_the_table():
    rows = [row("balanced-wkc", "sird", 0.3, True), row("balanced-wkc", "sird", 0.6, True)]
    with pytest.raises(ValueError, match=r"load 0\.5 is not in the table; loads present: 0\.3, 0\.6"):
        fl.plot.slowdown_by_group(rows, load=0.5)
    failed = rows + [dict(row("balanced-wkc", "sird", 0.5, False), status="failed")]
    with pytest.raises(ValueError, match=r"load 0\.5 has no completed run .* loads present: 0\.3, 0\.6"):
        fl.plot.slowdown_by_group(failed, load=0.5)


def test_slowdown_by_group_says_which_protocols_it_dropped_as_unstable():
    rows = [row("balanced-wkc", "sird", 0.5, False), row("balanced-wkc", "homa", 0.5, True),
            row("incast-wkc", "sird", 0.5, False)]
    with pytest.warns(UserWarning, match="unstable, not drawn.*SIRD"):
        fig = fl.plot.slowdown_by_group(rows)
    assert "unstable, not drawn (stable_only=True): SIRD" in fig._suptitle.get_text()
    balanced, incast = fig.axes[:2]
    assert "not drawn (unstable): SIRD" in panel_notes(balanced)
    assert len(balanced.patches) == 8  # Homa's p50 and p99 bars of four groups
    assert "no stable run at load 0.5 (unstable: SIRD)" in panel_notes(incast)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["Homa"]


def test_fig6_empty_panels_say_why(tmp_path):
    rows = [row("balanced-wka", "sird", 0.5, False), row("balanced-wka", "homa", 0.5, False),
            row("balanced-wkb", "sird", 0.3, True), row("balanced-wkb", "sird", 0.7, True)]
    fig = fl.plot.fig6(rows, str(tmp_path))
    notes = {ax.get_title(): panel_notes(ax) for ax in fig.axes}
    assert notes["balanced-wka"] == "no stable run at 50% load (unstable: SIRD, Homa)"
    assert notes["balanced-wkb"] == "no run at 50% load"
    assert "no completed run of balanced-wkc" in notes["balanced-wkc"]
    assert (tmp_path / "fig6.png").exists()


def shown_ticks(axis):
    """The labels of the major ticks inside the axis's view."""
    lo, hi = sorted(axis.get_view_interval())
    return [lab.get_text() for loc, lab in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
            if lo <= loc <= hi and lab.get_text()]


def test_fig8_labels_the_log_slowdown_axis_beyond_1_and_2(tmp_path):
    # Slowdowns from 1.1 to 4.6 (less than a decade), as in a quick run.
    rows = [row("balanced-wkc", "sird", 0.5, True, slowdown=1.0 + 0.1 * k,
                **{"protocol.sird.unsch_t_bdp": u, "protocol.sird.priority_lane": "control_and_unscheduled"})
            for k, u in enumerate([0.5, 1.0, 4.0, 16.0])]
    rows += [row("balanced-wkc", "sird", 0.5, True, **{"protocol.sird.unsch_t_bdp": 1.0,
                                                        "protocol.sird.priority_lane": lane})
             for lane in ("none", "control")]
    fig = fl.plot.fig8(rows, str(tmp_path))
    left, right = fig.axes
    # Both axes run from about 1.03 to 4-5: labelled at 2, 3 and 4 (before: no major tick in view,
    # one minor label, "2").
    assert shown_ticks(left.yaxis) == ["2", "3", "4"]
    assert shown_ticks(right.yaxis) == ["2", "3", "4"]
    # Wider ranges: 1-2-5 within a few decades, every decade beyond.
    ax = matplotlib.pyplot.figure().add_subplot()
    ax.plot([1, 2], [1.5, 150])
    fl.plot.log_y(ax)
    ax.figure.canvas.draw()
    assert shown_ticks(ax.yaxis) == ["2", "5", "10", "20", "50", "100"]
    ax.set_ylim(1, 1e6)
    ax.figure.canvas.draw()
    assert shown_ticks(ax.yaxis) == ["1", "10", "100", "1000", "10000", "100000", "1e+06"]
