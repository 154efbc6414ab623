"""``python -m svmlab.course grade SUBMISSIONS/ --csv grades.csv``.

Layout: one folder per student, ``SUBMISSIONS/<student>/.../*.ipynb`` (the
folder's name is the student; nbgrader's ``submitted/<student>/<assignment>/``
fits).  A submitted notebook is matched to a reference notebook by its name
(``01_smo_geometry.ipynb``, also ``Copy of 01_smo_geometry (2).ipynb``), else
by the exercise functions it defines.

The reference notebooks (``--release``: the student build you handed out, or
by default the ``notebooks/`` folder of this checkout) say which exercises
exist and their points: a submission's own metadata is never trusted for
points.

What runs: each student's code in a sandbox (:mod:`._sandbox`: its own
process tree, as ``nobody`` in its own namespaces when the grader runs as
root, with a memory limit for the whole tree); in it only the definitions
of each notebook (imports, functions, classes, call-free constants) run, in
notebook order, so the last definition of a function wins as in "Restart
and Run All", the explorers and fits in between do not run, and a deleted
or edited check cell changes nothing.  The checkers run here, in the
grader's process, on a stand-in of each student function that calls it in
the sandbox and gets plain values back: the student's code can reach
neither the checkers nor the scores.  The time limit counts only the time
spent inside the student's own code, on this process's clock; when an
exercise's total passes the limit, the tree is killed, the exercise is a
``timeout``, and a new sandbox grades the exercises left.  A sandbox that
dies (a segfault, ``os._exit``) gives ``crash`` for the exercise in
progress, and the rest is graded in a new one the same way.
"""

from __future__ import annotations

import base64
import csv
import marshal
import os
import re
import signal
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from . import _nb

#: the CSV's columns, in order
COLUMNS = ("student", "notebook", "exercise", "passed", "score", "max_score", "cases_passed",
           "cases_total", "status", "guard_fired", "message")

#: statuses besides the checkers' own ("passed", "failed", "not implemented")
MISSING, TIMEOUT, CRASH, ERROR = "missing", "timeout", "crash", "error"

MESSAGE_LIMIT = 1500


@dataclass
class Row:
    """One line of the grade sheet: one student and one exercise."""

    student: str
    notebook: str
    exercise: str
    passed: bool
    score: float
    max_score: float
    cases_passed: int | None
    cases_total: int | None
    status: str
    guard_fired: bool
    message: str


# ------------------------------------------------------------------ discovery
def default_release() -> Path | None:
    """``notebooks/`` beside the ``svmlab`` package (a checkout or an editable
    install), or None."""
    here = Path(__file__).resolve().parents[2] / "notebooks"
    return here if here.is_dir() else None


def release_exercises(release) -> dict[str, list[_nb.Exercise]]:
    """``{notebook stem: exercises}`` for the reference notebooks that have any."""
    release = Path(release)
    if not release.is_dir():
        raise FileNotFoundError(f"reference notebooks folder {release} does not exist")
    checkers = _nb.checker_names()
    out = {}
    for path in sorted(release.glob("*.ipynb")):
        exs = _nb.find_exercises(_nb.read_notebook(path), path.stem, checkers)
        if exs:
            out[path.stem] = exs
    if not out:
        raise ValueError(f"no notebook in {release} calls an svmlab.exercises checker")
    return out


def _is_hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") or part == "__pycache__"
               for part in path.relative_to(root).parts)


def _clean_stem(stem: str) -> str:
    s = re.sub(r"^(copy of )+", "", stem.strip(), flags=re.I)
    s = re.sub(r"(-checkpoint|\s*\(\d+\)|\s*-\s*copy)$", "", s, flags=re.I)
    return s.strip()


def match_notebook(path: Path, exercises: dict[str, list[_nb.Exercise]]) -> str | None:
    """The reference notebook a submitted file stands for, or None."""
    stem = _clean_stem(path.stem)
    if stem in exercises:
        return stem
    for ref in sorted(exercises, key=len, reverse=True):
        if ref in stem:
            return ref
    try:
        defined = _nb.defined_functions(_nb.read_notebook(path))
    except _nb.NotebookError:
        return None
    best, hits = None, 0
    for ref, exs in exercises.items():
        n = sum(ex.function in defined for ex in exs)
        if n > hits:
            best, hits = ref, n
    return best


