"""Exercise for ``notebooks/03_cutting_plane``: the most violated constraint
of Joachims' Algorithm 1 (KDD 2006, OP2).

Student functions::

    most_violated(X, y, w) -> (c, g, d)
    working_set_slack(G, d, w) -> xi

``X`` is a dense (n, p) array, ``y`` (n,) labels in {-1, +1}, ``w`` (p,).
The bias is not a separate argument: as in the solver, it is a constant
feature, so a model with bias is checked by appending a column of ones to X
and the bias to w.  The answer:

* ``c``: (n,) array of 0/1 (or bools), ``c_i = 1`` exactly when
  ``y_i w.x_i < 1`` (strictly: an example *on* the margin is not violated);
* ``g = (1/n) sum_i c_i y_i x_i``, shape (p,);
* ``d = (1/n) sum_i c_i`` (a number),

so that the constraint of OP2 reads ``w'g >= d - xi`` and its slack at w is
``xi' = d - w'g`` (the average hinge loss).

``working_set_slack``: the working set W holds K constraints, the rows of
``G`` (K, p) and the offsets ``d`` (K,); return the slack of OP3 at w,
``xi = max(0, max_k (d_k - w'g_k))`` (a Python float; 0 for an empty working
set, K = 0).  Algorithm 1 adds the most violated constraint only when its
slack ``xi'`` exceeds this ``xi`` by more than epsilon.

Reference: a direct NumPy evaluation of those formulas; recorded cases
replay every iteration of :class:`svmlab.CuttingPlaneClassifier` on two 2-D
toy sets (``CuttingPlaneRecord``: ``constraint``, ``constraint_offset``,
``constraint_norm``, ``xi_new``; for the slack, the working set of the
constraints of the earlier iterations and the record's ``xi``).  Records in
which some margin lies within 1e-9 of 1 are left out of ``most_violated``'s
cases (the solver's compiled dot product may round such a margin to the
other side).
"""

from __future__ import annotations

import functools

import numpy as np

from ._core import Case, WrongAnswer, as_float, fmt, fmt_array, quiet_fit, run_cases

__all__ = ["check_most_violated", "most_violated_cases", "reference_most_violated",
           "check_working_set_slack", "slack_cases", "check_one_plane_qp", "one_plane_cases",
           "one_plane_objective", "reference_one_plane"]


def reference_most_violated(X, y, w):
    """``(c, g, d)`` by the formulas of Algorithm 1 (the checker's reference)."""
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    n = X.shape[0]
    margin = y * (X @ np.asarray(w, float))
    c = margin < 1.0
    g = (c * y) @ X / n if n else np.zeros(X.shape[1])
    d = float(c.sum()) / n if n else 0.0
    return c, g, d


def _case(label, X, y, w, extra=None):
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    w = np.asarray(w, float)
    return Case(label, {"X": X, "y": y, "w": w}, reference_most_violated(X, y, w), extra or {})


def _hand_cases():
    X = np.array([[2.0, 0.0], [0.0, 1.0], [-1.0, -1.0], [0.5, 0.5], [-2.0, 1.0]])
    y = np.array([1.0, 1.0, -1.0, 1.0, -1.0])
    yield _case("hand-picked: w = 0, every example violates its constraint", X, y, [0.0, 0.0])
    yield _case("hand-picked: all margins > 1, the constraint is empty (c = 0, g = 0, d = 0)",
                X, y, [3.0, 3.0])
    # margins y_i w.x_i for w = (1, 1): 2, 1, 2, 1, 1 -> examples 1, 3, 4 exactly on the margin
    yield _case("hand-picked: three examples exactly on the margin (y w.x = 1): not violated",
                X, y, [1.0, 1.0])
    yield _case("hand-picked: a mix of misclassified, inside the margin and safe",
                X, y, [0.5, -0.25])
    Xd = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [-1.0, 0.5]])
    yd = np.array([1.0, -1.0, 1.0, -1.0])
    yield _case("hand-picked: duplicated points with both labels", Xd, yd, [0.4, 0.1])
    yield _case("hand-picked: a single example", [[1.5, -0.5]], [-1.0], [0.2, 0.3])
    Xb = np.hstack([X, np.ones((5, 1))])
    yield _case("hand-picked: bias as a constant feature (last column of ones)",
                Xb, y, [0.5, 0.5, -0.5])


