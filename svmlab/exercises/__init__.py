"""Exercises with automatic checkers for the course notebooks.

Each ``check_*`` function takes the student's function, runs it on many
cases (hand-picked edge cases, random cases, and cases replayed from the
recorded steps of the real solvers), compares every answer with an
independent reference, and returns an :class:`ExerciseResult` that names the
first case that differs, with a hint.  A checker never raises: the starter
code's ``NotImplementedError`` gives the status ``"not implemented"``.

==============================  =============================================
notebook                        checkers
==============================  =============================================
``01_smo_geometry``             :func:`check_take_step`, :func:`check_threshold`
``03_cutting_plane``            :func:`check_most_violated`, :func:`check_working_set_slack`
``04_ordinal_regression``       :func:`check_count_pairs`, :func:`check_sweep`,
                                :func:`check_ordinal_constraint`
``05_irwls``                    :func:`check_irwls_weights`, :func:`check_reorder`
==============================  =============================================

The cells to append to the notebooks (exercise text, starter code, check
call) are in :mod:`svmlab.exercises.starters`.  The instructor's solutions
live outside the package, in ``notebooks/solutions/``.
"""

from ._core import ExerciseResult
from .cutting_plane import check_most_violated, check_working_set_slack
from .irwls import check_irwls_weights, check_reorder
from .ordinal import check_count_pairs, check_ordinal_constraint, check_sweep
from .smo import check_take_step, check_threshold

__all__ = ["ExerciseResult", "check_take_step", "check_threshold", "check_most_violated",
           "check_working_set_slack", "check_count_pairs", "check_sweep",
           "check_ordinal_constraint", "check_irwls_weights", "check_reorder"]