def collect_submissions(root, exercises) -> dict[str, dict[str, list[Path]]]:
    """``{student: {reference notebook: [files]}}`` (``.ipynb_checkpoints``
    and hidden folders ignored)."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"submissions folder {root} does not exist")
    students = {}
    for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = {}
        for path in sorted(d.rglob("*.ipynb")):
            if _is_hidden(path, d):
                continue
            ref = match_notebook(path, exercises)
            if ref is not None:
                files.setdefault(ref, []).append(path)
        students[d.name] = files
    loose = [p.name for p in root.glob("*.ipynb")]
    if not students:
        raise ValueError(f"{root} has no student folders (expected {root}/<student>/*.ipynb"
                         + (f"; found loose notebooks {loose[:3]}" if loose else "") + ")")
    return students


def _pick(files: list[Path], ref: str) -> tuple[Path, str]:
    """One file per notebook: the one named exactly like the reference, else
    the most recently modified; the note says which when there was a choice."""
    if len(files) == 1:
        return files[0], ""
    exact = [f for f in files if f.stem == ref]
    chosen = exact[0] if exact else max(files, key=lambda f: f.stat().st_mtime)
    others = ", ".join(f.name for f in files if f != chosen)
    return chosen, f" (graded {chosen.name}; also submitted: {others})"


# ------------------------------------------------------------------ one student
@dataclass
class Limits:
    """``timeout``: seconds of the student's own code per exercise;
    ``memory_mb``: the memory of the student's whole process tree (and the
    address space of each of its processes); ``hard_timeout``: seconds one
    sandbox may live at all (the checkers' own work included: a first run
    in a fresh environment compiles the solvers the checkers replay, which
    can take minutes); ``file_mb``: the largest file, and the size of the
    sandbox's private ``/tmp``."""

    timeout: float = 30.0
    memory_mb: int = 4096
    hard_timeout: float = 1800.0
    file_mb: int = 256


#: the instructor's solutions in this checkout (hidden from the students'
#: processes wherever they are; the whole checkout of the package is hidden too)
SOLUTIONS_DIR = Path(__file__).resolve().parents[2] / _nb.SOLUTIONS_DIR


