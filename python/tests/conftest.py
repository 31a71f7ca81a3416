import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def repo(*parts):
    return os.path.join(ROOT, *parts)


def built_cli():
    """The fabriclab binary cargo built here: the tests' profile (README's `cargo test
    --profile checked`) first, then a release build; the release path if neither exists."""
    for profile in ("checked", "release"):
        exe = repo("target", profile, "fabriclab")
        if os.path.exists(exe):
            return exe
    return repo("target", "release", "fabriclab")


QUICKSTART = repo("experiments", "quickstart.toml")
SWEEP = repo("experiments", "sweeps", "quickstart-loads.toml")
# Columns that measure the machine, not the simulation.
MACHINE_COLUMNS = ["wall_time_s", "events_per_s", "peak_rss_mb"]


@pytest.fixture(scope="session")
def local_table():
    import fabriclab as fl

    return fl.sweep(SWEEP, jobs=2, progress=False)


@pytest.fixture
def sigint_raises():
    """Ctrl-C raises KeyboardInterrupt during the test, as in a terminal.

    Python installs that handler only if SIGINT was not ignored when it
    started, and a shell ignores SIGINT in the commands it runs in the
    background; there the interrupt tests would wait for whole runs."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)
