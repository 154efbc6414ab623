"""The machinery shared by every exercise checker.

A checker runs the student's function on a list of *cases* (hand-picked edge
cases first, then random ones, then cases replayed from recorded steps of the
real solvers), compares each answer with an independent reference (or checks
the properties the answer must have), and reports the first case that
differs.  It never raises: a student's exception, a wrong type or shape, or a
``NotImplementedError`` (the starter code) all become an
:class:`ExerciseResult` whose message says what happened.

Decisions where the brief is silent:

* the student's function receives *copies* of the arrays, so a function that
  modifies its inputs cannot corrupt the next case;
* ``NotImplementedError`` on the very first case means "not implemented
  yet" (the starter code); raised on a later case it is a failure that names
  the case ("this case is not handled yet");
* the cases are produced lazily: the starter code stops the checker at the
  first case, before the recorded cases (which fit a solver on a toy set)
  are built, so it costs nothing in a notebook run;
* after the first failure the other cases still run, so that a grader gets
  the number of cases that agree (the message names the first failure only);
* the guard: the checkers compare with svmlab's own code, so a student
  function that calls svmlab (``pair_step``, a reference, an explorer's
  helper ...) would pass without the student writing anything.  The checker
  looks for svmlab names in the function's code (and in the student's own
  helpers it calls) before the first case, and watches the calls while it
  runs (a profile hook: Python frames of the package, and numba dispatchers,
  which report their calls to a profiler); either one fails the check with a
  message that names the call.
"""

from __future__ import annotations

import html
import os
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["Case", "ExerciseResult", "WrongAnswer", "run_cases", "fmt", "fmt_array", "as_float",
           "quiet_fit", "guarded_call", "static_svmlab_use", "GuardHit", "student_clock"]

PASSED, FAILED, NOT_IMPLEMENTED = "passed", "failed", "not implemented"


@dataclass
class Case:
    """One input of an exercise.

    ``label``: what the case is, in words ("hand-picked: y1 == y2, clipped at
    H").  ``args``: the positional arguments, in the order of the student's
    signature (a dict, so messages can name them).  ``expected``: the
    reference answer.  ``extra``: anything the hint writer needs.
    """

    label: str
    args: dict
    expected: Any
    extra: dict = field(default_factory=dict)


@dataclass
class ExerciseResult:
    """What a checker returns.  ``passed`` is True only when every case agreed.

    The fields a student reads:

    ``status``        ``"passed"``, ``"failed"`` or ``"not implemented"``;
    ``message``       the verdict in words (for a failure: the first differing
                      case, its inputs, the expected answer, the student's
                      answer and a hint);
    ``passed``        ``status == "passed"`` (also the truth value).

    The fields a grader reads (one row per student and exercise):

    ``exercise_id``   the stable id ``"NN.function"`` (``"01.take_step"``; see
                      :data:`svmlab.exercises.EXERCISES`);
    ``exercise``      the name of the student's function (``"take_step"``);
    ``n_cases``       the number of cases the function was run on: every case
                      of the checker (after a failure the checker goes on, to
                      count), 0 when not implemented, fewer when the guard
                      stopped it;
    ``n_passed``      how many of them agreed;
    ``n_total``       the number of cases of the checker (a speed test counts
                      as one more case); ``None`` when not implemented (the
                      starter code stops the checker before the recorded
                      cases are built);
    ``score``         ``n_passed / n_total`` (0.0 when not implemented or when
                      the guard fired);
    ``case_number``   the 1-based number of the first failing case (None
                      when passed, or when only the speed test failed);
    ``first_failure`` the message of that first failure (None when passed);
    ``guard_fired``   True when the student's function called into svmlab's
                      own code (which holds the answer); the checker then
                      stops, fails and says so; ``guard_call`` names what was
                      called.

    :meth:`as_dict` gives all of them as plain values (for a CSV row).
    Shown as text by ``print``/``repr`` and as a coloured box in a notebook.
    """

    exercise: str
    status: str
    message: str
    n_cases: int
    case_number: int | None = None
    exercise_id: str = ""
    n_passed: int = 0
    n_total: int | None = None
    first_failure: str | None = None
    guard_fired: bool = False
    guard_call: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def score(self) -> float:
        """Fraction of the checker's cases that agreed (0.0 when the guard
        fired or nothing ran)."""
        if self.guard_fired or not self.n_total:
            return 0.0
        return self.n_passed / self.n_total

    def as_dict(self) -> dict:
        """Every field (and ``passed``, ``score``) as plain Python values."""
        return {"exercise_id": self.exercise_id, "exercise": self.exercise,
                "status": self.status, "passed": self.passed, "score": self.score,
                "n_passed": self.n_passed, "n_total": self.n_total, "n_cases": self.n_cases,
                "case_number": self.case_number, "first_failure": self.first_failure,
                "guard_fired": self.guard_fired, "guard_call": self.guard_call,
                "message": self.message}

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self.message

    def __repr__(self):
        return self.message

    def _repr_html_(self):
        color = {PASSED: "#e6f4ea", FAILED: "#fde7e9", NOT_IMPLEMENTED: "#fff8e1"}[self.status]
        edge = {PASSED: "#188038", FAILED: "#c5221f", NOT_IMPLEMENTED: "#f9ab00"}[self.status]
        return (f"<pre style='background:{color};border-left:4px solid {edge};"
                f"padding:6px;white-space:pre-wrap'>{html.escape(self.message)}</pre>")


