"""Every number the notebooks' prose quotes is checked against the run.

Students read the markdown next to the outputs of their own run, at the
default size, so a number in the text must be one the run shows.  For every
markdown cell of every notebook, each number of the prose must be

* a number of the code itself (a parameter the prose repeats: ``n=40``,
  ``C=10``), found as a literal in a code cell of the same notebook; or
* printed by a code cell that nbval compares (not tagged
  ``nbval-ignore-output``): the test suite runs the notebook and nbval
  fails when that output changes, and a cell whose output depended on the
  size would fail nbval at the small size, so such a number is the same at
  the size students get; or
* checked by a named test (:data:`CHECKED_ELSEWHERE`).

Not prose: LaTeX math (formulas and the parameters in them), code spans,
references to the papers' numbering (eq., Table, Figure, Theorem, Algorithm,
OP, section, line), section and exercise numbers, years and notebook names.
Where a number depends on the size, the notebooks print the sentence that
quotes it from a cell (``equal_objective_summary``, the shrinking cell of 02)
instead of writing it in the markdown.
"""

import json
import re
from pathlib import Path

import pytest

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))

#: numbers of the prose that another test checks against a run:
#: notebook -> {number: the test that checks it}
CHECKED_ELSEWHERE = {
    "01_smo_geometry": {
        "176": "test_notebook_widgets::test_smo_try_it_yourself_does_what_the_text_says",
        "39": "test_notebook_widgets::test_smo_try_it_yourself_does_what_the_text_says",
    },
}

_NUMBER = re.compile(r"(?<![\w.\-−])[-−]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?![\w])")
_NOT_PROSE = [
    r"\$\$.*?\$\$", r"\$[^$]*\$", r"`[^`]*`", r"<[^>]+>", r"\]\([^)]*\)",
    # the papers' numbering and the course's own
    r"\b(?:eqs?\.|equations?|Table|Figure|Fig\.|Theorem|Algorithm|OP|sections?|lines?|"
    r"Exercises?|notebooks?|steps?|rules?|page|chapter|TR eqs?\.)\s*\(?\d+(?:\.\d+)?\)?"
    r"(?:\s*(?:-|–|,|and|to)\s*\(?\d+(?:\.\d+)?\)?)*",
    r"^#+ .*$", r"\b(?:19|20)\d\d\b", r"\b0\d_\w+", r"\b\d+-\d+-\d+\b",
    r"\(\d\d?\)",  # (3), (8): the paper's equation numbers
    r"\b[SO]P?\d\b", r"\bMSR-TR-\d+-\d+\b", r"\b\d+(?:st|nd|rd|th)\b",
]


def _source(cell):
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def prose_numbers(text):
    """The numbers of a markdown text that are prose (see the module docstring)."""
    for pat in _NOT_PROSE:
        text = re.sub(pat, " ", text, flags=re.S | re.M)
    text = re.sub(r"(\d)[-–](?=\d)", r"\1 ", text)  # a range 20-30: two numbers
    return [m.group(0).replace("−", "-").lstrip("-") for m in _NUMBER.finditer(text)]


def _variants(num):
    """The ways a number may be written in code or output (1000 / 1,000)."""
    out = {num, num.replace(",", "")}
    return {v for v in out if v}


def _checked_outputs(cell):
    if "nbval-ignore-output" in cell.get("metadata", {}).get("tags", []):
        return ""
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
        for key in ("text/plain",):
            v = o.get("data", {}).get(key)
            if v:
                parts.append("".join(v) if isinstance(v, list) else v)
    return "\n".join(parts)


def _found(num, haystack):
    return any(re.search(rf"(?<![\d.]){re.escape(v)}(?![\d])", haystack)
               for v in _variants(num))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_number_the_prose_quotes_is_in_the_code_or_a_checked_output(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = "\n".join(_source(c) for c in nb["cells"] if c["cell_type"] == "code")
    outputs = "\n".join(_checked_outputs(c) for c in nb["cells"] if c["cell_type"] == "code")
    elsewhere = CHECKED_ELSEWHERE.get(path.stem, {})
    unchecked = []
    for k, c in enumerate(nb["cells"]):
        if c["cell_type"] != "markdown":
            continue
        for num in prose_numbers(_source(c)):
            if num in elsewhere or _found(num, code) or _found(num, outputs):
                continue
            unchecked.append((k, num))
    assert not unchecked, (f"{path.name}: prose numbers found neither in the code nor in a "
                           f"checked output (cell, number): {unchecked}")


def test_prose_numbers_skips_math_code_and_references():
    text = ("Platt's heuristics take 176 steps ($C=10$, `n=40`), see eq. 13 and Table 1, "
            "section 2.1 of the 2000 paper, notebook 03; from 3.85 to 7.73, 20-30% of it.")
    assert prose_numbers(text) == ["176", "3.85", "7.73", "20", "30"]


def test_an_unchecked_number_fails(tmp_path):
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "It takes 176 steps."},
        {"cell_type": "code", "metadata": {"tags": ["nbval-ignore-output"]}, "source": "x = 1",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "176 steps\n"}],
         "execution_count": 1}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    p = tmp_path / "x.ipynb"
    p.write_text(json.dumps(nb))
    with pytest.raises(AssertionError, match=r"\(0, '176'\)"):
        test_every_number_the_prose_quotes_is_in_the_code_or_a_checked_output(p)
    nb["cells"][1]["metadata"]["tags"] = []        # a checked output quotes it: passes
    p.write_text(json.dumps(nb))
    test_every_number_the_prose_quotes_is_in_the_code_or_a_checked_output(p)
