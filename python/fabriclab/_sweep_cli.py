"""``python3 -m fabriclab._sweep_cli FILE [--dask ADDRESS]``: a sweep with
:func:`fabriclab.sweep`, locally or on a Dask cluster, writing the CLI's
layout. ``fabriclab sweep --dask`` hands over to it (``python -m fabriclab``
is the whole command line, whose ``sweep`` without ``--dask`` runs the points
as the binary does)."""

import argparse
import os
import sys


def main(argv=None):
    s = argparse.ArgumentParser(prog="python3 -m fabriclab._sweep_cli",
                                description="run a sweep file locally or on a Dask cluster")
    s.add_argument("file")
    s.add_argument("--dask", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://host:8786")
    s.add_argument("--jobs", "-j", type=int, default=None, help="local worker processes (default: all cores)")
    s.add_argument("--out", help="output directory (default out/sweeps/<file stem>)")
    s.add_argument("--quick", action="store_true", help="apply the file's [quick] overlay")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    a = s.parse_args(argv)

    from . import ConfigError
    from ._sweep import SweepLockedError, sweep

    out = a.out or os.path.join("out", "sweeps", os.path.splitext(os.path.basename(a.file))[0])
    try:
        t = sweep(a.file, jobs=a.jobs, scheduler=a.dask, out=out, quick=a.quick, progress=not a.quiet)
    except (ConfigError, SweepLockedError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    failed = int((t["status"] != "ok").sum())
    print("sweep: %d points, %d failed; wrote results.csv to %s" % (len(t), failed, out))
    if failed:
        print("error: %d of %d points failed (see the table's error column)" % (failed, len(t)), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