# ------------------------------------------------------------------ formatting
def fmt(x) -> str:
    """A number as a student reads it: up to 10 significant digits."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return repr(x)
    if np.isfinite(xf) and xf == round(xf) and abs(xf) < 1e15:
        return f"{xf:.1f}"
    return f"{xf:.10g}"


def fmt_array(a, max_items=12) -> str:
    """A short array display (the first ``max_items`` entries)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 2 and a.shape[0] == 0:
        return f"empty array of shape {a.shape}"
    if a.ndim == 2 and a.shape[0] <= 8 and a.shape[1] <= 8:
        return "[" + ", ".join(fmt_array(row) for row in a) + "]"
    flat = a.ravel()
    items = ", ".join(fmt(v) for v in flat[:max_items])
    more = f", ... ({flat.size} entries)" if flat.size > max_items else ""
    if a.ndim == 2:
        rows = ", ".join(fmt_array(row, 6) for row in a[:3])
        return f"array of shape {a.shape}: [{rows}{', ...' if a.shape[0] > 3 else ''}]"
    if a.ndim > 2:
        return f"array of shape {a.shape}: [{items}{more}]"
    return f"[{items}{more}]"


def _fmt_value(v) -> str:
    if isinstance(v, np.ndarray):
        return fmt_array(v)
    if isinstance(v, (tuple, list)) and len(v) <= 6 and all(np.ndim(t) == 0 for t in v):
        return "(" + ", ".join(fmt(t) for t in v) + ")"
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_fmt_value(t) if isinstance(t, np.ndarray) else fmt(t)
                               for t in v) + ")"
    return fmt(v)


def _fmt_inputs(args: dict) -> str:
    """Scalars several to a line, arrays one per line, indented."""
    lines, cur = [], ""
    for a, v in args.items():
        item = f"{a} = {_fmt_value(v)}"
        if np.ndim(v) != 0:
            lines.append(item)
            continue
        if cur and len(cur) + len(item) > 76:
            lines.append(cur)
            cur = ""
        cur = f"{cur}, {item}" if cur else item
    if cur:
        lines.append(cur)
    return "\n".join("    " + line for line in lines)


def _copy_args(args: dict) -> list:
    return [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in args.values()]


class WrongAnswer(Exception):
    """Raised by an exercise's ``normalise`` for an answer of the wrong type
    or shape (the message is shown to the student)."""


# ------------------------------------------------------------------ the guard
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../svmlab


def _in_svmlab(filename) -> bool:
    try:
        return os.path.abspath(filename).startswith(_PKG_DIR + os.sep)
    except (TypeError, ValueError):
        return False


def _svmlab_name(obj):
    """``"module.qualname"`` when ``obj`` is svmlab code (a module, class,
    function or compiled dispatcher of the package), else None."""
    import types

    if isinstance(obj, types.ModuleType):
        name = getattr(obj, "__name__", "")
        return name if name == "svmlab" or name.startswith("svmlab.") else None
    target = getattr(obj, "py_func", obj)  # a numba dispatcher wraps a Python function
    mod = getattr(target, "__module__", None)
    if isinstance(mod, str) and (mod == "svmlab" or mod.startswith("svmlab.")):
        return f"{mod}.{getattr(target, '__qualname__', getattr(target, '__name__', '?'))}"
    return None


