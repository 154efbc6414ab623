"""Every notebook runs to the end offline with only the embedded a9a, and every
static figure it draws is readable in a 1280 px browser.

Each notebook is executed with nbclient at the small size (as nbval runs it),
with no benchmark files (``SVMLAB_DATA`` unset, an empty user cache) and no
network (``SVMLAB_OFFLINE=1``): only the a9a shipped inside svmlab.  A cell
put before the notebook's first cell wraps ``matplotlib.pyplot.show`` and
hooks IPython's ``post_execute`` event (registered before the inline
backend's, so it sees each figure before it is shown and closed) to check
every pyplot figure with :func:`svmlab.viz.text_problems` (no text under 9
CSS points, no overlaps, nothing outside the figure) and its width
(at most :data:`svmlab.viz.MAX_FIGURE_PX` CSS px).  The explorers' figures are
checked in ``tests/test_viz_readability.py``.

07 without the benchmark files: its section 1 says which cases it skipped
and runs on a9a alone; the rest of it needs nothing else.
"""

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(p.stem for p in NB_DIR.glob("*.ipynb"))

HOOK = r'''
import json as _json
import matplotlib as _mpl
import matplotlib.pyplot as _plt
from svmlab.viz import MAX_FIGURE_PX as _MAXW, text_problems as _tp

_FIG_REPORT = []

def _check_open_figures():
    for _n in _plt.get_fignums():
        _f = _plt.figure(_n)
        if getattr(_f, "_svmlab_checked", False):
            continue
        _f._svmlab_checked = True
        _w = _f.get_figwidth() * _f.dpi
        _FIG_REPORT.append({"width": _w, "problems": _tp(_f)})

_orig_show = _plt.show
def _show(*a, **k):
    _check_open_figures()
    return _orig_show(*a, **k)
_plt.show = _show
get_ipython().events.register("post_execute", _check_open_figures)
'''

REPORT = 'print("FIGURE-REPORT " + _json.dumps(_FIG_REPORT))'


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_offline_and_its_figures_are_readable(name, tmp_path, monkeypatch):
    monkeypatch.setenv("SVMLAB_NOTEBOOK_SIZE", "small")
    monkeypatch.setenv("SVMLAB_PROGRESS", "0")
    monkeypatch.setenv("SVMLAB_OFFLINE", "1")
    monkeypatch.delenv("SVMLAB_DATA", raising=False)
    monkeypatch.setenv("SVMLAB_CACHE", str(tmp_path / "empty-cache"))
    nb = nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells.insert(0, nbformat.v4.new_code_cell(HOOK))
    nb.cells.append(nbformat.v4.new_code_cell(REPORT))
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                                     resources={"metadata": {"path": str(NB_DIR)}})
    client.execute()        # any error in any cell fails here, with its traceback
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    line = [ln for ln in out.splitlines() if ln.startswith("FIGURE-REPORT ")]
    assert line, out
    report = json.loads(line[0][len("FIGURE-REPORT "):])
    from svmlab.viz import MAX_FIGURE_PX

    shows = sum(c.source.count("plt.show()") for c in nb.cells if c.cell_type == "code")
    assert len(report) >= min(shows, 1), (name, shows, report)
    for k, fig in enumerate(report):
        assert fig["width"] <= MAX_FIGURE_PX, (name, k, fig["width"])
        assert not fig["problems"], (name, k, fig["problems"])
    # no warning reached a student's eyes (stderr of any cell)
    for c in nb.cells:
        for o in c.get("outputs", []):
            if o.get("name") == "stderr":
                assert "Warning" not in o["text"], (name, o["text"][:300])
    if name == "07_scale_up":
        text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
        assert "section 1 runs on: a9a" in text and "skipped w8a" in text
