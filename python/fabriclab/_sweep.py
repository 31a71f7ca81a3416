"""``fabriclab.sweep``: a sweep file's points run in local worker processes
(the embedded default) or on an existing Dask cluster, assembled into the
same tidy table as ``fabriclab sweep`` writes to results.csv.

The grid expansion, point ids and table come from the Rust core, so the CLI
and Python cannot disagree on them; only the running of points is here.
"""

import json
import os
import subprocess
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed

from ._core_import import core
from ._errors import ConfigError


def run_point(base, overrides):
    """Runs one point; returns ``(summary_json, error)``.

    Never raises for a failing point (its error goes into the table, the
    other points go on). Called in a point's own process (local mode) or on
    a Dask worker.
    """
    try:
        summary = core().run("path", base, list(overrides), None, False)[0]
        error = None
    except ConfigError as e:
        summary, error = None, str(e)
    except Exception as e:  # a panic in the core arrives as an exception too
        summary, error = None, "%s: %s" % (type(e).__name__, e)
    return summary, error


def _wait_point(proc):
    """Waits for a point's process: ``(summary_json, error, peak_rss_mb)``."""
    out, err = proc.communicate()
    try:
        summary, error, rss = json.loads(out)
    except ValueError:  # the process died (signal, panic abort, ...)
        last = [line for line in err.splitlines() if line.strip()]
        return None, "exit code %s: %s" % (proc.returncode, last[-1] if last else "no output"), None
    return summary, error, rss


def _run_local(todo, jobs, bar):
    """Each point in its own Python process (``jobs`` at a time), like the CLI's
    child processes: a crash stays the point's own and its memory is measured."""
    live = set()
    stopped = []  # non-empty once interrupted: points starting after that are killed at once
    lock = threading.Lock()

    def one(p):
        args = json.dumps({"base": p["base"], "overrides": p["overrides"]})
        proc = subprocess.Popen([sys.executable, "-m", "fabriclab._point", args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with lock:
            live.add(proc)
            if stopped:
                proc.kill()
        try:
            return p, _wait_point(proc)
        finally:
            with lock:
                live.discard(proc)

    pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo))))
    futures = []
    try:
        futures = [pool.submit(one, p) for p in todo]
        for f in as_completed(futures):
            yield f.result()
            bar.update(1)
    except BaseException:
        # Ctrl-C / kernel interrupt: stop the queued points and kill the running ones.
        for f in futures:
            f.cancel()
        with lock:
            stopped.append(True)
            for proc in live:
                proc.kill()
        raise
    finally:
        pool.shutdown(wait=True)


def _run_dask(todo, scheduler, bar):
    """Each point as one task on the cluster at ``scheduler`` (a distributed.Client address)."""
    try:
        from distributed import Client, as_completed
    except ImportError as e:
        raise ImportError("scheduler=... needs dask's distributed package (pip install distributed)") from e
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler, timeout="30s")
    futures = {}
    run_id = uuid.uuid4().hex[:8]  # so that two sweeps of the same points never share a task
    try:
        for p in todo:
            key = "fabriclab-point-%s-%s" % (p["id"], run_id)
            f = client.submit(run_point, p["base"], p["overrides"], key=key, pure=False)
            futures[f] = p
        for f in as_completed(list(futures)):
            p = futures[f]
            try:
                out = tuple(f.result()) + (None,)  # a worker's peak RSS is not the point's
            except Exception as e:  # the worker died or the task was lost
                out = (None, "dask: %s: %s" % (type(e).__name__, e), None)
            yield p, out
            bar.update(1)
    except BaseException:
        client.cancel(list(futures))
        raise
    finally:
        if client is not scheduler:
            client.close()


def _cached(out, p):
    """The outcome of a point completed by an earlier sweep into ``out``
    (resume), or None. Only a point whose manifest.json lists its files and
    matches them, and whose stored resolved config is what its config
    resolves to now, counts (the CLI's rule); any other is said so and run
    again."""
    d = os.path.join(out, "points", p["id"])
    why = core().point_incomplete(d, p["base"], list(p["overrides"]))
    if why is not None:
        if why:
            print("point %s is incomplete (%s); running it again" % (p["id"], why), file=sys.stderr)
        return None
    try:
        with open(os.path.join(d, "summary.json")) as f:
            summary = f.read()
    except OSError:
        return None
    try:
        with open(os.path.join(d, "point.json")) as f:
            rss = json.load(f).get("peak_rss_mb")
    except (OSError, ValueError):
        rss = None
    return summary, None, rss


