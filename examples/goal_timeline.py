"""A GOAL schedule run on the fabric, and its ranks' timeline drawn from ops.csv.

Run from the repository root after `pip install .`:
    python3 examples/goal_timeline.py [--schedule FILE.goal] [--protocol dctcp] [--out DIR]
Without --schedule it runs experiments/goal/ring-allreduce.toml (a ring all-reduce of 1 MB on
16 ranks of a k = 4 fat tree, docs/applications.md); with one, the same fabric runs that file.
"""

import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

import fabriclab as fl  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLOURS = {"calc": "#ff7f0e", "send": "#1f77b4", "recv": "#9ecae1"}
LANES = ["calc", "send", "recv"]  # a rank's sends and recvs overlap: each kind in a lane of its own

ap = argparse.ArgumentParser()
ap.add_argument("--schedule", help="a GOAL file (default: the experiment's ring all-reduce)")
ap.add_argument("--protocol", default="sird")
ap.add_argument("--out", default=os.path.join("out", "examples"), help="where the figure goes")
args = ap.parse_args()
os.makedirs(args.out, exist_ok=True)

overrides = {"protocol.name": args.protocol}
if args.schedule:
    overrides["workload.goal_file"] = os.path.abspath(args.schedule)
r = fl.run(os.path.join(ROOT, "experiments", "goal", "ring-allreduce.toml"), progress=False, **overrides)
g = r.summary["goal"]
if not g["complete"]:
    raise SystemExit("the schedule did not finish: %d ranks still wait" % g["ranks_waiting"])
path = g["critical_path"]
print("%s: %d ranks, %d ops, completion %.3f us (makespan %.3f us)" % (
    args.protocol, g["ranks"], g["ops"], g["completion_us"], g["makespan_us"]))
print("critical path: %d ops, network %.1f%%, calc %.1f%%, CPU wait %.1f%%" % (
    path["ops"], 100 * path["network_share"], 100 * path["calc_share"], 100 * path["cpu_wait_share"]))

# Each send's message (ops.msg_id = messages.id): the slowest send on the critical path.
ops = r.ops
sends = ops[ops["kind"] == "send"].merge(r.messages, left_on="msg_id", right_on="id", suffixes=("", "_msg"))
slowest = sends[sends["on_critical_path"]].sort_values("fct_us").iloc[-1]
print("slowest critical send: rank %d -> %d, %d bytes, FCT %.2f us, slowdown %.2f" % (
    slowest["rank"], slowest["peer"], slowest["bytes"], slowest["fct_us"], slowest["slowdown"]))

# The timeline: one row per rank, bars from start to end by kind, the critical path outlined.
fig, ax = plt.subplots(figsize=(9, 0.3 * g["ranks"] + 1.5))
done = ops.dropna(subset=["start_us", "end_us"])
for (rank, kind), rows in done.groupby(["rank", "kind"]):
    y = rank + LANES.index(kind) / 3.0
    bars = list(zip(rows["start_us"], rows["end_us"] - rows["start_us"]))
    ax.broken_barh(bars, (y, 0.3), facecolors=COLOURS[kind])
crit = done[done["on_critical_path"]]
for _, o in crit.iterrows():
    y = o["rank"] + LANES.index(o["kind"]) / 3.0
    ax.broken_barh([(o["start_us"], o["end_us"] - o["start_us"])], (y, 0.3), facecolors="none",
                   edgecolors="#d62728", linewidth=1.2)
ax.set_yticks([r + 0.5 for r in range(g["ranks"])], ["rank %d" % r for r in range(g["ranks"])])
ax.invert_yaxis()
ax.set_xlabel("simulated time (us)")
ax.set_title("GOAL ranks' timeline (%s); red: critical path" % args.protocol)
handles = [mpatches.Patch(color=c, label=k) for k, c in COLOURS.items()]
ax.legend(handles=handles, loc="upper right", fontsize=8)
fig.tight_layout()
png = os.path.join(args.out, "goal_timeline.png")
fig.savefig(png)
print("figure in", png)
