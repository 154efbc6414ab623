"""The course's exercises by stable id, and the reveal locks on their answers.

Every exercise has a stable id ``"NN.function"`` (the notebook number and the
name of the function the student writes, e.g. ``"01.take_step"``): the
checkers put it in :attr:`ExerciseResult.exercise_id`, a grader writes it in
its table, and the reveal locks are keyed by it.

Reveal locks
------------
The live explorers show "the lines that ran" of the readable references in
:mod:`svmlab.reference`.  Some of those lines are the answer to an exercise a
few cells below.  Each exercise lists the reference lines it covers
(:attr:`Exercise.hides`); while the exercise is *locked*, a source panel
shows those lines as a grey bar that names the exercise (and a button to
reveal them).  An exercise is unlocked when

* its checker passed in this Python process (the student solved it), or
* the student pressed the panel's reveal button, or called :func:`reveal`, or
* the locks are off: the instructor's override, ``SVMLAB_LOCKS=off`` in the
  environment or :func:`set_locks` ``(False)`` in the kernel.

The default is locked (``SVMLAB_LOCKS`` unset or ``on``).  The notebooks are
stored executed with the starter code, so their stored outputs (and the
widget state saved in the ``.ipynb``) never hold a hidden line;
``tests/test_notebook_locks.py`` checks it.

API (the names a student build or a grader uses)::

    revealed(exercise_id) -> bool     # may its lines be shown now?
    reveal(*exercise_ids)             # unlock them (no id: every exercise)
    set_locks(enabled)                # True: locks on; False: instructor view;
                                      # None: back to SVMLAB_LOCKS / the default
    locks_enabled() -> bool
    reset_locks()                     # forget passes and reveals (tests)
    on_lock_change(callback)          # callback() after any change (explorers)
    EXERCISES                         # {exercise_id: Exercise}
    hidden_lines(func) -> {line index: exercise_id}   # what a panel must hide now

Hidden lines are named by the reference's ``# [tag]`` comments and by
patterns on the line text (:class:`Hide`), so a reference can be edited
without touching this table; ``tests/test_exercises.py`` checks that every
rule still finds its lines and that the answer's key expressions are among
them.
"""

from __future__ import annotations

import functools
import os
import re
import weakref
from dataclasses import dataclass, field

__all__ = ["Exercise", "Hide", "EXERCISES", "revealed", "reveal", "set_locks",
           "locks_enabled", "reset_locks", "on_lock_change", "hidden_lines", "mark_passed",
           "LOCKS_ENV"]

#: environment variable of the instructor's override: ``off`` shows every line
LOCKS_ENV = "SVMLAB_LOCKS"


@dataclass(frozen=True)
class Hide:
    """Lines of one reference function that an exercise covers.

    ``function``: ``"module:qualname"`` under :mod:`svmlab.reference`, e.g.
    ``"smo:PlattSMO.take_step"``.  Then one of

    * ``body=True``: every line after the ``def`` line (docstring included);
    * ``start``/``end``: the lines from the first line matching ``start`` to
      the last line matching ``end`` (inclusive);
    * ``match``: every line matching it.

    A pattern ``"[tag]"`` matches the lines tagged ``tag``; any other pattern
    is a regular expression searched in the line.
    """

    function: str
    start: str | None = None
    end: str | None = None
    match: str | None = None
    body: bool = False


@dataclass(frozen=True)
class Exercise:
    """One exercise: its stable id, notebook, the function the student
    writes, the checker's name in :mod:`svmlab.exercises`, a title, and the
    reference lines it covers (:class:`Hide`)."""

    exercise_id: str
    notebook: str
    function: str
    checker: str
    title: str
    hides: tuple = field(default=())


def _ex(eid, notebook, checker, title, *hides):
    return Exercise(eid, notebook, eid.split(".", 1)[1], checker, title, tuple(hides))


_TS = "smo:PlattSMO.take_step"
_RULES = (r"low, high = |new\[low\] = |new\[high\] = |sp\.sets\[F\[(low|high)\]\] = "
          r"|c_mask = \(sp\.sets|d_mask = \(sp\.sets|sp\.sets\[c_mask \| d_mask\] = ")