def _random_cases(n_cases=12, seed=30):
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        n = int(rng.integers(2, 40))
        p = int(rng.integers(1, 6))
        X = rng.normal(size=(n, p))
        y = rng.choice([-1.0, 1.0], size=n)
        w = rng.normal(scale=float(rng.choice([0.3, 1.0, 3.0])), size=p)
        yield _case(f"random: n = {n}, {p} features", X, y, w)


@functools.lru_cache(maxsize=None)
def recorded_cutting_plane_iterations():
    """``[(toy name, X with a ones column, y in {-1, 1}, CuttingPlaneRecord)]``
    for every iteration of :class:`svmlab.CuttingPlaneClassifier` on two
    small 2-D sets."""
    from .. import CuttingPlaneClassifier
    from ..datasets import toy_2d

    out = []
    for name, kind, C in [("blobs", "blobs", _CP_C["blobs"]), ("xor", "xor", _CP_C["xor"])]:
        X, y = toy_2d(kind, n=40, random_state=3)
        est = CuttingPlaneClassifier(C=C, epsilon=1e-4, progress=False)
        Xb = np.hstack([X, np.ones((X.shape[0], 1))])
        out += [(name, Xb, np.asarray(y, float), r) for r in quiet_fit(est, X, y)]
    return tuple(out)


def _recorded_cases():
    for name, Xb, y, r in recorded_cutting_plane_iterations():
        w = np.append(r.w, r.b)
        margin = y * (Xb @ w)
        if np.any(np.abs(margin - 1.0) < 1e-9):
            continue
        exp = (np.asarray(r.constraint, bool), None, r.constraint_offset)
        yield Case(f"recorded: iteration {r.iteration} of Algorithm 1 on {name} "
                   f"(bias as the last column of X)", {"X": Xb, "y": y, "w": w}, exp,
                   {"record": r})


def most_violated_cases():
    """Every case of :func:`check_most_violated`, in order."""
    yield from _hand_cases()
    yield from _random_cases()
    yield from _recorded_cases()


def _normalise(raw, case):
    n, p = case.args["X"].shape
    if not isinstance(raw, (tuple, list)) or len(raw) != 3:
        raise WrongAnswer(f"return the triple (c, g, d), got {type(raw).__name__}"
                          + (f" of length {len(raw)}" if isinstance(raw, (tuple, list)) else ""))
    c, g, d = raw
    c = np.asarray(c)
    mask_note = " (a 0/1 mask over all n examples, not the indices of the violated ones)"
    if c.shape != (n,):
        raise WrongAnswer(f"c must have shape (n,) = ({n},), one entry per example{mask_note}; "
                          f"got shape {c.shape}")
    if c.size and not np.all((c == 0) | (c == 1)):
        raise WrongAnswer(f"c must hold 0/1 (or True/False){mask_note}; got {fmt_array(c)}")
    try:
        g = np.asarray(g, float)
    except (TypeError, ValueError):
        raise WrongAnswer(f"g must be an array of numbers, got {type(g).__name__}") from None
    if g.shape != (p,):
        raise WrongAnswer(f"g must have shape (p,) = ({p},), one entry per feature; got shape "
                          f"{g.shape}")
    return c.astype(bool), g, as_float(d, "d")


