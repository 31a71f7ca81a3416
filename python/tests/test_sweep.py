import hashlib
import json
import os
import subprocess

import pandas as pd
import pytest

import fabriclab as fl
from conftest import MACHINE_COLUMNS, SWEEP, built_cli, repo


def comparable(t):
    return t.drop(columns=[c for c in MACHINE_COLUMNS if c in t.columns]).reset_index(drop=True)


def test_local_sweep_table(local_table):
    t = local_table
    assert len(t) == 4
    assert list(t.columns[:5]) == ["point", "protocol.name", "workload.load", "status", "peak_rss_mb"]
    assert (t["status"] == "ok").all()
    assert list(t["protocol.name"]) == ["sird", "sird", "homa", "homa"]
    assert list(t["workload.load"]) == [0.3, 0.6, 0.3, 0.6]
    assert "slowdown_A_p99" in t.columns
    assert (t["peak_rss_mb"] > 0).all()


def test_local_sweep_equals_the_cli(tmp_path, local_table):
    exe = built_cli()
    if not os.path.exists(exe):
        pytest.skip("the CLI is not built (cargo build --release, or cargo test --profile checked)")
    subprocess.run([exe, "sweep", SWEEP, "--out", str(tmp_path), "-q", "-j", "2"], check=True, capture_output=True)
    cli = pd.read_csv(tmp_path / "results.csv")
    pd.testing.assert_frame_equal(comparable(local_table), comparable(cli))


def test_out_dir_and_resume(tmp_path, capsys):
    t = fl.sweep(SWEEP, quick=True, out=str(tmp_path), progress=False)
    assert len(t) == 2 and list(t["workload.load"]) == [0.5, 0.5]
    assert (tmp_path / "results.csv").exists()
    for pid in t["point"]:
        for name in ("summary.json", "point.json", "config.resolved.toml", "manifest.json"):
            assert (tmp_path / "points" / pid / name).exists()
    capsys.readouterr()
    # Resume: a summary.json changed since (or cut short) no longer matches its
    # manifest, so that point runs again, and says so; the other is cached.
    first = tmp_path / "points" / t["point"][0] / "summary.json"
    first.write_text(first.read_text().replace('"drops": 0', '"drops": 12345'))
    again = fl.sweep(SWEEP, quick=True, out=str(tmp_path), progress=False)
    assert again["drops"][0] == t["drops"][0] != 12345
    err = capsys.readouterr().err
    assert "point %s is incomplete (summary.json has" % t["point"][0] in err
    assert t["point"][1] not in err
    assert not (tmp_path / "sweep.lock").exists()
    # A point run under another default (here: its stored resolved config
    # edited, then resealed as if whole) is stale: run again, and said so.
    d = tmp_path / "points" / t["point"][1]
    cfg = d / "config.resolved.toml"
    cfg.write_text(cfg.read_text().replace("[workload]", "[workload]\nold_default = 1", 1))
    m = json.loads((d / "manifest.json").read_text())
    for f in m["files"]:
        data = (d / f["name"]).read_bytes()
        f["bytes"], f["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    (d / "manifest.json").write_text(json.dumps(m))
    again = fl.sweep(SWEEP, quick=True, out=str(tmp_path), progress=False)
    err = capsys.readouterr().err
    assert "point %s is incomplete (its config.resolved.toml is not what this build resolves" % t["point"][1] in err
    assert t["point"][0] not in err
    assert "old_default" not in cfg.read_text()


def test_one_sweep_per_out_dir(tmp_path):
    from fabriclab._sweep import SweepLockedError, _Lock

    with _Lock(str(tmp_path)):
        with pytest.raises(SweepLockedError, match="another sweep \\(process %d\\)" % os.getpid()):
            fl.sweep(SWEEP, quick=True, out=str(tmp_path), progress=False)
    # A lock file left by a dead process (no flock held) is taken over.
    (tmp_path / "sweep.lock").write_text("999999999\n")
    assert len(fl.sweep(SWEEP, quick=True, out=str(tmp_path), progress=False)) == 2


def test_failing_point_is_reported_not_raised(tmp_path):
    # The trace's second row names a host the fabric lacks: the config loads, the run fails.
    (tmp_path / "good.csv").write_text("time_us,src,dst,bytes\n0,1,0,100000\n")
    (tmp_path / "bad.csv").write_text("time_us,src,dst,bytes\n0,1,0,100000\n1,5000,0,5\n")
    sweep = tmp_path / "s.toml"
    sweep.write_text('base = "%s"\n[grid]\n"workload.trace_file" = ["%s", "%s"]\n[set]\n"run.duration_ms" = 0.4\n'
                     '"run.warmup_ms" = 0.1\n' % (repo("experiments", "micro", "congested-sender.toml"),
                                                 tmp_path / "good.csv", tmp_path / "bad.csv"))
    t = fl.sweep(str(sweep), jobs=2, progress=False)
    assert list(t["status"]) == ["ok", "failed"]
    assert "workload.trace_file" in t["error"][1]


def test_points_that_do_not_load_raise_before_any_runs(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "%s"\n[grid]\n"workload.load" = [0.5, -2.0]\n[set]\n"run.duration_ms" = 0.6\n'
                   '"run.warmup_ms" = 0.1\n' % repo("experiments", "quickstart.toml"))
    with pytest.raises(fl.ConfigError, match="1 of the 2 points have a config that does not load, so nothing ran"):
        fl.sweep(str(bad), jobs=2, out=str(tmp_path / "o"), progress=False)
    assert not (tmp_path / "o").exists(), "the sweep began before its points were checked"


def test_sweep_file_errors_raise_config_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "x.toml"\nbogus = 1\n')
    with pytest.raises(fl.ConfigError, match="bogus"):
        fl.sweep(str(bad))


def test_interrupt_kills_the_running_points(tmp_path, sigint_raises):
    import signal
    import threading
    import time

    psutil = pytest.importorskip("psutil")
    long = tmp_path / "long.toml"
    long.write_text('base = "%s"\nseeds = [1, 2, 3]\n[set]\n"run.duration_ms" = 10000.0\n' % repo("experiments", "quickstart.toml"))
    timer = threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            fl.sweep(str(long), jobs=2, progress=False)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 60  # the points alone would take many minutes
    children = [c for c in psutil.Process().children(recursive=True) if "fabriclab._point" in " ".join(c.cmdline())]
    assert children == []


def test_out_dir_has_the_clis_parquet_table(tmp_path, local_table):
    pq = pytest.importorskip("pyarrow.parquet")
    fl.sweep(SWEEP, out=str(tmp_path / "py"), jobs=2, progress=False)
    py = pq.read_table(tmp_path / "py" / "results.parquet")
    # The same columns as results.csv, and the CLI's types (its writer: BOOLEAN, INT64, DOUBLE, UTF-8).
    assert py.column_names == list(local_table.columns)
    types = {f.name: str(f.type) for f in py.schema}
    assert types["status"] == "string" and types["stable"] == "bool" and types["drops"] == "int64"
    assert types["workload.load"] == "double"
    pd.testing.assert_frame_equal(comparable(py.to_pandas()), comparable(local_table), check_dtype=False)
    exe = built_cli()
    if os.path.exists(exe):
        subprocess.run([exe, "sweep", SWEEP, "--out", str(tmp_path / "cli"), "-q", "-j", "2"], check=True,
                       capture_output=True)
        assert pq.read_table(tmp_path / "cli" / "results.parquet").schema.equals(py.schema)
