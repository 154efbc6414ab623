"""Bookkeeping of the decisions that rounding can decide (not part of the
algorithms: the references work without reading it).

A reference and the fast solver agree bit for bit as long as they run the
same arithmetic on the same numbers.  Two things break that: a
ridge-regularised Cholesky solve (the fast code keeps and updates its
factor, the references factorise afresh: results agree to about
``eps * cond(K_11 + ridge)``), and the comparisons after it whose two sides
are closer than that.  The references flag such comparisons as *ties*; the
tests let the fast solver go the other way exactly there and nowhere else.

``noise[0]`` is the relative rounding noise of the ridge solves so far
(``100 eps cond``, with cond estimated from the Cholesky pivots); reset it
with :func:`reset` before a run or a replayed step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["NEAR", "noise", "reset", "note_factor", "tie_threshold", "near", "step_tie",
           "worst_tie", "ReferenceFit"]

NEAR = 1e-9  # a comparison closer than this (relative) after a ridge solve is a tie
noise = [0.0]


def reset():
    noise[0] = 0.0


def note_factor(L):
    """Record the noise of a solve with the lower Cholesky factor ``L``."""
    pivots = np.abs(np.diag(L))
    cond = (pivots.max() / pivots.min()) ** 2
    noise[0] = max(noise[0], 100 * np.finfo(float).eps * cond)


def tie_threshold():
    """Relative gap under which rounding may decide a comparison: 0 while no
    ridge-regularised solve has run (both sides compute the same bits), else
    ``max(NEAR, noise)``, and every gap (inf) once the noise passes 1e-4 (a
    nearly singular K_11, e.g. duplicate points: the solution is then fixed
    by the ridge and rounding, not by the data)."""
    if noise[0] > 1e-4:
        return np.inf
    return max(NEAR, noise[0]) if noise[0] > 0 else 0.0


def near(a, b, scale=1.0):
    """Whether ``a`` and ``b`` (arrays allowed) are within
    ``tie_threshold() * scale`` but not bit for bit equal (equal bits, as
    for duplicate points, come out equal on both sides: the stable order
    decides)."""
    gap = np.abs(np.asarray(a, float) - np.asarray(b, float))
    return bool(np.any((gap <= tie_threshold() * scale) & (gap > 0)))


def step_tie(t_i, t, yd, C):
    """Ties of a line-search step with step lengths ``t_i`` to the bounds,
    ``t = min(1, min t_i)`` and direction ``yd = y d``: a nearly singular
    K_11 (all of the step), a bound reached at about the full step, two
    bounds reached at about the same t, a component zero up to rounding."""
    eps = tie_threshold()
    return bool(eps == np.inf or np.any(np.abs(t_i - 1.0) <= eps)
                or np.any(np.abs(yd) <= eps * C)
                or (t < 1.0 and near(t_i[np.isfinite(t_i)], t, t)))


def worst_tie(viol):
    """Whether the two largest violations are within rounding.  When S1 is
    empty, b is the midpoint of the extreme violators, so two of them tie by
    construction (equal bits on both sides only before any ridge solve)."""
    eps = tie_threshold()
    top = np.sort(viol)[-2:]
    return bool(len(viol) > 1 and eps > 0 and top[1] - top[0] <= eps * top[1])


@dataclass
class ReferenceFit:
    """What a reference ``fit`` returns: the records (the fast solver's
    record types), the final ``alpha`` and ``intercept``, and ``ties``, the
    steps that took a decision rounding could turn (``inner_ties``: the
    steps whose sub-problem QP did; chunking/decomposition)."""

    records: list
    alpha: np.ndarray
    intercept: float
    ties: list = field(default_factory=list)
    inner_ties: list = field(default_factory=list)
