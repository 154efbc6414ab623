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
    "04_ordinal_regression", "05_irwls", "06_decomposition", "07_scale_up", "08_svm_family",
    "09_linear_svm",
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


# --------------------------------------------------------------------------
# what a student sees: no scaffolding, the Colab cell, no leaked answer,
# figures that fit the page, offline data
# --------------------------------------------------------------------------
def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_test_scaffolding_is_in_tags_not_in_the_cells(path):
    for c in _code_cells(path):
        src = _source(c)
        assert "NBVAL" not in src.upper().replace("NBVAL-", ""), src[:80]
        assert not src.lstrip().startswith("# nbval"), src[:80]
        for t in _tags(c):
            assert not t.startswith("nbval") or t in ("nbval-ignore-output", "nbval-skip",
                                                      "nbval-check-output", "nbval-raises-exception"), t
    assert any("nbval-ignore-output" in _tags(c) for c in _code_cells(path))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_first_code_cell_installs_svmlab_in_colab_only(path):
    import re

    first = _code_cells(path)[0]
    src = _source(first)
    assert "colab-setup" in _tags(first) and "nbval-ignore-output" in _tags(first)
    lines = [ln for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines[:2] == ["import sys", 'if "google.colab" in sys.modules:'], lines
    assert all(ln.startswith("    ") for ln in lines[2:]) and len(lines) == 3
    # the install line, or (while the repository is not named) a clear stop
    # instead of an install from a placeholder address (svmlab.course.links)
    assert (re.fullmatch(r'    %pip install --quiet "svmlab @ git\+https://github\.com/[\w.-]+/'
                         r'[\w.-]+\.git@[\w.-]+"', lines[2])
            or lines[2].startswith('    raise RuntimeError("this copy of the course does not '
                                   'name its GitHub repository')), lines[2]
    assert "YOUR-" not in src
    assert not first["outputs"], "outside Colab the cell does nothing"
    # the same install address in every notebook
    assert _INSTALL.setdefault("line", lines[2]) == lines[2]


_INSTALL = {}


def _hidden_answer_lines():
    """The text of every reference line an exercise hides (long enough to be
    an answer, not a keyword)."""
    import importlib

    from svmlab.exercises._registry import EXERCISES, lines_of
    from svmlab.reference._source import tagged_lines

    out = {}
    for eid, ex in EXERCISES.items():
        for h in ex.hides:
            mod, qual = h.function.split(":")
            obj = importlib.import_module(f"svmlab.reference.{mod}")
            for part in qual.split("."):
                obj = getattr(obj, part)
            lines = tagged_lines(obj)
            for i in lines_of(h, lines):
                code = lines[i][0].split("#")[0].strip()
                if len(code) >= 16 and any(op in code for op in ("=", "<", ">")):
                    out[code] = eid
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_outputs_hold_no_hidden_answer(path):
    """The stored outputs and the saved widget state (the source panels'
    HTML lives there) never show a line an exercise hides: the notebooks are
    stored executed with the locks on and the starter code."""
    import html as _html

    nb = json.loads(path.read_text(encoding="utf-8"))
    stored = json.dumps([c.get("outputs", []) for c in nb["cells"]]) + json.dumps(
        nb.get("metadata", {}).get("widgets", {}))
    stored = _html.unescape(stored.replace("\\n", "\n").replace('\\"', '"'))
    answers = _hidden_answer_lines()
    assert len(answers) > 20
    leaked = [(eid, code) for code, eid in answers.items() if code in stored]
    assert not leaked, f"{path.name} shows hidden answer lines: {leaked[:5]}"


def test_the_leak_check_can_fail():
    answers = _hidden_answer_lines()
    code = next(c for c, e in answers.items() if e == "01.take_step")
    assert code in json.dumps({"html": code})


def _png_size(b64):
    import base64
    import struct

    raw = base64.b64decode(b64)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", raw[16:24])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_figures_fit_a_1280px_browser(path):
    """JupyterLab in a 1280 px browser, file browser open, gives an output
    848 CSS px: no stored figure is wider than svmlab.viz.MAX_FIGURE_PX (it
    would be scaled down, and its text with it)."""
    from svmlab.viz import MAX_FIGURE_PX

    widths = []
    for c in _code_cells(path):
        for o in c.get("outputs", []):
            png = o.get("data", {}).get("image/png")
            if png:
                w, h = _png_size(png if isinstance(png, str) else "".join(png))
                widths.append(w)
    assert all(w <= MAX_FIGURE_PX for w in widths), (path.name, widths)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_load_only_the_shipped_data(path):
    """Every notebook runs offline with the embedded a9a: the only dataset it
    loads by name is a9a (the others are generated: toy sets, Gauss-M), except
    07, whose section 1 asks datasets.locate first and skips what is missing."""
    import re

    names = set()
    for c in _code_cells(path):
        names |= set(re.findall(r'datasets\.load\(\s*"([\w-]+)"', _source(c)))
    assert names <= {"a9a"}, (path.name, names)
    if path.stem == "07_scale_up":
        src = "\n".join(_source(c) for c in _code_cells(path))
        assert "available_cases(" in src and 'os.environ["SVMLAB_OFFLINE"]' in src
