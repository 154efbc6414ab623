"""A real browser drives the SMO-geometry notebook in JupyterLab.

Headless Debian ``chromium`` (``/usr/bin/chromium``; ``.ci/run`` installs it)
is driven by Playwright -- never ``playwright install`` -- against a
JupyterLab server that this test starts on 127.0.0.1 (free port, empty
token, temporary config/runtime/settings directories) and stops by PID.

It opens a copy of ``notebooks/01_smo_geometry.ipynb`` (a copy, so
JupyterLab's autosave cannot touch the stored notebook), runs all cells from
the Run menu, moves the slider and presses Play, and checks that the
widget's caption (step number, E1, E2, eta, b) and the rendered frame change
each time.  Screenshots go to pytest's tmp dir, and also to
``$SVMLAB_SCREENSHOT_DIR`` when that is set.

A second test opens a one-cell notebook showing ``svmlab.viz.live.live_smo()``,
moves its C slider (the picture must change: the solver ran again), clicks on
the data panel (a point is added, then removed) and measures the median time
from a control change to the new picture (``latency.json`` in
``$SVMLAB_SCREENSHOT_DIR`` when set).
"""

import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "01_smo_geometry.ipynb"
CHROMIUM = os.environ.get("SVMLAB_CHROMIUM", "/usr/bin/chromium")
CHROME_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run",
               "--disable-quic", "--disable-dev-shm-usage"]
DEADLINE_S = 170  # the whole test stays under 3 minutes

pytestmark = pytest.mark.slow


def _require_browser():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:  # pragma: no cover
        missing = "the playwright package"
    else:
        missing = None if os.path.exists(CHROMIUM) else f"{CHROMIUM} (apt-get install chromium)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"browser test needs {missing} in CI")
        pytest.skip(f"browser test needs {missing}")


# --------------------------------------------------------------------------
# key press -> new picture: the table every browser test prints
# --------------------------------------------------------------------------
#: the target of the course (issue 32): a median of at most this many ms
#: from a key press to the new picture.  Reported, never asserted (timed
#: assertions fail on a loaded machine for reasons outside the code).
TARGET_MS = 150


