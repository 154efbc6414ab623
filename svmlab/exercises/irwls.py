"""Exercises for ``notebooks/05_irwls``: the IRWLS weights of eq. (8) and the
reordering of the sets S1, S2, S3 (Table 1, rules a-d) of Perez-Cruz et al.,
"Fast Training of Support Vector Classifiers", NIPS 2000.

Student functions::

    irwls_weights(ye, C) -> a
    reorder_sets(sets, y_beta, ye, C, tol) -> new_sets

``irwls_weights``: ``ye`` is an array of ``e_i y_i = 1 - y_i f(x_i)``; return
the array of weights of eq. (8), same shape: ``0`` where ``e y < 0`` (S2),
``C / (e y)`` where ``e y > 0`` (S3) and ``np.inf`` where ``e y == 0`` (S1,
the sample sits on the margin; -0.0 counts as 0).

``reorder_sets``: ``sets`` (m,) ints, 1 = S1, 2 = S2, 3 = S3 (the sets
before the reordering); ``y_beta`` (m,) the values ``y_i beta_i`` after
solving (3) (on S1 they may leave the box ``[0, C]``); ``ye`` (m,) the new
``e_i y_i``.  Return the new sets (a new int array):

* rule a: a sample of S1 with ``y beta < 0`` moves to S2;
* rule b: a sample of S1 with ``y beta > C`` moves to S3;
* only if rules a and b moved nobody: rule c, a sample of S2 with
  ``e y > tol`` moves to S1, and rule d, a sample of S3 with ``e y < -tol``
  moves to S1.

All comparisons are strict.  That rules c/d wait until a/b are quiet is the
implementation's reading of Table 1 (svmlab's
:class:`svmlab.decomposition._engines.ActiveSetSubproblem`, ``rule="irwls"``): the
samples a/b remove from S1 change the solution of (3) and so every error.

References: :func:`svmlab.viz.irwls.irwls_weight` for eq. (8); a direct
evaluation of rules a-d for the reordering.  Recorded cases replay
:class:`svmlab.IRWLSClassifier` on three toy sets: the ``ye`` of every record for
the weights; for the reordering, every Table-1 iteration in which rules a/b
moved nobody (``record.moved[:2] == (0, 0)``), with the sets of the
previous record of the same chunk as input and the record's ``sets`` as the
expected answer (the sub-problem's tolerance is ``0.9 tol``).
"""

from __future__ import annotations

import functools

import numpy as np

from ..viz.irwls import irwls_weight
from ._core import Case, WrongAnswer, fmt, fmt_array, quiet_fit, run_cases

__all__ = ["check_irwls_weights", "check_reorder", "weights_cases", "reorder_cases",
           "reference_reorder"]

S1, S2, S3 = 1, 2, 3
_SET = {S1: "S1", S2: "S2", S3: "S3"}


# ------------------------------------------------------------------ weights
def _wcase(label, ye, C, extra=None):
    ye = np.asarray(ye, float)
    return Case(label, {"ye": ye, "C": float(C)}, irwls_weight(ye, C), extra or {})


def _hand_weight_cases():
    yield _wcase("hand-picked: one of each case (e y < 0, = 0, > 0)", [-0.5, 0.0, 0.5], 1.0)
    yield _wcase("hand-picked: C = 10, e y > 0 only", [0.1, 1.0, 2.5, 40.0], 10.0)
    yield _wcase("hand-picked: e y < 0 only (all in S2)", [-3.0, -1e-12, -0.2], 2.0)
    yield _wcase("hand-picked: all on the margin (e y = 0, also -0.0)", [0.0, -0.0, 0.0], 1.0)
    yield _wcase("hand-picked: tiny and huge positive e y", [1e-12, 1e12, 3.0], 0.5)
    yield _wcase("hand-picked: a single sample", [0.25], 1.0)
    yield _wcase("hand-picked: no samples (empty array)", np.zeros(0), 1.0)


