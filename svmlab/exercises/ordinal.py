"""Exercise for ``notebooks/04_ordinal_regression``: the O(n log n) sorted
sweep of Joachims' Algorithm 2 (KDD 2006, OP5).

Student functions::

    ordinal_sweep(scores, y) -> (c_plus, c_minus)
    count_pairs(y) -> m
    ordinal_constraint(X, c_plus, c_minus, m) -> (g, d)

``scores`` (n,) floats ``s_i = w.x_i``; ``y`` (n,) integer ranks (any
integers, not necessarily 1..R or sorted).  A preference pair (i, j) has
``y_i > y_j``; it is violated when ``s_i - s_j < 1`` (strictly: a
difference of exactly 1 is not a violation).  Return two integer arrays of
shape (n,):

* ``c_plus[i]``  = number of violated pairs in which i is the higher-ranked
  member, ``#{j : y_j < y_i, s_i - s_j < 1}``;
* ``c_minus[j]`` = number of violated pairs in which j is the lower-ranked
  member, ``#{i : y_i > y_j, s_i - s_j < 1}``.

Counting the pairs one by one is O(n^2); the exercise asks for the sorted
sweep, O(n log n + R n).  After every case agrees, the checker times the
student's function at n = 1200 and n = 4800 (CPU time, best of five runs
each; a slow result is measured once more; one run over 2 s fails at once)
and fails if the time grows faster than ``n^1.4`` -- an O(n^2) count grows
like ``n^2`` (16 times), a sweep like ``n log n`` (about 4.5 times).  Pass
``check_speed=False`` to skip the timing.

``count_pairs``: the number m of preference pairs ``{(i, j): y_i > y_j}``
(an int; 0 when there is a single rank or no example), without listing the
pairs: the student derives the count from the number of examples per rank.
After every case agrees, the same growth test as the sweep's (n = 2000 and
n = 8000, growth slower than ``n^1.4``) fails a function that compares the
pairs; ``check_speed=False`` skips it.

``ordinal_constraint``: the OP5 constraint from the counts,
``g = (1/m) sum_i (c_plus[i] - c_minus[i]) x_i`` (shape (p,)) and
``d = (1/m) sum_i c_plus[i]``, so that its slack at w is ``d - w'g``.

References: :func:`svmlab.viz.ordinal.brute_force_counts` (all pairs) for
the expected counts; recorded cases replay the iterations of
:class:`svmlab.CuttingPlaneOrdinalRegressor` on a toy set with three ranks
(``OrdinalCuttingPlaneRecord.c_plus`` / ``c_minus`` at ``scores = X w``;
records with a score difference within 1e-9 of 1 are left out, since the
solver's compiled dot product may round it to the other side).
"""

from __future__ import annotations

import functools

import numpy as np

from ..viz.ordinal import brute_force_counts
from ._core import (Case, WrongAnswer, as_float, fmt, fmt_array, quiet_fit, run_cases,
                    student_clock)

__all__ = ["check_sweep", "sweep_cases", "reference_counts", "check_count_pairs",
           "check_ordinal_constraint", "count_pairs_cases", "constraint_cases"]


def reference_counts(scores, y, strict=True, same_rank=False):
    """Counts by enumerating all pairs, O(n^2).  ``strict=False`` counts a
    difference of exactly 1 as violated and ``same_rank=True`` also counts
    pairs of equal rank (both wrong: used to recognise mistakes)."""
    s = np.asarray(scores, float).ravel()
    y = np.asarray(y).ravel()
    if strict and not same_rank:
        if len(s) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        cp, cm = brute_force_counts(s, y)
        return np.asarray(cp, np.int64), np.asarray(cm, np.int64)
    diff = s[:, None] - s[None, :]
    higher = (y[:, None] >= y[None, :]) if same_rank else (y[:, None] > y[None, :])
    if same_rank:
        higher &= ~np.eye(len(s), dtype=bool)
    viol = higher & ((diff < 1.0) if strict else (diff <= 1.0))
    return viol.sum(axis=1).astype(np.int64), viol.sum(axis=0).astype(np.int64)


