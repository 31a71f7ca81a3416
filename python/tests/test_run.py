import json
import os
import signal
import subprocess
import threading
import time

import pandas as pd
import pytest

import fabriclab as fl
from conftest import QUICKSTART, built_cli

SHORT = {"run.duration_ms": 0.6, "run.warmup_ms": 0.1}


def test_run_gives_summary_and_messages():
    r = fl.run(QUICKSTART, progress=False, **SHORT)
    assert r.summary["protocol"] == "sird"
    assert r.summary["sim_time_s"] == pytest.approx(0.6e-3)
    assert isinstance(r.messages, pd.DataFrame)
    assert list(r.messages.columns)[:4] == ["id", "src", "dst", "size_bytes"]
    assert len(r.messages) == r.summary["messages_started"] > 0
    assert int(r.messages["fct_us"].notna().sum()) == r.summary["messages_completed"]


def test_overrides_change_the_run():
    r = fl.run(QUICKSTART, progress=False, **SHORT, **{"protocol.name": "homa", "workload.load": 0.3, "run.seed": 7})
    assert r.summary["protocol"] == "homa"
    assert r.summary["seed"] == 7
    assert r.summary["offered_load"] == pytest.approx(0.3)


def test_numpy_and_other_number_types_are_overrides():
    import fractions

    import numpy as np

    lit = fl._run.toml_literal
    assert lit(np.float64(0.3)) == "0.3"
    assert lit(np.float32(0.5)) == "0.5"
    assert lit(np.int64(7)) == lit(np.uint8(7)) == "7"
    assert lit(np.bool_(True)) == "true"
    assert lit(np.linspace(0.25, 0.75, 3)) == "[0.25, 0.5, 0.75]"
    assert lit(fractions.Fraction(1, 4)) == "0.25"
    assert lit(np.float64("nan")) == "nan"
    # A loop over np.linspace, as a researcher writes it, runs.
    r = fl.run(QUICKSTART, progress=False, **SHORT, **{"workload.load": np.linspace(0.3, 0.5, 2)[0],
                                                       "run.seed": np.int64(7)})
    assert r.summary["offered_load"] == pytest.approx(0.3)
    assert r.summary["seed"] == 7


def test_same_summary_as_the_cli(tmp_path):
    exe = built_cli()
    if not os.path.exists(exe):
        pytest.skip("the CLI is not built (cargo build --release, or cargo test --profile checked)")
    sets = ["--set=run.duration_ms=0.6", "--set=run.warmup_ms=0.1", "--set=protocol.name=dctcp"]
    subprocess.run([exe, "run", QUICKSTART, "--out", str(tmp_path), "-q"] + sets, check=True, capture_output=True)
    cli = json.loads((tmp_path / "summary.json").read_text())
    py = fl.run(QUICKSTART, progress=False, **SHORT, **{"protocol.name": "dctcp"}).summary
    for k in ("wall_time_s", "events_per_s"):
        cli.pop(k), py.pop(k)
    assert py == cli
    cli_messages = pd.read_csv(tmp_path / "messages.csv")
    py_messages = fl.run(QUICKSTART, progress=False, **SHORT, **{"protocol.name": "dctcp"}).messages
    pd.testing.assert_frame_equal(py_messages, cli_messages)


def test_config_errors_carry_the_cli_message():
    with pytest.raises(fl.ConfigError) as e:
        fl.run(QUICKSTART, **{"workload.lod": 0.5})
    assert isinstance(e.value, ValueError)
    assert "workload" in str(e.value) and "lod" in str(e.value)
    exe = built_cli()
    if os.path.exists(exe):
        out = subprocess.run([exe, "validate", QUICKSTART, "--set", "workload.lod=0.5"], capture_output=True, text=True)
        assert out.stderr.strip() == "error: " + str(e.value).strip()


def test_work_too_big_for_the_machine_is_refused_before_it_starts():
    if not os.path.exists("/proc/meminfo"):
        pytest.skip("no MemAvailable to compare with: the check is skipped")
    # 2^20 hosts on one spine: SIRD's per-peer tables alone need 8 B x 2^40.
    big = {"topology.tors": 1024, "topology.hosts_per_tor": 1024,
           "topology.spines": 1, "protocol.name": "sird"}
    start = time.monotonic()
    with pytest.raises(MemoryError) as e:
        fl.run(QUICKSTART, progress=False, **big)
    assert time.monotonic() - start < 30
    for want in ("needs an estimated", "per-host transport state", "force=True"):
        assert want in str(e.value)


def test_bad_value_and_missing_file():
    with pytest.raises(fl.ConfigError, match="workload.load"):
        fl.run(QUICKSTART, **{"workload.load": -1.0})
    with pytest.raises(fl.ConfigError, match="no-such-file"):
        fl.run("no-such-file.toml")


