"""``python -m svmlab.course build-student OUT/``: the version handed to students.

What OUT/ holds: the course notebooks (nothing else from the repository:
the instructor's solutions live in ``instructor/solutions/`` of the
checkout, outside ``notebooks/``), a ``README.md`` for the students, and
``course.json`` (the exercises, their ids and points, for the instructor's
records; ``grade --release OUT/`` reads the same from the notebooks' nbgrader
metadata).  The data the notebooks use is embedded in the ``svmlab``
package, so nothing else is needed.

Outputs are **cleared**, and the saved widget state removed:

* an answer cannot leak from what is not there: the explorers' source
  panels live in the saved widget state, and whatever the instructor's
  copy printed (a checker's verdict, a solved run) stays with the
  instructor;
* every number a student reads comes from the student's own run, at the
  size the student's machine uses;
* a returned notebook then carries only the student's outputs;
* the files shrink from megabytes to tens of kilobytes.

The executed versions, with figures and animations, are on the course site
(``python -m svmlab.course site``), which is where a student reads ahead.

The reveal locks of :mod:`svmlab.exercises` are on in a student's kernel
unless ``SVMLAB_LOCKS=off`` is set there; the build refuses a notebook
whose code turns them off (``set_locks(False)``, ``reveal()``).

Each exercise follows nbgrader's cell-metadata conventions (schema 3): the
cell the student writes is an "autograded answer" (``solution: true``,
``grade_id`` = the exercise id), and the cell that calls the checker is a
locked "autograder tests" cell (``grade: true``, ``points``, ``grade_id`` =
``check-`` + the id).  Where one cell holds both, the build splits it after
the function, so the check stays a cell of its own.

After writing, the build reads every file back and refuses (exit status 1,
files removed) when a cell still has an output, widget state is left, or
the text of a solution or of a line the reveal locks hide appears in an
output or in metadata.  Such a line in a cell's *source* is reported as a
warning (the exercise text is the classroom's to write).
"""

from __future__ import annotations

import ast
import copy
import html
import json
import re
import shutil
import uuid
from pathlib import Path

from . import _nb
from . import links
from .links import binder_url, colab_url, install_spec

#: cell tags that exist for the test suite only
TEST_TAGS = ("nbval-ignore-output", "nbval-skip", "nbval-check-output", "nbval-raises-exception")

#: code that turns the reveal locks off for everyone
_UNLOCK = re.compile(r"\bset_locks\s*\(\s*(False|0|None)\s*\)|\breveal\s*\(|SVMLAB_LOCKS")

DEFAULT_POINTS = 1.0


class LeakError(RuntimeError):
    """The student build would show an answer (the message says where)."""


# ------------------------------------------------------------------ answers
def _norm(text: str) -> str:
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return " ".join(text.split())


def _code_lines(src: str, min_chars=14):
    out = set()
    for ln in src.splitlines():
        ln = ln.split("#", 1)[0].strip()
        if len(ln.replace(" ", "")) >= min_chars and not ln.startswith(("def ", "class ", '"""', "'''")):
            out.add(" ".join(ln.split()))
    return out


def solution_lines(solutions_dir) -> set[str]:
    """The code lines of the instructor's solution functions (comments and
    docstrings left out, lines of fewer than 14 characters too)."""
    out = set()
    d = Path(solutions_dir) if solutions_dir else None
    if d is None or not d.is_dir():
        return out
    for path in sorted(d.glob("*.py")):
        src = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    body = body[1:]
                for stmt in body:
                    out |= _code_lines(ast.get_source_segment(src, stmt) or "")
    return out