def _hint(case, got):
    X, y, w = case.args["X"], case.args["y"], case.args["w"]
    n = X.shape[0]
    c_ref, g_ref, d_ref = reference_most_violated(X, y, w)
    rec = case.extra.get("record")
    c_exp, _, d_exp = case.expected
    c, g, d = got
    margin = y * (X @ w)
    if not np.array_equal(c, c_exp):
        i = int(np.flatnonzero(c != c_exp)[0])
        m = margin[i]
        head = (f"c[{i}]: expected {int(c_exp[i])}, you returned {int(c[i])}; the margin of "
                f"example {i} is y_{i} w.x_{i} = {fmt(m)}")
        if np.array_equal(c, margin <= 1.0):
            return head + (". An example exactly on the margin (y w.x = 1) is not violated: "
                           "c_i = 1 only when y_i w.x_i < 1 (strictly).")
        if np.array_equal(c, margin < 0.0) or np.array_equal(c, margin <= 0.0):
            return head + (". A constraint is violated when the margin is below 1 (inside the "
                           "margin), not only when the example is misclassified (< 0).")
        if np.array_equal(c, margin >= 1.0) or np.array_equal(c, margin > 1.0):
            return head + ". The test is flipped: c_i = 1 when y_i w.x_i < 1."
        if np.array_equal(c, (X @ w) < 1.0):
            return head + ". The margin needs the label: y_i (w.x_i), not w.x_i."
        return head + f", so c_{i} should be {int(m < 1.0)} (c_i = 1 when y_i w.x_i < 1)."
    tol = 1e-9 * (1.0 + np.abs(X).sum(axis=0).max(initial=0.0) / max(n, 1))
    if abs(d - d_exp) > 1e-12:
        if abs(d - d_exp * n) <= 1e-9:
            return f"d = {fmt(d)} is sum c_i; divide by n = {n}: d = (1/n) sum_i c_i."
        return f"d must be (1/n) sum_i c_i = {fmt(d_exp)} (the fraction of violated examples)."
    bad = np.abs(g - g_ref) > tol
    if bad.any() or (rec is not None and abs(np.linalg.norm(g) - rec.constraint_norm) > tol):
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
        else:
            j = 0
        where = f"g[{j}]: expected {fmt(g_ref[j])}, you returned {fmt(g[j])}"
        if np.allclose(g, g_ref * n, atol=tol):
            return f"{where}. Divide by n = {n}: g = (1/n) sum_i c_i y_i x_i."
        if np.allclose(g, -g_ref, atol=tol):
            return f"{where}. Wrong sign: g = + (1/n) sum_i c_i y_i x_i."
        if n and np.allclose(g, (c_ref * 1.0) @ X / n, atol=tol):
            return f"{where}. Each violated x_i must be multiplied by its label y_i."
        if n and np.allclose(g, y @ X / n, atol=tol):
            return f"{where}. Only the violated examples (c_i = 1) enter g."
        return f"{where}. g = (1/n) sum_i c_i y_i x_i."
    return None


def _show_expected(case):
    X, y, w = case.args["X"], case.args["y"], case.args["w"]
    c, g, d = reference_most_violated(X, y, w)
    return (f"c = {fmt_array(c.astype(int), 20)}, g = {fmt_array(g)}, d = {fmt(d)}")


def _show_got(got, case):
    c, g, d = got
    return f"c = {fmt_array(c.astype(int), 20)}, g = {fmt_array(g)}, d = {fmt(d)}"


def check_most_violated(student_fn):
    """Check ``student_fn(X, y, w) -> (c, g, d)`` (the most violated
    constraint of OP2) on hand-picked, random and recorded cases."""
    return run_cases("most_violated", student_fn, most_violated_cases(), _normalise, _hint,
                     _show_expected, _show_got, exercise_id="03.most_violated")


# ------------------------------------------------------------------ OP3 slack
def reference_slack(G, d, w):
    """``max(0, max_k d_k - w'g_k)`` (0 for an empty working set)."""
    G = np.asarray(G, float)
    if G.shape[0] == 0:
        return 0.0
    return max(0.0, float(np.max(np.asarray(d, float) - G @ np.asarray(w, float))))


def _scase(label, G, d, w, extra=None):
    G = np.asarray(G, float).reshape(len(d), -1) if len(d) else np.zeros((0, len(w)))
    d = np.asarray(d, float)
    w = np.asarray(w, float)
    return Case(label, {"G": G, "d": d, "w": w}, reference_slack(G, d, w), extra or {})


def _hand_slack_cases():
    yield _scase("hand-picked: empty working set (K = 0): xi = 0", [], [], [1.0, 2.0])
    yield _scase("hand-picked: one constraint, violated by 0.5", [[1.0, 0.0]], [1.0], [0.5, 3.0])
    yield _scase("hand-picked: every constraint satisfied: xi = 0 (xi >= 0)",
                 [[1.0, 1.0], [0.5, -0.5]], [0.2, 0.1], [1.0, 0.0])
    yield _scase("hand-picked: the largest slack is the last constraint",
                 [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], [0.5, 0.6, 0.9], [0.2, 0.4])
    yield _scase("hand-picked: w = 0: xi = the largest offset", [[0.3, 0.1], [0.2, 0.2]],
                 [0.4, 0.75], [0.0, 0.0])
    yield _scase("hand-picked: a duplicated constraint", [[0.3, 0.1], [0.3, 0.1]],
                 [0.5, 0.5], [1.0, -1.0])


def _random_slack_cases(n_cases=10, seed=31):
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        K = int(rng.integers(1, 8))
        p = int(rng.integers(1, 5))
        G = rng.normal(scale=0.5, size=(K, p))
        d = rng.uniform(0, 1, size=K)
        w = rng.normal(size=p)
        yield _scase(f"random: {K} constraints, {p} features", G, d, w)