def _worker_env():
    """The environment of a student's process: nothing of the grader's own
    (no PYTHONPATH), one thread per library."""
    env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "NUMBA_CACHE_DIR")
           if k in os.environ}
    env.update(MPLBACKEND="Agg", SVMLAB_PROGRESS="0", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    return env


def _hidden_paths(extra=()):
    """What a student's process must not read: the svmlab package, its
    checkout when it is one, the solutions, and ``extra`` (the submissions,
    the reference notebooks and the grader's working folder, where grade
    sheets tend to be; what the Python installation needs stays)."""
    import svmlab

    pkg = Path(svmlab.__file__).resolve().parent
    out = [pkg, SOLUTIONS_DIR]
    if any((pkg.parent / m).exists() for m in ("pyproject.toml", ".git")):
        out.append(pkg.parent)
    return [str(p) for p in out + [Path(e).resolve() for e in extra]]


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except (ValueError, TypeError):
        return f"signal {-code}"


def _compiled_cells(name, nb):
    """``([index, marshalled code]...)`` of a notebook's definitions, compiled
    here (the student's process never parses anything of the grader's), and
    the cells skipped for a syntax error."""
    cells, errors = [], []
    for index, src in _nb.code_cells(nb):
        tree, err = _nb.definitions(src)
        if tree is None:
            errors.append(f"cell {index} was skipped: syntax error, {err}")
            continue
        if not tree.body:
            continue
        code = compile(tree, f"<{name} cell {index}>", "exec")
        cells.append([index, base64.b64encode(marshal.dumps(code)).decode("ascii")])
    return cells, errors


def _result_fields(res) -> dict:
    """The fields of the checker's result the grade sheet uses."""
    d = res.as_dict()
    return {k: d.get(k) for k in ("status", "message", "score", "n_passed", "n_total",
                                  "n_cases", "case_number", "guard_fired")}


def _stop_row(student, ex, stop, limits, box, where, note):
    """The row of an exercise during which the sandbox was stopped."""
    why = stop.why
    if why == "timeout":
        status = TIMEOUT
        msg = (f"the student's code ran more than {limits.timeout:g} s in all on the "
               f"checker's cases, and was stopped")
    elif why == "hard":
        status = ERROR
        msg = (f"the grading process for this student ran more than {limits.hard_timeout:g} s "
               f"in all and was stopped")
    elif why == "memory":
        status = CRASH
        msg = (f"the student's processes used more than {limits.memory_mb} MiB of memory "
               f"together" + (f" ({stop.detail})" if stop.detail else "") + " and were stopped")
    elif why == "exit":
        status = CRASH
        msg = (f"the checker was stopped by {stop.detail} raised in {ex.function} "
               f"(a function must return, not exit)")
    elif stop.detail:
        status, msg = CRASH, f"the grading process was stopped: {stop.detail}"
    else:
        status = CRASH
        code = box.proc.returncode
        msg = "the grading process died " + (
            f"of {_signal_name(128 - code)}" if code and code > 128 else
            f"of {_signal_name(code)}" if code and code < 0 else f"with exit code {code}")
    return _row(student, ex, status, f"{status}: {msg}{where}." + note)


def _row(student, ex, status, message, res=None):
    res = res or {}
    passed = status == "passed"
    n_cases = res.get("n_cases")
    case_number = res.get("case_number")
    cases_passed = res.get("n_passed")
    if cases_passed is None and n_cases is not None:   # checkers that stop at the first failure
        cases_passed = n_cases if passed else (case_number - 1 if case_number else 0)
    cases_total = res.get("n_total")
    if cases_total is None and passed:
        cases_total = n_cases
    frac = res.get("score")
    frac = (1.0 if passed else 0.0) if frac is None else float(frac)
    frac = min(max(frac, 0.0), 1.0)     # never more than the exercise's points
    msg = (message or "").strip()
    if len(msg) > MESSAGE_LIMIT:
        msg = msg[:MESSAGE_LIMIT] + " ..."
    return Row(student, ex.notebook, ex.id, passed, round(ex.points * frac, 6), ex.points,
               cases_passed, cases_total, status, bool(res.get("guard_fired", False)), msg)


def grade_student(student, files, expected, limits=Limits(), tmp_root=None,
                  hide=()) -> list[Row]:
    """The rows of one student: ``files`` maps reference notebooks to the
    submitted files, ``expected`` the reference notebooks to their exercises.

    The student's definitions run in a :class:`._sandbox.Sandbox`; the
    checkers run here, on a stand-in of each function that calls it there.
    ``hide``: more paths the student's process must not read."""
    from svmlab import exercises
    from svmlab.exercises._core import GuardHit

    from ._sandbox import Budget, Sandbox, Stopped, remote_function

    rows = {}
    pending = []  # [notebook stem, cells, errors, note, exercises left], in notebook order
    for ref, exs in expected.items():
        if ref not in files:
            for ex in exs:
                rows[ex.id] = _row(student, ex, MISSING, f"no {ref}.ipynb was submitted.")
            continue
        path, note = _pick(files[ref], ref)
        try:
            nb = _nb.read_notebook(path)
        except _nb.NotebookError as exc:
            for ex in exs:
                rows[ex.id] = _row(student, ex, ERROR, str(exc))
            continue
        cells, errors = _compiled_cells(ref, nb)
        pending.append([ref, cells, errors, note, list(exs)])
    hidden = _hidden_paths(hide)
    env = _worker_env()
    with tempfile.TemporaryDirectory(prefix=f"svmlab-grade-{_safe(student)}-",
                                     dir=tmp_root) as workdir:
        while any(item[4] for item in pending):
            box = Sandbox(workdir=workdir, memory_bytes=limits.memory_mb * 2**20,
                          file_bytes=limits.file_mb * 2**20,
                          hard_deadline=time.monotonic() + limits.hard_timeout,
                          hide=hidden, env=env)
            try:
                _grade_in(box, student, pending, rows, limits, exercises, GuardHit, Budget,
                          Stopped, remote_function)
            finally:
                box.close()
            pending = [item for item in pending if item[4]]
    order = [ex.id for exs in expected.values() for ex in exs]
    return [rows[i] for i in order]


def _grade_in(box, student, pending, rows, limits, exercises, guard_hit, Budget, Stopped,
              remote_function):
    """Grade what is left of ``pending`` in one sandbox; returns when done or
    when the sandbox was stopped (the exercise in progress gets its row, and
    is removed from ``pending``)."""
    for item in pending:
        ref, cells, syntax_errors, note, exs = item
        if not exs:
            continue
        budget = Budget(limits.timeout)
        try:
            reply, budget.used = box.request("defs", budget.left(), nb=ref, cells=cells,
                                             want=[ex.function for ex in exs])
        except Stopped as stop:
            where = f" while running the definitions (imports, functions) of {ref}"
            if not box.isolated and stop.why == "crash" and box.proc.returncode == 70:
                where += f"; {box.log_tail().splitlines()[-1][:300]}"
            for ex in exs:
                rows[ex.id] = _stop_row(student, ex, stop, limits, box, where, note)
            exs.clear()
            return
        errors = syntax_errors + [str(e)[:500] for e in reply.get("errors", [])][:50]
        kinds = reply.get("kinds") if isinstance(reply.get("kinds"), dict) else {}
        while exs:
            ex = exs[0]
            kind = kinds.get(ex.function, "missing")
            if kind != "function":
                why = ("is not defined" if kind == "missing"
                       else f"is a {str(kind)[:60]}, not a function")
                rows[ex.id] = _row(student, ex, MISSING, f"{ex.function} {why} in the notebook"
                                   + (f" ({'; '.join(errors)})" if errors else "") + "." + note)
                exs.pop(0)
                continue
            budget = Budget(limits.timeout)
            fn = remote_function(box, ref, ex.function, budget, guard_hit)
            try:
                res = getattr(exercises, ex.checker)(fn)
            except Stopped as stop:
                rows[ex.id] = _stop_row(student, ex, stop, limits, box,
                                        f" while checking {ex.function}", note)
                exs.pop(0)
                if stop.why == "exit":
                    continue
                return
            except Exception as exc:  # noqa: BLE001 - a checker's own failure on odd values
                rows[ex.id] = _row(student, ex, ERROR, f"the checker failed: "
                                   f"{type(exc).__name__}: {exc}" + note)
            else:
                fields = _result_fields(res)
                rows[ex.id] = _row(student, ex, fields.get("status", ERROR),
                                   (fields.get("message") or "") + note, fields)
            exs.pop(0)


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]


