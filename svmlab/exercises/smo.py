"""Exercises for ``notebooks/01_smo_geometry``: Platt's analytic step and the
threshold update (Platt 1998, MSR-TR-98-14, section 2.1, eqs. 13-21).

Student functions (svmlab's signs: ``f(x) = sum_j a_j y_j K(x_j, x) + b``,
``E_i = f(x_i) - y_i``, ``eta = K11 + K22 - 2 K12``)::

    take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C) -> (a1_new, a2_new)
    threshold(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C) -> b_new

Contract of ``take_step`` (decided here, where the paper leaves room):

* ``L == H`` (the segment is a single point): return ``(a1, a2)`` unchanged;
* ``eta > 0``: the unconstrained maximum along the line (TR eq. 16, given in
  the notebook's introduction) clipped to ``[L, H]`` (eq. 17);
* ``eta <= 0``: move ``a2`` to the end of the segment where the dual
  objective is larger (eq. 19); if both ends are equally good, keep ``a2``.
  The checker's cases never have ends closer than 1e-6 unless they are
  exactly equal, so any tie tolerance up to 1e-6 gives the same answers;
* ``a1_new`` follows from ``a2_new`` by the equality constraint (eq. 18).

The rules themselves (the ends of the segment, how ``a1`` follows, the two
candidate thresholds) are what the notebook's exercises ask for: neither
this docstring nor a hint states them (``tests/test_answers_unreachable.py``
checks it); a hint gives the numbers the right rule produces on the case.

Platt's "no progress" test is not part of the exercise; the reference runs
with ``eps = 1e-12`` so that it never changes the answer beyond the
checker's tolerance.

Contract of ``threshold`` (TR eqs. 20, 21 in svmlab's sign): ``b1`` is the
new ``b`` that makes the new ``E1`` zero, ``b2`` the one that makes the new
``E2`` zero; return b1 when ``0 < a1_new < C``, else b2 when
``0 < a2_new < C``, else their average.  (When both are inside, b1 == b2 up
to rounding, so either is accepted.)

References: :func:`svmlab.smo._pairstep.pair_step` and
:func:`svmlab.smo._pairstep.pair_threshold`; recorded cases replay the steps of
:class:`svmlab.SMOClassifier` (``SMOStep`` records) on three toy sets: RBF
blobs, RBF with duplicated points (``eta = 0``) and a sigmoid kernel
(``eta < 0``).
"""

from __future__ import annotations

import functools

import numpy as np

from ..smo._pairstep import pair_bounds, pair_step, pair_threshold
from ._core import Case, WrongAnswer, as_float, fmt, quiet_fit, run_cases

__all__ = ["check_take_step", "check_threshold", "check_segment_ends", "take_step_cases",
           "threshold_cases", "segment_ends_cases"]

_STEP_ARGS = ("y1", "y2", "a1", "a2", "E1", "E2", "K11", "K12", "K22", "C")
_THR_ARGS = ("y1", "y2", "a1", "a2", "a1_new", "a2_new", "E1", "E2", "b", "K11", "K12", "K22",
             "C")
_REF_EPS = 1e-12
_REC_C = 1.0  # the C of the recorded SMO fits


def _reference_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    """``(a1_new, a2_new, L, H, eta, a2_unclipped)`` from the package's step.
    ``b`` does not change the step (it cancels in E1 - E2 and in the
    objective difference), so 0 is passed."""
    moved, a1n, a2n, a2u, L, H, eta = pair_step(float(y1), float(y2), float(a1), float(a2),
                                                float(E1), float(E2), 0.0, float(K11),
                                                float(K12), float(K22), float(C), _REF_EPS)
    return a1n, a2n, L, H, eta, a2u


def branch_of_step(args):
    """Which branch of the step a case exercises: ``"point"`` (L == H),
    ``"interior"``, ``"clip-L"``, ``"clip-H"`` (eta > 0), ``"eta<=0 to L"``,
    ``"eta<=0 to H"``, ``"eta<=0 tie"``, or ``"no move"`` (E1 == E2)."""
    a1n, a2n, L, H, eta, a2u = _reference_step(*(args[k] for k in _STEP_ARGS))
    if L >= H:
        return "point"
    if eta > 0:
        if a2u < L:
            return "clip-L"
        if a2u > H:
            return "clip-H"
        return "no move" if a2u == args["a2"] else "interior"
    if a2n == L and L != args["a2"]:
        return "eta<=0 to L"
    if a2n == H and H != args["a2"]:
        return "eta<=0 to H"
    return "eta<=0 tie"


