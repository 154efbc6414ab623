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

What runs: each student in a fresh worker process (:mod:`._worker`) with an
address-space limit; in it only the definitions of each notebook (imports,
functions, classes, call-free constants) run, in notebook order, so the
last definition of a function wins as in "Restart and Run All", the
explorers and fits in between do not run, and a deleted or edited check cell
changes nothing.  The checker of every exercise is called by the grader
itself.  The time limit counts only the time spent inside the student's own
code (the worker reports every entry and exit); when an exercise's total
passes the limit, the parent kills the worker, records ``timeout``, and
starts a new worker for the exercises left.  A worker that dies (a
segfault, ``os._exit``) gives ``crash`` for the exercise in progress, and
the rest is graded in a new worker the same way.
"""

from __future__ import annotations

import csv
import json
import os
import re
import select
import signal
import subprocess
import sys
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
    ``memory_mb``: the worker's address space; ``hard_timeout``: seconds one
    worker process may live at all (the checkers' own work included: a
    first run in a fresh environment compiles the solvers the checkers
    replay, which can take minutes)."""

    timeout: float = 30.0
    memory_mb: int = 4096
    hard_timeout: float = 1800.0
    file_mb: int = 256


def _worker_env():
    env = dict(os.environ)
    pkg_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p and p != pkg_parent])
    env.update(MPLBACKEND="Agg", SVMLAB_PROGRESS="0", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    return env


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except (ValueError, TypeError):
        return f"signal {-code}"


class _Run:
    """One worker process and what it reported."""

    def __init__(self, task, limits, workdir):
        self.limits = limits
        self.results = {}
        self.current = None        # exercise id in progress
        self.notebook = None       # notebook whose definitions are running
        self.entered = None        # monotonic time the student's code was entered
        self.student_time = 0.0
        self.done = False
        self.events = 0
        self.killed = None         # "timeout" | "hard"
        self.defs_errors = {}
        rfd, wfd = os.pipe()
        task = dict(task, fd=wfd, memory_bytes=limits.memory_mb * 2**20,
                    file_bytes=limits.file_mb * 2**20)
        task_path = Path(workdir) / "task.json"
        task_path.write_text(json.dumps(task), encoding="utf-8")
        self.err_path = Path(workdir) / "worker.log"
        with open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "svmlab.course._worker", str(task_path)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                cwd=workdir, env=_worker_env(), pass_fds=(wfd,), start_new_session=True)
        os.close(wfd)
        self.rfd = rfd

    def _event(self, line):
        self.events += 1
        if line.startswith(("E ", "L ")):
            t = float(line[2:])
            if line[0] == "E":
                self.entered = t
            elif self.entered is not None:
                self.student_time += t - self.entered
                self.entered = None
            return
        ev = json.loads(line)
        kind = ev.pop("ev")
        if kind == "notebook":
            self.notebook, self.current = ev["nb"], None
            self.student_time, self.entered = 0.0, None
        elif kind == "defs":
            self.defs_errors[ev["nb"]] = ev["errors"]
            self.notebook = None
        elif kind == "start":
            self.current = ev["ex"]
            self.student_time, self.entered = 0.0, None
        elif kind == "result":
            ev["student_time"] = self.student_time
            self.results[ev.pop("ex")] = ev
            self.current, self.entered = None, None
        elif kind == "done":
            self.done = True

    def _kill(self, why):
        self.killed = why
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def used(self, now):
        return self.student_time + (now - self.entered if self.entered is not None else 0.0)

    def wait(self):
        start = time.monotonic()
        buf = b""
        with os.fdopen(self.rfd, "rb", buffering=0) as pipe:
            while True:
                ready, _, _ = select.select([pipe], [], [], 0.05)
                if ready:
                    chunk = pipe.read(1 << 16)
                    if not chunk:
                        break
                    buf += chunk
                    *lines, buf = buf.split(b"\n")
                    for line in lines:
                        if line.strip():
                            self._event(line.decode("utf-8", "replace"))
                now = time.monotonic()
                if self.used(now) > self.limits.timeout:
                    self._kill("timeout")
                    break
                if now - start > self.limits.hard_timeout:
                    self._kill("hard")
                    break
                if not ready and self.proc.poll() is not None:
                    # exited; a grandchild may still hold the pipe open
                    ready, _, _ = select.select([pipe], [], [], 0.2)
                    if not ready:
                        break
        self.proc.wait()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)   # what the student's code left running
        except (ProcessLookupError, PermissionError):
            pass

    def log_tail(self, n=600):
        try:
            text = self.err_path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""
        return text[-n:]


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
    msg = (message or "").strip()
    if len(msg) > MESSAGE_LIMIT:
        msg = msg[:MESSAGE_LIMIT] + " ..."
    return Row(student, ex.notebook, ex.id, passed, round(ex.points * frac, 6), ex.points,
               cases_passed, cases_total, status, bool(res.get("guard_fired", False)), msg)


