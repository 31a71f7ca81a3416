"""A GOAL run from Python: ``Result.ops`` joined to ``Result.messages``,
``fl.read_ops`` on a run directory, and examples/goal_timeline.py on a tiny
schedule (docs/applications.md)."""

import subprocess
import sys

import fabriclab as fl
from conftest import repo

# Rank 0 sends 1000 B to rank 1, which computes 200 ns and answers 10 B; rank 0 then computes 50 ns.
PING_PONG = """num_ranks 2
rank 0 {
  a: send 1000b to 1 tag 1
  b: recv 10b from 1 tag 2
  c: calc 50
  c requires b
}
rank 1 {
  a: recv 1000b from 0 tag 1
  b: calc 200
  c: send 10b to 0 tag 2
  b requires a
  c requires b
}
"""

RING = repo("experiments", "goal", "ring-allreduce.toml")


def test_result_ops_join_messages_and_mark_the_critical_path(tmp_path):
    goal = tmp_path / "pingpong.goal"
    goal.write_text(PING_PONG)
    r = fl.run(RING, progress=False, **{"workload.goal_file": str(goal)})
    g = r.summary["goal"]
    assert g["complete"] and g["ops"] == 6 and g["critical_path"]["ops"] == 6
    ops = r.ops
    assert list(ops["kind"]) == ["send", "recv", "calc", "recv", "calc", "send"]
    assert ops["on_critical_path"].all()
    sends = ops[ops["kind"] == "send"].merge(r.messages, left_on="msg_id", right_on="id", suffixes=("", "_msg"))
    assert len(sends) == 2
    assert (abs(sends["start_us"] - sends["start_us_msg"]) < 1e-9).all()
    assert (abs(sends["end_us"] - sends["end_us_msg"]) < 1e-9).all()
    # By hand: start, the ping's flight, 0.2 us of calc, the pong's flight, 0.05 us of calc.
    fct = sends["fct_us"].sum()
    assert abs(g["completion_us"] - (1.0 + fct + 0.25)) < 1e-6
    assert abs(ops["end_us"].max() - g["completion_us"]) < 1e-6


def test_other_runs_have_no_ops_and_read_ops_reads_a_run_directory(tmp_path):
    r = fl.run(repo("experiments", "micro", "one-message.toml"), progress=False)
    assert r.ops is None and "goal" not in r.summary
    goal = tmp_path / "pingpong.goal"
    goal.write_text(PING_PONG)
    out = tmp_path / "run"
    p = subprocess.run([sys.executable, "-m", "fabriclab", "run", RING, "-q", "--out", str(out),
                        "--set", "workload.goal_file=\"%s\"" % goal], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    ops = fl.read_ops(out)
    assert len(ops) == 6 and ops["on_critical_path"].dtype == bool
    assert ops["calc_ns"].dropna().tolist() == [50.0, 200.0]


def test_goal_timeline_example_runs_on_a_tiny_schedule(tmp_path):
    goal = tmp_path / "pingpong.goal"
    goal.write_text(PING_PONG)
    p = subprocess.run([sys.executable, repo("examples", "goal_timeline.py"), "--schedule", str(goal),
                        "--protocol", "dctcp", "--out", str(tmp_path)], cwd=repo(), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert "dctcp: 2 ranks, 6 ops, completion" in p.stdout
    assert "critical path: 6 ops" in p.stdout
    assert (tmp_path / "goal_timeline.png").stat().st_size > 0