def _ends_gap(y2, a2, E1, E2, eta, L, H):
    """|W(L) - W(H)|: the gain of the dual along the line is
    ``y2 (E1 - E2) d - eta d^2 / 2`` with ``d = a2_new - a2`` (TR eq. 19)."""
    def gain(x):
        d = x - a2
        return y2 * (E1 - E2) * d - 0.5 * eta * d * d
    return abs(gain(L) - gain(H))


# ------------------------------------------------------------------ cases
_HAND = [
    # (label, y1, y2, a1, a2, E1, E2, K11, K12, K22, C)
    ("y1 != y2, step inside the segment", 1, -1, .4, .5, .2, -.1, 1, .5, 1, 1),
    ("y1 == y2, step inside the segment", 1, 1, .3, .4, .1, -.1, 1, .2, 1, 1),
    ("y1 != y2, a2 clipped at H = C", 1, -1, .2, .9, -1, .5, 1, .5, 1, 1),
    ("y1 != y2, a2 clipped at L = a2 - a1 > 0", -1, 1, .6, .8, -.9, .9, 1, .5, 1, 1),
    ("y1 == y2, a2 clipped at H = a1 + a2 < C", 1, 1, .3, .2, 2, -1, 1, .5, 1, 1),
    ("y1 == y2, a2 clipped at L = a1 + a2 - C > 0", -1, -1, .9, .8, 1, -1, 2, .5, 1, 1),
    ("y1 == y2, L == H = 0: nothing can move", 1, 1, 0, 0, .5, -.5, 1, .5, 1, 1),
    ("y1 != y2, L == H = 0: nothing can move", 1, -1, 1, 0, -.5, .5, 1, .5, 1, 1),
    ("eta = 0 (duplicate points), the better end is L", 1, -1, .5, .5, .5, -.3, 1, 1, 1, 1),
    ("eta = 0 (duplicate points), the better end is H", 1, 1, .5, .3, .4, -.2, 1, 1, 1, 1),
    ("eta = 0 and E1 == E2: both ends equally good", 1, -1, .5, .5, .3, .3, 1, 1, 1, 1),
    ("eta < 0 (non-PSD kernel), the better end is H", 1, -1, .2, .3, .1, .05, .5, .8, .5, 1),
    ("eta < 0 (non-PSD kernel), the better end is L", 1, 1, .1, .8, -.3, .2, .5, .8, .5, 1),
    ("E1 == E2 and eta > 0: no change", 1, -1, .3, .6, .2, .2, 1, .3, 1, 1),
    ("C = 10, step inside the segment", -1, 1, 3, 7, .5, -1.5, 2, .5, 1.5, 10),
    ("y1 != y2, both new multipliers end at C", 1, -1, .5, .5, -2, 2, 1, .5, 1, 1),
]


def _hand_step_cases():
    for label, *vals in _HAND:
        args = dict(zip(_STEP_ARGS, [float(v) for v in vals]))
        yield Case("hand-picked: " + label, args, _reference_step(*vals)[:2])


def _random_step_args(rng):
    while True:
        C = float(rng.choice([0.5, 1.0, 10.0]))
        y1, y2 = (float(v) for v in rng.choice([-1.0, 1.0], size=2))

        def draw():
            u = rng.random()
            return 0.0 if u < 0.2 else (C if u < 0.4 else float(rng.uniform(0, C)))

        a1, a2 = draw(), draw()
        if rng.random() < 0.8:  # an RBF kernel on two random points: eta >= 0
            x1, x2 = rng.normal(size=(2, 2))
            g = float(rng.uniform(0.1, 2))
            K11 = K22 = 1.0
            K12 = float(np.exp(-g * np.sum((x1 - x2) ** 2)))
        else:  # a non-PSD pair (eta < 0), as a sigmoid kernel gives
            K11, K22 = (float(v) for v in rng.uniform(0.2, 1, size=2))
            K12 = 0.5 * (K11 + K22) + float(rng.uniform(0.05, 0.5))
        E1, E2 = (float(v) for v in rng.normal(scale=0.7, size=2))
        L, H = pair_bounds(y1, y2, a1, a2, C)
        eta = K11 + K22 - 2 * K12
        if eta <= 0 and L < H and _ends_gap(y2, a2, E1, E2, eta, L, H) < 1e-6:
            continue  # ends too close to call: not a fair case
        return dict(zip(_STEP_ARGS, (y1, y2, a1, a2, E1, E2, K11, K12, K22, C)))


