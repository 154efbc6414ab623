"""A stored notebook opened in JupyterLab, before anything runs, shows every explorer's picture.

JupyterLab (headless Chromium, as ``tests/test_browser.py`` drives it) opens
copies of the course notebooks that hold explorers; nothing is run.  An
opened notebook is not trusted, so JupyterLab does not render the widget
views (and there is no kernel state behind them); each explorer output also
carries the picture it showed (:func:`svmlab.viz._common.picture_bundle`),
which JupyterLab renders instead of the widget's text repr
(``VBox(children=(...``, what a student saw before).  For every cell with a
stored widget view: an image in its output area, decoded by the browser, and
no ``VBox(children=`` text.
"""

import json
import shutil
import time
from pathlib import Path

import pytest

from test_browser import CHROME_ARGS, CHROMIUM, _require_browser, _serve

ROOT = Path(__file__).resolve().parents[1]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

pytestmark = pytest.mark.slow


def _explorer_cells(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [i for i, c in enumerate(nb["cells"])
            if any(WIDGET_VIEW in o.get("data", {}) for o in c.get("outputs", []))]


NOTEBOOKS = [p for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if _explorer_cells(p)]


@pytest.fixture
def stored_lab(tmp_path):
    _require_browser()
    work = tmp_path / "nb"
    work.mkdir()
    for p in NOTEBOOKS:
        shutil.copy(p, work / p.name)
    gen = _serve(tmp_path, work)
    url, work = next(gen)
    # every cell in the page (no virtual scrolling), so each can be inspected
    tracker = tmp_path / "jupyter" / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True, exist_ok=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    try:
        yield url, work
    finally:
        gen.close()


def test_every_stored_explorer_shows_its_picture_before_anything_runs(stored_lab):
    from playwright.sync_api import sync_playwright

    url, work = stored_lab
    assert len(NOTEBOOKS) >= 6
    missing, seen = [], 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(90_000)
            for nb in NOTEBOOKS:
                cells_with = _explorer_cells(nb)
                # ?reset: a fresh workspace, only this notebook open
                page.goto(f"{url}/lab/tree/{nb.name}?reset")
                cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
                n_cells = len(json.loads(nb.read_text())["cells"])
                t0 = time.monotonic()
                while cells.count() < n_cells and time.monotonic() - t0 < 90:
                    time.sleep(0.5)
                assert cells.count() == n_cells, f"{nb.name}: {cells.count()} of {n_cells} cells"
                for i in cells_with:
                    cell = cells.nth(i)
                    cell.scroll_into_view_if_needed()
                    imgs = cell.locator(".jp-OutputArea-output img")
                    try:
                        imgs.first.wait_for(state="attached", timeout=30_000)
                        page.wait_for_function(
                            "(el) => Array.from(el.querySelectorAll('.jp-OutputArea-output img'))"
                            ".some(im => im.complete && im.naturalWidth > 100)",
                            arg=cell.element_handle(), timeout=30_000)
                    except Exception as exc:  # noqa: BLE001 - reported below with the cell
                        missing.append(f"{nb.name} cell {i}: no picture ({type(exc).__name__})")
                        continue
                    text = cell.locator(".jp-OutputArea").inner_text()
                    if "VBox(children=" in text:
                        missing.append(f"{nb.name} cell {i}: shows the widget's text repr")
                    seen += 1
                shot = work.parent / f"stored_{nb.stem}.png"
                page.screenshot(path=str(shot))
        finally:
            browser.close()
    assert not missing, "\n".join(missing)
    assert seen == sum(len(_explorer_cells(p)) for p in NOTEBOOKS)