def _case(label, scores, y, extra=None):
    s = np.asarray(scores, float)
    y = np.asarray(y, np.int64)
    return Case(label, {"scores": s, "y": y}, reference_counts(s, y), extra or {})


def _hand_cases():
    yield _case("hand-picked: two ranks, far apart: nothing violated",
                [3.0, 4.0, 0.0, 0.5], [2, 2, 1, 1])
    yield _case("hand-picked: all scores equal: every preference pair violated",
                [0.7, 0.7, 0.7, 0.7, 0.7], [1, 2, 3, 2, 1])
    yield _case("hand-picked: differences of exactly 1 are NOT violated",
                [1.0, 0.0, 2.0, 1.0], [2, 1, 3, 2])
    yield _case("hand-picked: differences of 0.75 and 1.25",
                [1.75, 1.0, 0.5, 2.25], [2, 1, 1, 2])
    yield _case("hand-picked: ranks 2, 5, 9 in shuffled order, equal ranks never pair",
                [0.3, -1.2, 2.5, 0.0, 1.1, 0.9, -0.4], [5, 2, 9, 5, 9, 2, 5])
    yield _case("hand-picked: a single rank: no preference pairs", [0.1, 3.0, -2.0], [4, 4, 4])
    yield _case("hand-picked: one example", [0.5], [1])
    yield _case("hand-picked: no examples (empty arrays)", np.zeros(0), np.zeros(0, np.int64))
    yield _case("hand-picked: duplicated examples (same score, same rank)",
                [0.5, 0.5, 0.5, 1.0, -1.0], [2, 2, 2, 1, 3])
    yield _case("hand-picked: the lower rank scores higher (reversed order)",
                [-1.0, 0.0, 1.0, 2.0], [4, 3, 2, 1])
    yield _case("hand-picked: negative ranks", [0.0, 0.4, -0.9, 1.6], [-1, 0, -2, 0])


def _random_cases(n_cases=15, seed=40):
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        n = int(rng.integers(2, 60))
        R = int(rng.integers(2, 6))
        y = rng.integers(1, R + 1, size=n)
        if k % 2:  # multiples of 1/4: exact ties and exact differences of 1 occur
            s = rng.integers(-8, 9, size=n) / 4.0
            label = f"random: n = {n}, {R} ranks, scores on a grid of 1/4 (exact ties)"
        else:
            s = rng.normal(scale=1.5, size=n)
            label = f"random: n = {n}, {R} ranks"
        yield _case(label, s, y)


@functools.lru_cache(maxsize=None)
def recorded_ordinal_iterations():
    """``[(X, ranks, OrdinalCuttingPlaneRecord)]`` for every iteration of
    :class:`svmlab.CuttingPlaneOrdinalRegressor` on a 2-D set with 3 ranks."""
    from .. import CuttingPlaneOrdinalRegressor

    rng = np.random.default_rng(5)
    n = 36
    y = rng.integers(1, 4, size=n)
    X = rng.normal(scale=0.8, size=(n, 2)) + y[:, None] * np.array([0.8, 0.4])
    est = CuttingPlaneOrdinalRegressor(C=20.0, epsilon=1e-4, progress=False)
    return tuple((X, y, r) for r in quiet_fit(est, X, y))


def _recorded_cases():
    for X, y, r in recorded_ordinal_iterations():
        s = X @ r.w
        if np.any(np.abs(s[:, None] - s[None, :] - 1.0) < 1e-9):
            continue
        yield Case(f"recorded: iteration {r.iteration} of Algorithm 2 (scores = X w)",
                   {"scores": s, "y": np.asarray(y, np.int64)},
                   (np.asarray(r.c_plus, np.int64), np.asarray(r.c_minus, np.int64)),
                   {"record": r})


def sweep_cases():
    """Every case of :func:`check_sweep`, in order."""
    yield from _hand_cases()
    yield from _random_cases()
    yield from _recorded_cases()


