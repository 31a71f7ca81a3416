"""``fabriclab.run``: one experiment in this process, as a Python result."""

from __future__ import annotations

import difflib
import functools
import html
import io
import json
import math
import numbers
import os
from collections.abc import Mapping
from typing import Any, Dict, List, Union

from ._core_import import core
from ._errors import ConfigError

#: What ``run`` and ``validate`` take as a config: a file path, the name of a
#: bundled experiment ("sird/balanced-wkc"), TOML text, or a dict.
ConfigLike = Union[str, "os.PathLike[str]", Mapping]

# A string with one of these is TOML text, not a path or an experiment name.
_TOML_MARKS = ("\n", "=", "[")


def toml_literal(value):
    """A Python value as the TOML literal that ``--set key=VALUE`` takes.

    Any real or integer type works (numpy scalars and arrays, pandas values,
    ``fractions.Fraction``): numpy's become Python's through ``tolist()``.
    """
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
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


#: The column types of queues.csv (``Result.queues``): one row per switch port.
QUEUE_COLUMNS = {"switch": "int64", "peer": "int64", "tor": "bool", "max_bytes": "int64",
                 "mean_bytes": "float64", "drops": "int64"}
#: The column types of traces.csv (``Result.traces``).
TRACE_COLUMNS = {"time_us": "float64", "host": "int64", "flow": "uint64", "kind": "str", "value": "float64"}
#: The column types of a GOAL run's ops.csv (``Result.ops``; docs/output.md): empty cells (a calc's
#: peer, a send's calc_ns, times not reached, a recv's msg_id) are NaN, so those columns are floats.
OPS_COLUMNS = {"op": "int64", "rank": "int64", "host": "int64", "label": "str", "kind": "str", "peer": "float64",
               "tag": "float64", "bytes": "float64", "calc_ns": "float64", "ready_us": "float64",
               "start_us": "float64", "end_us": "float64", "msg_id": "float64", "on_critical_path": "bool"}


def read_csv(text, frame, types=None):
    """CSV text as a ``frame`` DataFrame; ``types`` (column -> "int64",
    "uint64", "float64", "bool" or "str") fixes the columns' types, so that a
    table without rows has them too and 0/1 flags are booleans."""
    if frame == "pandas":
        import pandas as pd

        if not types:
            return pd.read_csv(io.StringIO(text))
        strs = [c for c, t in types.items() if t == "str"]
        t = pd.read_csv(io.StringIO(text), dtype={c: str for c in strs})
        return t.astype({c: ty for c, ty in types.items() if ty != "str" and c in t.columns})
    if frame == "polars":
        try:
            import polars as pl
        except ImportError as e:
            raise ImportError("frame='polars' needs polars (pip install polars)") from e
        if not types:
            return pl.read_csv(io.BytesIO(text.encode()))
        pt = {"int64": pl.Int64, "uint64": pl.UInt64, "float64": pl.Float64, "str": pl.Utf8, "bool": pl.Int8}
        t = pl.read_csv(io.BytesIO(text.encode()), schema_overrides={c: pt[ty] for c, ty in types.items()})
        return t.with_columns([pl.col(c).cast(pl.Boolean) for c, ty in types.items() if ty == "bool"])
    raise ValueError("frame must be 'pandas' or 'polars', got %r" % (frame,))


