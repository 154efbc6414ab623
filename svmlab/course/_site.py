"""``python -m svmlab.course site OUT/``: the course site, built offline.

Sphinx with myst-nb (the notebooks) and the PyData theme, from the sources
in ``docs/`` of a checkout: the course notebooks rendered with their
*stored* outputs (myst-nb's execution is off, so the build is fast and
needs no kernel), the API reference from the docstrings (autosummary and
napoleon), README as the guide, and ``benchmarks/README.md``.

The build works on a staging copy, never on the repository: ``docs/`` (less
``docs/decisions/``) plus the notebooks, README and benchmark page, put
together in a temporary folder.  What the staging does to a notebook:

* a line of run-online links (Colab, Binder, GitHub; :mod:`.links`) under
  its title;
* the ``colab-setup`` cell is hidden (tag ``remove-cell``);
* a live explorer (an ipywidgets view) cannot run on a static page, and
  rendering its saved state needs the widget manager from a CDN, which an
  offline build cannot load; it is replaced by the pictures it showed when
  the notebook was stored (its Image and Output widgets) and a note, and
  the saved widget state is dropped (it also holds the source panels);
* the same answer check as the student build (:func:`._student.find_leaks`):
  an output that shows a solution line or a line the reveal locks hide stops
  the build.

Math is typeset by MathJax 2 from the ``jupyter-server-mathjax`` package,
copied into the site (no CDN).  Matplotlib animations stored as JavaScript
(``to_jshtml``) are plain HTML and play as they are.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from . import _nb
from ._student import LeakError, find_leaks, hidden_reference_lines, solution_lines
from . import links
from .links import binder_url, colab_url, source_url

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

#: the parts of MathJax 2 the site needs (TeX in, HTML-CSS out, STIX-Web fonts)
MATHJAX_PARTS = ("MathJax.js", "config/TeX-AMS-MML_HTMLorMML-full.js", "jax/input/TeX",
                 "jax/output/HTML-CSS", "jax/element", "fonts/HTML-CSS/STIX-Web",
                 "extensions/TeX", "extensions/MathMenu.js", "extensions/MathZoom.js",
                 "extensions/MathEvents.js", "extensions/HTML-CSS", "extensions/tex2jax.js",
                 "extensions/jsMath2jax.js", "extensions/toMathML.js", "LICENSE")


def repo_root() -> Path | None:
    """The checkout ``svmlab`` is imported from (it has ``docs/conf.py``), or None."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "docs" / "conf.py").is_file() else None


# ------------------------------------------------------------------ widgets
def _state(nb):
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _widget_pictures(state, model_id):
    """``[(mime, base64 data)]``: the pictures a widget tree showed, in order."""
    pics, seen = [], set()

    def refs(value):
        if isinstance(value, str) and value.startswith("IPY_MODEL_"):
            yield value[len("IPY_MODEL_"):]
        elif isinstance(value, list):
            for v in value:
                yield from refs(v)
        elif isinstance(value, dict):
            for v in value.values():
                yield from refs(v)

    def walk(mid):
        if mid in seen or mid not in state:
            return
        seen.add(mid)
        model = state[mid]
        name, st = model.get("model_name", ""), model.get("state", {})
        if name == "ImageModel":
            fmt = st.get("format", "png")
            for buf in model.get("buffers", []):
                if buf.get("path") == ["value"] and buf.get("encoding") == "base64":
                    pics.append((f"image/{'jpeg' if fmt in ('jpg', 'jpeg') else fmt}", buf["data"]))
        elif name == "OutputModel":
            for out in st.get("outputs", []):
                for mime in ("image/png", "image/jpeg"):
                    if mime in out.get("data", {}):
                        pics.append((mime, out["data"][mime]))
                        break
        if name in ("ImageModel", "OutputModel", "HTMLModel", "HTMLMathModel", "LabelModel"):
            return  # leaves (an HTML model may be a source panel: never shown)
        for key in ("children", "child", "outputs"):
            for ref in refs(st.get(key, [])):
                walk(ref)

    walk(model_id)
    return [(m, d) for m, d in pics if m in ("image/png", "image/jpeg")]


def embed_pictures(nb: dict) -> int:
    """Give every stored widget view of ``nb`` the picture its widget showed
    (from the saved widget state: the largest of its Image/Output pictures)
    as ``image/*`` and ``text/plain`` in the same output, as the explorers'
    own display does (:func:`svmlab.viz._common.picture_bundle`) since they
    do it themselves; for notebooks stored before that.  Returns how many
    outputs changed."""
    state = _state(nb)
    changed = 0
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW not in data or any(k.startswith("image/") for k in data):
                continue
            pics = _widget_pictures(state, data[WIDGET_VIEW].get("model_id", ""))
            if not pics:
                continue
            mime, b64 = max(pics, key=lambda p: len(p[1]))
            data[mime] = b64
            data["text/plain"] = ("<svmlab explorer: the picture above is the frame it showed; "
                                  "run the notebook to use its controls>")
            changed += 1
    return changed


