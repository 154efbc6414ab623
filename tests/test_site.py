"""The course site: built by README's command, then read and opened in a real browser.

``python -m svmlab.course site OUT/`` runs once for the module (Sphinx on the
stored notebook outputs: no kernel).  Then:

* every internal link and image of every page points at a file that exists
  (and a ``#fragment`` at an id on that page): read from the HTML;
* headless Chromium (Debian's ``/usr/bin/chromium`` through Playwright,
  never ``playwright install``) opens every page from a local HTTP server,
  with every request outside 127.0.0.1 refused: no same-site request fails,
  no script error, every image decodes;
* the matplotlib animation of ``01_smo_geometry`` plays: its frame changes
  after pressing its play button;
* MathJax (served by the site) typesets the notebooks' math;
* each notebook page has its Colab and Binder links, and the explorers are
  static pictures (no saved widget state, no source panel) without any line
  of the instructor's solutions.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from svmlab.course import _student, links

ROOT = Path(__file__).resolve().parents[1]
#: the repository the test builds for (the real one is not named yet)
REPO = "example-org/svmlab"
CHROMIUM = os.environ.get("SVMLAB_CHROMIUM", "/usr/bin/chromium")
CHROME_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run",
               "--disable-quic", "--disable-dev-shm-usage"]

pytestmark = pytest.mark.slow


def _require(module, what):
    try:
        __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"the site test needs {what} in CI")
        pytest.skip(f"the site test needs {what}")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    for module, what in (("sphinx", "the docs extra (pip install -e '.[docs]')"),
                         ("myst_nb", "the docs extra"), ("pydata_sphinx_theme", "the docs extra"),
                         ("jupyter_server_mathjax", "the docs extra")):
        _require(module, what)
    out = tmp_path_factory.mktemp("site") / "html"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # --strict: a Sphinx warning fails the build (the site builds with none)
    r = subprocess.run([sys.executable, "-m", "svmlab.course", "site", str(out),
                        "--repository", REPO, "--strict"], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    last = r.stderr.strip().splitlines()[-1]
    print(last)     # "site: N pages in OUT (T s, 0 Sphinx warnings)"
    assert re.search(r"\(\d+ s, 0 Sphinx warnings\)", last), last
    return out


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "img", "link", "script", "source", "iframe"):
                self.refs.append((tag, a[key]))


@functools.lru_cache(maxsize=None)
def _parse(path):
    p = _Links()
    p.feed(Path(path).read_text(encoding="utf-8", errors="replace"))
    return p


def _pages(site):
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


def test_every_internal_link_and_image_resolves(site):
    pages = _pages(site)
    assert len(pages) > 20
    broken = []
    for page in pages:
        for tag, ref in _parse(page).refs:
            parts = urlsplit(ref)
            if parts.scheme in ("http", "https", "mailto", "data", "javascript") or ref.startswith("//"):
                continue
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: <{tag}> {ref}")
            elif tag == "img" and target.stat().st_size == 0:
                broken.append(f"{page.relative_to(site)}: empty image {ref}")
            elif parts.fragment and target.suffix == ".html" and tag == "a":
                if unquote(parts.fragment) not in _parse(target).ids:
                    broken.append(f"{page.relative_to(site)}: no #{parts.fragment} in {ref}")
    assert not broken, "\n".join(broken[:30])


def test_nothing_is_loaded_from_another_site(site):
    """No stylesheet, script, image or frame from a CDN (matplotlib's
    animations link Font Awesome from one: the staging drops the link and
    course.css draws the icons); links to other sites are fine."""
    external = []
    for page in sorted(site.rglob("*.html")):
        for tag, ref in _parse(page).refs:
            if tag != "a" and (urlsplit(ref).scheme in ("http", "https") or ref.startswith("//")):
                external.append(f"{page.relative_to(site)}: <{tag}> {ref}")
    assert not external, "\n".join(external[:20])
    assert "http" not in (site / "_static" / "course.css").read_text().lower()


#: docstrings that are not valid reST, which the site shows verbatim
#: (docs/conf.py); the list may shrink as they are fixed, never grow
VERBATIM_KNOWN = {
    "svmlab.course.links.quote", "svmlab.cutting_plane.CuttingPlaneOrdinalRegressor",
    "svmlab.cutting_plane.CuttingPlaneRecord", "svmlab.cutting_plane.OcasRecord",
    "svmlab.datasets.toy_2d", "svmlab.decomposition.IRWLSClassifier",
    "svmlab.decomposition.IRWLSRecord", "svmlab.exercises.ExerciseResult",
    "svmlab.kernels.kernel_block_cols", "svmlab.reference.ordinal",
    "svmlab.reference.ordinal.sweep_counts", "svmlab.reference.smo", "svmlab.viz",
    "svmlab.viz.decomposition", "svmlab.viz.family", "svmlab.viz.live",
    "svmlab.viz.live.LiveExplorer", "svmlab.viz.smo", "svmlab.viz.smo.SMOStepExplorer",
    "svmlab.viz.smo.SMOStepExplorer.from_estimator",
}


def test_no_new_docstring_is_shown_verbatim(site):
    import json

    got = set(json.loads((site / "_verbatim_docstrings.json").read_text()))
    assert got <= VERBATIM_KNOWN, f"not valid reST (fix the docstring): {sorted(got - VERBATIM_KNOWN)}"


def test_the_site_has_the_course_the_api_and_the_benchmarks(site):
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(p.stem for p in (site / "notebooks").glob("*.html")) == names
    for page in ("index", "course", "guide", "api", "benchmarks", "instructors"):
        assert (site / f"{page}.html").is_file()
    api = (site / "generated").glob("svmlab.*.html")
    assert {"svmlab.smo", "svmlab.exercises", "svmlab.course"} <= {p.stem for p in api}
    smo = (site / "generated" / "svmlab.smo.html").read_text()
    assert "SMOClassifier" in smo and "Box constraint" in smo      # from the docstring
    bench = (site / "benchmarks.html").read_text()
    assert "python -m svmlab.bench --suite" in _student._norm(bench)


def test_notebook_pages_have_run_online_links_and_no_live_widgets_or_answers(site):
    answers = _student.solution_lines(ROOT / "instructor" / "solutions")
    assert answers
    snapshots = 0
    for page in sorted((site / "notebooks").glob("*.html")):
        html = page.read_text()
        name = page.stem + ".ipynb"
        assert links.colab_url(name, REPO) in html
        assert links.binder_url(name, REPO).replace("&", "&amp;") in html
        assert "YOUR-" not in html
        assert "application/vnd.jupyter.widget-state+json" not in html
        assert "IPY_MODEL_" not in html and "smo.PlattSMO.main_loop" not in html
        text = _student._norm(html)
        leaked = [a for a in answers if a in text]
        assert not leaked, f"{page.name} shows solution lines {leaked[:3]}"
        snapshots += html.count("An interactive explorer")
    assert snapshots >= 10   # every explorer of 00-06 became pictures


# ------------------------------------------------------------------ browser
@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    _require("playwright.sync_api", "the playwright package")
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"the site test needs {CHROMIUM} in CI (apt-get install chromium)")
        pytest.skip(f"the site test needs {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
        yield b
        b.close()


def _page(browser, base):
    """A page that refuses every request outside the local site and records
    failures and script errors."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.problems = []
    def refuse(route):
        # a request outside the site is a problem (the site works offline)
        if not route.request.url.startswith("data:"):
            page.problems.append(f"request outside the site: {route.request.url}")
        route.abort()

    page.route(re.compile(r"^(?!" + re.escape(base) + ").*"), refuse)
    page.on("pageerror", lambda exc: page.problems.append(f"script error: {exc}"))
    page.on("response", lambda r: page.problems.append(f"HTTP {r.status} {r.url}")
            if r.url.startswith(base) and r.status >= 400 and not r.url.endswith("favicon.ico")
            else None)
    # (a script still loading when the test moves to the next page is aborted:
    # net::ERR_ABORTED is that, not a missing file, which answers 404 above)
    page.on("requestfailed", lambda r: page.problems.append(f"failed {r.url}: {r.failure}")
            if r.url.startswith(base) and "ERR_ABORTED" not in (r.failure or "") else None)
    return page


