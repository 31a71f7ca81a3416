"""examples/sweep.ipynb, executed as Jupyter would (nbclient, an ipykernel
kernel) outside the checkout: it runs a sweep and draws its figure."""

import base64
import os
import sys

import pytest

import fabriclab as fl
from conftest import repo

NOTEBOOK = repo("examples", "sweep.ipynb")


def test_notebook_is_committed_without_outputs():
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)


def test_notebook_runs_a_sweep_and_draws_its_figure(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # The kernel must be this interpreter (its kernelspec runs "python" from PATH): a last cell
    # says which fabriclab it imported.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    nb.cells.append(nbformat.v4.new_code_cell("print(fl.__file__)", id="which"))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    cells = {c.id: c for c in nb.cells}
    assert cells["which"].outputs[0]["text"].strip() == fl.__file__

    # No cell wrote to stderr: in particular no "IProgress not found" (ipywidgets is there).
    for c in nb.cells:
        for o in c.get("outputs", []):
            assert o.get("name") != "stderr", (c.id, o.get("text"))

    # The sweep's table has its four points, the figure came out as a PNG.
    table = cells["sweep"].outputs[-1]["data"]["text/plain"]
    assert table.count("sird") == 2 and table.count("homa") == 2
    pngs = [o["data"]["image/png"] for o in cells["queue-vs-goodput"].outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 1
    assert base64.b64decode(pngs[0]).startswith(b"\x89PNG\r\n\x1a\n")
    assert "fabriclab.Result" in cells["run"].outputs[-1]["data"]["text/html"]