def _recorded_slack_cases():
    work_g, work_d = {}, {}
    for name, Xb, y, r in recorded_cutting_plane_iterations():
        if r.iteration == 1:
            work_g[name], work_d[name] = [], []
        G = np.array(work_g[name]).reshape(len(work_g[name]), Xb.shape[1])
        w = np.append(r.w, r.b)
        yield Case(f"recorded: iteration {r.iteration} of Algorithm 1 on {name}: the working "
                   f"set of the {len(work_d[name])} earlier constraints",
                   {"G": G, "d": np.array(work_d[name], float), "w": w}, r.xi, {"record": r})
        # this iteration's constraint joins the working set (Algorithm 1)
        c = np.asarray(r.constraint, bool)
        n = Xb.shape[0]
        work_g[name].append((c * y) @ Xb / n)
        work_d[name].append(c.sum() / n)


def slack_cases():
    """Every case of :func:`check_working_set_slack`, in order."""
    yield from _hand_slack_cases()
    yield from _random_slack_cases()
    yield from _recorded_slack_cases()


def _slack_hint(case, got):
    G, d, w = case.args["G"], case.args["d"], case.args["w"]
    exp = case.expected
    if abs(got - exp) <= 1e-9 * (1.0 + abs(exp)):
        return None
    if len(d) == 0:
        return "an empty working set constrains nothing: xi = 0."
    v = d - G @ w
    if got < 0:
        return (f"xi is a slack, never negative: xi = max(0, max_k (d_k - w'g_k)); here every "
                f"d_k - w'g_k is <= 0, so xi = 0.")
    if abs(got - float(np.min(v))) <= 1e-9 * (1 + abs(got)):
        return "take the largest d_k - w'g_k (the most violated constraint), not the smallest."
    if abs(got - float(np.max(G @ w - d))) <= 1e-9 * (1 + abs(got)):
        return "wrong sign: the slack of constraint k is d_k - w'g_k."
    k = int(np.argmax(v))
    return (f"xi = max(0, max_k (d_k - w'g_k)); the largest is constraint k = {k}: "
            f"d_k - w'g_k = {fmt(v[k])}.")


def check_working_set_slack(student_fn):
    """Check ``student_fn(G, d, w) -> xi`` (the OP3 slack at w) on
    hand-picked, random and recorded cases."""
    return run_cases("working_set_slack", student_fn, slack_cases(),
                     lambda raw, case: as_float(raw, "xi"), _slack_hint,
                     lambda c: f"xi = {fmt(c.expected)}", lambda g, c: f"xi = {fmt(g)}",
                     exercise_id="03.working_set_slack")


# ------------------------------------------------------------------ OP3 with one plane
def one_plane_objective(w, g, d, C):
    """``1/2 |w|^2 + C max(0, d - w'g)``: OP3 with the single plane (g, d)."""
    w = np.asarray(w, float)
    return 0.5 * float(w @ w) + C * max(0.0, float(d) - float(w @ np.asarray(g, float)))


def reference_one_plane(g, d, C):
    """The minimiser of :func:`one_plane_objective` (the checker's yardstick:
    it is compared by objective value, never entry by entry)."""
    g = np.asarray(g, float)
    gg = float(g @ g)
    if d <= 0 or gg == 0.0:
        return np.zeros_like(g)
    return min(C, d / gg) * g


def _pcase(label, g, d, C, extra=None):
    g = np.asarray(g, float)
    return Case(label, {"g": g, "d": float(d), "C": float(C)},
                reference_one_plane(g, d, C), extra or {})


