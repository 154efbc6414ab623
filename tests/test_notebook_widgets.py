"""Every Play/slider widget of a course notebook redraws without error, for every frame.

The notebooks themselves carry no test scaffolding (no "frames drawn" cells):
this test executes a notebook top to bottom with nbclient at the small size
(as nbval does), then appends one cell that finds every
:class:`svmlab.viz._common.FramePlayer` alive in the kernel (``gc.get_objects()``)
and drives it through all its frames with :meth:`FramePlayer.drive`, the way a
reader drags the slider.  Any exception in a cell or in a redraw fails the test.

``NOTEBOOKS_WITH_PLAYERS`` lists the notebooks checked here; a notebook that
gains a widget is added to it (each costs one execution of the notebook).
Notebooks whose explorers are already driven frame by frame in
``tests/test_viz_*`` on the same data may be left out.
"""

import json
import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"

#: notebooks whose widgets are driven here (file stems in notebooks/)
NOTEBOOKS_WITH_PLAYERS = ["01_smo_geometry"]

#: the cell appended after the notebook's last cell
DRIVE_CELL = """
import gc as _gc, json as _json
from svmlab.viz._common import FramePlayer as _FramePlayer
_report = []
for _p in [o for o in _gc.get_objects() if isinstance(o, _FramePlayer)]:
    _shown = _p.frame
    _n = _p.drive()
    _report.append({"n_frames": _p.n_frames, "driven": _n, "shown_before": _shown})
print("DRIVE-REPORT " + _json.dumps(_report))
"""


def _execute_and_drive(nb, path, monkeypatch, timeout=600):
    """Execute ``nb`` (cwd ``path``) plus :data:`DRIVE_CELL`; return the report."""
    monkeypatch.setenv("SVMLAB_NOTEBOOK_SIZE", "small")
    monkeypatch.setenv("SVMLAB_PROGRESS", "0")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb.cells.append(nbformat.v4.new_code_cell(DRIVE_CELL))
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path)}})
    client.execute()   # raises CellExecutionError on any error, in any cell
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    line = [ln for ln in out.splitlines() if ln.startswith("DRIVE-REPORT ")]
    assert line, f"the driving cell printed no report: {out!r}"
    return json.loads(line[0][len("DRIVE-REPORT "):])


@pytest.mark.parametrize("name", NOTEBOOKS_WITH_PLAYERS)
def test_every_widget_redraws_every_frame(name, monkeypatch):
    path = NB_DIR / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:               # execute from scratch, not the stored outputs
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    report = _execute_and_drive(nb, NB_DIR, monkeypatch)
    assert report, f"{name}: no FramePlayer found after executing the notebook"
    for r in report:
        assert r["driven"] == r["n_frames"] >= 1, r
        # each widget showed a frame when it was displayed
        assert r["shown_before"] is not None and 0 <= r["shown_before"] < r["n_frames"], r


def test_a_broken_redraw_fails_the_drive(tmp_path, monkeypatch):
    """The check above can fail: a player whose frame 3 raises makes the run fail
    (frames 0 to 2 draw; the healthy path is the test above)."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(
        "import matplotlib\nmatplotlib.use('Agg')\n"
        "from svmlab.viz._common import FramePlayer, new_figure\n"
        "fig = new_figure(figsize=(2, 2))\nax = fig.add_subplot()\n(line,) = ax.plot([0, 1])\n"
        "def update(k):\n"
        "    if k == 3:\n        raise RuntimeError('broken frame 3')\n"
        "    line.set_ydata([0, k])\n"
        "p = FramePlayer(fig, 5, update)"))
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="broken frame 3"):
        _execute_and_drive(nb, tmp_path, monkeypatch, timeout=120)
