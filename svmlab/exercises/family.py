"""Exercises for ``notebooks/08_svm_family``: the ends of an epsilon-SVR pair
step, and Platt's regularised targets.

Student functions::

    svr_pair_bounds(t1, t2, alpha, C) -> (L, H)
    platt_targets(labels) -> t

``svr_pair_bounds`` (a *derive* exercise).  The epsilon-SVR dual in LIBSVM's
form has ``2n`` variables over ``n`` points: ``alpha = [a_0 .. a_{n-1},
a*_0 .. a*_{n-1}]``; variable ``t < n`` is ``a_t`` with sign ``y_t = +1``,
variable ``t >= n`` is ``a*_{t-n}`` with sign ``y_t = -1``; both variables of
point ``k`` are bounded by ``C[k]`` (``C`` has one bound per point: weights).
A pair step on ``(a1, a2) = (alpha[t1], alpha[t2])`` keeps ``y1 a1 + y2 a2``
fixed, so the pair moves on a line, and ``(L, H)`` are the smallest and the
largest new ``a2`` for which both stay in their boxes ``[0, C1]`` and ``[0,
C2]``.  The checker never compares with a formula: it checks that the pair
before the step lies on the student's segment, that both ends lie in the
box, and that just beyond either end the pair leaves the box (the
properties of the ends), on hand-picked cases of all four sign
combinations, random cases with weights, and the steps
:mod:`svmlab.reference.dual` takes on two toy regressions.  Its hints name
the variable (``a*_7``), its sign and its bound.

``platt_targets`` (a *derive* exercise).  Platt fits his sigmoid not to the
labels 1 and 0 but to targets that a Bayesian with a uniform prior on the
probability of the label would give an unseen point (Laplace's rule of
succession): ``(N+ + 1) / (N+ + 2)`` for the positives, ``1 / (N- + 2)`` for
the negatives (Platt 1999, section 2.2; what
:func:`svmlab.svm._probability.sigmoid_fit` uses).  ``labels`` holds +1 and
-1; the answer is an array of the same length.  Cases: hand-picked
(balanced, unbalanced, one class only, one point), random, and the labels of
the notebook's data sets.

References: the segment of :meth:`svmlab.reference.dual.Dual.take_step`
(recomputed here from the box and the line) and the recorded ``L, H`` of its
steps; the targets of ``sigmoid_fit``.
"""

from __future__ import annotations

import functools

import numpy as np

from ._core import Case, WrongAnswer, as_float, fmt, run_cases

__all__ = ["check_svr_pair_bounds", "check_platt_targets", "svr_bounds_cases",
           "platt_targets_cases", "CELLS", "reference_svr_bounds", "reference_targets"]


# ------------------------------------------------------------------ SVR bounds
def _var(t, n, C):
    """``(y, bound, name)`` of variable ``t`` of the SVR dual over n points."""
    t = int(t)
    if t < n:
        return 1.0, float(C[t]), f"a_{t}"
    return -1.0, float(C[t - n]), f"a*_{t - n}"


def reference_svr_bounds(t1, t2, alpha, C):
    """``(L, H)``: the segment of ``alpha[t2]`` when ``(alpha[t1],
    alpha[t2])`` moves on the line ``y1 a1 + y2 a2 = const`` inside ``[0, C1]
    x [0, C2]``."""
    n = len(C)
    y1, C1, _ = _var(t1, n, C)
    y2, C2, _ = _var(t2, n, C)
    a1, a2 = float(alpha[t1]), float(alpha[t2])
    if y1 != y2:  # a1 - a2 stays: a1 = a2 + (a1 - a2) in [0, C1]
        return max(0.0, a2 - a1), min(C2, C1 + a2 - a1)
    return max(0.0, a1 + a2 - C1), min(C2, a1 + a2)


def _svr_args(t1, t2, alpha, C):
    return {"t1": int(t1), "t2": int(t2), "alpha": np.asarray(alpha, dtype=np.float64),
            "C": np.asarray(C, dtype=np.float64)}


