"""fabriclab: Python side of the fabriclab simulator.

``run`` and ``sweep`` use the compiled core (``fabriclab._core``, built by
``pip install .``), imported lazily on first use, so that ``fabriclab.plot``
(used by ``fabriclab repro``) works with a plain ``PYTHONPATH=python`` too.
"""

from ._errors import ConfigError

__all__ = ["run", "sweep", "read_traces", "ConfigError", "Result", "plot"]


def __getattr__(name):
    # Lazy: pandas, tqdm and the extension load only when a run or sweep is asked for.
    if name in ("run", "Result", "read_traces"):
        from . import _run

        return getattr(_run, name)
    if name == "sweep":
        from ._sweep import sweep

        return sweep
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError("module 'fabriclab' has no attribute %r" % name)
