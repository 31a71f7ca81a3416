"""A walk through the Python API: one run, a sweep, the figures.

Run from the repository root after `pip install .`:
    python3 examples/quickstart.py [--out DIR]
(CI runs it; it takes a few seconds.)
"""

import argparse
import os

import fabriclab as fl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ap = argparse.ArgumentParser()
ap.add_argument("--out", default=os.path.join("out", "examples"), help="where the figures go")
out = ap.parse_args().out
os.makedirs(out, exist_ok=True)

# 1. One run, with overrides of any dotted config key.
r = fl.run(os.path.join(ROOT, "experiments", "quickstart.toml"), **{"protocol.name": "homa", "run.duration_ms": 1.0})
print(r)
print("goodput %.1f Gbps/host, p99 slowdown %.2f" % (r.summary["goodput_gbps"], r.summary["slowdown"]["all"]["p99"]))
done = r.messages.dropna(subset=["fct_us"])
print("%d of %d messages completed; median FCT %.1f us" % (len(done), len(r.messages), done["fct_us"].median()))

# 2. Config errors are Python exceptions with the CLI's message.
try:
    fl.run(os.path.join(ROOT, "experiments", "quickstart.toml"), **{"workload.load": 2.5})
except fl.ConfigError as e:
    print("ConfigError:", e)

# 3. A sweep (local worker processes; pass scheduler="tcp://host:8786" for a Dask cluster).
t = fl.sweep(os.path.join(ROOT, "experiments", "sweeps", "quickstart-loads.toml"), jobs=2)
print(t[["protocol.name", "workload.load", "goodput_gbps", "tor_queue_max_bytes", "slowdown_all_p99"]])

# 4. The papers' figures from the table.
fl.plot.queue_vs_goodput(t).savefig(os.path.join(out, "queue_vs_goodput.png"))
fl.plot.slowdown_by_group(t, stable_only=False).savefig(os.path.join(out, "slowdown_by_group.png"))
print("figures in", out)
