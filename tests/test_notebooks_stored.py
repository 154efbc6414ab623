"""The notebooks are stored executed, top to bottom, with their outputs.

nbval only compares cells that have an execution count: a notebook saved
without running it would "pass" while checking nothing.  This test fails if
any code cell of ``notebooks/*.ipynb`` was stored unexecuted, if the cells
were not executed once in order (execution counts 1, 2, ..., n), if a cell
that must produce output (it prints, displays, shows a figure or ends in a
bare expression) has none, or if an error was stored.

Regenerate a notebook with (from the repository root)::

    SVMLAB_NOTEBOOK_SIZE=small SVMLAB_DATA=... NUMBA_CACHE_DIR=... \\
    jupyter nbconvert --to notebook --execute --inplace \\
        --ExecutePreprocessor.record_timing=False notebooks/NB.ipynb
"""

import ast
import json
from pathlib import Path

import pytest

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))

# the eight notebooks; each must exist once it is written
EXPECTED = [
    "00_primer", "00_tour", "01_smo_geometry", "02_smo_heuristics", "03_cutting_plane",
    "04_ordinal_regression", "05_irwls", "06_decomposition", "07_scale_up",
]


def _code_cells(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _source(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _must_output(src):
    """Does this cell necessarily produce output when run?"""
    if any(tok in src for tok in ("print(", "display(", "plt.show()")):
        return True
    code = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("%"))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    if not tree.body or src.rstrip().endswith(";"):
        return False
    last = tree.body[-1]
    # a bare name/attribute/subscript at the end is displayed (calls may return None)
    return isinstance(last, ast.Expr) and isinstance(last.value, (ast.Name, ast.Attribute,
                                                                  ast.Subscript))


def test_notebooks_exist():
    assert NOTEBOOKS, f"no notebooks in {NB_DIR}"
    names = {p.stem for p in NOTEBOOKS}
    # every stored notebook is one of the numbered course notebooks
    assert names <= set(EXPECTED), f"unexpected notebooks: {sorted(names - set(EXPECTED))}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_code_cell_executed_in_order(path):
    cells = [c for c in _code_cells(path) if _source(c).strip()]
    assert cells, f"{path.name} has no code"
    missing = [i for i, c in enumerate(cells) if c.get("execution_count") is None]
    assert not missing, f"{path.name}: code cells {missing} are stored unexecuted"
    counts = [c["execution_count"] for c in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{path.name}: execution counts {counts} -- re-run the whole notebook top to bottom "
        "(nbconvert --execute --inplace)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_outputs_stored_and_no_errors(path):
    cells = [c for c in _code_cells(path) if _source(c).strip()]
    empty = [i for i, c in enumerate(cells) if _must_output(_source(c)) and not c["outputs"]]
    assert not empty, f"{path.name}: cells {empty} should have stored outputs but have none"
    errors = [(i, o.get("ename")) for i, c in enumerate(cells) for o in c["outputs"]
              if o["output_type"] == "error"]
    assert not errors, f"{path.name}: stored errors {errors}"
    assert sum(len(c["outputs"]) for c in cells) > 0


def test_detector_catches_unexecuted_cells(tmp_path):
    """The checks above fail on a notebook saved without running it."""
    nb = {"cells": [{"cell_type": "code", "source": "print(1)", "execution_count": None,
                     "outputs": [], "metadata": {}}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    p = tmp_path / "x.ipynb"
    p.write_text(json.dumps(nb))
    with pytest.raises(AssertionError, match="unexecuted"):
        test_every_code_cell_executed_in_order(p)
    nb["cells"][0]["execution_count"] = 1
    p.write_text(json.dumps(nb))
    with pytest.raises(AssertionError, match="should have stored outputs"):
        test_outputs_stored_and_no_errors(p)
    assert _must_output("player") and _must_output("x = 1\nfig")
    assert not _must_output("x = 1") and not _must_output("plt.plot(x);")
