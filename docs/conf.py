"""Sphinx configuration of the svmlab course site.

Build it with ``python -m svmlab.course site OUT/`` (README, "Course site"):
that command stages these sources together with the notebooks, README and
the benchmark page in a temporary folder and runs Sphinx there; running
``sphinx-build`` on this folder directly has no notebooks to render.
"""

import json
import re
from pathlib import Path

from svmlab.course import links

HERE = Path(__file__).parent
if not (HERE / "_notebooks.json").is_file():
    raise RuntimeError("build the site with `python -m svmlab.course site OUT/` "
                       "(it stages the notebooks next to these sources)")
#: the repository the staging step resolved (never the placeholder)
REPOSITORY = json.loads((HERE / "_site.json").read_text())["repository"]

project = "svmlab"
author = "the svmlab authors"
copyright = "svmlab authors, BSD-3-Clause"  # noqa: A001 - Sphinx's name

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

# ---- notebooks: rendered from their stored outputs, never executed here
nb_execution_mode = "off"
nb_output_stderr = "show"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# ---- API reference from the docstrings (numpydoc style)
autosummary_generate = True
autosummary_ignore_module_all = False
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "none"
autodoc_mock_imports = []
napoleon_numpy_docstring = True
napoleon_google_docstring = False

# ---- math without a CDN: MathJax 2 copied into _static by the staging step
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
# (myst-nb marks a notebook's section tex2jax_ignore and its math spans "math";
# MathJax 2 is told to process those, as myst does for MathJax 3)
mathjax2_config = {
    "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None},
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                "processEscapes": False, "processEnvironments": True,
                "processClass": "tex2jax_process|mathjax_process|math|output_area",
                "ignoreClass": "tex2jax_ignore|mathjax_ignore"},
    "showMathMenu": False,
}

# ---- pages
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "_readme/docs", "decisions"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
templates_path = []
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_title = "svmlab course"
html_theme = "pydata_sphinx_theme"
html_theme_options = {
    "github_url": links.repository_url(REPOSITORY),
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
html_show_sourcelink = False
html_copy_source = False

suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]


def _skip_member(app, what, name, obj, skip, options):
    """scikit-learn's generated metadata-routing setters (``set_fit_request``
    ...) are not svmlab's API; their docstrings also point into
    scikit-learn's own docs."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def _unlink_problematic(app, doctree, docname):
    """A docstring with a reST slip (``|x|`` read as a substitution, an
    unclosed literal) becomes a "problematic" node that links to an error
    message the HTML does not show: a broken link.  Keep its text, drop the
    link; Sphinx has already counted the slip as a warning."""
    from docutils import nodes

    for node in list(doctree.findall(nodes.problematic)):
        node.replace_self(nodes.inline(node.astext(), node.astext()))


#: docstrings shown verbatim because they are not valid reST (the site build
#: reports them; ``tests/test_site.py`` fails when one is added)
VERBATIM = []


def _check_rest(app, what, name, obj, options, lines):
    """A docstring that docutils cannot read cleanly (a block quote without a
    blank line, an unclosed literal) is shown verbatim, as written in the
    source, instead of half-parsed with a warning; its name is recorded."""
    import io as _io

    from docutils.core import publish_doctree

    # napoleon ends a field list (``:param x:`` ...) without a blank line
    # when prose follows at once ("Returns nothing.  ..."): add it
    fixed, in_fields = [], False
    for ln in lines:
        field = re.match(r"^:[\w ]+:", ln) is not None
        if in_fields and ln and not field and not ln[:1].isspace():
            fixed.append("")
        in_fields = field or (in_fields and (ln[:1].isspace() and ln.strip() != ""))
        fixed.append(ln)
    lines[:] = fixed
    text = "\n".join(lines)
    if not text.strip():
        return
    # Sphinx's roles (:class:`x`) are unknown to bare docutils: read them as literals
    # (same width, so that simple tables keep their columns)
    probe = re.sub(r"(:[\w:.-]+:)`([^`]*)`",
                   lambda m: f"``{m.group(2)}``" + " " * (len(m.group(1)) - 2), text)
    # and its directives need Sphinx's environment: read them as comments
    probe = re.sub(r"(?m)^(\s*)\.\. [\w:-]+::.*$", r"\1.. directive", probe)
    stream = _io.StringIO()
    try:
        publish_doctree(probe, settings_overrides={"report_level": 2, "halt_level": 5,
                                                   "warning_stream": stream,
                                                   "file_insertion_enabled": False,
                                                   "raw_enabled": False})
    except Exception:  # noqa: BLE001 - cannot judge it: Sphinx reads it as it is
        return
    if "WARNING" in stream.getvalue() or "ERROR" in stream.getvalue():
        VERBATIM.append(name)
        lines[:] = ["::", ""] + ["    " + ln for ln in lines] + [""]


def _report_verbatim(app, exception):
    if exception is None:
        (Path(app.outdir) / "_verbatim_docstrings.json").write_text(json.dumps(sorted(set(VERBATIM))))


def setup(app):
    app.connect("autodoc-process-docstring", _check_rest, priority=900)
    app.connect("build-finished", _report_verbatim)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("doctree-resolved", _unlink_problematic)
