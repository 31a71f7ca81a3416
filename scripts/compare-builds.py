#!/usr/bin/env python3
"""Compares the speed of fabriclab binaries on one bench scenario.

    scripts/compare-builds.py [--runs N] [--scale S] SCENARIO BINARY BINARY...

Runs `BINARY bench-one SCENARIO --scale S` N times for each binary, taking the
binaries in turn (A B A B ...), so that a shared machine's drift from one
minute to the next falls on all of them alike. Every run of every binary
must simulate the same thing (events, packet-hops, goodput, completions):
builds may differ in speed only. Prints each binary's user CPU time, median
[min, max], and the build its records name ("release" or "pgo"). This is how docs/performance.md compares two commits or two
builds on a noisy machine.
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys

SAME = ("events", "packet_hops", "goodput_gbps", "messages_completed")


def user_time_of(cmd):
    """Runs `cmd`; returns (its stdout, the user CPU seconds it took)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr.strip()}")
    return out.stdout, resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per binary (default 5)")
    ap.add_argument("--scale", type=float, default=1.0, help="the bench --scale (default 1)")
    ap.add_argument("scenario", help="a name from `fabriclab bench --list`")
    ap.add_argument("binaries", nargs="+", metavar="binary")
    a = ap.parse_args()
    if a.runs < 1:
        sys.exit(f"error: --runs must be at least 1, got {a.runs}")
    if not a.scale > 0:
        sys.exit(f"error: --scale must be above 0, got {a.scale}")
    times = {b: [] for b in a.binaries}
    builds = {}
    reference = None
    for _ in range(a.runs):
        for b in a.binaries:
            out, t = user_time_of([b, "bench-one", a.scenario, "--scale", str(a.scale)])
            rec = json.loads(out)
            run = {f: rec[f] for f in SAME}
            if reference is None:
                reference = (b, run)
            elif run != reference[1]:
                sys.exit(f"error: {b} simulated something else than {reference[0]}: {run} vs {reference[1]}")
            times[b].append(t)
            builds[b] = rec.get("build", "?")
    print(f"{a.scenario} --scale {a.scale}, {a.runs} alternated runs each; user time, median [min, max]")
    for b, ts in times.items():
        print(f"  {statistics.median(ts):7.3f} s [{min(ts):.3f}, {max(ts):.3f}]  {builds[b]:<7}  {b}")
    print(f"  same run: {', '.join(f'{k} {v}' for k, v in reference[1].items())}")


if __name__ == "__main__":
    main()