def _normalise(raw, case):
    n = case.args["scores"].shape[0]
    if not isinstance(raw, (tuple, list)) or len(raw) != 2:
        raise WrongAnswer(f"return the pair (c_plus, c_minus), got {type(raw).__name__}")
    out = []
    for name, v in zip(("c_plus", "c_minus"), raw):
        try:
            a = np.asarray(v, float)
        except (TypeError, ValueError):
            raise WrongAnswer(f"{name} must be an array of counts") from None
        if a.shape != (n,):
            raise WrongAnswer(f"{name} must have shape (n,) = ({n},), got {a.shape}")
        if a.size and not np.all(a == np.round(a)):
            raise WrongAnswer(f"{name} must hold whole numbers (counts), got {fmt_array(a)}")
        out.append(a.astype(np.int64))
    return tuple(out)


def _hint(case, got):
    s, y = case.args["scores"], case.args["y"]
    cp_e, cm_e = case.expected
    cp, cm = got
    if np.array_equal(cp, cp_e) and np.array_equal(cm, cm_e):
        return None
    if np.array_equal(cp, cm_e) and np.array_equal(cm, cp_e):
        return ("c_plus and c_minus are swapped: c_plus[i] counts the violated pairs in which i "
                "is the HIGHER-ranked member.")
    def explained_by(variant):
        # every array the student got wrong equals the variant's (a known mistake)
        return len(s) and all(np.array_equal(a, v) for a, e, v in zip((cp, cm), (cp_e, cm_e),
                                                                        variant)
                              if not np.array_equal(a, e))

    if explained_by(reference_counts(s, y, strict=False)):
        return ("a pair with s_i - s_j = 1 exactly is not violated (s_i - s_j < 1 strictly); "
                "in the sweep, at equal values s_i - 1/2 = s_j + 1/2 process the 'u' value "
                "s_i - 1/2 before the 'd' value.")
    if explained_by(reference_counts(s, y, same_rank=True)):
        return ("pairs of equal rank are not preference pairs: only y_i > y_j counts (in the "
                "sweep, c_plus sums the counters of the ranks r' < r, not r' <= r).")
    which, a, e = ("c_plus", cp, cp_e) if not np.array_equal(cp, cp_e) else ("c_minus", cm, cm_e)
    i = int(np.flatnonzero(a != e)[0])
    if which == "c_plus":
        partners = np.flatnonzero((y < y[i]) & (s[i] - s < 1.0))
        rule = (f"the lower-ranked examples j (y_j < {y[i]}) with {fmt(s[i])} - s_j < 1, "
                f"which are j in")
    else:
        partners = np.flatnonzero((y > y[i]) & (s - s[i] < 1.0))
        rule = (f"the higher-ranked examples i (y_i > {y[i]}) with s_i - {fmt(s[i])} < 1, "
                f"which are i in")
    lst = ", ".join(str(int(p)) for p in partners[:8]) + (", ..." if len(partners) > 8 else "")
    return (f"{which}[{i}]: expected {int(e[i])}, you returned {int(a[i])}. Example {i} has "
            f"score {fmt(s[i])} and rank {y[i]}; {which}[{i}] counts {rule} "
            f"{{{lst}}}.")


_SWEEP_ADVICE = ("Counting pairs is O(n^2); sort the 2n values s_i - 1/2 and s_j + 1/2 once and "
                 "sweep them with one counter per rank (O(n log n + R n)).")
_COUNT_ADVICE = ("Listing or comparing the pairs is O(n^2); count the examples of each rank "
                 "once (np.unique with return_counts), then combine the counts.")


def _sweep_input(n, rng):
    return rng.normal(scale=2.0, size=n), rng.integers(1, 4, size=n)


def _count_input(n, rng):
    return (rng.integers(1, 6, size=n),)