def _random_weight_cases(n_cases=10, seed=50):
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        m = int(rng.integers(1, 40))
        ye = rng.normal(scale=1.5, size=m)
        ye[rng.random(m) < 0.15] = 0.0
        C = float(rng.choice([0.1, 1.0, 5.0]))
        yield _wcase(f"random: {m} samples, C = {fmt(C)}", ye, C)


@functools.lru_cache(maxsize=None)
def recorded_irwls_fits():
    """``((toy name, estimator, records, y in {-1, 1}), ...)``: every record
    of :class:`svmlab.IRWLSClassifier` on three 2-D toy sets, in chunks of
    12, 16 and 20 samples."""
    from .. import IRWLSClassifier
    from ..datasets import toy_2d

    out = []
    for name, kind, ws, C, gamma in [("moons", "moons", 12, 5.0, 1.0),
                                     ("blobs", "blobs", 16, 1.0, 0.5),
                                     ("xor", "xor", 20, 10.0, 1.0)]:
        X, y = toy_2d(kind, n=40, random_state=2)
        est = IRWLSClassifier(C=C, kernel="rbf", gamma=gamma, working_set_size=ws,
                              random_state=0, cache_dtype="float64", progress=False)
        recs = quiet_fit(est, X, y)
        out.append((name, est, recs, np.where(np.asarray(y) == est.classes_[1], 1.0, -1.0)))
    return tuple(out)


def _recorded_weight_cases():
    for name, est, recs, _ in recorded_irwls_fits():
        for r in recs:
            yield _wcase(f"recorded: IRWLS iteration {r.iteration} (chunk {r.chunk}) on {name}, "
                         f"its e y", np.asarray(r.ye, float), est.C, {"record": r})


def weights_cases():
    """Every case of :func:`check_irwls_weights`, in order."""
    yield from _hand_weight_cases()
    yield from _random_weight_cases()
    yield from _recorded_weight_cases()


def _normalise_array(name, dtype):
    def normalise(raw, case):
        n = len(next(iter(case.args.values())))
        try:
            a = np.asarray(raw, dtype)
        except (TypeError, ValueError):
            raise WrongAnswer(f"{name} must be an array of numbers, got "
                              f"{type(raw).__name__}") from None
        if a.shape != (n,):
            raise WrongAnswer(f"{name} must have the shape of the input, ({n},); got {a.shape}")
        return a
    return normalise


def _weights_hint(case, got):
    exp = case.expected
    ye, C = case.args["ye"], case.args["C"]
    with np.errstate(invalid="ignore"):
        ok = np.where(np.isinf(exp), got == exp, np.abs(got - exp) <= 1e-12 * np.abs(exp))
    if ok.all():
        return None
    i = int(np.flatnonzero(~ok)[0])
    v = ye[i]
    head = f"a[{i}]: e y = {fmt(v)}, expected {fmt(exp[i])}, you returned {fmt(got[i])}"
    if v < 0:
        return head + (". Outside the margin (e y < 0, S2) the weight is 0: the sample does "
                       "not enter the least-squares problem.")
    if v == 0:
        return head + (". On the margin (e y = 0, S1) the weight is infinite (np.inf): eq. (8) "
                       "forces e_i = 0.")
    if np.isclose(got[i], v / C):
        return head + ". The weight is C / (e y), not (e y) / C."
    return head + f". For e y > 0 (S3) the weight is C / (e y) = {fmt(C / v)}."


def check_irwls_weights(student_fn):
    """Check ``student_fn(ye, C) -> a`` against eq. (8)
    (:func:`svmlab.viz.irwls.irwls_weight`)."""
    return run_cases("irwls_weights", student_fn, weights_cases(),
                     _normalise_array("a", float), _weights_hint,
                     lambda c: "a = " + fmt_array(c.expected, 20),
                     lambda g, c: "a = " + fmt_array(g, 20), exercise_id="05.irwls_weights")