def hidden_reference_lines() -> set[str]:
    """The lines of svmlab's readable references that the reveal locks hide
    (empty when this svmlab has no reveal locks)."""
    try:
        from svmlab.exercises import _registry as reg
    except ImportError:
        return set()
    import importlib

    out = set()
    seen = set()
    for ex in reg.EXERCISES.values():
        for hide in ex.hides:
            if hide.function in seen:
                continue
            seen.add(hide.function)
            mod, qual = hide.function.split(":")
            obj = importlib.import_module(f"svmlab.reference.{mod}")
            for part in qual.split("."):
                obj = getattr(obj, part)
            from svmlab.reference._source import tagged_lines

            lines = tagged_lines(obj)
            for i in reg.covered_lines(obj):
                out |= _code_lines(lines[i][0])
    return out


def _strings(obj):
    """Every string inside a JSON value (lists of lines joined)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, list) and obj and all(isinstance(x, str) for x in obj):
        yield "".join(obj)
    elif isinstance(obj, list):
        for x in obj:
            yield from _strings(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _strings(x)


def find_leaks(nb: dict, answers: set[str]):
    """``(in_outputs, in_sources)``: ``[(where, line)]`` for every answer line
    found in the notebook's outputs, attachments or metadata, and in its cell
    sources (HTML tags stripped and whitespace collapsed first, so a
    highlighted source panel is read as text)."""
    in_outputs, in_sources = [], []
    if not answers:
        return in_outputs, in_sources
    places = [("notebook metadata", nb.get("metadata", {}))]
    for i, cell in enumerate(nb["cells"]):
        places.append((f"cell {i} metadata", cell.get("metadata", {})))
        if cell.get("attachments"):
            places.append((f"cell {i} attachments", cell["attachments"]))
        for k, out in enumerate(cell.get("outputs", [])):
            places.append((f"cell {i} output {k}", out))
    for where, obj in places:
        t = _norm("\n".join(_strings(obj)))
        in_outputs += [(where, a) for a in sorted(answers) if a in t]
    for i, cell in enumerate(nb["cells"]):
        t = _norm(_nb.cell_source(cell))
        in_sources += [(f"cell {i} source", a) for a in sorted(answers) if a in t]
    return in_outputs, in_sources


# ------------------------------------------------------------------ one notebook
def _new_id():
    return uuid.uuid4().hex[:8]


def _split_check(cell, ex):
    """``[answer cell, check cell]`` when ``cell`` both defines the function
    and calls its checker, else None.  The split falls after the last
    top-level statement before the first checker call."""
    src = _nb.cell_source(cell)
    tree, _ = _nb.parse_cell(src)
    if tree is None:
        return None
    first_call = None
    for stmt in tree.body:
        if any(isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None))
               == ex.checker for n in ast.walk(stmt)):
            first_call = stmt
            break
    defines = any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == ex.function
                  for s in tree.body)
    if first_call is None or not defines or first_call is tree.body[0]:
        return None
    lines = src.splitlines(keepends=True)
    cut = first_call.lineno - 1
    head = "".join(lines[:cut]).rstrip() + "\n"
    tail = "".join(lines[cut:]).strip() + "\n"
    # the checker's import belongs with the check when the answer does not use it
    imp = re.compile(rf"^from svmlab\.exercises import {re.escape(ex.checker)}[ \t]*\n", re.M)
    if imp.search(head) and head.count(ex.checker) == 1:
        head = imp.sub("", head, count=1).lstrip("\n")
        tail = f"from svmlab.exercises import {ex.checker}\n\n" + tail
    answer = copy.deepcopy(cell)
    check = copy.deepcopy(cell)
    answer["source"] = head.rstrip("\n")
    check["source"] = tail.rstrip("\n")
    check["id"] = _new_id()
    return [answer, check]


def _nbgrader(solution, grade, grade_id, points=None, locked=False):
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked,
            "schema_version": _nb.NBGRADER_SCHEMA, "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return meta


def student_notebook(nb: dict, stem: str, points=None, repository=None) -> tuple[dict, list]:
    """``(notebook, exercises)``: the student version of one notebook
    (``repository``: ``owner/name`` its Colab cell installs from and its
    links point at, see :func:`.links.resolve_repository`)."""
    repository = links.resolve_repository(repository)
    nb = copy.deepcopy(nb)
    links.set_colab_cells(nb, repository)
    points = points or {}
    exercises = _nb.find_exercises(nb, stem)
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") == "code" and _UNLOCK.search(_nb.cell_source(cell)):
            raise LeakError(f"{stem}.ipynb cell {i} turns the reveal locks off "
                            f"({_UNLOCK.search(_nb.cell_source(cell)).group(0)}); "
                            f"a student build keeps them on")
    # split combined answer+check cells, from the last one up so indices hold
    for ex in sorted(exercises, key=lambda e: e.cell, reverse=True):
        if ex.def_cell == ex.cell:
            parts = _split_check(nb["cells"][ex.cell], ex)
            if parts:
                nb["cells"][ex.cell:ex.cell + 1] = parts
    exercises = _nb.find_exercises(nb, stem)
    for ex in exercises:
        pts = float(points.get(ex.id, DEFAULT_POINTS))
        ex.points = pts
        check = nb["cells"][ex.cell]
        check.setdefault("metadata", {})["nbgrader"] = _nbgrader(False, True, f"check-{ex.id}",
                                                                   pts, locked=True)
        check["metadata"]["editable"] = False
        check["metadata"]["deletable"] = False
        if ex.def_cell is not None and ex.def_cell != ex.cell:
            nb["cells"][ex.def_cell].setdefault("metadata", {})["nbgrader"] = _nbgrader(
                True, False, ex.id)
    for cell in nb["cells"]:
        meta = cell.setdefault("metadata", {})
        if "tags" in meta:
            meta["tags"] = [t for t in meta["tags"] if t not in TEST_TAGS]
            if not meta["tags"]:
                del meta["tags"]
        meta.pop("execution", None)
        meta.pop("collapsed", None)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb["metadata"].pop("widgets", None)
    nb["metadata"]["svmlab"] = {"student_version": True,
                                "colab": colab_url(f"{stem}.ipynb", repository),
                                "binder": binder_url(f"{stem}.ipynb", repository)}
    return nb, exercises


# ------------------------------------------------------------------ the build
STUDENT_README = """\
# {title}: the notebooks

