"""fabriclab: Python side of the fabriclab simulator.

``run`` and ``sweep`` use the compiled core (``fabriclab._core``, built by
``pip install .``), as do ``claims`` and ``judge`` (the reproductions' verdict
engine); it is imported lazily on first use, so that ``fabriclab.plot`` (used
by ``fabriclab repro``) works with a plain ``PYTHONPATH=python`` too.
``dir(fabriclab)`` lists the lazy names, so completion offers them.

``__version__`` is the Cargo workspace version (Cargo.toml), the one source of
the compiled core's version and of the wheel's metadata (maturin reads it).
"""

from ._errors import ConfigError

__all__ = [
    "run", "validate", "protocols", "experiments", "experiments_dir", "sweep", "read_traces", "read_queues", "read_ops",
    "ConfigError",
    "Result", "plot", "claims", "judge", "repro_papers",
]

# Names __getattr__ provides on first use (with __all__, what __dir__ lists).
_LAZY = ("__version__",)


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_LAZY))


def _version():
    """The Cargo version: the compiled core's (built with it), else the checkout's
    Cargo.toml (a plain PYTHONPATH=python), else the installed package's metadata."""
    import os
    import re

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _core

        return _core.__version__
    except ImportError:
        pass
    cargo = os.path.join(here, "..", "..", "Cargo.toml")
    if os.path.exists(cargo):
        with open(cargo) as f:
            m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', f.read(), re.M | re.S)
        if m:
            return m.group(1)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fabriclab")
    except PackageNotFoundError:
        return "unknown"


def __getattr__(name):
    # Lazy: pandas, tqdm and the extension load only when a run, sweep or judgement is asked for.
    if name in ("run", "validate", "protocols", "experiments", "experiments_dir", "Result", "read_traces",
                "read_queues", "read_ops"):
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
    if name == "__version__":
        global __version__
        __version__ = _version()
        return __version__
    raise AttributeError("module 'fabriclab' has no attribute %r" % name)
