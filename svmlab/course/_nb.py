"""Reading course notebooks as data: cells, exercises, and a student's definitions.

Everything here parses (JSON, :mod:`ast`); nothing executes a notebook.  Both
the grader's parent process (to find the exercises and what a submission
defines) and its worker (to run those definitions) use these functions, so
the two always agree on what a submission contains.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

#: nbgrader's cell-metadata schema version written by ``build-student``
NBGRADER_SCHEMA = 3

#: where a checkout keeps the instructor's solution modules, relative to its
#: root: beside ``notebooks/``, never inside it, so that the folder a student
#: opens (and the student build, and the site) does not hold them.  The one
#: place that names it (the student build, the site, the grader and the
#: tests read it from here).
SOLUTIONS_DIR = Path("instructor") / "solutions"


def checkout_root() -> Path | None:
    """The checkout ``svmlab`` is imported from (``notebooks/`` beside the
    package: a clone or an editable install), or None."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "notebooks").is_dir() else None


def default_solutions() -> Path | None:
    """``instructor/solutions/`` of this checkout, or None when it has none."""
    root = checkout_root()
    path = root / SOLUTIONS_DIR if root else None
    return path if path is not None and path.is_dir() else None


class NotebookError(ValueError):
    """A file that is not a readable Jupyter notebook (the message says why)."""


def read_notebook(path) -> dict:
    """The notebook at ``path`` as a dict (nbformat 4 JSON), or :class:`NotebookError`.

    Plain :mod:`json`, not ``nbformat.read``: a student's notebook that fails
    nbformat's schema validation (an editor's stray key) is still gradable.
    """
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotebookError(f"{path.name} is not a readable notebook: {exc}") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError(f"{path.name} is not a Jupyter notebook (no list of cells)")
    if nb.get("nbformat", 4) < 4:
        raise NotebookError(f"{path.name} is nbformat {nb.get('nbformat')}; save it as nbformat 4")
    return nb


def cell_source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def python_source(src: str) -> str:
    """Cell text as plain Python: IPython's magics (``%matplotlib``, ``!pip``)
    become ``get_ipython()`` calls, exactly as a kernel would run them."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln
                         for ln in src.splitlines())
    return TransformerManager().transform_cell(src)


def parse_cell(src: str):
    """``(module, error)``: the cell's AST, or None and the SyntaxError's text."""
    try:
        return ast.parse(python_source(src)), None
    except SyntaxError as exc:
        return None, f"line {exc.lineno}: {exc.msg}"
    except Exception as exc:  # noqa: BLE001 - IPython's transformer on odd input
        return None, f"{type(exc).__name__}: {exc}"


# ------------------------------------------------------------------ exercises
@dataclass
class Exercise:
    """One graded exercise of a notebook.

    ``function``: the name the student defines; ``checker``: the name of its
    ``svmlab.exercises`` checker; ``cell``: index of the cell that calls the
    checker; ``def_cell``: index of the cell that defines the starter (the
    same cell when both are together); ``points``: from the nbgrader metadata
    of the check cell, 1 when there is none.
    """

    notebook: str
    function: str
    checker: str
    cell: int
    def_cell: int | None
    points: float = 1.0
    grade_id: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return exercise_id(self.notebook, self.function)


def exercise_id(notebook: str, function: str) -> str:
    """The stable id of an exercise in grades and in nbgrader's ``grade_id``:
    ``<notebook number>.<function>`` (``01.take_step``), or the whole
    notebook name when it has no leading number."""
    m = re.match(r"(\d+)_", notebook)
    return f"{m.group(1) if m else notebook}.{function}"


def checker_names() -> set[str]:
    """The checkers a notebook may call: the ``check_*`` names of
    :mod:`svmlab.exercises`."""
    import svmlab.exercises as ex

    return {n for n in getattr(ex, "__all__", dir(ex)) if n.startswith("check_")}


def _checker_calls(tree, checkers):
    """``[(checker, function)]`` for top-level calls ``check_x(fn, ...)``
    (also inside ``display(...)``, ``print(...)`` and ``r = check_x(fn)``)."""
    found = []
    for node in tree.body:
        for sub in ast.walk(node):
            if (isinstance(sub, ast.Call) and isinstance(sub.func, (ast.Name, ast.Attribute))):
                name = sub.func.id if isinstance(sub.func, ast.Name) else sub.func.attr
                if name in checkers and sub.args and isinstance(sub.args[0], ast.Name):
                    found.append((name, sub.args[0].id))
    return found


def _defined_functions(tree):
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def find_exercises(nb: dict, notebook: str, checkers=None) -> list[Exercise]:
    """The exercises of a (reference) notebook, in order: every top-level
    call of an ``svmlab.exercises`` checker on a function name."""
    checkers = checker_names() if checkers is None else checkers
    out, seen, last_def = [], set(), {}
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        tree, _ = parse_cell(cell_source(cell))
        if tree is None:
            continue
        for fn in _defined_functions(tree):
            last_def[fn] = i
        for checker, fn in _checker_calls(tree, checkers):
            if fn in seen:
                continue
            seen.add(fn)
            meta = cell.get("metadata", {}).get("nbgrader", {})
            points = float(meta.get("points", 1.0)) if meta.get("grade") else 1.0
            out.append(Exercise(notebook, fn, checker, i, last_def.get(fn), points,
                                meta.get("grade_id", "")))
    return out


# ------------------------------------------------------------------ definitions
def _has_call(node) -> bool:
    """True when evaluating ``node`` calls something (a lambda's body does not
    run when the lambda is defined, so calls inside it do not count)."""
    if isinstance(node, ast.Lambda):
        return any(_has_call(d) for d in node.args.defaults + node.args.kw_defaults if d)
    if isinstance(node, ast.Call):
        return True
    return any(_has_call(child) for child in ast.iter_child_nodes(node))


def _is_definition(stmt) -> bool:
    """The statements of a notebook the grader runs: imports, ``def``,
    ``class``, and assignments of call-free values to plain names
    (``TOL = 1e-12``, ``RANKS = (1, 2, 3)``)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef)):
        return True
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]

        def plain(t):
            return isinstance(t, ast.Name) or (
                isinstance(t, (ast.Tuple, ast.List)) and all(plain(e) for e in t.elts))

        return (stmt.value is not None and all(plain(t) for t in targets)
                and not _has_call(stmt.value))
    return False


def definitions(src: str):
    """``(module, error)``: the cell reduced to its definitions (see
    :func:`_is_definition`), line numbers kept, or None and the syntax error."""
    tree, err = parse_cell(src)
    if tree is None:
        return None, err
    tree.body = [s for s in tree.body if _is_definition(s)]
    return tree, None


def code_cells(nb: dict) -> list[tuple[int, str]]:
    """``[(cell index, source)]`` of the code cells, in notebook order."""
    return [(i, cell_source(c)) for i, c in enumerate(nb["cells"]) if c.get("cell_type") == "code"]


def defined_functions(nb: dict) -> dict[str, int]:
    """``{function: index of the last cell defining it}`` over the whole notebook."""
    out = {}
    for i, src in code_cells(nb):
        tree, _ = parse_cell(src)
        if tree is not None:
            for fn in _defined_functions(tree):
                out[fn] = i
    return out
