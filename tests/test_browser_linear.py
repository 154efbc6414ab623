"""A real browser drives notebook 09's dual coordinate descent explorer in
JupyterLab.

Headless Debian ``chromium`` driven by Playwright (never ``playwright
install``) against a JupyterLab server the helpers of ``tests/test_browser.py``
start and stop.  The notebook is a temporary one with the explorer cell of
notebook 09 (``vlin.live_dcd(X, y, C=1.0)`` on the twenty blobs):

* it opens at step 1 and the caption names step 1;
* ``+1`` moves to step 2 (the slider reads 2, the picture changes);
* ``next clipped step`` jumps forward to a step whose caption says the Newton
  step was clipped;
* the C slider, moved with the keyboard, refits: the picture changes and the
  status line's number of coordinate steps follows the new run.

The viewport is 1280 px wide; the picture is shown at its natural size
inside the output area.
"""

import re
import time

import pytest

from test_browser import (CHROME_ARGS, CHROMIUM, _open_and_run_all, _require_browser,  # noqa: I001
                          _serve)

pytestmark = pytest.mark.slow

DEADLINE_S = 300
NOTEBOOK = "linear.ipynb"
CELLS = [
    "from svmlab.viz import linear as vlin\n"
    "from svmlab.viz.live import toy_points\n"
    "X, y = toy_points('blobs', 20, 0)\n"
    "vlin.live_dcd(X, y, C=1.0)",
]
_SRC_OF = ("([k, old]) => { const c = document.querySelectorAll('.jp-CodeCell')[k];"
           " const i = c && c.querySelector('.widget-image');"
           " return i && i.getAttribute('src') !== old; }")


@pytest.fixture
def linear_lab(tmp_path):
    _require_browser()
    import nbformat

    work = tmp_path / "nb"
    work.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, str(work / NOTEBOOK))
    yield from _serve(tmp_path, work)


def test_dcd_explorer_steps_jumps_and_refits_in_jupyterlab(linear_lab, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    url, work = linear_lab
    t_start = time.monotonic()

    def left_ms():
        return max(5_000, int(1000 * (DEADLINE_S - (time.monotonic() - t_start))))

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.set_default_timeout(60_000)
            _open_and_run_all(page, url, NOTEBOOK, left_ms)
            cell = page.locator(".jp-CodeCell").nth(0)
            img = cell.locator(".widget-image").first
            expect(img).to_be_visible(timeout=min(240_000, left_ms()))
            cell.scroll_into_view_if_needed()
            nat, shown = img.evaluate("i => [i.naturalWidth, i.clientWidth]")
            out_w = cell.locator(".jp-OutputArea-output").first.evaluate("e => e.clientWidth")
            assert abs(nat - 2 * shown) <= 2 and shown <= out_w, (nat, shown, out_w)
            player = cell.locator(".widget-slider", has=page.locator(
                ".widget-label", has_text=re.compile(r"^step$")))
            readout = player.locator(".widget-readout")
            assert readout.inner_text().strip() == "1"
            expect(cell).to_contain_text("step 1 (epoch 1)", timeout=20_000)

            # one coordinate step forward (its own label: "+1" is the click
            # mode's class)
            before = img.get_attribute("src")
            cell.get_by_role("button", name="1 step forward", exact=True).click()
            page.wait_for_function(_SRC_OF, arg=[0, before], timeout=30_000)
            expect(readout).to_have_text("2", timeout=10_000)
            expect(cell).to_contain_text("step 2 (epoch 1)", timeout=10_000)

            # next clipped step: forward, and the caption says it was clipped
            before = img.get_attribute("src")
            cell.get_by_role("button", name="next clipped step", exact=True).click()
            page.wait_for_function(_SRC_OF, arg=[0, before], timeout=30_000)
            expect(cell).to_contain_text("clipped to", timeout=10_000)
            assert int(readout.inner_text().strip()) > 2

            # C refits: the picture and the number of steps follow
            status = cell.locator(".widget-html-content",
                                  has_text="dual coordinate descent").first
            first = status.inner_text()
            assert re.search(r"converged after \d+ coordinate steps", first), first
            handle = cell.locator(".widget-slider .noUi-handle").first   # C
            handle.scroll_into_view_if_needed()
            texts = [first]
            for key in ["ArrowLeft"] * 3:
                before = img.get_attribute("src")
                handle.focus()
                page.keyboard.press(key)
                page.wait_for_function(_SRC_OF, arg=[0, before],
                                       timeout=min(60_000, left_ms()), polling=5)
                expect(status).not_to_have_text(texts[-1], timeout=30_000)
                texts.append(status.inner_text())
            steps = [int(re.search(r"after (\d+) coordinate steps", t).group(1)) for t in texts]
            assert len(set(steps)) > 1, texts
            cell.screenshot(path=str(tmp_path / "dcd_1280.png"))
        finally:
            browser.close()
    assert time.monotonic() - t_start < DEADLINE_S + 30