def test_every_page_loads_in_chromium_with_its_images(site, server, browser):
    page = _page(browser, server)
    bad = []
    for path in _pages(site):
        rel = path.relative_to(site).as_posix()
        page.problems.clear()
        resp = page.goto(urljoin(server, rel), wait_until="load")
        if resp is None or resp.status != 200:
            bad.append(f"{rel}: HTTP {resp and resp.status}")
        broken = page.evaluate("""() => Array.from(document.images)
            .filter(im => !(im.complete && im.naturalWidth > 0)).map(im => im.src.slice(0, 80))""")
        bad += [f"{rel}: image not shown {b}" for b in broken]
        bad += [f"{rel}: {p}" for p in page.problems]
    page.close()
    assert not bad, "\n".join(bad[:30])


def test_the_animation_plays(server, browser):
    page = _page(browser, server)
    page.goto(urljoin(server, "notebooks/01_smo_geometry.html"), wait_until="load")
    anim = page.locator("div.animation").first
    anim.scroll_into_view_if_needed()
    frame = anim.locator("img").first
    slider = anim.locator("input[type=range]").first
    before = (frame.get_attribute("src"), slider.input_value())
    anim.locator("button[onclick*='play_animation']").first.click()
    page.wait_for_function(
        """([img, v]) => { const a = document.querySelector('div.animation');
              return a.querySelector('img').src !== img
                  && a.querySelector('input[type=range]').value !== v; }""",
        arg=list(before), timeout=15000)
    after = (frame.get_attribute("src"), slider.input_value())
    assert after[0] != before[0] and int(after[1]) > int(before[1])
    assert not page.problems, page.problems
    page.close()