def _random_step_cases(n=30, seed=20):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        args = _random_step_args(rng)
        yield Case(f"random: {branch_of_step(args)}", args, _reference_step(*args.values())[:2])


@functools.lru_cache(maxsize=None)
def recorded_smo_steps():
    """``[(toy name, SMOStep)]``: every step of :class:`svmlab.SMOClassifier`
    on three small 2-D sets (RBF blobs; RBF with duplicated points, which gives
    ``eta = 0``; a sigmoid kernel, which gives ``eta < 0``)."""
    from .. import SMOClassifier
    from ..datasets import toy_2d

    out = []
    Xb, yb = toy_2d("blobs", n=30, random_state=1)
    Xd, yd = toy_2d("duplicates", n=40, random_state=0)
    for name, est, X, y in [
        ("RBF blobs", SMOClassifier(C=_REC_C, kernel="rbf", gamma=0.5, random_state=0), Xb, yb),
        ("duplicated points", SMOClassifier(C=_REC_C, kernel="rbf", gamma=0.5,
                                            random_state=0),
         Xd, yd),
        ("sigmoid kernel", SMOClassifier(C=_REC_C, kernel="sigmoid", gamma=0.5, coef0=0.0,
                                         random_state=0), Xb, yb),
    ]:
        # float64 cached values: the records are replayed by the exact pair step
        est.set_params(progress=False, cache_dtype="float64")
        out += [(name, r) for r in quiet_fit(est, X, y)]
    return tuple(out)


def _recorded_step_cases():
    for name, r in recorded_smo_steps():
        args = dict(zip(_STEP_ARGS, (r.y1, r.y2, r.a1_old, r.a2_old, r.E1, r.E2, r.K11, r.K12,
                                     r.K22, _REC_C)))
        yield Case(f"recorded: SMO step {r.iteration} on {name}", args, (r.a1_new, r.a2_new),
                   {"record": r})


def take_step_cases():
    """Every case of :func:`check_take_step`, in order (a generator: the
    recorded ones fit the solver when reached)."""
    yield from _hand_step_cases()
    yield from _random_step_cases()
    yield from _recorded_step_cases()


# ------------------------------------------------------------------ judging
def _pair(raw, case):
    if isinstance(raw, dict) or np.ndim(raw) != 1 or len(raw) != 2:
        shape = np.shape(raw) if not isinstance(raw, dict) else "a dict"
        raise WrongAnswer(f"return the pair (a1_new, a2_new): a tuple of two numbers, "
                          f"got {type(raw).__name__} of shape {shape}")
    return as_float(raw[0], "a1_new"), as_float(raw[1], "a2_new")


def _step_hint(case, got):
    a = case.args
    C = a["C"]
    tol = 1e-9 * max(1.0, C)
    e1, e2 = case.expected
    g1, g2 = got
    if abs(g1 - e1) <= tol and abs(g2 - e2) <= tol:
        return None
    _, _, L, H, eta, a2u = _reference_step(*(a[k] for k in _STEP_ARGS))
    s = a["y1"] * a["y2"]
    if L >= H:
        return (f"L = {fmt(L)} and H = {fmt(H)}: the segment is a single point, so nothing "
                f"can move; return the old values (a1, a2).")
    if g2 < L - tol or g2 > H + tol:
        side = f"{fmt(g2)} > H = {fmt(H)}" if g2 > H else f"{fmt(g2)} < L = {fmt(L)}"
        # the rule of L and H is Exercise 1's answer: the numbers only
        return (f"a2 must be clipped to [L, H]: you returned {side}. On this case "
                f"(y1 {'!=' if a['y1'] != a['y2'] else '=='} y2) the segment is [L, H] = "
                f"[{fmt(L)}, {fmt(H)}]: the ends your segment_ends (Exercise 1) returns.")
    if abs(g2 - e2) > tol:
        if eta <= 0:
            return (f"eta = K11 + K22 - 2 K12 = {fmt(eta)} <= 0: the objective has no maximum "
                    f"inside the segment. Evaluate it at a2 = L = {fmt(L)} and a2 = H = "
                    f"{fmt(H)} (TR eq. 19) and move to the better end (stay if they are equal).")
        flipped = min(max(a["a2"] - a["y2"] * (a["E1"] - a["E2"]) / eta, L), H)
        if abs(g2 - flipped) <= tol:
            return ("wrong sign: with E = f(x) - y and eta = K11 + K22 - 2 K12 > 0, the "
                    "unconstrained maximum is a2 + y2 (E1 - E2) / eta (TR eq. 16).")
        return (f"the unconstrained maximum is a2 + y2 (E1 - E2) / eta = {fmt(a2u)} with "
                f"eta = {fmt(eta)}; clipped to [L, H] = [{fmt(L)}, {fmt(H)}] it is {fmt(e2)}.")
    wrong_s = a["a1"] - s * (a["a2"] - g2)
    if abs(g1 - wrong_s) <= tol:
        return (f"a2 is right, but a1 moved the wrong way: it must keep y1 a1 + y2 a2 "
                f"constant (TR eq. 18), which gives a1_new = {fmt(e1)} here "
                f"(y1 y2 = {fmt(s)}).")
    return (f"a2 is right, but a1 is not: a1_new = {fmt(e1)} keeps y1 a1 + y2 a2 constant "
            f"(TR eq. 18; here y1 y2 = {fmt(s)}), as in Exercise 1.")