# ------------------------------------------------------------------ reordering
def reference_reorder(sets, y_beta, ye, C, tol):
    """Rules a-d of Table 1, evaluated directly (the checker's reference)."""
    sets = np.asarray(sets)
    y_beta = np.asarray(y_beta, float)
    ye = np.asarray(ye, float)
    new = sets.astype(np.int64).copy()
    rule_a = (sets == S1) & (y_beta < 0)
    rule_b = (sets == S1) & (y_beta > C)
    new[rule_a] = S2
    new[rule_b] = S3
    if not (rule_a.any() or rule_b.any()):
        new[(sets == S2) & (ye > tol)] = S1   # rule c
        new[(sets == S3) & (ye < -tol)] = S1  # rule d
    return new


def _rcase(label, sets, y_beta, ye, C, tol, extra=None):
    sets = np.asarray(sets, np.int64)
    y_beta = np.asarray(y_beta, float)
    ye = np.asarray(ye, float)
    args = {"sets": sets, "y_beta": y_beta, "ye": ye, "C": float(C), "tol": float(tol)}
    return Case(label, args, reference_reorder(sets, y_beta, ye, C, tol), extra or {})


def _hand_reorder_cases():
    yield _rcase("hand-picked: rule a (S1, y beta < 0 -> S2); the S2 violator must wait",
                 [1, 1, 2, 3], [-0.2, 0.5, 0.0, 1.0], [0.0, 0.0, 0.7, 0.3], 1.0, 1e-3)
    yield _rcase("hand-picked: rule b (S1, y beta > C -> S3); the S3 violator must wait",
                 [1, 1, 3, 2], [0.4, 1.3, 1.0, 0.0], [0.0, 0.0, -0.8, -0.4], 1.0, 1e-3)
    yield _rcase("hand-picked: rules a and b together", [1, 1, 1, 2],
                 [-0.1, 2.5, 1.0, 0.0], [0.0, 0.0, 0.0, -1.0], 2.0, 1e-3)
    yield _rcase("hand-picked: rules c and d (S1 stays in the box)", [1, 2, 2, 3, 3],
                 [0.5, 0.0, 0.0, 1.0, 1.0], [0.0, 0.4, -0.4, -0.6, 0.6], 1.0, 1e-3)
    yield _rcase("hand-picked: y beta exactly 0 and exactly C stay in S1", [1, 1, 2],
                 [0.0, 1.0, 0.0], [0.0, 0.0, 0.2], 1.0, 1e-3)
    yield _rcase("hand-picked: e y exactly +tol on S2 and -tol on S3: not violations",
                 [2, 3, 1], [0.0, 0.5, 0.25], [0.125, -0.125, 0.0], 0.5, 0.125)
    yield _rcase("hand-picked: nothing moves", [1, 2, 3], [0.3, 0.0, 1.0],
                 [0.0, -0.5, 0.5], 1.0, 1e-3)
    yield _rcase("hand-picked: S1 empty, violators in S2 and S3", [2, 2, 3, 3],
                 [0.0, 0.0, 1.0, 1.0], [0.5, -0.5, -0.5, 0.5], 1.0, 1e-3)
    yield _rcase("hand-picked: no samples (empty arrays)", np.zeros(0, np.int64), np.zeros(0),
                 np.zeros(0), 1.0, 1e-3)


def _random_reorder_cases(n_cases=12, seed=60):
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        m = int(rng.integers(1, 30))
        C = float(rng.choice([0.5, 1.0, 4.0]))
        sets = rng.integers(1, 4, size=m)
        y_beta = np.where(sets == S2, 0.0, np.where(sets == S3, C, rng.uniform(0, C, size=m)))
        if k % 2 == 0:  # some S1 values leave the box: rules a/b fire
            out = (sets == S1) & (rng.random(m) < 0.3)
            y_beta[out] = np.where(rng.random(out.sum()) < 0.5, -rng.random(out.sum()),
                                   C + rng.random(out.sum()))
        ye = rng.normal(scale=0.5, size=m)
        ye[sets == S1] = 0.0
        yield _rcase(f"random: {m} samples, C = {fmt(C)}", sets, y_beta, ye, C, 1e-3)