def static_svmlab_use(fn, depth=3):
    """The first svmlab object the source of ``fn`` refers to (a global name,
    a closure cell, a default argument or an ``import`` of svmlab), looking
    into the student's own helper functions ``depth`` levels deep; None when
    there is none."""
    import types

    seen = set()

    def code_objects(code):
        yield code
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                yield from code_objects(c)

    def scan(f, level):
        if id(f) in seen or level > depth:
            return None
        seen.add(id(f))
        code = getattr(f, "__code__", None)
        if code is None:
            return None
        glb = getattr(f, "__globals__", {})
        values = [c.cell_contents for c in (f.__closure__ or ()) if _cell_ok(c)]
        values += list(f.__defaults__ or ()) + list((f.__kwdefaults__ or {}).values())
        for co in code_objects(code):
            for name in co.co_names:
                if name == "svmlab" or name.startswith("svmlab."):
                    return name  # import svmlab..., from svmlab... import
                if name in glb:
                    values.append(glb[name])
        helpers = []
        for v in values:
            hit = _svmlab_name(v)
            if hit:
                return hit
            if isinstance(v, types.FunctionType):
                helpers.append(v)
        for h in helpers:
            hit = scan(h, level + 1)
            if hit:
                return hit
        return None

    return scan(fn, 0)


def _cell_ok(cell):
    try:
        cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


class _CallGuard:
    """A profile function that records the first call into svmlab's code
    (Python frames of the package, and compiled dispatchers, which report
    their calls to a profiler) while the student's function runs."""

    def __init__(self):
        self.hit = None

    def __call__(self, frame, event, arg):
        if self.hit is None and event == "call" and _in_svmlab(frame.f_code.co_filename):
            rel = os.path.relpath(os.path.abspath(frame.f_code.co_filename),
                                  os.path.dirname(_PKG_DIR))
            mod = os.path.splitext(rel)[0].replace(os.sep, ".").removesuffix(".__init__")
            self.hit = f"{mod}.{frame.f_code.co_name}"


def guarded_call(fn, args):
    """``(result, hit)``: call ``fn(*args)`` with the guard on; ``hit``
    names the first svmlab function it called (None: none).  Exceptions of
    ``fn`` propagate, the guard is off again either way."""
    guard = _CallGuard()
    old = sys.getprofile()
    sys.setprofile(guard)
    try:
        out = fn(*args)
    finally:
        sys.setprofile(old)
    return out, guard.hit


class GuardHit(Exception):
    """Raised by a student's function that runs in another process (the
    grader's sandbox, :mod:`svmlab.course._sandbox`) when it called svmlab's
    code there; the checker fails with ``guard_fired``.  ``call`` names the
    call."""

    def __init__(self, call):
        super().__init__(call)
        self.call = call


def _guarded_elsewhere(fn) -> bool:
    """True for the grader's stand-in of a student's function that runs in
    its sandbox (no svmlab code can be reached there; the stand-in itself is
    svmlab code, which the guard here would take for the student's call)."""
    return getattr(fn, "svmlab_guarded_elsewhere", False) is True


def student_clock(fn):
    """The clock a speed test reads around calls of ``fn``: this process's
    CPU time, or, for a function that runs in the grader's sandbox, the
    grader's count of that process's CPU time (checked against the
    kernel's: the student's process cannot be trusted to time itself)."""
    clock = getattr(fn, "svmlab_clock", None) if _guarded_elsewhere(fn) else None
    return clock or time.process_time


def _guard_result(exercise, exercise_id, name, hit, k):
    msg = (f"{exercise}: {name} calls svmlab's own code ({hit}). svmlab already holds the "
           f"answer, so a call into it proves nothing: write the computation yourself (numpy "
           f"is fine, svmlab is not).")
    return ExerciseResult(exercise, FAILED, msg, k, k or None, exercise_id=exercise_id,
                          n_passed=0, n_total=None, first_failure=msg, guard_fired=True,
                          guard_call=hit)