def check_take_step(student_fn):
    """Check ``student_fn(y1, y2, a1, a2, E1, E2, K11, K12, K22, C) ->
    (a1_new, a2_new)`` against the package's analytic step on hand-picked
    edge cases, random cases and every recorded step of three SMO fits.
    Returns an :class:`~svmlab.exercises.ExerciseResult`."""
    return run_cases("take_step", student_fn, take_step_cases(), _pair, _step_hint,
                     exercise_id="01.take_step",
                     show_expected=lambda c: "(a1_new, a2_new) = (%s, %s)" % tuple(
                         fmt(v) for v in c.expected))


# ------------------------------------------------------------------ segment ends
_ENDS_ARGS = ("y1", "y2", "a1", "a2", "C")


def _box_gap(y1, y2, a1, a2, a2_new, C):
    """How far the pair ``(a1_new, a2_new)`` on the constraint line lies
    outside the box ``[0, C]^2`` (0 inside)."""
    a1_new = a1 + y1 * y2 * (a2 - a2_new)
    return max(0.0, -a1_new, a1_new - C, -a2_new, a2_new - C)


def _ends_cases():
    hand = [
        ("y1 != y2, both multipliers inside the box", 1, -1, .4, .5, 1),
        ("y1 == y2, both multipliers inside the box", 1, 1, .3, .4, 1),
        ("y1 != y2, a1 > a2", -1, 1, .8, .3, 1),
        ("y1 == y2, a1 + a2 > C", -1, -1, .9, .8, 1),
        ("y1 == y2, both at 0: the segment is one point", 1, 1, 0, 0, 1),
        ("y1 != y2, a1 = C and a2 = 0: the segment is one point", 1, -1, 1, 0, 1),
        ("y1 == y2, both at C: the segment is one point", 1, 1, 1, 1, 1),
        ("y1 != y2, a1 = a2: the whole diagonal of the box", 1, -1, .5, .5, 1),
        ("y1 == y2, a1 + a2 = C: the whole anti-diagonal", 1, 1, .25, .75, 1),
        ("C = 10, y1 != y2", -1, 1, 3, 7, 10),
        ("C = 10, y1 == y2", 1, 1, 3, 4, 10),
        ("C = 0.5, y1 == y2, a1 at C", -1, -1, .5, .2, .5),
    ]
    for label, *vals in hand:
        args = dict(zip(_ENDS_ARGS, [float(v) for v in vals]))
        yield Case("hand-picked: " + label, args, pair_bounds(*args.values()))
    rng = np.random.default_rng(23)
    for _ in range(25):
        a = _random_step_args(rng)
        args = {k: a[k] for k in _ENDS_ARGS}
        lab = "y1 == y2" if args["y1"] == args["y2"] else "y1 != y2"
        yield Case(f"random: {lab}, C = {fmt(args['C'])}", args, pair_bounds(*args.values()))
    for name, r in recorded_smo_steps():
        args = dict(zip(_ENDS_ARGS, (r.y1, r.y2, r.a1_old, r.a2_old, _REC_C)))
        yield Case(f"recorded: SMO step {r.iteration} on {name}", args, (r.L, r.H),
                   {"record": r})