def _combo(args):
    n = len(args["C"])
    names = ["a" if t < n else "a*" for t in (args["t1"], args["t2"])]
    same = " of one point" if args["t1"] % n == args["t2"] % n else ""
    return f"{names[0]} with {names[1]}{same}"


_HAND_SVR = [
    # (label, t1, t2, alpha (2n), C (n))
    ("a with a (y1 = y2 = +1), both inside", 0, 2, [.3, .1, .4, 0, 0, 0], [1, 1, 1]),
    ("a* with a* (y1 = y2 = -1), both inside", 3, 5, [0, 0, 0, .2, .1, .5], [1, 1, 1]),
    ("a with a* (y1 = +1, y2 = -1)", 1, 3, [0, .6, 0, .2, 0, 0], [1, 1, 1]),
    ("a* with a (y1 = -1, y2 = +1)", 4, 0, [.7, 0, 0, 0, .3, 0], [1, 1, 1]),
    ("a and a* of the same point (at most one is non-zero at the optimum)", 2, 5,
     [0, 0, .4, 0, 0, 0], [1, 1, 1]),
    ("a* and a of the same point", 3, 0, [0, 0, 0, .25, 0, 0], [1, 1, 1]),
    ("a with a, different bounds C1 = 2, C2 = 0.5", 0, 1, [1.5, .3, 0, 0, 0, 0], [2, .5, 1]),
    ("a* with a*, different bounds C1 = 0.5, C2 = 2", 3, 4, [0, 0, 0, .4, 1.2, 0],
     [.5, 2, 1]),
    ("a with a*, different bounds C1 = 2, C2 = 0.5", 0, 4, [1.2, 0, 0, 0, .3, 0], [2, .5, 1]),
    ("a* with a, different bounds C1 = 0.25, C2 = 3", 3, 1, [0, 2.5, 0, .1, 0, 0],
     [.25, 3, 1]),
    ("a with a, both at 0: the segment is one point", 0, 1, [0, 0, 0, 0, 0, 0], [1, 1, 1]),
    ("a* with a*, both at C: the segment is one point", 3, 4, [0, 0, 0, 1, 1, 0], [1, 1, 1]),
    ("a with a*, a1 = C1 and a2 = 0: the segment is one point", 0, 4, [1, 0, 0, 0, 0, 0],
     [1, 1, 1]),
    ("a* with a, a1 = a2: the whole diagonal of a square box", 5, 1, [0, .5, 0, 0, 0, .5],
     [1, 1, 1]),
    ("a with a, a1 + a2 = C1 = C2: the whole anti-diagonal", 1, 2, [0, .25, .75, 0, 0, 0],
     [1, 1, 1]),
    ("a* with a*, a1 + a2 > C1", 5, 3, [0, 0, 0, .6, 0, .9], [1, 1, 1]),
    ("a with a*, a2 > a1 and C1 < C2", 2, 3, [0, 0, .1, .8, 0, 0], [1.5, 1, .5]),
]


def _hand_svr_cases():
    for label, t1, t2, alpha, C in _HAND_SVR:
        args = _svr_args(t1, t2, alpha, C)
        yield Case("hand-picked: " + label, args, reference_svr_bounds(**args))


def _random_svr_cases(k=30, seed=8):
    rng = np.random.default_rng(seed)
    for _ in range(k):
        n = int(rng.integers(2, 9))
        C = rng.choice([0.5, 1.0, 4.0], size=n) * (1.0 if rng.random() < 0.5 else
                                                    rng.uniform(0.3, 2.0, size=n))
        alpha = np.zeros(2 * n)
        for t in range(2 * n):
            u = rng.random()
            alpha[t] = 0.0 if u < 0.35 else (C[t % n] if u < 0.5 else rng.uniform(0, C[t % n]))
        t1, t2 = (int(v) for v in rng.choice(2 * n, size=2, replace=False))
        args = _svr_args(t1, t2, alpha, C)
        yield Case(f"random: {_combo(args)}, n = {n}", args, reference_svr_bounds(**args))