def latency_table(title, report):
    """Print the latency table of ``report`` (``{explorer: {"median_ms",
    "latencies_ms"}}``) with the load average read now, and, when
    ``$SVMLAB_LATENCY_TABLE`` names a file, write it there as the section
    ``title`` (other sections of the file are kept: each browser test owns
    one).  Returns the markdown text."""
    load = Path("/proc/loadavg").read_text().split()[:3] \
        if Path("/proc/loadavg").exists() else ["?"] * 3
    # the kernel's share (the refit the status line reports: fit, explorer,
    # render, encode), when the test read it: the rest is the way to the
    # browser and back (comm messages, JupyterLab, the page)
    kernel = any(r.get("kernel_ms") for r in report.values())

    def kcol(r):
        if not kernel:
            return ""
        k = r.get("kernel_ms") or []
        return f" {statistics.median(k):.0f} |" if k else " - |"

    rows = [f"| {name} | {r['median_ms']:.0f} | {min(r['latencies_ms']):.0f}-"
            f"{max(r['latencies_ms']):.0f} | {len(r['latencies_ms'])} | "
            f"{'yes' if r['median_ms'] <= TARGET_MS else 'no'} |{kcol(r)} {' '.join(load)} |"
            for name, r in report.items()]
    text = (f"## {title}\n\n"
            f"| explorer (control) | median ms | range ms | presses | <= {TARGET_MS} ms | "
            + ("kernel refit ms (median) | " if kernel else "")
            + "load average (1, 5, 15 min) |\n|---|---|---|---|---|---|"
            + ("---|" if kernel else "") + "\n" + "\n".join(rows) + "\n")
    print("\n" + text)
    target = os.environ.get("SVMLAB_LATENCY_TABLE")
    if target:
        path = Path(target)
        old = path.read_text() if path.exists() else ""
        sections = [sec for sec in re.split(r"(?m)^(?=## )", old) if sec.strip()]
        head = [sec for sec in sections if not sec.startswith("## ")]
        keep = [sec for sec in sections if sec.startswith("## ")
                and not sec.startswith(f"## {title}\n")]
        path.write_text("".join(head + [sec.rstrip("\n") + "\n\n" for sec in keep]) + text)
    return text


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on 127.0.0.1 serving a temp dir with the notebook."""
    _require_browser()
    work = tmp_path / "nb"
    work.mkdir()
    shutil.copy(NOTEBOOK, work / NOTEBOOK.name)
    yield from _serve(tmp_path, work)


LIVE_NOTEBOOK = "live_smo.ipynb"


@pytest.fixture
def live_lab(tmp_path):
    """A JupyterLab server serving a one-cell notebook that shows ``live_smo()``."""
    _require_browser()
    import nbformat

    work = tmp_path / "nb"
    work.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from svmlab.viz.live import live_smo\nlive = live_smo(C=1.0, n=40)\nlive")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, str(work / LIVE_NOTEBOOK))
    yield from _serve(tmp_path, work)


def _serve(tmp_path, work):
    """Start JupyterLab on ``work`` (temporary config dirs), yield ``(url,
    work)``, stop it by its process group."""
    cfg = tmp_path / "jupyter"
    for d in ("config", "runtime", "settings", "workspaces"):
        (cfg / d).mkdir(parents=True)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(cfg / "config"),
        JUPYTER_RUNTIME_DIR=str(cfg / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(cfg / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(cfg / "workspaces"),
        SVMLAB_NOTEBOOK_SIZE="small",
        PYTHONUNBUFFERED="1",
    )
    # numba's cache: the one the tests use (CI sets NUMBA_CACHE_DIR); without it,
    # numba's default next to the sources, as a user's kernel would have it
    port = _free_port()
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
         "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
         "--ServerApp.token=", "--ServerApp.password=", f"--ServerApp.root_dir={work}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class="
         "jupyterlab.NeverCheckForUpdate"],
        cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() - t0 > 60:
                log.flush()
                raise RuntimeError("JupyterLab did not start:\n"
                                   + (tmp_path / "lab.log").read_text()[-3000:])
            time.sleep(0.5)
        yield url, work
    finally:
        # stop the server (and its kernels) by PID / process group we started
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()


def _caption(page):
    return page.locator(".widget-html-content").first.text_content() or ""


def _frame_src(page):
    return page.locator(".widget-image").first.get_attribute("src") or ""


def _step_of(caption):
    m = re.search(r"step (\d+)/(\d+)", caption)
    assert m, f"no step number in the widget caption: {caption!r}"
    return int(m.group(1)), int(m.group(2))


def test_smo_geometry_widget_in_jupyterlab(lab, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    url, work = lab
    t_start = time.monotonic()

    def left_ms():
        return max(5_000, int(1000 * (DEADLINE_S - (time.monotonic() - t_start))))

    shots = [tmp_path / "smo_geometry_browser.png"]
    if os.environ.get("SVMLAB_SCREENSHOT_DIR"):
        out = Path(os.environ["SVMLAB_SCREENSHOT_DIR"])
        out.mkdir(parents=True, exist_ok=True)
        shots.append(out / "screenshot_smo_geometry.png")

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            _open_and_run_all(page, url, NOTEBOOK.name, left_ms)

            slider = page.locator(".widget-slider").first
            expect(slider).to_be_visible(timeout=min(120_000, left_ms()))
            cap = page.locator(".widget-html-content").first
            expect(cap).to_contain_text("step", timeout=min(60_000, left_ms()))
            # let the whole notebook finish (the later cells drive the widgets)
            last = page.locator(".jp-CodeCell").last.locator(".jp-InputPrompt")
            expect(last).not_to_have_text("[*]:", timeout=min(120_000, left_ms()))
            expect(page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]')) \
                .to_be_visible(timeout=min(60_000, left_ms()))
            expect(cap).to_contain_text("step", timeout=10_000)

            # 1) move the slider with the keyboard: 10 steps back, or forward
            # when the widget opens near its start (drive() in a later cell
            # leaves it at the frame it opened at)
            handle = page.locator(".widget-slider .noUi-handle").first
            handle.scroll_into_view_if_needed()
            before_text, before_img = _caption(page), _frame_src(page)
            n_before, n_total = _step_of(before_text)
            assert n_total > 12, "the notebook's trace is too short for this test"
            back = n_before > 10
            handle.focus()
            for _ in range(10):
                page.keyboard.press("ArrowLeft" if back else "ArrowRight")
            target = n_before - 10 if back else n_before + 10
            expect(cap).to_contain_text(f"step {target}/{n_total}",
                                        timeout=min(20_000, left_ms()))
            page.wait_for_function(
                "(old) => { const i = document.querySelector('.widget-image');"
                " return i && i.getAttribute('src') !== old; }",
                arg=before_img, timeout=min(20_000, left_ms()))

            # 2) press Play: the caption keeps changing on its own
            after_slider = _caption(page)
            page.locator(".widget-play button").first.click()
            expect(cap).not_to_have_text(after_slider, timeout=min(20_000, left_ms()))
            playing = _caption(page)
            expect(cap).not_to_have_text(playing, timeout=min(20_000, left_ms()))
            assert _step_of(_caption(page))[0] > target
            for i in ("E1=", "E2=", "eta=", "b:"):
                assert i in _caption(page)

            widget = page.locator(".widget-vbox").first
            widget.scroll_into_view_if_needed()
            for s in shots:
                widget.screenshot(path=str(s))
            assert shots[0].stat().st_size > 10_000
        finally:
            browser.close()
    # the stored notebook was not touched (the server served a copy)
    assert (work / NOTEBOOK.name).exists()
    assert time.monotonic() - t_start < DEADLINE_S + 30


def _open_and_run_all(page, url, name, left_ms):
    """Open notebook ``name`` in JupyterLab, wait for its kernel, and run
    all cells from the Run menu."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    page.goto(f"{url}/lab/tree/{name}")
    expect(page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]')) \
        .to_be_visible(timeout=min(90_000, left_ms()))
    expect(page.get_by_text(re.compile(r"\(ipykernel\) \| Idle"))) \
        .to_be_visible(timeout=min(90_000, left_ms()))
    no = page.get_by_role("button", name="No", exact=True)
    if no.count():
        no.first.click()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel").filter(has_text="Run All Cells") \
        .filter(has_not_text="Restart").first.click()
    dialog = page.locator(".jp-Dialog")
    try:
        dialog.wait_for(state="visible", timeout=3_000)
        dialog.get_by_role("button", name="Select").click()
    except PlaywrightTimeout:
        pass


