"""Imports the compiled core with an error that says how to build it."""


def core():
    try:
        from . import _core
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError(
            "fabriclab's compiled core is missing: install the package with `pip install .` "
            "from the repository root (needs Rust and maturin)"
        ) from e
    return _core
