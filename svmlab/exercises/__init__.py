"""Exercises with automatic checkers for the course notebooks.

Each ``check_*`` function takes the student's function, runs it on many
cases (hand-picked edge cases, random cases, and cases replayed from the
recorded steps of the real solvers), compares every answer with an
independent reference or checks the properties the answer must have, and
returns an :class:`ExerciseResult` that names the first case that differs,
with a hint.  A checker never raises: the starter code's
``NotImplementedError`` gives the status ``"not implemented"``.

==============================  =============================================
notebook                        checkers (exercise ids)
==============================  =============================================
``01_smo_geometry``             :func:`check_segment_ends` (``01.segment_ends``),
                                :func:`check_take_step` (``01.take_step``),
                                :func:`check_threshold` (``01.threshold``)
``03_cutting_plane``            :func:`check_one_plane_qp` (``03.one_plane_qp``),
                                :func:`check_most_violated` (``03.most_violated``),
                                :func:`check_working_set_slack` (``03.working_set_slack``)
``04_ordinal_regression``       :func:`check_count_pairs` (``04.count_pairs``),
                                :func:`check_sweep` (``04.ordinal_sweep``),
                                :func:`check_ordinal_constraint` (``04.ordinal_constraint``)
``05_irwls``                    :func:`check_irwls_weights` (``05.irwls_weights``),
                                :func:`check_reorder` (``05.reorder_sets``)
``08_svm_family``               :func:`check_svr_pair_bounds` (``08.svr_pair_bounds``),
                                :func:`check_platt_targets` (``08.platt_targets``)
``09_linear_svm``               :func:`check_dcd_update` (``09.dcd_update``)
==============================  =============================================

In each notebook at least one exercise asks the student to *derive* a rule
that the text does not give (the ends of the SMO segment, the solution of
OP3 with one plane, the number of preference pairs, the reordering rules of
Table 1), and its checker tests the properties of the answer (the segment
is the part of the line inside the box; the objective is minimal; the count
is right and does not grow like n^2; a sample moves exactly when it breaks
its KKT condition) rather than comparing with a formula.

What a grader reads
-------------------
:class:`ExerciseResult` has ``exercise_id`` (stable: ``"NN.function"``),
``n_passed``, ``n_total`` and ``score`` (the fraction of cases that agree),
``first_failure`` (the message of the first failing case), ``guard_fired``
and ``guard_call`` (the student's function called svmlab's own code, which
holds the answer: the check fails and says so), next to ``passed`` and
``status``; ``as_dict()`` gives them as a row.  :data:`EXERCISES` lists
every exercise with its notebook, function and checker.

Reveal locks
------------
The live explorers' source panels hide the reference lines an exercise
covers until the exercise passed or the student pressed "reveal"
(:mod:`svmlab.exercises._registry` documents the rules)::

    revealed(exercise_id) -> bool   # may its lines be shown now?
    reveal(*exercise_ids)           # unlock (no id: all)
    set_locks(False)                # the instructor's view (or SVMLAB_LOCKS=off)
    set_locks(True)                 # locks on, whatever the environment says
    set_locks(None)                 # back to SVMLAB_LOCKS (default: on)
    locks_enabled(), reset_locks(), on_lock_change(callback), hidden_lines(func)

The cells to append to the notebooks (exercise text, starter code, check
call) are in :mod:`svmlab.exercises.starters`.  The instructor's solutions
live outside the package and outside ``notebooks/``, in
``instructor/solutions/`` of a checkout.
"""

from ._core import ExerciseResult
from ._registry import (EXERCISES, LOCKS_ENV, hidden_lines, locks_enabled, on_lock_change,
                        reset_locks, reveal, revealed, set_locks)
from .cutting_plane import check_most_violated, check_one_plane_qp, check_working_set_slack
from .family import check_platt_targets, check_svr_pair_bounds
from .irwls import check_irwls_weights, check_reorder
from .linear import check_dcd_update
from .ordinal import check_count_pairs, check_ordinal_constraint, check_sweep
from .smo import check_segment_ends, check_take_step, check_threshold

__all__ = ["ExerciseResult", "EXERCISES", "LOCKS_ENV", "revealed", "reveal", "set_locks",
           "locks_enabled", "reset_locks", "on_lock_change", "hidden_lines",
           "check_segment_ends", "check_take_step", "check_threshold", "check_one_plane_qp",
           "check_most_violated", "check_working_set_slack", "check_count_pairs",
           "check_sweep", "check_ordinal_constraint", "check_irwls_weights", "check_reorder",
           "check_svr_pair_bounds", "check_platt_targets", "check_dcd_update"]