def test_polars_frame_or_clear_error():
    try:
        import polars  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="polars"):
            fl.run(QUICKSTART, frame="polars", progress=False, **SHORT)
        return
    r = fl.run(QUICKSTART, frame="polars", progress=False, **SHORT)
    assert r.messages.height == r.summary["messages_started"]


def test_progress_callback_sees_simulated_time(capsys):
    r = fl.run(QUICKSTART, progress=True, messages=False, **SHORT)
    assert r.messages is None
    assert "simulating" in capsys.readouterr().err


def test_sigint_stops_a_long_run_with_keyboard_interrupt(sigint_raises):
    # 10 s simulated would take well over a minute; the interrupt must end it at once.
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            fl.run(QUICKSTART, progress=False, **{"run.duration_ms": 10000.0})
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 30  # generous bound: the run itself would take minutes


def test_traces_come_as_a_dataframe(tmp_path):
    traced = {"protocol.name": "dctcp", "output.traces": ["cwnd", "rtt"], "output.trace_hosts": [1]}
    r = fl.run(QUICKSTART, progress=False, **SHORT, **traced)
    assert list(r.traces.columns) == ["time_us", "host", "flow", "kind", "value"]
    assert set(r.traces["host"]) == {1} and set(r.traces["kind"]) <= {"cwnd", "rtt"}
    assert (r.traces["kind"] == "rtt").sum() == r.summary["rtt_us"]["count"]
    assert fl.run(QUICKSTART, progress=False, **SHORT).traces is None
    exe = built_cli()
    if os.path.exists(exe):
        sets = ["--set=%s" % s for s in fl._run.overrides_of({**SHORT, **traced})]
        subprocess.run([exe, "run", QUICKSTART, "--out", str(tmp_path), "-q"] + sets, check=True, capture_output=True)
        pd.testing.assert_frame_equal(fl.read_traces(tmp_path), r.traces)


def test_queues_are_the_cli_queues_csv_typed(tmp_path):
    r = fl.run(QUICKSTART, progress=False, **SHORT)
    q = r.queues
    assert list(q.columns) == list(fl._run.QUEUE_COLUMNS)
    assert {c: str(t) for c, t in q.dtypes.items()} == fl._run.QUEUE_COLUMNS
    # quickstart: 4 ToRs x (8 hosts + 2 spines) ports, 2 spines x 4 ToRs.
    assert len(q) == 4 * 10 + 2 * 4 and q["tor"].sum() == 40
    # A port's queue is part of its switch's (the summary's maxima are per switch).
    assert 0 < q["max_bytes"].max() <= r.summary["switch_queue_max_bytes"]
    assert (q["mean_bytes"] <= q["max_bytes"]).all()
    exe = built_cli()
    if os.path.exists(exe):
        sets = ["--set=%s" % s for s in fl._run.overrides_of(SHORT)]
        subprocess.run([exe, "run", QUICKSTART, "--out", str(tmp_path), "-q"] + sets, check=True, capture_output=True)
        pd.testing.assert_frame_equal(fl.read_queues(tmp_path), q)


def test_traces_are_typed_even_without_rows():
    # sird records no window: the table is empty but keeps its column types.
    r = fl.run(QUICKSTART, progress=False, **SHORT, **{"output.traces": ["cwnd"]})
    assert len(r.traces) == 0
    assert {c: str(t) for c, t in r.traces.dtypes.items() if c != "kind"} == {
        c: t for c, t in fl._run.TRACE_COLUMNS.items() if c != "kind"}
    r = fl.run(QUICKSTART, progress=False, **SHORT, **{"protocol.name": "dctcp", "output.traces": ["cwnd"]})
    assert len(r.traces) > 0 and str(r.traces["host"].dtype) == "int64"


def test_trace_messages_after_the_end_are_a_python_warning(tmp_path):
    # As `fabriclab run` warns on stderr: 80 of 100 rows over 5 ms start after a 1 ms run.
    rows = "".join("%d,%d,0,1000\n" % (i * 50, 1 + i % 3) for i in range(100))
    (tmp_path / "t.csv").write_text("time_us,src,dst,bytes\n" + rows)
    cfg = {"topology.kind": "star", "topology.hosts": 4, "run.duration_ms": 1, "run.warmup_ms": 0,
           "workload.kind": "trace", "workload.trace_file": str(tmp_path / "t.csv")}
    with pytest.warns(UserWarning, match="80 of the 100 messages of"):
        r = fl.run(cfg, progress=False)
    assert r.summary["trace_messages_after_end"] == 80
