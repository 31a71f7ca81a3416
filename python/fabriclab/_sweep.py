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
        summary, _, _ = core().run(base, list(overrides), None, False)
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
    """The outcome of a point done in an earlier sweep into ``out`` (resume), or None."""
    d = os.path.join(out, "points", p["id"])
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
    """The CLI's layout: points/<id>/summary.json and point.json."""
    summary, error, rss = outcome
    d = os.path.join(out, "points", p["id"])
    os.makedirs(d, exist_ok=True)
    if summary is not None:
        with open(os.path.join(d, "summary.json"), "w") as f:
            f.write(summary)
    meta = {"id": p["id"], "base": p["base"], "overrides": p["overrides"], "ok": summary is not None,
            "error": error, "peak_rss_mb": rss}
    with open(os.path.join(d, "point.json"), "w") as f:
        f.write(json.dumps(meta, indent=2) + "\n")


def sweep(path, jobs=None, scheduler=None, out=None, quick=False, progress=True, frame="pandas"):
    """Runs every point of the sweep file ``path`` and returns the tidy table.

    - ``jobs``: local worker processes (default: all cores); ignored with a scheduler.
    - ``scheduler``: a Dask scheduler address (``"tcp://host:8786"``) or a
      ``distributed.Client``; every point becomes one task there. Workers
      need fabriclab installed and the experiment files at the same paths.
    - ``out``: also write ``out/points/<id>/{summary,point}.json`` and
      ``out/results.csv``; points whose summary.json is already there are
      not run again (resume).
    - ``quick``: apply the file's ``[quick]`` overlay.

    The table has the columns and values of the CLI's results.csv (one row
    per point in grid order; wall-clock columns and peak RSS measure the machine).
    """
    from ._run import read_csv

    file = os.path.abspath(str(path))
    points = core().expand_sweep(file, quick)
    outcomes = [None] * len(points)
    if out is not None:
        os.makedirs(os.path.join(out, "points"), exist_ok=True)
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
    csv = core().sweep_table(file, outcomes, quick)
    if out is not None:
        with open(os.path.join(out, "results.csv"), "w") as f:
            f.write(csv)
    return read_csv(csv, frame)