def grade_student(student, files, expected, limits=Limits(), tmp_root=None) -> list[Row]:
    """The rows of one student: ``files`` maps reference notebooks to the
    submitted files, ``expected`` the reference notebooks to their exercises."""
    rows = {}
    pending = []  # (notebook stem, path, note, exercises), in notebook order
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
        pending.append((ref, nb, note, exs))

    def task_for(items):
        return {"notebooks": [
            {"name": ref, "cells": _nb.code_cells(nb),
             "exercises": [{"id": ex.id, "function": ex.function, "checker": ex.checker}
                           for ex in exs]}
            for ref, nb, _, exs in items if exs]}

    notes = {ref: note for ref, _, note, _ in pending}
    by_id = {ex.id: ex for _, _, _, exs in pending for ex in exs}
    with tempfile.TemporaryDirectory(prefix=f"svmlab-grade-{_safe(student)}-",
                                     dir=tmp_root) as workdir:
        while any(exs for _, _, _, exs in pending):
            run = _Run(task_for(pending), limits, workdir)
            run.wait()
            for ex_id, res in run.results.items():
                ex = by_id[ex_id]
                status = res.get("status", ERROR)
                rows[ex_id] = _row(student, ex, status, res.get("message", "") + notes[ex.notebook],
                                   res)
            if run.done:
                break
            # the worker stopped early: blame the exercise (or the definitions) in progress
            code = run.proc.returncode
            if run.killed == "timeout":
                what = "timeout"
                why = (f"the student's code ran more than {limits.timeout:g} s in all on "
                       f"the checker's cases, and was stopped")
            elif run.killed == "hard":
                what = ERROR
                why = (f"the grading process for this student ran more than "
                       f"{limits.hard_timeout:g} s in all and was stopped")
            else:
                what = CRASH
                why = ("the grading process died "
                       + (f"of {_signal_name(code)}" if code and code < 0 else f"with exit code {code}"))
                tail = run.log_tail()
                if tail:
                    why += f"; its last words: {tail.splitlines()[-1][:300]}"
            blamed = []
            if run.current is not None:
                blamed = [run.current]
                where = f" while checking {by_id[run.current].function}"
            elif run.notebook is not None:
                blamed = [ex.id for ref, _, _, exs in pending if ref == run.notebook for ex in exs
                          if ex.id not in run.results]
                where = f" while running the definitions (imports, functions) of {run.notebook}"
            elif not run.results and not run.defs_errors:
                blamed = [ex.id for _, _, _, exs in pending for ex in exs]
                where = " before it could start grading"
            else:  # pragma: no cover - between two events
                blamed = [ex.id for _, _, _, exs in pending for ex in exs
                          if ex.id not in run.results][:1]
                where = ""
            for ex_id in blamed:
                ex = by_id[ex_id]
                rows[ex_id] = _row(student, ex, what, f"{what}: {why}{where}." + notes[ex.notebook])
            done = set(run.results) | set(blamed)
            pending = [(ref, nb, note, [ex for ex in exs if ex.id not in done])
                       for ref, nb, note, exs in pending]
    order = [ex.id for exs in expected.values() for ex in exs]
    return [rows[i] for i in order]


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
        rows = grade_student(student, students[student], expected, limits)
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
    """The grade sheet, one row per student and exercise (columns :data:`COLUMNS`)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            d = asdict(r)
            d["cases_passed"] = "" if d["cases_passed"] is None else d["cases_passed"]
            d["cases_total"] = "" if d["cases_total"] is None else d["cases_total"]
            w.writerow(d)
