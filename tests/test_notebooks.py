"""The research notebooks: stored without outputs, and each one runs headless in small mode.

Each notebook is executed with nbclient in a fresh ``python3`` kernel (jupyter_client launches
it with this interpreter, so the same virtual environment), with ``BIGTWO_NOTEBOOK_SMALL=1``
(tiny budgets) and ``BIGTWO_NOTEBOOK_RUNS`` pointing into ``tmp_path``; the kernel's working
directory is ``tmp_path`` too, so training runs write nothing into the repository. Any cell
error fails the test. Clear outputs before committing a notebook (in Jupyter, or with
nbconvert installed: ``jupyter nbconvert --clear-output --inplace notebooks/*.ipynb``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = ["01_quickstart.ipynb", "02_variants.ipynb", "03_train_and_evaluate.ipynb"]
NEEDS = {"03_train_and_evaluate.ipynb": ["torch", "tensorboard"]}
CELL_TIMEOUT_S = 600


def read(name: str):
    return nbformat.read(NOTEBOOK_DIR / name, as_version=4)


def test_every_notebook_is_listed():
    assert sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_stored_without_outputs(name):
    nb = read(name)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [], f"{name}: code cell {i} has stored outputs; clear them before committing"
        assert cell.execution_count is None, f"{name}: code cell {i} has an execution count; clear outputs"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_starts_with_an_explanation(name):
    nb = read(name)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.lstrip().startswith("# "), (
        f"{name}: the first cell must be a markdown title and explanation"
    )
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_runs_in_small_mode(name, tmp_path, monkeypatch):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    for module in NEEDS.get(name, []):
        pytest.importorskip(module)
    from nbclient import NotebookClient

    monkeypatch.setenv("BIGTWO_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("BIGTWO_NOTEBOOK_RUNS", str(tmp_path / "runs"))
    nb = read(name)
    client = NotebookClient(
        nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError naming the cell on any error
    print(f"{name}: {time.perf_counter() - start:.1f} s")
    if name == "03_train_and_evaluate.ipynb":
        checkpoints = list((tmp_path / "runs").glob("*/checkpoints/*.pt"))
        assert checkpoints, "notebook 03 should write its run under BIGTWO_NOTEBOOK_RUNS"
