"""``python -m fabriclab._point '{"base": ..., "overrides": [...]}'``: runs one
sweep point in this fresh process and prints ``[summary_json, error,
peak_rss_mb]`` as JSON (the process's own peak, as the CLI measures it)."""

import json
import resource
import sys

from ._sweep import run_point


def peak_rss_mb():
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: KB, macOS: bytes
    return round((kb / 1024.0 if sys.platform == "darwin" else kb) / 1024.0, 1)


if __name__ == "__main__":
    p = json.loads(sys.argv[1])
    summary, error = run_point(p["base"], p["overrides"])
    print(json.dumps([summary, error, peak_rss_mb()]))