#: the generalised dual's step (notebook 08's SVR explorer shows it): the same
#: step and threshold as 01's, and the segment of 08's exercise
_DS = "dual:Dual.take_step"
EXERCISES = {e.exercise_id: e for e in [
    _ex("01.segment_ends", "01_smo_geometry", "check_segment_ends",
        "derive the ends L, H of the feasible segment",
        Hide(_TS, start="[L-H-differ]", end="[L-equals-H]")),
    # the step's lines start after the segment's (Exercise 1's), so that a
    # pass of either exercise shows all of its own lines
    _ex("01.take_step", "01_smo_geometry", "check_take_step", "the clipped analytic step",
        Hide(_TS, match=r"^\s*s = y1 \* y2"),
        Hide(_TS, start=r"^\s*k11, k12, k22 = ", end="[a1]"),
        *(Hide(_DS, match=f"[{tag}]") for tag in ("eta", "step", "clip", "eta-nonpositive"))),
    _ex("01.threshold", "01_smo_geometry", "check_threshold", "the threshold update",
        Hide(_TS, start=r"# threshold, eqs", end="[b-average]"),
        Hide(_DS, start="[threshold]", end=r"self\.b = b1 if")),
    _ex("03.one_plane_qp", "03_cutting_plane", "check_one_plane_qp",
        "derive the solution of OP3 with one plane"),
    _ex("03.most_violated", "03_cutting_plane", "check_most_violated",
        "the most violated constraint",
        Hide("cutting_plane:most_violated", body=True),
        Hide("cutting_plane:iter_fit", match="[cut]")),
    _ex("03.working_set_slack", "03_cutting_plane", "check_working_set_slack",
        "the slack of the working set",
        Hide("cutting_plane:solve_reduced_qp", start="[sum-slack]", end="[sum-binds]")),
    _ex("04.count_pairs", "04_ordinal_regression", "check_count_pairs",
        "derive the number of preference pairs",
        Hide("ordinal:iter_fit", start=r"size = np\.bincount", end=r"m = int\(")),
    _ex("04.ordinal_sweep", "04_ordinal_regression", "check_sweep",
        "the sorted sweep of Algorithm 2",
        Hide("ordinal:sweep_counts", body=True)),
    _ex("04.ordinal_constraint", "04_ordinal_regression", "check_ordinal_constraint",
        "the constraint from the counts",
        Hide("ordinal:iter_fit", match="[cut]")),
    _ex("05.irwls_weights", "05_irwls", "check_irwls_weights", "the weights of eq. (8)"),
    _ex("05.reorder_sets", "05_irwls", "check_reorder", "derive the reordering rules of Table 1",
        # the rules themselves: which samples move, and where to
        Hide("irwls:table1_iteration", match=_RULES + r"|if na == 0 and nb == 0"),
        # svmlab's line-search iteration moves samples by the same rules
        Hide("subproblem:line_search_iteration", match=_RULES)),
    _ex("08.svr_pair_bounds", "08_svm_family", "check_svr_pair_bounds",
        "derive the ends L, H of an epsilon-SVR pair step",
        Hide(_DS, start="[segment]", end="[segment]")),
    _ex("08.platt_targets", "08_svm_family", "check_platt_targets",
        "derive Platt's regularised targets"),
    _ex("09.dcd_update", "09_linear_svm", "check_dcd_update",
        "the clipped coordinate step of dual coordinate descent"),
]}


# ------------------------------------------------------------------ state
_passed: set = set()
_revealed: set = set()
_override: list = [None]          # set_locks(...): True / False / None (environment)
_listeners: list = []             # weak references to callbacks


def locks_enabled() -> bool:
    """True unless the instructor's override is on (:func:`set_locks`
    ``(False)``, or ``SVMLAB_LOCKS=off`` / ``0`` / ``no`` / ``false``)."""
    if _override[0] is not None:
        return bool(_override[0])
    v = os.environ.get(LOCKS_ENV, "on").strip().lower()
    return v not in ("off", "0", "no", "false")


def _known(eid):
    if eid not in EXERCISES:
        raise KeyError(f"no exercise {eid!r}; known: {', '.join(EXERCISES)}")
    return eid


def revealed(exercise_id) -> bool:
    """May the lines of ``exercise_id`` be shown now?  (Locks off, the
    exercise passed in this process, or it was revealed.)"""
    _known(exercise_id)
    return (not locks_enabled()) or exercise_id in _passed or exercise_id in _revealed