Open them in JupyterLab:

```bash
python3 -m venv .venv && .venv/bin/pip install "{install}"
.venv/bin/jupyter lab
```

(If your instructor gave you another address or a wheel, install that.
As root, in a container or on many cloud machines, JupyterLab starts only
with `.venv/bin/jupyter lab --allow-root`.)
Everything runs offline on the data embedded in the package.  Start with `00_primer.ipynb` (or `00_tour.ipynb` if you know SVMs).

No installation? Open a notebook online (the first cell installs svmlab when
it runs in Colab):

| notebook | Colab | Binder |
|---|---|---|
{rows}

## Exercises

Some notebooks end with exercises: you write a function in the cell that
says `raise NotImplementedError`, and the cell below it checks your function
on many cases and names the first case that differs, with a hint.  The
explorers above an exercise hide the lines that answer it until the check
passes (or until you press "reveal": you may, but try first).

Exercises in this version:

| notebook | exercise | points |
|---|---|---|
{exercises}

Hand in the notebooks themselves (`.ipynb`), with your functions in the
answer cells.  What is graded is each function, run on the checker's cases:
keep its name and arguments, and do not rely on variables set by other
cells.
"""


def build_student(out, notebooks=None, *, solutions=None, points=None, title="svmlab",
                  overwrite=False, repository=None, log=print) -> dict:
    """Write the student version of the course notebooks to ``out``.

    ``notebooks``: the instructor's notebooks folder (default: ``notebooks/``
    of this checkout); ``solutions``: the folder of solution modules whose
    lines must not appear (default: ``instructor/solutions/`` of this
    checkout, :data:`._nb.SOLUTIONS_DIR`);
    ``points``: ``{exercise id: points}`` (default 1 each);
    ``repository``: ``owner/name`` the handout installs svmlab from and links
    to (default: :func:`.links.resolve_repository`, which refuses a
    placeholder).  Returns the course manifest written to ``out/course.json``.
    """
    repository = links.resolve_repository(repository)
    from ._grade import default_release

    src = Path(notebooks) if notebooks else default_release()
    if src is None or not src.is_dir():
        raise FileNotFoundError("no notebooks folder: pass --notebooks DIR")
    out = Path(out)
    if out.resolve() == src.resolve() or src.resolve() in out.resolve().parents:
        raise ValueError(f"{out} is inside the notebooks folder {src}; choose another folder")
    if out.exists():
        if not overwrite and any(out.iterdir()):
            raise FileExistsError(f"{out} exists and is not empty (use --force to replace it)")
        shutil.rmtree(out)
    solutions = Path(solutions) if solutions else _nb.default_solutions()
    answers = solution_lines(solutions) | hidden_reference_lines()
    out.mkdir(parents=True)
    manifest = {"repository": repository, "notebooks": [], "exercises": []}
    warnings = []
    try:
        for path in sorted(src.glob("*.ipynb")):
            nb, exercises = student_notebook(_nb.read_notebook(path), path.stem, points,
                                             repository)
            leaks, in_src = find_leaks(nb, answers)
            if leaks:
                where = "; ".join(f"{w}: {a!r}" for w, a in leaks[:5])
                raise LeakError(f"{path.name}: an answer is visible in the student version: {where}")
            warnings += [f"{path.name} {w} shows the answer line {a!r}" for w, a in in_src]
            (out / path.name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
            manifest["notebooks"].append(path.name)
            manifest["exercises"] += [{"id": ex.id, "notebook": ex.notebook,
                                       "function": ex.function, "checker": ex.checker,
                                       "points": ex.points} for ex in exercises]
        rows = "\n".join(f"| `{n}` | [open]({colab_url(n, repository)}) | "
                         f"[open]({binder_url(n, repository)}) |" for n in manifest["notebooks"])
        exs = "\n".join(f"| `{e['notebook']}` | `{e['function']}` | {e['points']:g} |"
                        for e in manifest["exercises"])
        (out / "README.md").write_text(STUDENT_README.format(
            title=title, rows=rows, exercises=exs,
            install=install_spec("notebooks", repository)),
            encoding="utf-8")
        (out / "course.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        verify_student_build(out, answers)
    except Exception:
        shutil.rmtree(out, ignore_errors=True)
        raise
    for w in warnings:
        log(f"warning: {w}")
    return manifest


def verify_student_build(out, answers=frozenset()):
    """Read the build back: no solutions folder, no output, no widget state,
    no answer line in outputs or metadata; :class:`LeakError` otherwise."""
    out = Path(out)
    problems = []
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out)
        if "solution" in str(rel).lower():
            problems.append(f"{rel}: a solutions file in the student build")
        if (path.is_file() and links.is_placeholder()
                and links.GITHUB_REPOSITORY in path.read_text(encoding="utf-8", errors="replace")):
            problems.append(f"{rel}: the placeholder address {links.GITHUB_REPOSITORY}")
    for path in sorted(out.glob("*.ipynb")):
        nb = _nb.read_notebook(path)
        if "widgets" in nb.get("metadata", {}):
            problems.append(f"{path.name}: saved widget state")
        for i, cell in enumerate(nb["cells"]):
            if cell.get("outputs"):
                problems.append(f"{path.name} cell {i}: stored outputs")
            if cell.get("execution_count") is not None:
                problems.append(f"{path.name} cell {i}: an execution count")
        leaks, _ = find_leaks(nb, set(answers))
        problems += [f"{path.name} {w}: answer line {a!r}" for w, a in leaks]
    if problems:
        raise LeakError("the student build is not clean: " + "; ".join(problems[:10]))