def _save(out, p, outcome):
    """The CLI's layout: points/<id>/summary.json, point.json and
    config.resolved.toml, each renamed into place whole, then manifest.json
    (written last: the point is complete) if the point is ok."""
    summary, error, rss = outcome
    d = os.path.join(out, "points", p["id"])
    meta = {"id": p["id"], "base": p["base"], "overrides": p["overrides"], "ok": summary is not None,
            "error": error, "peak_rss_mb": rss, "model": core().model}
    core().save_point(d, summary, json.dumps(meta, indent=2) + "\n", summary is not None, p["base"],
                      list(p["overrides"]))


class SweepLockedError(RuntimeError):
    """Another sweep (its pid in the message) is writing to the same ``out``."""


class _Lock:
    """``out/sweep.lock``, the CLI's lock: the owner's pid under an exclusive
    flock, which the kernel drops when the owner dies (a stale file is taken
    over). One sweep per directory, CLI or Python."""

    def __init__(self, out):
        self.path = os.path.join(out, "sweep.lock")
        self.file = None

    def __enter__(self):
        import fcntl

        while True:
            f = open(self.path, "a+")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                pid = f.read().strip()
                f.close()
                owner = "process %s" % pid if pid.isdigit() else "another process"
                raise SweepLockedError("another sweep (%s) is writing to %s; wait for it to finish or stop it (it holds %s)"
                                   % (owner, os.path.dirname(self.path), self.path)) from None
            # The holder may have removed the file between our open and our flock.
            try:
                same = os.path.samestat(os.fstat(f.fileno()), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            f.close()
        f.seek(0)
        f.truncate()
        f.write("%d\n" % os.getpid())
        f.flush()
        self.file = f
        return self

    def __exit__(self, *exc):
        try:
            os.remove(self.path)  # while still locked, as the CLI does
        except OSError:
            pass
        self.file.close()


def sweep(path, jobs=None, scheduler=None, out=None, quick=False, progress=True, frame="pandas"):
    """Runs every point of the sweep file ``path`` (or of a sweep shipped with
    the package, by name: ``fabriclab.experiments(sweeps=True)``) and returns
    the tidy table.

    - ``jobs``: local worker processes (default: all cores); ignored with a scheduler.
    - ``scheduler``: a Dask scheduler address (``"tcp://host:8786"``) or a
      ``distributed.Client``; every point becomes one task there. Workers
      need fabriclab installed and the experiment files at the same paths.
    - ``out``: also write ``out/points/<id>/{summary,point,manifest}.json``,
      ``out/results.csv`` and ``out/results.parquet`` (the CLI's files: the
      same columns, the Parquet file by the CLI's writer; reading it with
      pandas needs pyarrow, ``pip install 'fabriclab[parquet]'``); points an earlier sweep completed (their
      manifest.json matches their files) are not run again (resume), others
      are. One sweep at a time per directory (``out/sweep.lock``).
    - ``quick``: apply the file's ``[quick]`` overlay.

    The table has the columns and values of the CLI's results.csv (one row
    per point in grid order; wall-clock columns and peak RSS measure the machine).
    """
    from ._run import find_experiment

    # A file, or the name of a sweep shipped with the package ("sweeps/quickstart-loads").
    file = os.path.abspath(find_experiment(os.fspath(path)))
    points = core().expand_sweep(file, quick)
    if out is None:
        return _sweep(file, points, None, jobs, scheduler, quick, progress, frame)
    os.makedirs(os.path.join(out, "points"), exist_ok=True)
    with _Lock(out):
        return _sweep(file, points, out, jobs, scheduler, quick, progress, frame)


def _sweep(file, points, out, jobs, scheduler, quick, progress, frame):
    from ._run import read_csv

    outcomes = [None] * len(points)
    if out is not None:
        for p in points:
            outcomes[p["index"]] = _cached(out, p)
    todo = [p for p in points if outcomes[p["index"]] is None]

    from tqdm.auto import tqdm

    with tqdm(total=len(todo), unit="point", desc="sweep", disable=not progress or not todo, leave=False) as bar:
        if not todo:
            runs = iter(())
        elif scheduler is not None:
            runs = _run_dask(todo, scheduler, bar)
        else:
            runs = _run_local(todo, jobs or os.cpu_count() or 1, bar)
        for p, outcome in runs:
            outcomes[p["index"]] = outcome
            if out is not None:
                _save(out, p, outcome)
    # results.parquet by the CLI's own writer (same columns and types), renamed into place whole.
    parquet = os.path.join(out, "results.parquet") if out is not None else None
    csv = core().sweep_table(file, outcomes, quick, parquet)
    if out is not None:
        # Renamed into place whole, as the CLI's.
        tmp = os.path.join(out, ".results.csv.partial-%d" % os.getpid())
        with open(tmp, "w") as f:
            f.write(csv)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(out, "results.csv"))
    return read_csv(csv, frame)