# ------------------------------------------------------------------ runner
def run_cases(exercise: str, fn: Callable, cases: Iterable[Case],
              normalise: Callable[[Any, Case], Any],
              judge: Callable[[Case, Any], str | None],
              show_expected: Callable[[Case], str] | None = None,
              show_got: Callable[[Any, Case], str] | None = None,
              after: Callable[[], str | None] | None = None,
              exercise_id: str = "") -> ExerciseResult:
    """Run ``fn`` on every case and report the first disagreement.

    ``normalise(raw, case)`` turns the raw return value into the comparable
    form, raising :class:`WrongAnswer` for a wrong type or shape.
    ``judge(case, got)`` returns None when ``got`` agrees with
    ``case.expected``, else a hint for the student.  ``after()`` (optional)
    runs once every case agreed (the speed test of the sweep) and returns
    None or the reason to fail; it counts as one more case.

    After the first failure the remaining cases still run, to count the
    cases that agree (:attr:`ExerciseResult.n_passed`, the grader's score);
    the message names the first failure only.  The student's function runs
    with a guard: a call into svmlab's own code (found in its source before
    the first case, or caught while it runs) stops the checker with a
    failure that says so.  A pass unlocks the exercise's hidden reference
    lines (:func:`svmlab.exercises.revealed`).
    """
    show_expected = show_expected or (lambda c: _fmt_value(c.expected))
    show_got = show_got or (lambda g, c: _fmt_value(g))

    def result(status, message, n_cases, case_number=None, **kw):
        return ExerciseResult(exercise, status, message, n_cases, case_number,
                              exercise_id=exercise_id, **kw)

    if not callable(fn):
        msg = (f"{exercise}: expected a function, got {type(fn).__name__} "
               f"({fmt(fn) if np.ndim(fn) == 0 else '...'}).")
        return result(FAILED, msg, 0, first_failure=msg)
    name = getattr(fn, "__name__", exercise)
    remote = _guarded_elsewhere(fn)
    hit = None if remote else static_svmlab_use(fn)
    if hit:
        return _guard_result(exercise, exercise_id, name, hit, 0)
    k = n_ok = 0
    first = None  # (message, case number)
    for case in cases:
        k += 1
        head = f"{exercise}: case {k} ({case.label})"
        inputs = _fmt_inputs(case.args)
        msg = None
        try:
            if remote:
                raw, hit = fn(*_copy_args(case.args)), None
            else:
                raw, hit = guarded_call(fn, _copy_args(case.args))
        except GuardHit as exc:
            return _guard_result(exercise, exercise_id, name, exc.call, k)
        except NotImplementedError:
            if k == 1:
                return result(NOT_IMPLEMENTED,
                              f"{exercise}: not implemented yet. Write the body of {name} "
                              f"(replace `raise NotImplementedError`) and run this cell again.",
                              0)
            msg = (f"{head}: {name} raised NotImplementedError: this case is not handled yet.\n"
                   f"  inputs:\n{inputs}\n  expected: {show_expected(case)}")
        except Exception as exc:  # the student's bug, reported, never re-raised
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" (line {tb[-1].lineno} of {tb[-1].name})" if tb else ""
            msg = (f"{head}: {name} raised {type(exc).__name__}: {exc}{where}\n"
                   f"  inputs:\n{inputs}\n  expected: {show_expected(case)}")
        else:
            if hit:
                return _guard_result(exercise, exercise_id, name, hit, k)
            if raw is None:
                msg = (f"{head}: {name} returned None. Did you forget the `return` statement?"
                       f"\n  inputs:\n{inputs}\n  expected: {show_expected(case)}")
            else:
                try:
                    got = normalise(raw, case)
                except WrongAnswer as exc:
                    msg = (f"{head}: wrong type or shape of the answer: {exc}\n"
                           f"  inputs:\n{inputs}\n  expected: {show_expected(case)}")
                else:
                    if first is None:
                        hint = judge(case, got)
                        if hint is not None:
                            msg = (f"{head} differs.\n  inputs:\n{inputs}\n"
                                   f"  expected:      {show_expected(case)}\n"
                                   f"  you returned:  {show_got(got, case)}\n"
                                   f"  hint: {hint}")
                    elif _quiet_judge(judge, case, got) is not None:
                        msg = "differs"
        if msg is None:
            n_ok += 1
        elif first is None:
            first = (msg, k)
    n_total = k + (after is not None)
    if first is not None:
        return result(FAILED, first[0], k, first[1], n_passed=n_ok, n_total=n_total,
                      first_failure=first[0])
    if after is not None:
        why = after()
        if why is not None:
            msg = f"{exercise}: all {k} cases agree, but {why}"
            return result(FAILED, msg, k, None, n_passed=n_ok, n_total=n_total,
                          first_failure=msg)
        n_ok += 1
    from ._registry import mark_passed

    mark_passed(exercise_id)
    return result(PASSED, f"{exercise}: all {k} cases agree. Well done!", k, n_passed=n_ok,
                  n_total=n_total)


def _quiet_judge(judge, case, got):
    """The judge of a case after the first failure: only whether it agrees
    (a hint writer that fails on an odd answer counts as a disagreement)."""
    try:
        return judge(case, got)
    except Exception:  # noqa: BLE001
        return "differs"


def as_float(x, what: str) -> float:
    """A finite Python float, or :class:`WrongAnswer` saying why not."""
    if isinstance(x, (str, bytes)) or np.ndim(x) != 0:
        raise WrongAnswer(f"{what} must be a number, got {type(x).__name__} {x!r:.60}")
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise WrongAnswer(f"{what} must be a number, got {type(x).__name__}") from None
    if not np.isfinite(v):
        raise WrongAnswer(f"{what} is {v}; it must be a finite number")
    return v


def quiet_fit(estimator, X, y):
    """Every step record of ``estimator.iter_fit(X, y)`` as a tuple, with
    warnings silenced (a recorded toy fit must not clutter a notebook)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(estimator.iter_fit(X, y))
