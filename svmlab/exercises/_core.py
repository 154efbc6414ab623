"""The machinery shared by every exercise checker.

A checker runs the student's function on a list of *cases* (hand-picked edge
cases first, then random ones, then cases replayed from recorded steps of the
real solvers), compares each answer with an independent reference, and stops
at the first case that differs.  It never raises: a student's exception, a
wrong type or shape, or a ``NotImplementedError`` (the starter code) all
become an :class:`ExerciseResult` whose message says what happened.

Decisions where the brief is silent:

* the student's function receives *copies* of the arrays, so a function that
  modifies its inputs cannot corrupt the next case;
* ``NotImplementedError`` on the very first case means "not implemented
  yet" (the starter code); raised on a later case it is a failure that names
  the case ("this case is not handled yet");
* the cases are produced lazily: the recorded cases (which fit a solver on a
  toy set) are only built once every earlier case agreed, so the starter
  code costs nothing in a notebook run.
"""

from __future__ import annotations

import html
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["Case", "ExerciseResult", "WrongAnswer", "run_cases", "fmt", "fmt_array", "as_float",
           "quiet_fit"]

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

    ``status`` is ``"passed"``, ``"failed"`` or ``"not implemented"``;
    ``message`` says it in words (for a failure: the first differing case,
    its inputs, the expected answer, the student's answer and a hint);
    ``n_cases`` is the number of cases run (all of them when passed);
    ``case_number`` the 1-based number of the failing case (None otherwise).
    Shown as text by ``print``/``repr`` and as a coloured box in a notebook.
    """

    exercise: str
    status: str
    message: str
    n_cases: int
    case_number: int | None = None

    @property
    def passed(self) -> bool:
        return self.status == PASSED

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


# ------------------------------------------------------------------ runner
def run_cases(exercise: str, fn: Callable, cases: Iterable[Case],
              normalise: Callable[[Any, Case], Any],
              judge: Callable[[Case, Any], str | None],
              show_expected: Callable[[Case], str] | None = None,
              show_got: Callable[[Any, Case], str] | None = None,
              after: Callable[[], str | None] | None = None) -> ExerciseResult:
    """Run ``fn`` on every case; stop at the first disagreement.

    ``normalise(raw, case)`` turns the raw return value into the comparable
    form, raising :class:`WrongAnswer` for a wrong type or shape.
    ``judge(case, got)`` returns None when ``got`` agrees with
    ``case.expected``, else a hint for the student.  ``after()`` (optional)
    runs once every case agreed (the speed test of the sweep) and returns
    None or the reason to fail.
    """
    show_expected = show_expected or (lambda c: _fmt_value(c.expected))
    show_got = show_got or (lambda g, c: _fmt_value(g))
    if not callable(fn):
        return ExerciseResult(exercise, FAILED,
                              f"{exercise}: expected a function, got {type(fn).__name__} "
                              f"({fmt(fn) if np.ndim(fn) == 0 else '...'}).", 0)
    name = getattr(fn, "__name__", exercise)
    k = 0
    for case in cases:
        k += 1
        head = f"{exercise}: case {k} ({case.label})"
        inputs = _fmt_inputs(case.args)
        try:
            raw = fn(*_copy_args(case.args))
        except NotImplementedError:
            if k == 1:
                return ExerciseResult(
                    exercise, NOT_IMPLEMENTED,
                    f"{exercise}: not implemented yet. Write the body of {name} "
                    f"(replace `raise NotImplementedError`) and run this cell again.", 0)
            return ExerciseResult(
                exercise, FAILED,
                f"{head}: {name} raised NotImplementedError: this case is not handled yet.\n"
                f"  inputs:\n{inputs}\n  expected: {show_expected(case)}", k, k)
        except Exception as exc:  # the student's bug, reported, never re-raised
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" (line {tb[-1].lineno} of {tb[-1].name})" if tb else ""
            return ExerciseResult(
                exercise, FAILED,
                f"{head}: {name} raised {type(exc).__name__}: {exc}{where}\n"
                f"  inputs:\n{inputs}\n  expected: {show_expected(case)}", k, k)
        if raw is None:
            return ExerciseResult(
                exercise, FAILED,
                f"{head}: {name} returned None. Did you forget the `return` statement?\n"
                f"  inputs:\n{inputs}\n  expected: {show_expected(case)}", k, k)
        try:
            got = normalise(raw, case)
        except WrongAnswer as exc:
            return ExerciseResult(
                exercise, FAILED,
                f"{head}: wrong type or shape of the answer: {exc}\n"
                f"  inputs:\n{inputs}\n  expected: {show_expected(case)}", k, k)
        hint = judge(case, got)
        if hint is not None:
            return ExerciseResult(
                exercise, FAILED,
                f"{head} differs.\n  inputs:\n{inputs}\n"
                f"  expected:      {show_expected(case)}\n"
                f"  you returned:  {show_got(got, case)}\n"
                f"  hint: {hint}", k, k)
    if after is not None:
        why = after()
        if why is not None:
            return ExerciseResult(exercise, FAILED,
                                  f"{exercise}: all {k} cases agree, but {why}", k, None)
    return ExerciseResult(exercise, PASSED, f"{exercise}: all {k} cases agree. Well done!", k)


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
