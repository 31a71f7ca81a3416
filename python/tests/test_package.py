"""The package as a notebook user meets it: version, completion, typing marker, help."""

import inspect
import os
import pydoc
import re
import subprocess
import sys

import fabriclab as fl
from conftest import repo

LAZY = ["run", "validate", "protocols", "experiments", "experiments_dir", "sweep", "read_traces", "read_queues", "read_ops", "Result", "plot", "claims", "judge", "repro_papers", "__version__"]


def cargo_version():
    with open(repo("Cargo.toml")) as f:
        return re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', f.read(), re.M | re.S).group(1)


def test_version_is_the_cargo_version():
    assert fl.__version__ == cargo_version()
    from fabriclab import _core

    assert fl.__version__ == _core.__version__


def test_dir_lists_the_lazy_names_without_loading_them():
    # In a fresh interpreter: dir() must offer the names but import neither pandas nor the core.
    code = ("import sys, fabriclab as fl; names = dir(fl); "
            "print(','.join(names)); print('pandas' in sys.modules, 'fabriclab._core' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(fl.__file__)),
                                                                    os.environ.get("PYTHONPATH")] if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    names, loaded = out.splitlines()
    assert set(LAZY) <= set(names.split(","))
    assert loaded == "False False"
    assert all(hasattr(fl, n) for n in LAZY)


def test_package_is_marked_typed():
    # PEP 561: the marker ships inside the installed package (maturin's python-source copies it).
    assert os.path.isfile(os.path.join(os.path.dirname(fl.__file__), "py.typed"))


def test_help_of_run_documents_every_parameter():
    doc = pydoc.render_doc(fl.run, renderer=pydoc.plaintext)
    params = inspect.signature(fl.run).parameters
    assert {"config", "frame", "progress", "messages", "force", "overrides"} <= set(params)
    for name in params:
        assert re.search(r"^\s+(\*\*)?%s\b" % name, doc, re.M), "help(fl.run) does not document %r" % name


def test_ci_runs_the_readme_test_command():
    with open(repo("README.md")) as f:
        readme = f.read()
    m = re.search(r"^# the tests \(what CI runs.*\n(.+)$", readme, re.M)
    assert m and "pip install '.[test]'" in m.group(1)
    with open(repo(".ci", "run")) as f:
        assert "(%s)" % m.group(1) in f.read()