_SRC_CHANGED = ("(old) => { const i = document.querySelector('.widget-image');"
                " return i && i.getAttribute('src') !== old; }")


def test_live_smo_refits_on_slider_and_click_in_jupyterlab(live_lab, tmp_path):
    """live_smo() in a real browser: moving the C slider refits and redraws,
    a click on the data panel adds a point (the status line's point count
    and the picture change), and the median time from a control change to
    the new picture is measured (printed; written to
    ``$SVMLAB_SCREENSHOT_DIR/latency.json`` when that is set)."""
    import json
    import statistics

    from playwright.sync_api import expect, sync_playwright

    url, work = live_lab
    t_start = time.monotonic()

    def left_ms():
        return max(5_000, int(1000 * (DEADLINE_S - (time.monotonic() - t_start))))

    out_dir = Path(os.environ["SVMLAB_SCREENSHOT_DIR"]) \
        if os.environ.get("SVMLAB_SCREENSHOT_DIR") else None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.set_default_timeout(60_000)
            _open_and_run_all(page, url, LIVE_NOTEBOOK, left_ms)
            status = page.locator(".widget-html-content", has_text="points").first
            expect(status).to_contain_text("SMO: 40 points", timeout=min(120_000, left_ms()))
            img = page.locator(".widget-image").first
            expect(img).to_be_visible(timeout=min(30_000, left_ms()))
            # the image is shown at the figure's natural CSS size (rendered at 2x)
            size = img.evaluate("i => [i.naturalWidth, i.clientWidth]")
            assert abs(size[0] - 2 * size[1]) <= 2, f"natural vs displayed width: {size}"

            # 1) move the C slider (the first slider) with the keyboard
            c_handle = page.locator(".widget-slider .noUi-handle").first
            c_handle.scroll_into_view_if_needed()
            readout = page.locator(".widget-readout").first
            latencies = []
            for key in ["ArrowRight"] * 4 + ["ArrowLeft"] * 4:
                before_src = img.get_attribute("src")
                before_c = readout.text_content()
                c_handle.focus()
                t0 = time.perf_counter()
                page.keyboard.press(key)
                page.wait_for_function(_SRC_CHANGED, arg=before_src,
                                       timeout=min(30_000, left_ms()), polling=5)
                latencies.append(1e3 * (time.perf_counter() - t0))
                assert readout.text_content() != before_c
            median_ms = statistics.median(latencies)
            print(f"live_smo: control change to new picture, median {median_ms:.0f} ms "
                  f"over {len(latencies)} changes: {[round(v) for v in latencies]}")
            if out_dir is not None:
                out_dir.mkdir(parents=True, exist_ok=True)
                (out_dir / "latency.json").write_text(json.dumps(
                    {"widget": "svmlab.viz.live.live_smo", "what": "C slider key press to new "
                     "image src in headless Chromium", "median_ms": median_ms,
                     "latencies_ms": latencies}, indent=1))

            # 2) click on the data panel (right part of the figure): a point is added
            before_src = img.get_attribute("src")
            img.scroll_into_view_if_needed()
            box = img.bounding_box()
            img.click(position={"x": 0.76 * box["width"], "y": 0.45 * box["height"]})
            expect(status).to_contain_text("SMO: 41 points", timeout=min(30_000, left_ms()))
            page.wait_for_function(_SRC_CHANGED, arg=before_src, timeout=min(30_000, left_ms()))
            assert "21 (+1)" in status.text_content()  # the click selector starts at +1
            # remove mode: the nearest point goes
            page.get_by_role("button", name="remove", exact=True).click()
            img.click(position={"x": 0.76 * box["width"], "y": 0.45 * box["height"]})
            expect(status).to_contain_text("SMO: 40 points", timeout=min(30_000, left_ms()))

            shots = [tmp_path / "live_smo_browser.png"]
            if out_dir is not None:
                shots.append(out_dir / "screenshot_live_smo.png")
            widget = page.locator(".widget-vbox").first
            for s in shots:
                widget.screenshot(path=str(s))
            assert shots[0].stat().st_size > 10_000
        finally:
            browser.close()
    assert median_ms < 10_000
    assert time.monotonic() - t_start < DEADLINE_S + 30