EXPLORER_NOTE = ("*An interactive explorer: on this page, the picture{s} it showed when the notebook "
                 "was stored. Run the notebook (links at the top) to use its controls.*")


def _snapshot(output, state):
    """The outputs that replace one widget view."""
    mid = output["data"][WIDGET_VIEW].get("model_id", "")
    pics = _widget_pictures(state, mid)
    outs = [{"output_type": "display_data", "metadata": {},
             "data": {"text/markdown": EXPLORER_NOTE.format(s="s" if len(pics) > 1 else "")}}]
    for mime, data in pics:
        outs.append({"output_type": "display_data", "metadata": {},
                     "data": {mime: data, "text/plain": "<explorer picture>"}})
    return outs


# ------------------------------------------------------------------ notebooks
def _links_cell(name, repository):
    text = (f"**Run this notebook:** [open in Colab]({colab_url(name, repository)}) · "
            f"[open in Binder]({binder_url(name, repository)}) · "
            f"[source on GitHub]({source_url(name, repository)})")
    return {"cell_type": "markdown", "metadata": {"tags": ["run-online-links"]},
            "source": text, "id": "runonline"}


def _insert_links(nb, name, repository):
    """The run-online line goes right under the notebook's title (the first
    markdown cell is split after its ``# title`` line when it goes on)."""
    cells = nb["cells"]
    k = next((i for i, c in enumerate(cells) if c.get("cell_type") == "markdown"), None)
    if k is None:
        cells.insert(0, _links_cell(name, repository))
        return
    lines = _nb.cell_source(cells[k]).splitlines(keepends=True)
    if lines and lines[0].startswith("# ") and "".join(lines[1:]).strip():
        rest = dict(cells[k], source="".join(lines[1:]).lstrip("\n"), id=f"{cells[k].get('id', 'c0')}-b")
        cells[k] = dict(cells[k], source=lines[0].rstrip("\n"))
        cells.insert(k + 1, rest)
    cells.insert(k + 1, _links_cell(name, repository))


#: an output's tag that loads something from outside the site (matplotlib's
#: ``to_jshtml`` links Font Awesome 4 from a CDN for its buttons; the site's
#: ``course.css`` draws those icons itself)
_EXTERNAL = re.compile(r"<(?:link|script)\b[^>]*\b(?:href|src)\s*=\s*[\"']?(?:https?:)?//[^>]*>"
                       r"(?:\s*</script>)?", re.I)


def _offline(out):
    """``out`` without tags that load from another site (text/html outputs)."""
    html = out.get("data", {}).get("text/html")
    if html is None:
        return out
    text = "".join(html) if isinstance(html, list) else html
    if not _EXTERNAL.search(text):
        return out
    out = dict(out, data=dict(out["data"], **{"text/html": _EXTERNAL.sub("", text)}))
    return out


def site_notebook(nb: dict, name: str, repository: str | None = None) -> dict:
    """The copy of one notebook the site renders (see the module docstring);
    ``repository`` as :func:`.links.resolve_repository` takes it."""
    repository = links.resolve_repository(repository)
    nb = json.loads(json.dumps(nb))
    state = _state(nb)
    for cell in nb["cells"]:
        meta = cell.setdefault("metadata", {})
        tags = meta.get("tags", [])
        if "colab-setup" in tags and "remove-cell" not in tags:
            meta["tags"] = tags + ["remove-cell"]
        if cell.get("cell_type") != "code":
            continue
        outs = []
        for out in cell.get("outputs", []):
            if WIDGET_VIEW in out.get("data", {}):
                outs += _snapshot(out, state)
            else:
                outs.append(_offline(out))
        cell["outputs"] = outs
        src = _nb.cell_source(cell)
        if "NBVAL_" in src:   # test scaffolding, not for readers
            cell["source"] = re.sub(r"(?m)^[ \t]*# NBVAL_[A-Z_]+[ \t]*\n?", "", src)
    nb["metadata"].pop("widgets", None)
    _insert_links(nb, name, repository)
    nb["nbformat_minor"] = max(nb.get("nbformat_minor", 4), 5)
    for i, cell in enumerate(nb["cells"]):
        cell.setdefault("id", f"cell{i}")
    return nb