def segment_ends_cases():
    """Every case of :func:`check_segment_ends`, in order."""
    yield from _ends_cases()


def _ends_hint(case, got):
    """None when ``got = (L, H)`` has the properties of the segment's ends:
    the current pair lies on it, both ends lie in the box, and a little
    beyond either end the pair leaves the box (the segment is as long as
    the box allows).  The check never uses the formula of the ends."""
    a = case.args
    y1, y2, a1, a2, C = (a[k] for k in _ENDS_ARGS)
    L, H = got
    tol = 1e-12 * max(1.0, C)
    step = 1e-7 * max(1.0, C)
    s = y1 * y2
    line = ("a1 + a2 stays equal to " + fmt(a1 + a2)) if s > 0 else \
        ("a1 - a2 stays equal to " + fmt(a1 - a2))
    if L > H + tol:
        return f"L = {fmt(L)} > H = {fmt(H)}: L is the lower end of the segment."
    if not (L - tol <= a2 <= H + tol):
        return (f"the pair before the step, a2 = {fmt(a2)}, must lie on its own segment, "
                f"but it is outside [L, H] = [{fmt(L)}, {fmt(H)}].")
    for end, v in (("L", L), ("H", H)):
        if _box_gap(y1, y2, a1, a2, v, C) > tol:
            a1v = a1 + s * (a2 - v)
            return (f"at a2 = {end} = {fmt(v)} the partner is a1 = {fmt(a1v)} (on the line, "
                    f"{line}), and the pair ({fmt(a1v)}, {fmt(v)}) is outside the box "
                    f"[0, C]^2 with C = {fmt(C)}: both multipliers must stay in [0, C].")
    for end, v in (("L", L - step), ("H", H + step)):
        if _box_gap(y1, y2, a1, a2, v, C) <= tol:
            a1v = a1 + s * (a2 - v)
            return (f"the segment is longer: just beyond {end}, at a2 = {fmt(v)} with "
                    f"a1 = {fmt(a1v)} ({line}), both multipliers are still inside [0, C]. An "
                    f"end is where the line leaves the box: one of a1, a2 reaches 0 or C.")
    return None


def check_segment_ends(student_fn):
    """Check ``student_fn(y1, y2, a1, a2, C) -> (L, H)``, the ends of the
    feasible segment of ``a2``, by their properties (the current pair lies
    on the segment, both ends are in the box, the segment cannot be longer),
    on hand-picked, random and recorded cases.  Returns an
    :class:`~svmlab.exercises.ExerciseResult`."""
    def pair(raw, case):
        if isinstance(raw, dict) or np.ndim(raw) != 1 or len(raw) != 2:
            raise WrongAnswer(f"return the pair (L, H): two numbers, got {type(raw).__name__}")
        return as_float(raw[0], "L"), as_float(raw[1], "H")

    return run_cases("segment_ends", student_fn, segment_ends_cases(), pair, _ends_hint,
                     lambda c: "(L, H) = (%s, %s)" % tuple(fmt(v) for v in c.expected),
                     exercise_id="01.segment_ends")


# ------------------------------------------------------------------ threshold
def _b1_b2(a):
    d1 = a["y1"] * (a["a1_new"] - a["a1"])
    d2 = a["y2"] * (a["a2_new"] - a["a2"])
    b1 = a["b"] - a["E1"] - d1 * a["K11"] - d2 * a["K12"]
    b2 = a["b"] - a["E2"] - d1 * a["K12"] - d2 * a["K22"]
    return b1, b2


def branch_of_threshold(args):
    """``"b1"`` (a1_new inside (0, C)), ``"b2"`` (only a2_new inside) or
    ``"average"`` (both at a bound)."""
    C = args["C"]
    if 0 < args["a1_new"] < C:
        return "b1"
    if 0 < args["a2_new"] < C:
        return "b2"
    return "average"


def _threshold_case(label, step_args, b):
    a = dict(step_args)
    a1n, a2n = _reference_step(*(a[k] for k in _STEP_ARGS))[:2]
    args = {k: a[k] for k in ("y1", "y2", "a1", "a2")}
    args.update(a1_new=a1n, a2_new=a2n, E1=a["E1"], E2=a["E2"], b=float(b), K11=a["K11"],
                K12=a["K12"], K22=a["K22"], C=a["C"])
    exp = pair_threshold(*(float(args[k]) for k in _THR_ARGS))
    return Case(f"{label}: uses {branch_of_threshold(args)}", args, exp)


