import subprocess
import sys

from conftest import repo


def test_quickstart_example_runs(tmp_path):
    p = subprocess.run([sys.executable, repo("examples", "quickstart.py"), "--out", str(tmp_path)], cwd=repo(),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "ConfigError: config error at `workload.load`" in p.stdout
    assert (tmp_path / "queue_vs_goodput.png").stat().st_size > 0
    assert (tmp_path / "slowdown_by_group.png").stat().st_size > 0