def experiments_dir() -> str:
    """The directory of the experiments shipped with the package (the
    repository's experiments/, as package data)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "experiments")


@functools.lru_cache(maxsize=None)
def _bundled():
    """Every bundled TOML file: ``{name: (kind, error)}``, name without .toml,
    kind "run", "sweep" or "other" (the core decides by loading it)."""
    root = experiments_dir()
    found = {}
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".toml"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, root)[: -len(".toml")].replace(os.sep, "/")
                found[name] = tuple(core().classify(path))
    return found


def experiments(sweeps: bool = False) -> List[str]:
    """The names of the experiments shipped with the package, such as
    "sird/balanced-wkc": those ``fl.run(name)`` runs, or with ``sweeps=True``
    the sweep files ``fl.sweep(name)`` runs. The files are under
    :func:`experiments_dir`."""
    want = "sweep" if sweeps else "run"
    return [n for n, (kind, _) in _bundled().items() if kind == want]


def _close_names(name):
    names = experiments() + experiments(sweeps=True)
    base = name[: -len(".toml")] if name.endswith(".toml") else name
    close = difflib.get_close_matches(base, names, n=5, cutoff=0.5)
    tail = os.path.basename(base)
    close += [n for n in names if tail and tail in n and n not in close]
    return close[:8]


def find_experiment(name: str) -> str:
    """The path of a file (``name`` as given) or else of a bundled
    experiment (``name`` relative to :func:`experiments_dir`, ``.toml``
    optional). A name that matches neither raises ConfigError listing close
    names."""
    if os.path.isfile(name):
        return name
    base = name[: -len(".toml")] if name.endswith(".toml") else name
    bundled = os.path.join(experiments_dir(), *base.split("/")) + ".toml"
    if base and not os.path.isabs(base) and ".." not in base.split("/") and os.path.isfile(bundled):
        return bundled
    close = _close_names(name)
    hint = ("; close names: " + ", ".join(close)) if close else ""
    raise ConfigError(
        "%r is neither a file (relative to %s) nor an experiment shipped with fabriclab%s "
        "(fabriclab.experiments() lists them all)" % (name, os.getcwd(), hint)
    )


def _source(config, what="config"):
    """``(kind, value, label)`` for the core: kind "path", "text" or "dict"."""
    if isinstance(config, Mapping):
        return "dict", config, "<dict>"
    if isinstance(config, os.PathLike):
        config = os.fspath(config)
        return "path", config, config
    if isinstance(config, bytes):
        raise TypeError("%s must be a path, an experiment name, TOML text or a dict, not bytes" % what)
    if isinstance(config, str):
        if config.strip() == "":
            raise ConfigError("empty %s string: pass {} for an experiment of all defaults" % what)
        if os.path.isfile(config):
            return "path", config, config
        if any(m in config for m in _TOML_MARKS):
            return "text", config, "<TOML string>"
        path = find_experiment(config)
        return "path", path, config
    raise TypeError(
        "%s must be a path, an experiment name, TOML text or a dict, not %s" % (what, type(config).__name__)
    )


def validate(config: ConfigLike, **overrides: object) -> Dict[str, Any]:
    """Loads and checks a config as ``fabriclab validate`` does and returns
    the fully resolved configuration (every default filled in) as a dict,
    nested as the TOML file. ``config`` is what :func:`run` takes; bad keys or
    values raise :class:`fabriclab.ConfigError` naming the key."""
    kind, value, _ = _source(config)
    resolved, _ = core().validate(kind, value, overrides_of(overrides))
    return resolved


def protocols() -> List[Dict[str, Any]]:
    """The protocols and their parameters, as ``fabriclab protocols`` prints
    them: one dict per protocol with ``name``, ``paper``, ``load_balancing``
    (its default) and ``params``, a list of dicts with ``key`` (under
    ``[protocol.NAME]``), ``default`` (as TOML text), ``meaning``, ``source``
    (where the default comes from) and ``allowed`` (the bound validation
    applies, "" if none)."""
    return list(core().protocols())


# The summary fields Result._repr_html_ shows: (label, summary key, format).
_HTML_FIELDS = [
    ("protocol", "protocol", "%s"),
    ("seed", "seed", "%s"),
    ("simulated", "sim_time_s", "%.3f s"),
    ("offered load", "offered_load", "%.3f"),
    ("goodput", "goodput_gbps", "%.2f Gbps/host"),
    ("ToR queue max", "tor_queue_max_bytes", "%.0f B"),
    ("ToR queue mean", "tor_queue_mean_bytes", "%.0f B"),
    ("drops", "drops", "%s"),
    ("messages started", "messages_started", "%s"),
    ("messages completed", "messages_completed", "%s"),
    ("stable", "stable", "%s"),
]


class Result:
    """A finished run: ``summary`` (dict, the summary.json fields),
    ``messages`` (DataFrame, the messages.csv columns; None with
    ``messages=False``), ``queues`` (DataFrame, queues.csv: one row per switch
    port, columns :data:`QUEUE_COLUMNS`: ``switch`` and ``peer`` node ids,
    hosts first; ``tor`` whether the switch is a ToR; ``max_bytes`` and
    ``mean_bytes`` the port's peak and time-averaged queue over the
    measurement window; ``drops``) and ``traces`` (DataFrame, traces.csv:
    ``time_us``, ``host``, ``flow``, ``kind`` "cwnd" or "rtt", ``value`` in
    bytes or microseconds, typed as :data:`TRACE_COLUMNS`, when the run sets
    ``output.traces``; else None), ``ops`` (DataFrame, a GOAL run's ops.csv,
    typed as :data:`OPS_COLUMNS`: one row per op with its times, its message's
    ``msg_id`` to join ``messages.id``, and ``on_critical_path``; None for other
    workloads or ``output.ops = false``); and its provenance:
    ``config`` (the resolved config as a dict, every default filled in),
    ``config_toml`` (the same as TOML text, which ``fabriclab run`` takes),
    ``seed``, ``source`` (the path or name run, or "<dict>" / "<TOML string>")
    and ``version`` (``{"fabriclab_version": ..., "git_commit": ...}``, as a
    run directory's provenance.json; the commit is "unknown" when the
    package was built outside a git checkout)."""

    summary: Dict[str, Any]
    messages: Any
    queues: Any
    traces: Any
    ops: Any
    config: Dict[str, Any]
    config_toml: str
    seed: Any
    source: str
    version: Dict[str, str]

    def __init__(
        self,
        summary: Dict[str, Any],
        messages: Any,
        traces: Any = None,
        config: Any = None,
        config_toml: str = "",
        source: str = "",
        version: Any = None,
        queues: Any = None,
        ops: Any = None,
    ) -> None:
        self.summary = summary
        self.messages = messages
        self.queues = queues
        self.traces = traces
        self.ops = ops
        self.config = config if config is not None else {}
        self.config_toml = config_toml
        self.seed = self.config.get("run", {}).get("seed", summary.get("seed"))
        self.source = source
        self.version = version if version is not None else _version()

    def __repr__(self) -> str:
        s = self.summary
        return "<fabriclab.Result %s seed %s: goodput %.2f Gbps/host, %d messages>" % (
            s.get("protocol"), s.get("seed"), s.get("goodput_gbps", float("nan")), s.get("messages_started", 0))

    def _repr_html_(self) -> str:
        """A small table of the summary's key fields (Jupyter shows it)."""
        rows = []
        for label, key, fmt in _HTML_FIELDS:
            if key in self.summary:
                v = self.summary[key]
                try:
                    text = fmt % v
                except TypeError:
                    text = str(v)
                rows.append("<tr><th style='text-align:left'>%s</th><td>%s</td></tr>" % (
                    html.escape(label), html.escape(text)))
        v = self.version
        caption = "fabriclab.Result: %s (fabriclab %s, commit %s)" % (
            self.source or "run", v.get("fabriclab_version"), str(v.get("git_commit"))[:12])
        return "<table><caption>%s</caption>%s</table>" % (html.escape(caption), "".join(rows))