# --------------------------------------------------------------------------
# every live explorer in a 1280 px browser: where it opens, the next-X
# buttons, the reveal lock, the latency from a control to the picture
# --------------------------------------------------------------------------
#: (name, the code of its cell, a "next ..." button and what its caption then shows)
EXPLORERS = [
    ("live_smo", "from svmlab.viz.live import live_smo\n"
                 "live_smo(dataset='duplicates', C=1.0, gamma=0.5)", "next eta <= 0", "eta=0.0000"),
    ("live_cutting_plane", "from svmlab import datasets\nfrom svmlab.viz.live import "
                           "live_cutting_plane\nlive_cutting_plane(*datasets.toy_2d('blobs', n=50, "
                           "random_state=3, noise=1.1), C=20.0, epsilon=1e-3)",
     "next bigger cut", "iteration"),
    ("live_ordinal", "from svmlab.viz.live import live_ordinal\nlive_ordinal(C=10.0, n=12)",
     "next d", "▼"),
    ("live_irwls", "from svmlab.viz.live import live_irwls\nlive_irwls(C=1.0, gamma=0.5, "
                   "dataset='gauss-m', n=60, working_set_size=20, selection='random')",
     "next chunk solved", "working set solved"),
    ("live_family", "from svmlab.viz.live import live_family\nlive_family(C=10.0, gamma=1.0, "
                    "working_set_size=10, dataset='moons', n=60, seed=1)",
     "next decomposition working-set change", "progress"),
]


@pytest.fixture
def explorers_lab(tmp_path):
    _require_browser()
    import nbformat

    work = tmp_path / "nb"
    work.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code) for _, code, _, _ in EXPLORERS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, str(work / "explorers.ipynb"))
    yield from _serve(tmp_path, work)


