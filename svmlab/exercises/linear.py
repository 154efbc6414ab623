"""Exercise for ``notebooks/09_linear_svm``: the clipped single-coordinate
step of dual coordinate descent.

Student function::

    dcd_update(alpha_i, G, Q_ii, U) -> the new alpha_i

The dual of the hinge-loss linear SVM is ``min_a 1/2 a'Qa - e'a`` over the
box ``0 <= a_i <= U``.  Along coordinate ``i`` alone the objective is the
parabola ``f(a_i + d) = f(a) + G d + 1/2 Q_ii d^2`` with ``G`` the partial
derivative at the current point (``y_i w.x_i - 1``), so its minimiser over
the box is the Newton step ``a_i - G / Q_ii`` clipped to ``[0, U]``
(Hsieh et al. 2008, equation (3) and Algorithm 1 step 2(c)).

The cases come from the readable twin :class:`svmlab.reference.dcd.DualCD`
(the steps the compiled ``LinearSVC(solver="dcd")`` takes): every
coordinate step it made on three toy problems (bounded and free
multipliers, steps clipped at 0 and at U), with the twin's new ``a_i`` as
the expected answer, plus hand-picked edge cases (a step that lands
exactly on a bound, a zero gradient, an infinite U: the squared hinge's
box).  The checker compares within 1e-12 relative; its hints say which way
the answer is off (not clipped, clipped at the wrong end, the sign of the
step).
"""

from __future__ import annotations

import numpy as np

from ._core import Case, as_float, fmt, run_cases

__all__ = ["check_dcd_update", "dcd_update_cases", "reference_dcd_update", "CELLS"]


def reference_dcd_update(alpha_i, G, Q_ii, U):
    """The clipped Newton step: ``min(max(alpha_i - G / Q_ii, 0), U)``."""
    return min(max(alpha_i - G / Q_ii, 0.0), U)


_HAND = [
    ("a free step inside the box", 0.3, -0.2, 2.0, 1.0),
    ("a step below 0: clipped to 0", 0.1, 0.8, 2.0, 1.0),
    ("a step above U: clipped to U", 0.9, -3.0, 1.5, 1.0),
    ("a step that lands exactly on U", 0.5, -1.0, 2.0, 1.0),
    ("a zero gradient: no move", 0.4, 0.0, 3.0, 1.0),
    ("at 0 with a positive gradient: stays at 0", 0.0, 0.5, 1.0, 2.0),
    ("at U with a negative gradient: stays at U", 2.0, -0.5, 1.0, 2.0),
    ("an unbounded box (squared hinge: U = inf)", 0.2, -5.0, 1.0, np.inf),
]


def _twin_problems():
    """Three toy problems for the twin: 2-D blobs (C small and large) and a
    5-D random set."""
    from ..viz.live import toy_points

    X, y = toy_points("blobs", 20, 0)
    yield "blobs, C = 1", X, y, 1.0
    X, y = toy_points("moons", 16, 3)
    yield "moons, C = 10", X, y, 10.0
    rng = np.random.default_rng(9)
    X = rng.standard_normal((24, 5))
    y = np.where(X @ rng.standard_normal(5) + 0.5 * rng.standard_normal(24) > 0, 1.0, -1.0)
    yield "5-D random, C = 0.3", X, y, 0.3


def dcd_update_cases():
    """Every case of :func:`check_dcd_update`, in order."""
    for label, a, G, Q, U in _HAND:
        yield Case("hand-picked: " + label, {"alpha_i": a, "G": G, "Q_ii": Q, "U": U},
                   reference_dcd_update(a, G, Q, U))
    from ..reference.dcd import DualCD

    for name, X, y, C in _twin_problems():
        y = np.where(np.asarray(y) > 0, 1.0, -1.0)
        run = DualCD(X, y, C=C, loss="hinge", tol=1e-3, max_iter=50, seed=0)
        while True:
            rec = run.step()
            if rec is None:
                break
            if rec.shrunk:
                continue
            # the twin moves a coordinate only when its projected gradient is
            # not ~0; otherwise a_i stays (what the clipped step gives too,
            # within rounding)
            yield Case(f"{name}: step {rec.iteration}, coordinate i = {rec.i}",
                       {"alpha_i": rec.alpha_old, "G": rec.G, "Q_ii": float(run.Qii[rec.i]),
                        "U": float(run.U[rec.i])}, rec.alpha_new)


def _normalise(raw, case):
    return as_float(raw, "the new alpha_i")


def _judge(case, got):
    exp = float(case.expected)
    if abs(got - exp) <= 1e-12 * max(1.0, abs(exp)) + 1e-12:
        return None
    a, G, Q, U = (case.args[k] for k in ("alpha_i", "G", "Q_ii", "U"))
    raw = a - G / Q
    if abs(got - raw) <= 1e-12 * max(1.0, abs(raw)) and (raw < 0 or raw > U):
        return (f"the Newton step a_i - G / Q_ii = {fmt(raw)} leaves the box [0, {fmt(U)}]: "
                "clip it to the nearest end.")
    if abs(got - (a + G / Q)) <= 1e-12 * max(1.0, abs(a + G / Q)) or \
            abs(got - min(max(a + G / Q, 0.0), U)) <= 1e-12:
        return ("the step goes the wrong way: along a_i the objective is "
                "f + G d + Q_ii d^2 / 2, smallest at d = -G / Q_ii.")
    if got < 0 or got > U:
        return f"the answer must lie in the box [0, {fmt(U)}]."
    return (f"expected {fmt(exp)}: minimise the parabola along a_i over the box "
            f"(unclipped minimiser {fmt(raw)}).")


def check_dcd_update(student_fn):
    """Check ``student_fn(alpha_i, G, Q_ii, U) -> new alpha_i`` against the
    steps of the readable twin and hand-picked edge cases.  Returns an
    :class:`~svmlab.exercises.ExerciseResult`."""
    return run_cases("dcd_update", student_fn, dcd_update_cases(), _normalise, _judge,
                     exercise_id="09.dcd_update")


#: the exercise cells that end notebook 09, ``[(cell type, source)]``
CELLS = [
    ("markdown", r"""## 4 · Exercise: the clipped coordinate step

*The check cell runs your function on hand-picked edge cases and on every coordinate step the readable twin
`svmlab/reference/dcd.py` takes on three toy problems, and names the first case where your answer differs, with a
hint. Until you write the function it says "not implemented yet". A check fails if your function calls svmlab
itself (svmlab holds the answer).*

Along coordinate $i$ alone the dual objective is a parabola in the step $d$:
$f(\alpha+d\,e_i)=f(\alpha)+G\,d+\tfrac12 Q_{ii}\,d^2$, where $G=y_i\,w\cdot x_i-1$ is its slope now and
$Q_{ii}=x_i\cdot x_i+1$ its curvature. Write `dcd_update(alpha_i, G, Q_ii, U)`: the new $\alpha_i$, the minimiser of
that parabola over the box $0\le\alpha_i+d\le U$. (With the squared hinge, $U=\infty$.)"""),
    ("code", '''from svmlab.exercises import check_dcd_update


def dcd_update(alpha_i, G, Q_ii, U):
    """The new alpha_i: the coordinate's parabola minimised over [0, U]."""
    raise NotImplementedError


check_dcd_update(dcd_update)'''),
]
