"""A real Dask cluster on localhost: one scheduler and two workers as
processes, on free ports, torn down whatever happens."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pandas as pd
import pytest

import fabriclab as fl
from conftest import MACHINE_COLUMNS, SWEEP, built_cli

distributed = pytest.importorskip("distributed")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_workers(address, n, deadline):
    from distributed import Client

    with Client(address, timeout="20s") as c:
        c.wait_for_workers(n, timeout=max(1, deadline - time.monotonic()))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    dask = shutil.which("dask") or os.path.join(os.path.dirname(sys.executable), "dask")
    port = free_port()
    address = "tcp://127.0.0.1:%d" % port
    logs = tmp_path_factory.mktemp("dask")
    procs = []

    def start(args, name):
        log = open(logs / (name + ".log"), "w")
        # Own session: the teardown signals the whole group (workers' nanny children too).
        procs.append(subprocess.Popen([dask] + args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    try:
        start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"], "scheduler")
        for i in range(2):
            start(["worker", address, "--nthreads", "1", "--nworkers", "1", "--host", "127.0.0.1",
                   "--dashboard-address", ":0", "--name", "w%d" % i], "worker%d" % i)
        wait_for_workers(address, 2, time.monotonic() + 60)
        yield address
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=5)


def test_dask_sweep_equals_local(cluster, local_table):
    t = fl.sweep(SWEEP, scheduler=cluster, progress=False)
    assert (t["status"] == "ok").all()
    assert t["peak_rss_mb"].isna().all()  # a Dask worker's peak is not the point's
    drop = lambda x: x.drop(columns=MACHINE_COLUMNS)  # noqa: E731
    pd.testing.assert_frame_equal(drop(t), drop(local_table))


def test_cli_hands_over_to_dask(cluster, tmp_path, local_table):
    exe = built_cli()
    if not os.path.exists(exe):
        pytest.skip("the CLI is not built (cargo build --release, or cargo test --profile checked)")
    env = dict(os.environ, PYTHON=sys.executable)
    subprocess.run([exe, "sweep", SWEEP, "--dask", cluster, "--out", str(tmp_path), "-q"], check=True, env=env,
                   capture_output=True, timeout=300)
    cli = pd.read_csv(tmp_path / "results.csv")
    drop = lambda x: x.drop(columns=MACHINE_COLUMNS)  # noqa: E731
    pd.testing.assert_frame_equal(drop(cli), drop(local_table))