def _speed(student_fn, n_small=1200, n_large=4800, repeats=5, max_run=2.0,
           make_input=_sweep_input, advice=_SWEEP_ADVICE):
    """None when the time from ``n_small`` to ``n_large`` (4 times more)
    grows slower than n^1.4, else the reason.

    The clock is the process's CPU time (``time.process_time``; in the grader's
    sandbox the evaluator's, as :func:`._core.student_clock` says), which a busy
    machine does not inflate the way it inflates wall time; the two sizes are
    run alternately ``repeats`` times and the best time of each is kept, and
    a slow result is measured once more before the verdict.  A single run
    longer than ``max_run`` seconds ends the test at once (a pair-by-pair
    Python loop would take minutes).  The input of size n is
    ``make_input(n, rng)`` (a tuple of arguments)."""
    rng = np.random.default_rng(41)
    data = {n: make_input(n, rng) for n in (n_small, n_large)}

    clock = student_clock(student_fn)

    def run(n):
        args = [a.copy() for a in data[n]]
        t0 = clock()
        student_fn(*args)
        return clock() - t0

    ratio = np.inf
    for attempt in range(2):
        best = {n_small: np.inf, n_large: np.inf}
        try:
            for _ in range(repeats):
                for n in (n_small, n_large):
                    best[n] = min(best[n], run(n))
                    if best[n] > max_run:
                        return (f"it is too slow: one call with n = {n} took "
                                f"{best[n]:.1f} s of CPU time. {advice}")
        except Exception as exc:  # noqa: BLE001 - reported to the student
            return f"it raised {type(exc).__name__}: {exc} on a large input (n = {n_large})."
        t1, t2 = max(best[n_small], 1e-6), max(best[n_large], 1e-6)
        ratio = min(ratio, t2 / t1)
        expo = np.log(ratio) / np.log(n_large / n_small)
        if expo <= 1.4:
            return None
    return (f"it is too slow: from n = {n_small} to n = {n_large} its time grew {ratio:.0f} "
            f"times ({t1 * 1e3:.1f} ms -> {t2 * 1e3:.0f} ms), like n^{expo:.1f}. {advice}")


def check_sweep(student_fn, check_speed=True):
    """Check ``student_fn(scores, y) -> (c_plus, c_minus)`` against all-pairs
    counting on hand-picked, random and recorded cases, then (unless
    ``check_speed=False``) that its time grows like a sweep, not like n^2."""
    return run_cases("ordinal_sweep", student_fn, sweep_cases(), _normalise, _hint,
                     lambda c: f"c_plus = {fmt_array(c.expected[0], 20)}, "
                               f"c_minus = {fmt_array(c.expected[1], 20)}",
                     lambda g, c: f"c_plus = {fmt_array(g[0], 20)}, "
                                  f"c_minus = {fmt_array(g[1], 20)}",
                     after=(lambda: _speed(student_fn)) if check_speed else None,
                     exercise_id="04.ordinal_sweep")


# ------------------------------------------------------------------ m = |P|
def _brute_pairs(y):
    y = np.asarray(y).ravel()
    return int(np.sum(y[:, None] > y[None, :]))


def _mcase(label, y, extra=None):
    y = np.asarray(y, np.int64)
    return Case(label, {"y": y}, _brute_pairs(y), extra or {})


def count_pairs_cases():
    """Every case of :func:`check_count_pairs`, in order: hand-picked,
    random, and the ``n_pairs`` of the recorded ordinal fit."""
    yield _mcase("hand-picked: ranks 1, 1, 1, 2, 2 (3 x 2 pairs)", [1, 1, 1, 2, 2])
    yield _mcase("hand-picked: all ranks different (n (n - 1) / 2 pairs)", [3, 1, 4, 5, 2])
    yield _mcase("hand-picked: three ranks with ties, shuffled", [2, 3, 1, 2, 3, 1, 1])
    yield _mcase("hand-picked: a single rank: no pairs", [7, 7, 7])
    yield _mcase("hand-picked: one example", [1])
    yield _mcase("hand-picked: no examples (empty array)", np.zeros(0, np.int64))
    yield _mcase("hand-picked: ranks -1, 0, 10", [10, -1, 0, 10, -1])
    rng = np.random.default_rng(42)
    for k in range(10):
        n = int(rng.integers(2, 80))
        R = int(rng.integers(2, 7))
        yield _mcase(f"random: n = {n}, {R} ranks", rng.integers(1, R + 1, size=n))
    recs = recorded_ordinal_iterations()
    if recs:
        _, y, r = recs[0]
        yield Case("recorded: n_pairs of the ordinal fit (36 examples, 3 ranks)",
                   {"y": np.asarray(y, np.int64)}, int(r.n_pairs), {"record": r})