def stage(root: Path, staging: Path, answers=None, repository=None) -> list[str]:
    """Put the site's sources together in ``staging``; the staged notebooks' names."""
    docs = root / "docs"
    shutil.copytree(docs, staging, ignore=shutil.ignore_patterns(
        "decisions", "_build", "*.png", ".ipynb_checkpoints", "__pycache__"))
    repository = links.resolve_repository(repository, root=root)
    answers = (solution_lines(root / _nb.SOLUTIONS_DIR) | hidden_reference_lines()
               if answers is None else answers)
    nbdir = staging / "notebooks"
    nbdir.mkdir()
    names = []
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        nb = site_notebook(_nb.read_notebook(path), path.name, repository)
        leaks, _ = find_leaks(nb, answers)
        if leaks:
            where = "; ".join(f"{w}: {a!r}" for w, a in leaks[:5])
            raise LeakError(f"{path.name}: a stored output shows an answer: {where}")
        (nbdir / path.name).write_text(json.dumps(nb), encoding="utf-8")
        names.append(path.stem)
    # README (the guide) with the pictures it shows, and the benchmark page
    (staging / "_readme" / "docs").mkdir(parents=True)
    shutil.copy2(root / "README.md", staging / "_readme" / "README.md")
    for png in docs.glob("*.png"):
        shutil.copy2(png, staging / "_readme" / "docs" / png.name)
    (staging / "_bench").mkdir()
    shutil.copy2(root / "benchmarks" / "README.md", staging / "_bench" / "README.md")
    # MathJax, served by the site itself
    try:
        import jupyter_server_mathjax
    except ImportError as exc:
        raise ImportError("the site needs the docs extra: pip install -e '.[docs]'") from exc
    mj = Path(jupyter_server_mathjax.__file__).parent / "static"
    dest = staging / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        src = mj / part
        if src.is_dir():
            shutil.copytree(src, dest / part)
        elif src.is_file():
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / part)
    (staging / "_notebooks.json").write_text(json.dumps(names), encoding="utf-8")
    (staging / "_site.json").write_text(json.dumps({"repository": repository}),
                                        encoding="utf-8")
    return names


def build_site(out, *, root=None, keep_staging=False, verbose=False, repository=None,
               strict=False, log=print) -> dict:
    """Build the site into ``out``; returns ``{"seconds", "warnings", "pages"}``.

    ``repository``: ``owner/name`` of the run-online links (default
    :func:`.links.resolve_repository`, which refuses the placeholder);
    ``strict``: a Sphinx warning fails the build (CI builds it so: the site
    builds with none, and a new one is an error).  Raises
    :class:`RuntimeError` when Sphinx fails (its messages are printed).
    """
    try:
        from sphinx.cmd.build import build_main
    except ImportError as exc:
        raise ImportError("the course site needs the docs extra: pip install -e '.[docs]'") from exc

    root = Path(root) if root else repo_root()
    if root is None or not (root / "docs" / "conf.py").is_file():
        raise FileNotFoundError("the site is built from a checkout of svmlab (docs/conf.py "
                                "not found beside the svmlab package)")
    out = Path(out).resolve()
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="svmlab-site-"))
    staging = tmp / "src"
    warn_file = tmp / "warnings.txt"
    try:
        repository = links.resolve_repository(repository, root=root)
        names = stage(root, staging, repository=repository)
        log(f"staged {len(names)} notebooks in {time.monotonic() - t0:.1f} s; running Sphinx")
        args = ["-b", "html", "-q", "-d", str(tmp / "doctrees"), "-w", str(warn_file),
                "-E", str(staging), str(out)]
        with contextlib.redirect_stderr(io.StringIO()):   # the warnings go to warn_file
            code = build_main(args)
        warnings = warn_file.read_text(encoding="utf-8") if warn_file.exists() else ""
        if code != 0:
            raise RuntimeError(f"sphinx-build failed (exit {code}):\n{warnings[-3000:]}")
        if verbose:
            log(warnings)
    finally:
        if keep_staging:
            log(f"staging kept in {staging}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    n_warn = sum(1 for ln in warnings.splitlines() if "WARNING" in ln)
    if strict and n_warn:
        raise RuntimeError(f"the site build printed {n_warn} Sphinx warnings (--strict):\n"
                           + warnings[-4000:])
    pages = len(list(out.rglob("*.html")))
    secs = time.monotonic() - t0
    log(f"site: {pages} pages in {out} ({secs:.0f} s, {n_warn} Sphinx warnings"
        + ("" if verbose or not n_warn else ", --verbose shows them") + ")")
    return {"seconds": secs, "warnings": n_warn, "pages": pages, "warning_text": warnings}


if __name__ == "__main__":  # pragma: no cover
    build_site(sys.argv[1])