def one_plane_cases():
    """Every case of :func:`check_one_plane_qp`, in order: hand-picked,
    random, and the first plane of every recorded Algorithm 1 fit (whose
    second iterate ``w`` is the solution of exactly this problem)."""
    yield _pcase("hand-picked: the plane is already satisfied at w = 0 (d <= 0)",
                 [1.0, 2.0], -0.5, 10.0)
    yield _pcase("hand-picked: d = 0", [0.5, -0.5], 0.0, 1.0)
    yield _pcase("hand-picked: a large C: the plane is met exactly, w'g = d",
                 [0.6, 0.8], 0.5, 100.0)
    yield _pcase("hand-picked: a small C: the price C binds before the plane is met",
                 [0.6, 0.8], 0.5, 0.1)
    yield _pcase("hand-picked: C exactly at the kink d / |g|^2", [3.0, 4.0], 0.5, 0.02)
    yield _pcase("hand-picked: g = 0: no w changes the slack", [0.0, 0.0, 0.0], 0.7, 5.0)
    yield _pcase("hand-picked: one feature", [2.0], 1.0, 1.0)
    rng = np.random.default_rng(32)
    for _ in range(12):
        p = int(rng.integers(1, 6))
        g = rng.normal(scale=float(rng.choice([0.1, 1.0])), size=p)
        d = float(rng.uniform(-0.2, 1.0))
        C = float(10 ** rng.uniform(-2, 3))
        yield _pcase(f"random: {p} features, C = {fmt(C)}", g, d, C)
    seen = set()
    for name, Xb, y, r in recorded_cutting_plane_iterations():
        if r.iteration != 1 or name in seen:
            continue
        seen.add(name)
        c = np.asarray(r.constraint, bool)
        g = (c * y) @ Xb / len(y)
        yield _pcase(f"recorded: the first plane of Algorithm 1 on {name} (its next w)",
                     g, r.constraint_offset, _CP_C[name], {"record": r})


#: the C of the recorded fits (see recorded_cutting_plane_iterations)
_CP_C = {"blobs": 20.0, "xor": 50.0}


def _one_plane_normalise(raw, case):
    p = case.args["g"].shape[0]
    try:
        w = np.asarray(raw, float)
    except (TypeError, ValueError):
        raise WrongAnswer(f"w must be an array of numbers, got {type(raw).__name__}") from None
    if w.shape != (p,):
        raise WrongAnswer(f"w must have the shape of g, ({p},); got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise WrongAnswer("w must be finite")
    return w


def _one_plane_hint(case, w):
    """None when ``w`` attains the minimum of the objective (within 1e-9,
    relative); else which optimality property it breaks."""
    g, d, C = case.args["g"], case.args["d"], case.args["C"]
    best = reference_one_plane(g, d, C)
    F, F_best = one_plane_objective(w, g, d, C), one_plane_objective(best, g, d, C)
    if F <= F_best + 1e-9 * (1.0 + abs(F_best)):
        return None
    head = f"your w gives the objective {fmt(F)}, but {fmt(F_best)} is reachable"
    gg = float(g @ g)
    if gg == 0.0 or d <= 0:
        return (f"{head}. Here no w can lower the slack term below "
                f"C max(0, d) = {fmt(C * max(0.0, d))} (d <= 0 or g = 0), so only 1/2 |w|^2 "
                f"is left to minimise.")
    t = float(w @ g) / gg
    orth = w - t * g
    if float(orth @ orth) > 1e-12 * (1.0 + float(w @ w)):
        return (f"{head}. Your w has a part orthogonal to g: it adds to 1/2 |w|^2 and changes "
                f"nothing else (the slack depends on w only through w'g), so the optimum is a "
                f"multiple t g of g.")
    slack = d - float(w @ g)
    if t < 0:
        return f"{head}. Your w = t g has t = {fmt(t)} < 0: it makes the slack larger."
    if slack > 1e-12 and t < C - 1e-12 * C:
        return (f"{head}. With w = t g (t = {fmt(t)}) the plane is still violated (slack "
                f"{fmt(slack)} > 0): growing t lowers the objective at rate C - t = "
                f"{fmt(C - t)} per unit of t |g|^2, as long as the slack is positive.")
    if slack < -1e-12:
        return (f"{head}. With w = t g (t = {fmt(t)}) the plane holds with room to spare "
                f"(w'g = {fmt(float(w @ g))} > d = {fmt(d)}): the slack term is 0 already, "
                f"and a shorter w lowers 1/2 |w|^2.")
    return (f"{head}. With w = t g (t = {fmt(t)}) the slack is still positive, but the price "
            f"of a violation is only C = {fmt(C)} per unit: beyond t = C, growing w costs more "
            f"in 1/2 |w|^2 than it saves.")


def check_one_plane_qp(student_fn):
    """Check ``student_fn(g, d, C) -> w``, the minimiser of
    ``1/2 |w|^2 + C max(0, d - w'g)`` (OP3 with one plane), by its
    objective value on hand-picked, random and recorded cases (the first
    plane of an Algorithm 1 fit, whose next iterate is this minimiser)."""
    return run_cases("one_plane_qp", student_fn, one_plane_cases(), _one_plane_normalise,
                     _one_plane_hint, lambda c: "w = " + fmt_array(c.expected),
                     lambda w, c: "w = " + fmt_array(w), exercise_id="03.one_plane_qp")