def _count_normalise(raw, case):
    if isinstance(raw, (bool, np.bool_)) or np.ndim(raw) != 0:
        raise WrongAnswer(f"m must be one whole number, got {type(raw).__name__}")
    try:
        v = float(raw)
    except (TypeError, ValueError):
        raise WrongAnswer(f"m must be a number, got {type(raw).__name__}") from None
    if not np.isfinite(v) or v != round(v):
        raise WrongAnswer(f"m counts pairs, so it is a whole number; got {fmt(v)}")
    return int(round(v))


def _count_hint(case, got):
    exp = case.expected
    if got == exp:
        return None
    y = case.args["y"]
    n = len(y)
    if got == 2 * exp:
        return "each pair is counted twice: count only (i, j) with y_i > y_j, not also y_i < y_j."
    if got == n * (n - 1) // 2 and exp != got:
        return "pairs of equal rank are not preference pairs: only y_i > y_j counts."
    if got == n * n or got == n * (n - 1):
        return "count only the pairs with y_i > y_j."
    return ("m = sum over ranks r of N_r * (number of examples with a lower rank), where N_r is "
            "the number of examples of rank r.")


def check_count_pairs(student_fn, check_speed=True):
    """Check ``student_fn(y) -> m`` (the number of preference pairs) against
    a count of all pairs, then (unless ``check_speed=False``) that its time
    grows slower than n^1.4 from n = 2000 to n = 8000: it must not list or
    compare the pairs."""
    after = (lambda: _speed(student_fn, 2000, 8000, make_input=_count_input,
                            advice=_COUNT_ADVICE)) if check_speed else None
    return run_cases("count_pairs", student_fn, count_pairs_cases(), _count_normalise,
                     _count_hint, lambda c: f"m = {c.expected}", lambda g, c: f"m = {g}",
                     after=after, exercise_id="04.count_pairs")


# ------------------------------------------------------------------ the constraint
def reference_constraint(X, c_plus, c_minus, m):
    """``(g, d)`` of the OP5 constraint, by its formula."""
    X = np.asarray(X, float)
    coef = (np.asarray(c_plus, float) - np.asarray(c_minus, float)) / m
    return coef @ X, float(np.sum(c_plus)) / m


def _ccase(label, X, scores_or_counts, y=None, m=None, extra=None):
    X = np.asarray(X, float)
    if y is not None:
        cp, cm = reference_counts(scores_or_counts, y)
        m = _brute_pairs(y)
    else:
        cp, cm = (np.asarray(v, np.int64) for v in scores_or_counts)
    args = {"X": X, "c_plus": cp, "c_minus": cm, "m": int(m)}
    return Case(label, args, reference_constraint(X, cp, cm, m), extra or {})