@functools.lru_cache(maxsize=None)
def recorded_svr_steps():
    """``[(name, alpha before the step, bounds C (n,), DualStep)]``: every step
    of :func:`svmlab.reference.dual.solve` on two small epsilon-SVR problems
    (sinc targets, RBF; the second with per-point weights)."""
    from ..kernels import Kernel
    from ..reference import dual as ref_dual

    out = []
    rng = np.random.default_rng(3)
    for name, n, C, eps, weight in [("sinc, C = 1, epsilon = 0.1", 16, 1.0, 0.1, None),
                                    ("sinc with weights, C = 2, epsilon = 0.05", 14, 2.0, 0.05,
                                     rng.uniform(0.2, 1.5, size=14))]:
        x = np.sort(rng.uniform(-3, 3, n))
        z = np.sinc(x) + 0.1 * rng.normal(size=n)
        K = Kernel(x[:, None], "rbf", 1.0).matrix()
        prob = ref_dual.epsilon_svr(K, z, C, eps, weight=weight)
        res = ref_dual.solve(prob, tol=1e-4, max_iter=400)
        a = np.array(prob.a0, dtype=np.float64)
        for r in res.records:
            out.append((name, a.copy(), np.asarray(prob.U[:n]), r))
            a[r.i1], a[r.i2] = r.a1_new, r.a2_new
    return tuple(out)


def _recorded_svr_cases():
    for name, alpha, C, r in recorded_svr_steps():
        args = _svr_args(r.i1, r.i2, alpha, C)
        yield Case(f"recorded: step {r.iteration} of the dual on {name} ({_combo(args)})", args,
                   (r.L, r.H), {"record": r})


def svr_bounds_cases():
    """Every case of :func:`check_svr_pair_bounds`, in order."""
    yield from _hand_svr_cases()
    yield from _random_svr_cases()
    yield from _recorded_svr_cases()


def _box_gap(y1, y2, a1, a2, C1, C2, v):
    """How far the pair with ``a2 = v`` (``a1`` on the line) lies outside
    ``[0, C1] x [0, C2]`` (0 inside)."""
    a1v = a1 + y1 * y2 * (a2 - v)
    return max(0.0, -a1v, a1v - C1, -v, v - C2), a1v


def _svr_hint(case, got):
    """None when ``got = (L, H)`` has the properties of the segment's ends;
    else a hint that names the variables, their signs and bounds."""
    a = case.args
    t1, t2, alpha, C = a["t1"], a["t2"], a["alpha"], a["C"]
    n = len(C)
    y1, C1, v1 = _var(t1, n, C)
    y2, C2, v2 = _var(t2, n, C)
    a1, a2 = float(alpha[t1]), float(alpha[t2])
    L, H = got
    scale = max(1.0, C1, C2)
    tol = 1e-12 * scale
    step = 1e-7 * scale
    who = (f"t1 = {t1} is {v1} (sign y1 = {int(y1):+d}, bound C1 = C[{t1 % n}] = {fmt(C1)}) "
           f"and t2 = {t2} is {v2} (sign y2 = {int(y2):+d}, bound C2 = C[{t2 % n}] = "
           f"{fmt(C2)}); ")
    line = (f"a1 + a2 stays equal to {fmt(a1 + a2)}" if y1 == y2 else
            f"a1 - a2 stays equal to {fmt(a1 - a2)}")
    if L > H + tol:
        return who + f"L = {fmt(L)} > H = {fmt(H)}: L is the lower end of the segment."
    if not (L - tol <= a2 <= H + tol):
        return (who + f"the pair before the step, a2 = alpha[{t2}] = {fmt(a2)}, lies on its own "
                f"segment, but it is outside [L, H] = [{fmt(L)}, {fmt(H)}].")
    # a common slip, named before the generic properties: every variable taken
    # as sign +1, or one bound for both variables
    for wrong, why in _svr_slips(t1, t2, alpha, C):
        exp = case.expected
        if abs(wrong[0] - exp[0]) + abs(wrong[1] - exp[1]) > 1e-9 and \
                abs(L - wrong[0]) <= 1e-9 * scale and abs(H - wrong[1]) <= 1e-9 * scale:
            return who + why
    for end, v in (("L", L), ("H", H)):
        gap, a1v = _box_gap(y1, y2, a1, a2, C1, C2, v)
        if gap > tol:
            return (who + f"at a2 = {end} = {fmt(v)} the partner is a1 = {fmt(a1v)} (on the "
                    f"line, {line}), and the pair ({fmt(a1v)}, {fmt(v)}) is outside the box "
                    f"[0, C1] x [0, C2] = [0, {fmt(C1)}] x [0, {fmt(C2)}].")
    for end, v in (("L", L - step), ("H", H + step)):
        gap, a1v = _box_gap(y1, y2, a1, a2, C1, C2, v)
        if gap <= tol:
            return (who + f"the segment is longer: just beyond {end}, at a2 = {fmt(v)} with "
                    f"a1 = {fmt(a1v)} ({line}), both variables are still inside their boxes. "
                    f"An end is where the line leaves the box: a1 or a2 reaches 0 or its bound.")
    return None


