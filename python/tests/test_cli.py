"""The wheel's `fabriclab` command: the Rust CLI compiled into the extension,
through the console script and `python -m fabriclab`, run as a user would
(outside the checkout, so bundled names come from the installed package)."""

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import sysconfig
import time

import pandas as pd
import pytest

import fabriclab as fl
from conftest import MACHINE_COLUMNS, SWEEP

SHORT = ["--set", "run.duration_ms=0.3", "--set", "run.warmup_ms=0.1"]


def script():
    """The console script pip installed for this interpreter (not a cargo-built binary)."""
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    if sys.version_info >= (3, 10):
        dirs.append(sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user")))
    for d in dirs:
        p = os.path.join(d, "fabriclab")
        if os.path.isfile(p):
            with open(p, "rb") as f:
                assert f.read(2) == b"#!", "%s is not the console script" % p
            return p
    pytest.fail("no fabriclab console script in %s" % ", ".join(dirs))


def cli(*args, cwd, module=False, **kw):
    cmd = [sys.executable, "-m", "fabriclab"] if module else [script()]
    env = {k: v for k, v in os.environ.items() if k not in ("FABRICLAB_ROOT", "FABRICLAB_PYTHON")}
    return subprocess.run(cmd + [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env, **kw)


def test_console_script_is_declared():
    eps = importlib.metadata.entry_points()
    scripts = eps.select(group="console_scripts") if hasattr(eps, "select") else eps["console_scripts"]
    assert {e.name: e.value for e in scripts}.get("fabriclab") == "fabriclab._cli:main"


def test_console_script_runs_a_bundled_experiment_as_fl_run_does(tmp_path):
    p = cli("run", "sird/balanced-wkc", "--out", tmp_path / "o", "-q", *SHORT, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "wrote summary.json, messages.csv and queues.csv" in p.stdout
    with open(tmp_path / "o" / "summary.json") as f:
        s = json.load(f)
    r = fl.run("sird/balanced-wkc", progress=False, **{"run.duration_ms": 0.3, "run.warmup_ms": 0.1})
    for k in ("protocol", "messages_started", "messages_completed", "goodput_gbps", "tor_queue_max_bytes"):
        assert s[k] == r.summary[k], k
    # The per-port table of the run directory is Result.queues.
    pd.testing.assert_frame_equal(fl.read_queues(tmp_path / "o"), r.queues)


def test_unknown_experiment_name_lists_close_names(tmp_path):
    p = cli("run", "sird/balanced-wk", "--out", tmp_path / "o", cwd=tmp_path)
    assert p.returncode == 2
    assert "neither a file nor an experiment shipped with fabriclab" in p.stderr
    assert "sird/balanced-wkc" in p.stderr


def test_validate_errors_exit_2_naming_the_key(tmp_path):
    p = cli("validate", "quickstart", "--set", "workload.load=7", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.startswith("error: config error at `workload.load`"), p.stderr
    ok = cli("validate", "quickstart", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert 'name = "sird"' in ok.stdout


def test_version_and_usage_errors_as_the_binary(tmp_path):
    p = cli("--version", cwd=tmp_path, module=True)
    assert (p.returncode, p.stdout.strip()) == (0, "fabriclab %s" % fl.__version__)
    p = cli("bogus", cwd=tmp_path, module=True)
    assert p.returncode == 2 and "unrecognized subcommand 'bogus'" in p.stderr


def test_sweep_points_rerun_the_package(tmp_path, local_table):
    # Inside Python the executable is the interpreter: the points must run `python -m fabriclab run`.
    out = tmp_path / "o"
    p = cli("sweep", SWEEP, "--out", out, "-q", "-j", "2", cwd=tmp_path, module=True)
    assert p.returncode == 0, p.stderr
    t = pd.read_csv(out / "results.csv")
    drop = lambda x: x.drop(columns=MACHINE_COLUMNS)  # noqa: E731
    pd.testing.assert_frame_equal(drop(t), drop(local_table))
    for d in (out / "points").iterdir():
        with open(d / "provenance.json") as f:
            cmd = json.load(f)["command"]
        assert cmd[:4] == [sys.executable, "-m", "fabriclab", "run"], cmd


def test_bench_scenarios_rerun_the_package(tmp_path):
    p = cli("bench", "--only", "e-sird-incast64", "--scale", "0.01", cwd=tmp_path, module=True)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout.splitlines()[-1])
    assert rec["scenario"].startswith("e-sird-incast64") and rec["events"] > 0


def test_repro_judges_a_bundled_recording(tmp_path):
    rec = os.path.join(fl.experiments_dir(), "repro", "sird", "recorded")
    rec = os.path.join(rec, sorted(os.listdir(rec))[0])
    p = cli("repro", "sird", "--judge", rec, "--out", tmp_path / "r", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r" / "REPORT.md").stat().st_size > 0


def test_sigint_stops_a_sweep_as_the_binary_does(tmp_path):
    base = os.path.join(fl.experiments_dir(), "quickstart.toml")
    f = tmp_path / "long.toml"
    # One point of many minutes per job: only SIGINT ends the sweep in time.
    f.write_text('base = "%s"\n[set]\nrun.duration_ms = 10000.0\n[grid]\nprotocol.name = ["sird", "homa"]\n' % base)
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "fabriclab", "sweep", str(f), "--out", str(out), "-q", "-j", "2"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            logs = list((out / "points").glob("*/stderr.log")) if (out / "points").is_dir() else []
            if len(logs) == 2:
                break
            time.sleep(0.1)
        assert len(logs) == 2, "the points did not start"
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "stopped by SIGINT: 0 of the 2 points to run finished; the running ones were killed" in err
    assert not list((out / "points").glob("*/manifest.json"))