def constraint_cases():
    """Every case of :func:`check_ordinal_constraint`, in order."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, 0.5]])
    y = np.array([1, 2, 3, 2])
    yield _ccase("hand-picked: nothing violated (all counts 0)", X, ([0, 0, 0, 0], [0, 0, 0, 0]),
                 m=5)
    yield _ccase("hand-picked: one violated pair (2, 0)", X, ([0, 0, 1, 0], [1, 0, 0, 0]), m=5)
    yield _ccase("hand-picked: w = 0, every pair violated", X, np.zeros(4), y)
    yield _ccase("hand-picked: scores 0, 0.5, 1, 2", X, np.array([0.0, 0.5, 1.0, 2.0]), y)
    rng = np.random.default_rng(43)
    for k in range(8):
        n = int(rng.integers(2, 30))
        p = int(rng.integers(1, 5))
        Xr = rng.normal(size=(n, p))
        yr = rng.integers(1, 4, size=n)
        if len(np.unique(yr)) < 2:
            yr[0] = 1 if yr[0] != 1 else 2
        s = Xr @ rng.normal(size=p)
        yield _ccase(f"random: n = {n}, {p} features", Xr, s, yr)
    for X, y, r in recorded_ordinal_iterations():
        args = {"X": np.asarray(X, float), "c_plus": np.asarray(r.c_plus, np.int64),
                "c_minus": np.asarray(r.c_minus, np.int64), "m": int(r.n_pairs)}
        g, _ = reference_constraint(X, r.c_plus, r.c_minus, r.n_pairs)
        yield Case(f"recorded: iteration {r.iteration} of Algorithm 2", args,
                   (g, float(r.constraint_offset)), {"record": r})


def _constraint_normalise(raw, case):
    p = case.args["X"].shape[1]
    if not isinstance(raw, (tuple, list)) or len(raw) != 2:
        raise WrongAnswer(f"return the pair (g, d), got {type(raw).__name__}")
    g, d = raw
    try:
        g = np.asarray(g, float)
    except (TypeError, ValueError):
        raise WrongAnswer("g must be an array of numbers") from None
    if g.shape != (p,):
        raise WrongAnswer(f"g must have shape (p,) = ({p},), one entry per feature; got "
                          f"{g.shape}")
    return g, as_float(d, "d")


def _constraint_hint(case, got):
    X, cp, cm, m = (case.args[k] for k in ("X", "c_plus", "c_minus", "m"))
    g_e, d_e = case.expected
    g, d = got
    rec = case.extra.get("record")
    tol = 1e-9 * (1.0 + np.abs(X).max(initial=0.0) * (np.sum(cp) + np.sum(cm) + 1) / max(m, 1))
    if abs(d - d_e) > 1e-12 * (1 + abs(d_e)):
        if abs(d - d_e * m) <= 1e-9 * (1 + abs(d)):
            return f"d = {fmt(d)} is sum c_plus; divide by m = {m}: d = (1/m) sum_i c_plus[i]."
        return f"d = (1/m) sum_i c_plus[i] = {fmt(d_e)} (the fraction of violated pairs)."
    bad = np.abs(g - g_e) > tol
    if not bad.any() and (rec is None or abs(np.linalg.norm(g) - rec.constraint_norm) <= tol):
        return None
    j = int(np.flatnonzero(bad)[0]) if bad.any() else 0
    where = f"g[{j}]: expected {fmt(g_e[j])}, you returned {fmt(g[j])}"
    if np.allclose(g, -g_e, atol=tol):
        return (f"{where}. Wrong sign: a violated pair (i, j) adds x_i - x_j, so the weight of "
                f"x_i is c_plus[i] - c_minus[i].")
    if np.allclose(g, g_e * m, atol=tol):
        return f"{where}. Divide by m = {m}."
    if np.allclose(g, (cp / m) @ X, atol=tol):
        return f"{where}. The lower member of each pair enters with a minus: use c_plus - c_minus."
    return f"{where}. g = (1/m) sum_i (c_plus[i] - c_minus[i]) x_i."


def check_ordinal_constraint(student_fn):
    """Check ``student_fn(X, c_plus, c_minus, m) -> (g, d)`` (the OP5
    constraint from the condensed counts)."""
    return run_cases("ordinal_constraint", student_fn, constraint_cases(),
                     _constraint_normalise, _constraint_hint,
                     lambda c: f"g = {fmt_array(c.expected[0])}, d = {fmt(c.expected[1])}",
                     lambda g, c: f"g = {fmt_array(g[0])}, d = {fmt(g[1])}",
                     exercise_id="04.ordinal_constraint")
