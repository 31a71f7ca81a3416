"""``fabriclab.run``: one experiment in this process, as a Python result."""

from __future__ import annotations

import io
import json
import math
import os
from typing import Any

from ._core_import import core


def toml_literal(value):
    """A Python value as the TOML literal that ``--set key=VALUE`` takes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    raise TypeError("cannot pass %r (%s) as a config value" % (value, type(value).__name__))


def overrides_of(overrides):
    """``{"workload.load": 0.7}`` -> ``["workload.load=0.7"]``."""
    return ["%s=%s" % (k, toml_literal(v)) for k, v in overrides.items()]


def read_csv(text, frame):
    if frame == "pandas":
        import pandas as pd

        return pd.read_csv(io.StringIO(text))
    if frame == "polars":
        try:
            import polars as pl
        except ImportError as e:
            raise ImportError("frame='polars' needs polars (pip install polars)") from e
        return pl.read_csv(io.BytesIO(text.encode()))
    raise ValueError("frame must be 'pandas' or 'polars', got %r" % (frame,))


class Result:
    """A finished run: ``summary`` (dict, the summary.json fields),
    ``messages`` (DataFrame, the messages.csv columns) and ``traces``
    (DataFrame of the traces.csv columns time_us, host, flow, kind, value,
    when the run sets ``output.traces``; else None)."""

    summary: dict
    messages: Any
    traces: Any

    def __init__(self, summary: dict, messages: Any, traces: Any = None) -> None:
        self.summary = summary
        self.messages = messages
        self.traces = traces

    def __repr__(self) -> str:
        s = self.summary
        return "<fabriclab.Result %s seed %s: goodput %.2f Gbps/host, %d messages>" % (
            s.get("protocol"), s.get("seed"), s.get("goodput_gbps", float("nan")), s.get("messages_started", 0))


class _Bar:
    """tqdm bar over simulated time (notebook widget or terminal, as tqdm picks)."""

    def __init__(self, enabled):
        self.bar = None
        self.enabled = enabled

    def __call__(self, now_ps, end_ps):
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=round(end_ps / 1e9, 3), unit="ms", desc="simulating", leave=False)
        self.bar.n = round(min(now_ps, end_ps) / 1e9, 3)
        self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()


def run(
    path: str | os.PathLike[str],
    *,
    frame: str = "pandas",
    progress: bool = True,
    messages: bool = True,
    force: bool = False,
    **overrides: object,
) -> Result:
    """Runs one experiment in this process and returns a :class:`Result`.

    Parameters
    ----------
    path : str or os.PathLike
        The experiment file (TOML), as ``fabriclab run PATH`` takes it.
    frame : {"pandas", "polars"}, default "pandas"
        The DataFrame type of ``Result.messages`` and ``Result.traces``;
        "polars" needs ``pip install polars``.
    progress : bool, default True
        Shows a tqdm bar over simulated time (milliseconds simulated; its rate
        is simulated ms per wall-clock second): a widget in notebooks, text in
        terminals. False hides it.
    messages : bool, default True
        Builds the per-message table (the messages.csv columns) as
        ``Result.messages``; False skips it (``Result.messages`` is None),
        which saves memory and time on long runs.
    force : bool, default False
        Runs even if the estimated peak memory exceeds what the machine has
        available; otherwise such a run raises MemoryError before it starts,
        naming the largest part (FABRICLAB_FORCE=1 does the same as True).
    **overrides
        Dotted config keys with Python values (bool, int, float incl. inf and
        nan, str, lists), applied as ``--set key=value`` would be:
        ``fl.run(p, **{"workload.load": 0.7, "protocol.name": "homa"})``.

    The simulation runs with the GIL released; Ctrl-C (or a kernel
    interrupt) stops it within a fraction of a second and raises
    KeyboardInterrupt. Bad files, keys or values raise
    :class:`fabriclab.ConfigError` with the CLI's message.
    """
    bar = _Bar(progress)
    try:
        summary, csv, traces = core().run(str(path), overrides_of(overrides), bar, messages, force)
    finally:
        bar.close()
    table = read_csv(csv, frame) if csv is not None else None
    traces = read_csv(traces, frame) if traces is not None else None
    return Result(json.loads(summary), table, traces)


def read_traces(path: str | os.PathLike[str], *, frame: str = "pandas") -> Any:
    """The traces of a ``fabriclab run --out DIR`` (``DIR`` or ``DIR/traces.csv``)
    as a DataFrame: time_us, host, flow, kind ("cwnd" in bytes, "rtt" in
    microseconds), value."""
    if os.path.isdir(path):
        path = os.path.join(path, "traces.csv")
    with open(path) as f:
        return read_csv(f.read(), frame)