def recorded_reorder_steps():
    """``[(toy name, estimator, sets before, record, y over the working set)]``
    for every Table-1 iteration in which rules a/b moved nobody.  The sets
    before an iteration are those of the previous record of the same chunk;
    for the first iteration of a chunk they follow from the global beta at
    the chunk's start, as the sub-problem classifies them (``y beta <= 0``:
    S2, ``>= C``: S3, else S1)."""
    out = []
    for name, est, recs, y in recorded_irwls_fits():
        C = float(est.C)
        beta = np.zeros(len(y))  # global beta, updated when a chunk closes
        prev = None
        for r in recs:
            ws = np.asarray(r.working_set)
            first = prev is None or prev.chunk != r.chunk
            if first:
                yb = y[ws] * beta[ws]
                before = np.where(yb <= 0.0, S2, np.where(yb >= C, S3, S1))
            else:
                before = np.asarray(prev.sets)
            if (r.mode == "table1" and (first or prev.mode == "table1")
                    and tuple(r.moved[:2]) == (0, 0)):
                out.append((name, est, before.astype(np.int64), r, y[ws]))
            if r.chunk_done:
                beta[ws] = r.beta
            prev = r
    return out


def _recorded_reorder_cases():
    for name, est, before, r, yw in recorded_reorder_steps():
        args = {"sets": before, "y_beta": yw * r.beta, "ye": np.asarray(r.ye, float),
                "C": float(est.C), "tol": 0.9 * est.tol}
        yield Case(f"recorded: IRWLS iteration {r.iteration} (chunk {r.chunk}) on {name}, "
                   f"rules c, d moved {r.moved[2]} and {r.moved[3]}", args,
                   np.asarray(r.sets, np.int64), {"record": r})


def reorder_cases():
    """Every case of :func:`check_reorder`, in order."""
    yield from _hand_reorder_cases()
    yield from _random_reorder_cases()
    yield from _recorded_reorder_cases()


def _reorder_normalise(raw, case):
    a = _normalise_array("new_sets", float)(raw, case)
    if a.size and not np.all(np.isin(a, (1, 2, 3))):
        raise WrongAnswer(f"new_sets must hold 1 (S1), 2 (S2) or 3 (S3); got {fmt_array(a)}")
    return a.astype(np.int64)


def _reorder_hint(case, got):
    exp = case.expected
    if np.array_equal(got, exp):
        return None
    a = case.args
    sets, yb, ye, C, tol = a["sets"], a["y_beta"], a["ye"], a["C"], a["tol"]
    i = int(np.flatnonzero(got != exp)[0])
    head = (f"sample {i} was in {_SET[sets[i]]} (y beta = {fmt(yb[i])}, e y = {fmt(ye[i])}): "
            f"expected {_SET[exp[i]]}, you returned {_SET[got[i]]}")
    ab = ((sets == S1) & ((yb < 0) | (yb > C))).any()
    if sets[i] == S1:
        if yb[i] < 0:
            return head + ". Rule a: a sample of S1 with y beta < 0 moves to S2."
        if yb[i] > C:
            return head + ". Rule b: a sample of S1 with y beta > C moves to S3."
        return head + (f". Its y beta is inside [0, C] = [0, {fmt(C)}] (bounds included), so it "
                       f"stays in S1.")
    if ab and exp[i] == sets[i]:
        return head + (". Rules a/b moved a sample out of S1 in this iteration, so rules c and "
                       "d wait: (3) must be solved again before the errors mean anything.")
    rule = ("rule c: a sample of S2 moves to S1 when e y > tol" if sets[i] == S2 else
            "rule d: a sample of S3 moves to S1 when e y < -tol")
    return head + f". {rule[0].upper() + rule[1:]} (tol = {fmt(tol)}, strictly)."


def check_reorder(student_fn):
    """Check ``student_fn(sets, y_beta, ye, C, tol) -> new_sets`` (rules a-d
    of Table 1) on hand-picked, random and recorded cases."""
    return run_cases("reorder_sets", student_fn, reorder_cases(), _reorder_normalise,
                     _reorder_hint, lambda c: "new_sets = " + fmt_array(c.expected, 30),
                     lambda g, c: "new_sets = " + fmt_array(g, 30),
                     exercise_id="05.reorder_sets")
