"""The example notebook (assets/notebooks/chakrakit_tour.ipynb) runs headless, every cell
without an error, in a fresh kernel that imports the module under test."""

import nbformat
from nbclient import NotebookClient

from conftest import repo


def test_the_example_notebook_runs():
    path = repo("assets", "notebooks", "chakrakit_tour.ipynb")
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": repo("assets", "notebooks")}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = "".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "idle_time(us)" in shown and "COMMUNICATION" in shown and "step_ns" in shown