def test_every_live_explorer_in_a_1280px_browser(explorers_lab, tmp_path):
    """Each explorer opens at its first step (slider readout 1, caption step
    1), its "next ..." button jumps forward from there, the picture is shown
    at its natural size, not scaled down, in the 848 px a 1280 px
    JupyterLab gives an output; the SMO source panel hides the exercises'
    lines until "reveal"; and the time from a C key press to the new
    picture is measured for every explorer (printed, and written to
    ``latency.json`` in ``$SVMLAB_SCREENSHOT_DIR`` when set)."""
    import json
    import statistics

    from playwright.sync_api import expect, sync_playwright

    url, work = explorers_lab
    t_start = time.monotonic()
    deadline = DEADLINE_S + 200

    def left_ms():
        return max(5_000, int(1000 * (deadline - (time.monotonic() - t_start))))

    out_dir = Path(os.environ["SVMLAB_SCREENSHOT_DIR"]) \
        if os.environ.get("SVMLAB_SCREENSHOT_DIR") else None
    report = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1500})
            page.set_default_timeout(60_000)
            _open_and_run_all(page, url, "explorers.ipynb", left_ms)
            cells = page.locator(".jp-CodeCell")
            expect(cells.nth(len(EXPLORERS) - 1).locator(".widget-image")).to_be_visible(
                timeout=min(240_000, left_ms()))
            expect(page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]')) \
                .to_be_visible(timeout=min(120_000, left_ms()))
            for k, (name, _, nav, shows) in enumerate(EXPLORERS):
                cell = cells.nth(k)
                cell.scroll_into_view_if_needed()
                img = cell.locator(".widget-image").first
                expect(img).to_be_visible(timeout=30_000)
                # natural size, never scaled down (rendered at twice the CSS size)
                nat, shown = img.evaluate("i => [i.naturalWidth, i.clientWidth]")
                assert abs(nat - 2 * shown) <= 2, (name, nat, shown)
                out_w = cell.locator(".jp-OutputArea-output").first.evaluate("e => e.clientWidth")
                assert shown <= out_w, (name, shown, out_w)
                # and the whole picture is on screen, inside the output (not pushed
                # aside by the source panel)
                ib = img.bounding_box()
                ob = cell.locator(".jp-OutputArea-output").first.bounding_box()
                assert ib["x"] >= ob["x"] - 1 and ib["x"] + ib["width"] <= ob["x"] + ob["width"] + 1, \
                    (name, ib, ob)
                text = cell.inner_text()
                # opens at the first step: the player's slider reads 1 (0 % for progress)
                player = cell.locator(".widget-slider", has=page.locator(
                    ".widget-label", has_text=re.compile(r"^(step|iteration|event|progress)$")))
                assert player.count() == 1, (name, player.count())
                first = player.locator(".widget-readout").inner_text().strip()
                assert first in ("1", "0 %"), (name, first, text[:300])
                # the next-X button jumps forward and the caption shows what it found
                before = _frame_src_of(img)
                cell.get_by_role("button", name=nav, exact=True).click()
                page.wait_for_function(_SRC_OF, arg=[k, before], timeout=30_000)
                expect(cell).to_contain_text(shows, timeout=10_000)
                # control to picture: the C slider (the first slider of the cell)
                handle = cell.locator(".widget-slider .noUi-handle").first
                handle.scroll_into_view_if_needed()
                lat, kern = [], []
                status = cell.locator(".widget-html-content", has_text="refit in").first
                for key in ["ArrowRight"] * 4 + ["ArrowLeft"] * 4:
                    before = _frame_src_of(img)
                    before_status = status.text_content()
                    handle.focus()
                    t0 = time.perf_counter()
                    page.keyboard.press(key)
                    page.wait_for_function(_SRC_OF, arg=[k, before],
                                           timeout=min(30_000, left_ms()), polling=5)
                    lat.append(1e3 * (time.perf_counter() - t0))
                    # the status line (set after the picture) says how long the
                    # kernel's refit took
                    try:
                        expect(status).not_to_have_text(before_status, timeout=5_000)
                        m = re.search(r"refit in (\d+) ms", status.text_content())
                        if m:
                            kern.append(float(m.group(1)))
                    except AssertionError:
                        pass
                report[name] = {"median_ms": statistics.median(lat), "latencies_ms": lat,
                                "kernel_ms": kern}
                if name == "live_smo":
                    panel = cell.inner_text()
                    assert "hidden: exercise 01.take_step" in panel
                    assert "alph2 + y2 * (E1 - E2) / eta" not in panel
                    widget = cell.locator(".jp-OutputArea-output").first
                    widget.scroll_into_view_if_needed()
                    widget.screenshot(path=str(tmp_path / "live_smo_1280.png"))
                    if out_dir is not None:
                        out_dir.mkdir(parents=True, exist_ok=True)
                        widget.screenshot(path=str(out_dir / "screenshot_live_smo.png"))
                    cell.get_by_role("button", name=re.compile("reveal the hidden lines")).click()
                    expect(cell).to_contain_text("alph2 + y2 * (E1 - E2) / eta", timeout=20_000)
                    assert "hidden: exercise" not in cell.inner_text()
        finally:
            browser.close()
    latency_table("step explorers: C slider (tests/test_browser.py)",
                  {f"{name} (C)": r for name, r in report.items()})
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "latency_explorers.json").write_text(json.dumps(
            {"what": "C slider key press to new image src, headless Chromium, 1280 px "
                     "viewport, JupyterLab", "explorers": report}, indent=1))
    assert set(report) == {e[0] for e in EXPLORERS}
    assert all(r["median_ms"] < 10_000 for r in report.values())


_SRC_OF = ("([k, old]) => { const c = document.querySelectorAll('.jp-CodeCell')[k];"
           " const i = c && c.querySelector('.widget-image');"
           " return i && i.getAttribute('src') !== old; }")


def _frame_src_of(img):
    return img.get_attribute("src") or ""