def test_math_is_typeset_without_a_cdn_and_fits(server, browser):
    page = _page(browser, server)
    page.goto(urljoin(server, "notebooks/01_smo_geometry.html"), wait_until="load")
    page.wait_for_function("() => window.MathJax && MathJax.Hub && MathJax.Hub.queue"
                           " && MathJax.Hub.queue.pending === 0"
                           " && document.querySelectorAll('.MathJax').length > 20",
                           timeout=30000)
    raw = page.evaluate("""() => Array.from(document.querySelectorAll('span.math'))
        .filter(s => s.textContent.startsWith('\\\\(')).length""")
    assert raw == 0, f"{raw} formulas left as TeX source"
    # no displayed equation is cut off: each fits its column at 1280 px (the
    # first one of 01 used to be wider than the page and cut at its right edge)
    page.wait_for_function("() => document.querySelectorAll('.MathJax_Display').length > 0",
                           timeout=30000)
    wide = page.evaluate("""() => Array.from(document.querySelectorAll('.MathJax_Display'))
        .map((d, i) => { const box = d.closest('div.math, .cell_output, p, div') || d.parentElement;
                         const m = d.querySelector('.MathJax') || d;
                         return [i, Math.ceil(m.getBoundingClientRect().width),
                                 Math.floor(box.getBoundingClientRect().width)]; })
        .filter(([i, w, avail]) => w > avail + 1)""")
    assert not wide, f"equations wider than their column (index, width, room): {wide}"
    first = page.evaluate("""() => { const d = document.querySelector('.MathJax_Display');
        const r = d.getBoundingClientRect(), a = document.querySelector('article, main')
            .getBoundingClientRect(); return [r.right, a.right]; }""")
    assert first[0] <= first[1] + 1, first
    assert not page.problems, page.problems
    page.close()