def reveal(*exercise_ids):
    """Unlock the hidden lines of these exercises (every exercise when no id
    is given), as the reveal button of a source panel does."""
    ids = exercise_ids or tuple(EXERCISES)
    for eid in ids:
        _revealed.add(_known(eid))
    _notify()


def set_locks(enabled):
    """``True``: locks on (the default); ``False``: the instructor's view,
    every line shown; ``None``: follow ``SVMLAB_LOCKS`` again."""
    _override[0] = None if enabled is None else bool(enabled)
    _notify()


def reset_locks():
    """Forget every pass and reveal (and the :func:`set_locks` override)."""
    _passed.clear()
    _revealed.clear()
    _override[0] = None
    _notify()


def mark_passed(exercise_id):
    """Record that the checker of ``exercise_id`` passed (the checkers call
    it); its lines are then shown."""
    if exercise_id in EXERCISES and exercise_id not in _passed:
        _passed.add(exercise_id)
        _notify()


def on_lock_change(callback):
    """Call ``callback()`` after every change of the lock state (a pass, a
    reveal, :func:`set_locks`).  Held by a weak reference when it is a bound
    method, so an explorer that is gone stops listening."""
    ref = weakref.WeakMethod(callback) if hasattr(callback, "__self__") else (lambda: callback)
    _listeners.append(ref)


def _notify():
    for ref in list(_listeners):
        cb = ref()
        if cb is None:
            _listeners.remove(ref)
            continue
        try:
            cb()
        except Exception:  # noqa: BLE001 - a broken listener must not break a checker
            pass


# ------------------------------------------------------------------ lines
def _qualname(func):
    mod = func.__module__.rsplit(".", 1)[-1]
    return f"{mod}:{func.__qualname__}"


def _matcher(pattern):
    m = re.fullmatch(r"\[([A-Za-z0-9_.:\-, ]+)\]", pattern)
    if m:
        want = frozenset(t.strip() for t in m.group(1).split(","))
        return lambda line, tags: bool(tags & want) if len(want) == 1 else want <= tags
    rx = re.compile(pattern)
    return lambda line, tags: bool(rx.search(line))


def lines_of(hide, lines):
    """Indices (into ``lines``, the ``[(text, tags)]`` of
    :func:`svmlab.reference._source.tagged_lines`) that ``hide`` covers."""
    if hide.body:
        k = next((i for i, (t, _) in enumerate(lines) if t.lstrip().startswith("def ")), 0)
        # a signature may span lines: the body starts after the line ending in ':'
        while k < len(lines) and not lines[k][0].rstrip().endswith(":"):
            k += 1
        return set(range(k + 1, len(lines)))
    if hide.match is not None:
        f = _matcher(hide.match)
        return {i for i, (t, tags) in enumerate(lines) if f(t, tags)}
    fs, fe = _matcher(hide.start), _matcher(hide.end)
    starts = [i for i, (t, tags) in enumerate(lines) if fs(t, tags)]
    ends = [i for i, (t, tags) in enumerate(lines) if fe(t, tags)]
    if not starts or not ends or ends[-1] < starts[0]:
        return set()
    return set(range(starts[0], ends[-1] + 1))


@functools.lru_cache(maxsize=None)
def source_lines(func):
    """``tagged_lines(func)`` of :mod:`svmlab.reference._source`, read once per
    function (a panel redraws every frame; ``inspect.getsource`` tokenizes the
    whole module each time)."""
    from ..reference._source import tagged_lines

    return tuple(tagged_lines(func))


@functools.lru_cache(maxsize=None)
def covered_lines(func):
    """``{line index: (exercise ids)}``: every line of ``func``'s source that
    some exercise covers, locked or not."""
    name = _qualname(func)
    lines = source_lines(func)
    out = {}
    for ex in EXERCISES.values():
        for h in ex.hides:
            if h.function == name:
                for i in lines_of(h, lines):
                    out.setdefault(i, []).append(ex.exercise_id)
    return {i: tuple(v) for i, v in out.items()}


def hidden_lines(func):
    """``{line index: exercise id}``: the lines of ``func`` that a source
    panel must hide now (covered by an exercise that is still locked; the
    first such exercise is named)."""
    out = {}
    for i, ids in covered_lines(func).items():
        locked = [e for e in ids if not revealed(e)]
        if locked:
            out[i] = locked[0]
    return out