def threshold_cases():
    """Every case of :func:`check_threshold`, in order: the new multipliers of
    the hand-picked and random take_step cases that move, then the recorded
    SMO steps (their ``b_old`` and ``b_new``)."""
    for k, c in enumerate(_hand_step_cases()):
        if branch_of_step(c.args) in ("point", "no move", "eta<=0 tie"):
            continue
        yield _threshold_case(c.label, c.args, (-0.3, 0.0, 0.25, 1.5)[k % 4])
    rng = np.random.default_rng(21)
    for c in _random_step_cases(seed=22):
        yield _threshold_case(c.label, c.args, float(rng.normal()))
    for name, r in recorded_smo_steps():
        args = dict(zip(_THR_ARGS, (r.y1, r.y2, r.a1_old, r.a2_old, r.a1_new, r.a2_new, r.E1,
                                    r.E2, r.b_old, r.K11, r.K12, r.K22, _REC_C)))
        yield Case(f"recorded: SMO step {r.iteration} on {name}: uses "
                   f"{branch_of_threshold(args)}", args, r.b_new, {"record": r})


def _threshold_hint(case, got):
    a = case.args
    b1, b2 = _b1_b2(a)
    scale = 1.0 + abs(b1) + abs(b2) + abs(a["b"])
    tol = 1e-9 * scale
    same = lambda x, y: abs(x - y) <= tol  # noqa: E731
    branch = branch_of_threshold(a)
    if same(got, case.expected) or (branch == "b1" and 0 < a["a2_new"] < a["C"]
                                    and same(got, b2)):
        return None
    C = a["C"]
    parts = f"b1 = {fmt(b1)}, b2 = {fmt(b2)}"
    if branch == "b1":
        why = (f"a1_new = {fmt(a['a1_new'])} is strictly inside (0, C = {fmt(C)}), so b must "
               f"be b1, which makes the new E1 zero (TR eq. 20)")
    elif branch == "b2":
        why = (f"a1_new = {fmt(a['a1_new'])} is at a bound but a2_new = {fmt(a['a2_new'])} is "
               f"strictly inside (0, C = {fmt(C)}), so b must be b2 (TR eq. 21)")
    else:
        why = (f"both a1_new = {fmt(a['a1_new'])} and a2_new = {fmt(a['a2_new'])} are at a "
               f"bound: every b between b1 and b2 is consistent, and svmlab takes their "
               f"average (b1 + b2) / 2")
    # one of the three candidates, but the wrong one: the choice is the mistake
    # (checked before the sign: a b1 that happens to equal a sign-flipped value
    # is still a choice of b1)
    if same(got, b1) or same(got, b2) or same(got, 0.5 * (b1 + b2)):
        return f"{why}. ({parts}.)"
    # Platt's TR writes u = w.x - b: all signs of b1, b2 flip
    d1 = a["y1"] * (a["a1_new"] - a["a1"])
    d2 = a["y2"] * (a["a2_new"] - a["a2"])
    p1 = a["E1"] + d1 * a["K11"] + d2 * a["K12"] + a["b"]
    p2 = a["E2"] + d1 * a["K12"] + d2 * a["K22"] + a["b"]
    if any(same(got, v) for v in (p1, p2, 0.5 * (p1 + p2))):
        return ("sign convention: Platt's TR writes u = w.x - b, svmlab writes f = ... + b, so "
                "every sign of b in Platt's b1 and b2 flips; derive b1 from E1 = f(x1) - y1 "
                f"with svmlab's f. ({parts}.)")
    # the rule of b1 and b2 is the exercise's answer: the numbers only
    return (f"{parts}: b1 is the b that makes the new E1 zero once f has changed by "
            f"d1 K(x1, .) + d2 K(x2, .), with d1 = y1 (a1_new - a1) = {fmt(d1)} and "
            f"d2 = y2 (a2_new - a2) = {fmt(d2)}; b2 the same for E2. {why}.")


def check_threshold(student_fn):
    """Check ``student_fn(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12,
    K22, C) -> b_new`` against :func:`svmlab.smo._pairstep.pair_threshold` and the
    recorded ``b_new`` of three SMO fits."""
    return run_cases("threshold", student_fn, threshold_cases(),
                     lambda raw, case: as_float(raw, "b_new"), _threshold_hint,
                     exercise_id="01.threshold")