def _svr_slips(t1, t2, alpha, C):
    """``[((L, H), hint)]`` of two slips: signs all +1; one bound for both."""
    n = len(C)
    a1, a2 = float(alpha[t1]), float(alpha[t2])
    C1, C2 = float(C[t1 % n]), float(C[t2 % n])
    out = [((max(0.0, a1 + a2 - C1), min(C2, a1 + a2)),
            "you used the segment of two variables of equal sign. The variables t >= n are the "
            "a* of the points t - n, with sign -1: for opposite signs the line keeps a1 - a2 "
            "fixed, not a1 + a2.")]
    y1 = 1.0 if t1 < n else -1.0
    y2 = 1.0 if t2 < n else -1.0
    for Cb in sorted({C1, C2}):
        one = ((max(0.0, a2 - a1), min(Cb, Cb + a2 - a1)) if y1 != y2 else
               (max(0.0, a1 + a2 - Cb), min(Cb, a1 + a2)))
        out.append((one, "each variable has its own bound: variable t is bounded by C[t] for "
                         "t < n and by C[t - n] for t >= n, so C1 and C2 may differ."))
    return out


def check_svr_pair_bounds(student_fn):
    """Check ``student_fn(t1, t2, alpha, C) -> (L, H)``, the ends of the
    segment of an epsilon-SVR pair step, by their properties (module
    docstring).  Returns an :class:`~svmlab.exercises.ExerciseResult`."""
    def pair(raw, case):
        if isinstance(raw, dict) or np.ndim(raw) != 1 or len(raw) != 2:
            raise WrongAnswer(f"return the pair (L, H): two numbers, got {type(raw).__name__}")
        return as_float(raw[0], "L"), as_float(raw[1], "H")

    return run_cases("svr_pair_bounds", student_fn, svr_bounds_cases(), pair, _svr_hint,
                     lambda c: "(L, H) = (%s, %s)" % tuple(fmt(v) for v in c.expected),
                     exercise_id="08.svr_pair_bounds")


# ------------------------------------------------------------------ Platt targets
def reference_targets(labels):
    """Platt's targets: ``(N+ + 1) / (N+ + 2)`` where ``labels > 0``,
    ``1 / (N- + 2)`` elsewhere."""
    pos = np.asarray(labels) > 0
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def _labels(v):
    return np.asarray(v, dtype=np.float64)


