"""Nothing reachable before it is earned (issue 32).

The reveal locks hide the lines of svmlab's readable references that answer
an exercise.  This test takes every hidden line's formula (the right-hand
side of its assignment, of its ``return``, or its condition), normalises it
(case, spaces, ``*``, ``alph1``/``alph2``/``C1``/``C2`` read as ``a1``/``a2``/
``C``, ``0.0`` as ``0``) and looks for it in everything a student reaches
without earning it:

* every string of :mod:`svmlab.exercises` (the checkers' hints, in every
  branch, and every docstring a student reads with ``help`` or ``?``), read
  from the source so that no branch is missed;
* the hints a student really gets: the issue's case (a ``take_step`` without
  clipping, written before Exercise 1) run through the checker;
* every file in the folder a student opens (``notebooks/``: cell sources
  and stored outputs) and the student README template;
* the docstrings of the ``svmlab.exercises`` modules and checkers at run time.

A formula the notebook's own text gives (the introduction of 01 states the
unconstrained step and eta; Exercise 3 states the rule of the choice) is not
an answer to find: :data:`GIVEN` lists those, each with the LaTeX by which
the notebook gives it, which the test checks is there.

It also checks that the solutions are outside the student's folder and that
passing one exercise shows every line it hides (the locks release per
exercise, as README says).
"""

import ast
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

from svmlab.course import _nb, _student
from svmlab.exercises import _registry as reg

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
EXERCISES_PKG = ROOT / "svmlab" / "exercises"

#: formulas of hidden lines that the notebooks give openly:
#: normalised formula -> (notebook, LaTeX text by which the notebook states it)
GIVEN = {
    "k11+k22-2k12": ("01_smo_geometry", r"\eta=K_{11}+K_{22}-2K_{12}"),
    "a2+y2(e1-e2)/eta": ("01_smo_geometry", r"\alpha_2+y_2(E_1-E_2)/\eta"),
    "0.5(b1+b2)": ("01_smo_geometry", r"$(b_1+b_2)/2$"),
    "y1(a1_new-a1)": ("01_smo_geometry", r"$d_1=y_1(\alpha_1^{new}-\alpha_1)$"),
    "y2(a2_new-a2)": ("01_smo_geometry", r"$d_2=y_2(\alpha_2^{new}-\alpha_2)$"),
    "y(x@w+b)": ("03_cutting_plane", r"y_i(w^\top x_i+b)"),
    "0<a1_new<c": ("01_smo_geometry", r"Return $b_1$ if $0<\alpha_1^{new}<C$"),
    "0<a2_new<c": ("01_smo_geometry", r"else $b_2$ if $0<\alpha_2^{new}<C$"),
}

_ALIASES = [(r"\bc[12]\b", "c"), (r"\bself\.", ""), (r"\bnp\.", ""),
            (r"(?<![\w.])(\d+)\.0\b", r"\1")]

#: names a reference function uses for what the exercises call otherwise:
#: Platt's ``take_step`` keeps the old pair in ``alph1, alph2`` and the new
#: one in ``a1, a2`` (the exercises' ``a1, a2`` and ``a1_new, a2_new``)
_FUNCTION_NAMES = {
    "smo:PlattSMO.take_step": [(r"\ba([12])\b", r"a\1_new"), (r"\balph([12])\b", r"a\1")],
}


def norm(text: str, names=()) -> str:
    """Lower case, the function's names and the aliases applied, whitespace,
    backticks and ``*`` removed."""
    t = text
    for pat, rep in names:
        t = re.sub(pat, rep, t)
    t = t.lower()
    for pat, rep in _ALIASES:
        t = re.sub(pat, rep, t)
    return re.sub(r"[\s*`]", "", t)


