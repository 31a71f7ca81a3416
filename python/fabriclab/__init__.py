"""fabriclab: Python side of the fabriclab simulator.

``run`` and ``sweep`` use the compiled core (``fabriclab._core``, built by
``pip install .``), as do ``claims`` and ``judge`` (the reproductions' verdict
engine); it is imported lazily on first use, so that ``fabriclab.plot`` (used
by ``fabriclab repro``) works with a plain ``PYTHONPATH=python`` too.
"""

from ._errors import ConfigError

__all__ = ["run", "sweep", "read_traces", "ConfigError", "Result", "plot", "claims", "judge", "repro_papers"]


def __getattr__(name):
    # Lazy: pandas, tqdm and the extension load only when a run, sweep or judgement is asked for.
    if name in ("run", "Result", "read_traces"):
        from . import _run

        return getattr(_run, name)
    if name == "sweep":
        from ._sweep import sweep

        return sweep
    if name in ("claims", "judge", "repro_papers"):
        from . import _claims

        return getattr(_claims, name)
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError("module 'fabriclab' has no attribute %r" % name)