def _version():
    c = core()
    return {"fabriclab_version": c.__version__, "git_commit": getattr(c, "git_commit", "unknown")}


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
    config: ConfigLike,
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
    config : str, os.PathLike, dict or TOML text
        The experiment: a TOML file's path, as ``fabriclab run PATH`` takes
        it; or the name of an experiment shipped with the package,
        ``"sird/balanced-wkc"`` (see ``fabriclab.experiments()``); or a dict,
        nested as the file (``{"protocol": {"name": "homa"}}``) or with
        dotted keys (``{"protocol.name": "homa"}``); or TOML text (a string
        with a newline, ``=`` or ``[``). Relative paths inside a file resolve
        against the file's directory, inside a dict or TOML text against the
        current directory.
    frame : {"pandas", "polars"}, default "pandas"
        The DataFrame type of ``Result.messages``, ``Result.queues`` and
        ``Result.traces``;
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
    :class:`fabriclab.ConfigError` with the CLI's message; a name that is
    neither a file nor a bundled experiment raises it listing close names.
    """
    kind, value, label = _source(config)
    bar = _Bar(progress)
    try:
        summary, csv, queues, traces, resolved, resolved_toml, ops = core().run(
            kind, value, overrides_of(overrides), bar, messages, force)
    finally:
        bar.close()
    table = read_csv(csv, frame) if csv is not None else None
    traces = read_csv(traces, frame, TRACE_COLUMNS) if traces is not None else None
    ops = read_csv(ops, frame, OPS_COLUMNS) if ops is not None else None
    return Result(json.loads(summary), table, traces, resolved, resolved_toml, label,
                  queues=read_csv(queues, frame, QUEUE_COLUMNS), ops=ops)


def _read_run_file(path, name, frame, types):
    if os.path.isdir(path):
        path = os.path.join(path, name)
    with open(path) as f:
        return read_csv(f.read(), frame, types)


def read_traces(path: str | os.PathLike[str], *, frame: str = "pandas") -> Any:
    """The traces of a ``fabriclab run --out DIR`` (``DIR`` or ``DIR/traces.csv``)
    as a DataFrame: time_us, host, flow, kind ("cwnd" in bytes, "rtt" in
    microseconds), value; typed as ``Result.traces``."""
    return _read_run_file(path, "traces.csv", frame, TRACE_COLUMNS)


def read_queues(path: str | os.PathLike[str], *, frame: str = "pandas") -> Any:
    """The per-port queue table of a ``fabriclab run --out DIR`` (``DIR`` or
    ``DIR/queues.csv``) as a DataFrame, typed as ``Result.queues``."""
    return _read_run_file(path, "queues.csv", frame, QUEUE_COLUMNS)


def read_ops(path: str | os.PathLike[str], *, frame: str = "pandas") -> Any:
    """The ops of a GOAL run's ``fabriclab run --out DIR`` (``DIR`` or
    ``DIR/ops.csv``) as a DataFrame, typed as ``Result.ops``."""
    return _read_run_file(path, "ops.csv", frame, OPS_COLUMNS)