def _split_top(expr: str, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in expr:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def formulas_of(line: str):
    """The formulas of one source line: the right-hand side(s) of an
    assignment, the value of a ``return``, the condition of an ``if``."""
    code = line.split("#", 1)[0].strip()
    if not code or code.startswith(('"""', "'''")):
        return []
    m = re.match(r"^(?:if|elif|while)\s+(.*):$", code)
    if m:
        return [m.group(1)]
    m = re.match(r"^return\s+(.*)$", code)
    if m:
        return _split_top(m.group(1))
    m = re.match(r"^([\w\[\]\.\s,:|&()]+?)\s*(?<![=!<>+\-*/])=(?!=)\s*(.+)$", code)
    if m:
        lhs, rhs = m.groups()
        return _split_top(rhs) if "," in lhs and "[" not in lhs else [rhs]
    return []


def _is_formula(n: str) -> bool:
    # short names, constants and plain calls are not answers
    return len(n) >= 8 and bool(re.search(r"[+\-/<>@&|]", n))


def _short_definitions(lines, names):
    """``{name: value}`` of the short helper names a function
    defines (``s = y1 * y2``, ``d1, d2 = ...``), so that a formula written
    with the value spelt out (``b - E1 - y1 (a1_new - a1) K11 ...``) is found
    too."""
    out = {}
    for text, _ in lines:
        code = text.split("#", 1)[0].strip()
        m = re.match(r"^([\w\s,]+?)\s*=(?!=)\s*(.+)$", code)
        if not m:
            continue
        lhs = [v.strip() for v in m.group(1).split(",")]
        rhs = _split_top(m.group(2)) if len(lhs) > 1 else [m.group(2)]
        if len(lhs) == len(rhs):
            for name, val in zip(lhs, rhs):
                # eta is named by the notebook itself: it stays a name
                # (values that call or look up something, such as
                # ``k11 = float(self.kdiag[i1])``, stay names: the formulas
                # are written with k11, not with how it is fetched)
                if (len(name) <= 3 and name not in ("L", "H", "eta")
                        and not re.search(r"[\w.\]]\(|self\.", val)):
                    out[name] = val.strip()
    return out


def hidden_formulas():
    """``{normalised formula: (exercise id, source line)}`` over every line a
    lock hides (each also with the function's short helper names spelt out)."""
    out = {}
    for ex in reg.EXERCISES.values():
        for hide in ex.hides:
            mod, qual = hide.function.split(":")
            obj = importlib.import_module(f"svmlab.reference.{mod}")
            for part in qual.split("."):
                obj = getattr(obj, part)
            lines = reg.source_lines(obj)
            names = _FUNCTION_NAMES.get(hide.function, ())
            # helper names the hidden lines themselves define (d1, d2, s)
            short = _short_definitions([lines[i] for i in sorted(reg.covered_lines(obj))], names)
            for i in reg.lines_of(hide, lines):
                for f in formulas_of(lines[i][0]):
                    spelt = f
                    for name, val in short.items():
                        spelt = re.sub(rf"(?<![\w.]){name}\b(?!\()", val, spelt)
                    for v in {norm(f, names), norm(spelt, names)}:
                        if _is_formula(v):
                            out.setdefault(v, (ex.exercise_id, lines[i][0].strip()))
    return out


FORMULAS = hidden_formulas()


def _strings_of_module(path: Path):
    """Every string literal of a module (f-strings with ``{}`` for their
    fields), with its line number."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            yield node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}"
                                       for v in node.values)


def _leaks(text: str, where: str):
    t = norm(text)
    return [f"{where}: {eid} hides {line!r}" for f, (eid, line) in FORMULAS.items()
            if f in t and f not in GIVEN]


def test_the_formula_list_is_not_empty_and_catches_the_issue_case():
    assert len(FORMULAS) >= 25
    # the hint the issue found (Exercise 2's, stating Exercise 1's answer)
    leaked = "for y1 != y2, L = max(0, a2 - a1), H = min(C, C + a2 - a1) (TR eq. 13)"
    assert _leaks(leaked, "issue 32")
    assert _leaks("b1 = b - E1 - d1 * K11 - d2 * K12", "x")
    assert _leaks("b1 = b - E1 - y1 (a1_new - a1) K11 - y2 (a2_new - a2) K12", "x")
    assert _leaks("a1_new = a1 + s (a2 - a2_new)", "x")


def test_given_formulas_are_given_by_the_notebook_text():
    for f, (stem, latex) in GIVEN.items():
        assert f in FORMULAS, f"{f} is no longer a hidden formula: drop it from GIVEN"
        nb = _nb.read_notebook(NOTEBOOKS / f"{stem}.ipynb")
        md = "\n".join(_nb.cell_source(c) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert re.sub(r"\s", "", latex) in re.sub(r"\s", "", md), (f, latex)


def test_no_hint_or_docstring_of_the_exercises_states_a_hidden_formula():
    problems = []
    for path in sorted(EXERCISES_PKG.glob("*.py")):
        for lineno, s in _strings_of_module(path):
            problems += _leaks(s, f"{path.name}:{lineno}")
    assert not problems, "\n".join(problems)


def test_no_reachable_docstring_states_a_hidden_formula():
    """The exercises' docstrings, and those of the explorers a student calls
    in the same notebooks (``help(svmlab.viz.ordinal)``)."""
    import svmlab.exercises as ex

    mods = [ex] + [importlib.import_module(f"svmlab.exercises.{p.stem}")
                   for p in sorted(EXERCISES_PKG.glob("*.py")) if p.stem != "__init__"]
    mods += [importlib.import_module(f"svmlab.viz.{p.stem}")
             for p in sorted((ROOT / "svmlab" / "viz").glob("*.py")) if p.stem != "__init__"]
    problems = []
    for mod in mods:
        problems += _leaks(mod.__doc__ or "", mod.__name__)
        for name, obj in vars(mod).items():
            if callable(obj) and getattr(obj, "__module__", "") == mod.__name__:
                problems += _leaks(inspect.getdoc(obj) or "", f"{mod.__name__}.{name}")
    assert not problems, "\n".join(problems)


def test_no_file_in_the_students_folder_states_a_hidden_formula():
    problems = []
    for path in sorted(NOTEBOOKS.rglob("*")):
        if not path.is_file() or ".ipynb_checkpoints" in path.parts:
            continue
        rel = path.relative_to(ROOT)
        assert "solution" not in str(path.relative_to(NOTEBOOKS)).lower(), \
            f"{rel}: solutions in the folder a student opens"
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            for i, cell in enumerate(nb["cells"]):
                problems += _leaks(_nb.cell_source(cell), f"{rel} cell {i} source")
                for k, out in enumerate(cell.get("outputs", [])):
                    text = _student._norm("\n".join(_student._strings(out)))
                    problems += _leaks(text, f"{rel} cell {i} output {k}")
        else:
            problems += _leaks(path.read_text(encoding="utf-8", errors="replace"), str(rel))
    problems += _leaks(_student.STUDENT_README, "the student README")
    assert not problems, "\n".join(problems)


def test_the_solutions_live_outside_the_students_folder():
    sol = ROOT / _nb.SOLUTIONS_DIR
    assert sol.is_dir() and list(sol.glob("solutions_*.py"))
    assert NOTEBOOKS not in sol.parents and not (NOTEBOOKS / "solutions").exists()
    assert _nb.default_solutions() == sol


def test_the_issue_case_gets_a_hint_without_exercise_1s_rule(fresh_locks):
    """A take_step without clipping, written before Exercise 1 passed."""
    from svmlab.exercises import check_take_step

    def no_clipping(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
        eta = K11 + K22 - 2 * K12
        if eta <= 0:
            return a1, a2
        a2n = a2 + y2 * (E1 - E2) / eta
        return a1 + y1 * y2 * (a2 - a2n), a2n

    res = check_take_step(no_clipping)
    assert not res.passed and "clipped" in res.message
    assert not _leaks(res.message, "the hint"), res.message


@pytest.fixture
def fresh_locks(monkeypatch):
    monkeypatch.delenv(reg.LOCKS_ENV, raising=False)
    reg.reset_locks()
    yield
    reg.reset_locks()


@pytest.mark.parametrize("eid", [e for e, x in reg.EXERCISES.items() if x.hides])
def test_passing_one_exercise_shows_every_line_it_hides(eid, fresh_locks):
    """Locks release per exercise: after a pass of ``eid`` alone, no line it
    covers is still hidden (an exercise's lines are not also covered by
    another exercise of its notebook)."""
    reg.set_locks(True)
    reg.mark_passed(eid)
    for hide in reg.EXERCISES[eid].hides:
        mod, qual = hide.function.split(":")
        obj = importlib.import_module(f"svmlab.reference.{mod}")
        for part in qual.split("."):
            obj = getattr(obj, part)
        mine = reg.lines_of(hide, reg.source_lines(obj))
        still = {i: e for i, e in reg.hidden_lines(obj).items() if i in mine}
        assert not still, f"{eid} passed, but lines {sorted(still)} stay hidden under {set(still.values())}"
