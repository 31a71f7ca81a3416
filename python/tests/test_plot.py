import matplotlib

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