# ------------------------------------------------------------------ everyone
def warm_up_solvers():
    """Compile svmlab's solvers into numba's cache once, here, before any
    worker starts (the checkers replay recorded solver steps; without this
    every worker of a fresh installation would start interpreted and
    compile again)."""
    import svmlab

    fn = getattr(svmlab, "warm_up", None)
    if fn is not None:
        fn()


def grade(submissions, release=None, *, notebooks=None, limits=Limits(), jobs=1,
          progress=None, warm_up=True) -> list[Row]:
    """Grade every student folder of ``submissions``; one :class:`Row` per
    student and exercise, students in name order.

    ``notebooks``: the reference notebooks to grade (stems); by default every
    reference notebook that at least one student submitted.  A student who
    did not submit one of them gets ``missing`` rows for its exercises.
    """
    release = Path(release) if release is not None else default_release()
    if release is None:
        raise FileNotFoundError("no reference notebooks: pass --release DIR (the student "
                                "version you handed out, from build-student)")
    exercises = release_exercises(release)
    if notebooks:
        unknown = sorted(set(notebooks) - set(exercises))
        if unknown:
            raise ValueError(f"unknown notebook(s) {unknown}; graded notebooks in {release}: "
                             f"{sorted(exercises)}")
    students = collect_submissions(submissions, exercises)
    wanted = set(notebooks) if notebooks else {ref for f in students.values() for ref in f}
    if not wanted:
        raise ValueError(f"no submitted notebook matches a graded notebook of {release} "
                         f"({', '.join(sorted(exercises))})")
    expected = {ref: exs for ref, exs in exercises.items() if ref in wanted}
    if warm_up:
        warm_up_solvers()

    def one(student):
        t0 = time.monotonic()
        rows = grade_student(student, students[student], expected, limits,
                             hide=(submissions, release, os.getcwd()))
        if progress:
            got = sum(r.score for r in rows)
            top = sum(r.max_score for r in rows)
            progress(f"{student}: {got:g}/{top:g} points, "
                     f"{sum(r.passed for r in rows)}/{len(rows)} exercises passed "
                     f"({time.monotonic() - t0:.0f} s)")
        return rows

    with ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
        per_student = list(pool.map(one, sorted(students)))
    return [row for rows in per_student for row in rows]


def write_csv(rows, path):
    """The grade sheet, one row per student and exercise (columns
    :data:`COLUMNS`), written to a new file beside ``path`` and renamed over
    it (a reader never sees half a sheet; written only by this process,
    after every student's processes are gone)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            for r in rows:
                d = asdict(r)
                d["cases_passed"] = "" if d["cases_passed"] is None else d["cases_passed"]
                d["cases_total"] = "" if d["cases_total"] is None else d["cases_total"]
                w.writerow(d)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
