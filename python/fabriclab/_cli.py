"""The ``fabriclab`` console script (and ``python -m fabriclab``): the Rust
command line, compiled into the extension (``fabriclab._core.cli``), so every
subcommand of the ``fabriclab`` binary works from the wheel, with its exit
codes and messages.

Before handing over it points the CLI at this installed package:
- child processes (sweep points, benchmark scenarios) run
  ``python -m fabriclab`` with this interpreter, as the binary runs itself;
- ``PYTHON`` (the interpreter ``repro``'s figures and ``sweep --dask`` use) is
  this one, ``FABRICLAB_ROOT`` this package's directory (its ``experiments/``
  are the bundled experiments, ``fabriclab run sird/balanced-wkc``) and
  ``FABRICLAB_PYTHON`` the directory it is installed in; each only if unset;
- SIGINT gets its default action, as in the binary: a run stops at once, and
  a sweep's own handler kills its points and exits 130.
"""

import os
import signal
import sys


def main(argv=None) -> int:
    """Runs ``fabriclab ARGS...`` (``argv``, default ``sys.argv[1:]``) and
    returns its exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ.setdefault("PYTHON", sys.executable)
    os.environ.setdefault("FABRICLAB_ROOT", here)
    os.environ.setdefault("FABRICLAB_PYTHON", os.path.dirname(here))
    from ._core_import import core

    try:
        before = signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # not the main thread: leave the interpreter's handler
        before = None
    try:
        return core().cli(["fabriclab"] + args, [sys.executable, "-m", "fabriclab"])
    finally:
        if before is not None:  # called from Python code that goes on (not the console script)
            signal.signal(signal.SIGINT, before)


if __name__ == "__main__":
    sys.exit(main())