_HAND_T = [
    ("one positive, one negative", [1, -1]),
    ("balanced, 3 and 3", [1, -1, 1, -1, 1, -1]),
    ("unbalanced: 4 positives, 1 negative", [1, 1, -1, 1, 1]),
    ("unbalanced: 1 positive, 5 negatives", [-1, -1, -1, 1, -1, -1]),
    ("only positives (N- = 0)", [1, 1, 1]),
    ("only negatives (N+ = 0)", [-1, -1]),
    ("a single positive point", [1]),
    ("a single negative point", [-1]),
    ("10 positives, 2 negatives, mixed order", [1, 1, -1, 1, 1, 1, 1, -1, 1, 1, 1, 1]),
]


def platt_targets_cases():
    """Every case of :func:`check_platt_targets`, in order."""
    for label, v in _HAND_T:
        lab = _labels(v)
        yield Case("hand-picked: " + label, {"labels": lab}, reference_targets(lab))
    rng = np.random.default_rng(12)
    for _ in range(20):
        n = int(rng.integers(1, 300))
        lab = np.where(rng.random(n) < rng.uniform(0.05, 0.95), 1.0, -1.0)
        yield Case(f"random: {int((lab > 0).sum())} positives, {int((lab < 0).sum())} negatives",
                   {"labels": lab}, reference_targets(lab))
    from ..viz.family import calibration_points

    for kind, n in (("moons", 100), ("overlap", 120), ("xor", 60)):
        _, y = calibration_points(kind, n, None, 0)
        lab = _labels(y)
        yield Case(f"the labels of the notebook's {kind} set (n = {n})", {"labels": lab},
                   reference_targets(lab))


def _targets_normalise(raw, case):
    try:
        got = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise WrongAnswer(f"return an array of numbers, got {type(raw).__name__}") from None
    n = len(case.args["labels"])
    if got.shape != (n,):
        raise WrongAnswer(f"return one target per label: an array of shape ({n},), got shape "
                          f"{got.shape}")
    if not np.all(np.isfinite(got)):
        raise WrongAnswer("the targets must be finite numbers")
    return got


def _targets_hint(case, got):
    lab = case.args["labels"]
    exp = case.expected
    if np.allclose(got, exp, rtol=0, atol=1e-12):
        return None
    pos = lab > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    n = n_pos + n_neg
    counts = f"N+ = {n_pos} positives and N- = {n_neg} negatives"
    # whole answers that a common slip gives (compared as vectors, so that a
    # coincidence on one entry does not name the wrong slip)
    slips = [
        (pos.astype(float),
         "those are the hard targets 1 and 0. Platt replaces them: a target is the probability "
         "of y = +1 that a uniform prior and the labels seen give an unseen point of that "
         "class (Laplace's rule of succession), never exactly 0 or 1."),
        (np.where(pos, (n_neg + 1.0) / (n_neg + 2.0), 1.0 / (n_pos + 2.0)),
         f"the target of a positive counts the positives, and that of a negative the "
         f"negatives; yours are swapped ({counts})."),
        (np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), (n_neg + 1.0) / (n_neg + 2.0)),
         f"(N- + 1) / (N- + 2) is the probability of the *negative* class for a negative "
         f"point; the target is the probability of y = +1 ({counts})."),
        (np.where(pos, (n_pos + 1.0) / (n + 2.0), 1.0 / (n + 2.0)),
         f"that is an estimate over all {n} points; Platt's target of a point uses only the "
         f"points of its own class ({counts})."),
    ]
    for wrong, why in slips:
        if np.allclose(got, wrong, rtol=0, atol=1e-12):
            return why
    bad = int(np.flatnonzero(np.abs(got - exp) > 1e-12)[0])
    side = "positive" if pos[bad] else "negative"
    return (f"the first wrong target is that of point {bad}, a {side} ({counts}): with a uniform "
            f"prior on the probability, after s successes in m trials the rule of succession "
            f"gives (s + 1) / (m + 2) for the next one.")


def check_platt_targets(student_fn):
    """Check ``student_fn(labels) -> t``, Platt's regularised targets, on
    hand-picked, random and the notebook's label sets.  Returns an
    :class:`~svmlab.exercises.ExerciseResult`."""
    return run_cases("platt_targets", student_fn, platt_targets_cases(), _targets_normalise,
                     _targets_hint, exercise_id="08.platt_targets")


# ------------------------------------------------------------------ notebook cells
_NOTE = (
    "*Each check cell runs your function on hand-picked edge cases, random cases and cases from "
    "this notebook's own runs, and names the first case where your answer differs, with a hint. "
    "Until you write the function it says \"not implemented yet\". Both exercises are **derive** "
    "exercises: the text does not give the rule, and the checkers test what a right answer must "
    "satisfy. A check fails if your function calls svmlab itself (svmlab holds the answers). "
    "The SVR explorer of section 2 hides the lines of `svmlab/reference/dual.py` that answer "
    "Exercise 1 until you pass it (or press its reveal button).*")

#: the exercise cells that end notebook 08, ``[(cell type, source)]``
CELLS = [
    ("markdown", r"""## 5 · Exercises

""" + _NOTE + r"""

### Exercise 1 (derive) · The segment of an SVR pair step

In the dual of section 2 the vector `alpha` holds the $2n$ variables $[\alpha_0,\dots,\alpha_{n-1},\alpha^*_0,\dots,
\alpha^*_{n-1}]$. Variable $t<n$ is $\alpha_t$ with sign $y_t=+1$; variable $t\ge n$ is $\alpha^*_{t-n}$ with sign
$y_t=-1$; both variables of point $k$ lie in $[0, C_k]$ (`C` holds one bound per point). Write
`svr_pair_bounds(t1, t2, alpha, C)`, returning `(L, H)`: the smallest and the largest new value of
$a_2=$ `alpha[t2]` when the pair $a_1=$ `alpha[t1]`, $a_2$ moves as the step moves it, and both stay in their boxes.

Derive them yourself: which quantity does the equality constraint $\sum_t y_t\alpha_t=\Delta$ keep fixed when only
$a_1$ and $a_2$ move? Write $0\le a_1^{new}\le C_1$ and $0\le a_2^{new}\le C_2$ as bounds on $a_2^{new}$, for the
four sign combinations (which of them give the same line?). The checker never compares with a formula: it checks
that the pair before the step lies on your segment, that both ends lie in the box, and that just beyond either end
the pair leaves it. The explorer's box panel shows the segment of every step it takes."""),
    ("code", '''from svmlab.exercises import check_svr_pair_bounds


def svr_pair_bounds(t1, t2, alpha, C):
    """The ends (L, H) of the segment of alpha[t2] in an SVR pair step on (t1, t2)."""
    raise NotImplementedError


check_svr_pair_bounds(svr_pair_bounds)'''),
    ("markdown", r"""### Exercise 2 (derive) · Platt's targets

The sigmoid of section 4 is $P(y=+1\mid f)=1/(1+e^{Af+B})$, fitted by minimising the cross-entropy to *targets* $t_i$. With $t_i=1$ for
the positives and $0$ for the negatives, a set whose decision values separate the classes would push $A$ to
$-\infty$: the sigmoid would claim certainty from a finite sample. Platt takes instead, for each point, the probability
of $y=+1$ that a uniform prior on that probability gives after seeing the labels of its own class: for a positive,
the chance that the next point is positive after $N_+$ positives in $N_+$ draws; for a negative, one minus the
chance that the next is negative after $N_-$ negatives in $N_-$ draws (Laplace's rule of succession).

Write `platt_targets(labels)`: `labels` is an array of $+1$ and $-1$; return the array of targets $t_i$, one per
label. Derive the two values from the rule of succession. What do they tend to when $N_+$ and $N_-$ grow, and what
are they for a single point?"""),
    ("code", '''from svmlab.exercises import check_platt_targets


def platt_targets(labels):
    """Platt's regularised targets, one per label (+1 or -1)."""
    raise NotImplementedError


check_platt_targets(platt_targets)'''),
]
