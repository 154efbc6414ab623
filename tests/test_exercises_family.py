"""The exercises of notebook 08 (svmlab.exercises.family) and their solutions.

* the instructor's solutions pass, with the fields a grader reads;
* wrong answers fail at the FIRST case where they differ from the
  reference (found here by running them over the checker's own cases), with
  a hint that names the mistake; a wrong type, a missing return, an
  exception and the starter code are reported, never raised;
* svr_pair_bounds is checked by properties: right answers written another
  way (a search along the line, the box intersection in the other variable)
  pass, and an answer that is right without weights but ignores them fails
  on the weighted cases;
* the checkers' references agree with what svmlab.reference.dual records
  and with what svmlab.svm._probability fits on;
* a call into svmlab fails with the guard's message; a pass unlocks the
  lines of the reference that the SVR explorer hides.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from svmlab.exercises import (EXERCISES, ExerciseResult, check_platt_targets,
                              check_svr_pair_bounds)
from svmlab.exercises import _registry as reg
from svmlab.exercises import family as exf

SOLUTIONS = Path(__file__).resolve().parent.parent / "instructor" / "solutions"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, SOLUTIONS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sol = _load("solutions_08_family")


@pytest.fixture
def fresh_locks(monkeypatch):
    monkeypatch.delenv(reg.LOCKS_ENV, raising=False)
    reg.reset_locks()
    yield reg
    reg.reset_locks()


# --------------------------------------------------------------------------
# the solutions pass
# --------------------------------------------------------------------------
@pytest.mark.parametrize("check, fn, eid, min_cases", [
    (check_svr_pair_bounds, sol.svr_pair_bounds, "08.svr_pair_bounds", 100),
    (check_platt_targets, sol.platt_targets, "08.platt_targets", 30),
], ids=["svr_pair_bounds", "platt_targets"])
def test_solution_passes_with_the_grader_fields(check, fn, eid, min_cases, fresh_locks):
    res = check(fn)
    assert isinstance(res, ExerciseResult) and res.passed, res.message
    assert res.exercise_id == eid and res.n_cases >= min_cases
    assert res.n_total == res.n_passed == res.n_cases and res.score == 1.0
    assert res.case_number is None and res.first_failure is None and not res.guard_fired
    row = res.as_dict()
    assert row["exercise_id"] == eid and row["passed"] and row["score"] == 1.0
    assert EXERCISES[eid].notebook == "08_svm_family" and EXERCISES[eid].function == fn.__name__


def test_the_cases_cover_every_sign_combination_weights_and_recorded_steps():
    cases = list(exf.svr_bounds_cases())
    combos = set()
    for c in cases:
        n = len(c.args["C"])
        combos.add((c.args["t1"] < n, c.args["t2"] < n))
    assert combos == {(True, True), (True, False), (False, True), (False, False)}
    assert any(len(set(c.args["C"])) > 1 for c in cases)                # weights
    assert any(c.args["t1"] % len(c.args["C"]) == c.args["t2"] % len(c.args["C"])
               for c in cases)                                          # one point's a, a*
    rec = [c for c in cases if c.label.startswith("recorded")]
    assert len(rec) >= 40
    assert {(c.extra["record"].y1, c.extra["record"].y2) for c in rec} >= {(1, -1), (1, 1)}


# --------------------------------------------------------------------------
# the references agree with the solver's records and with sigmoid_fit
# --------------------------------------------------------------------------
def test_reference_bounds_are_the_recorded_segments():
    for _, alpha, C, r in exf.recorded_svr_steps():
        L, H = exf.reference_svr_bounds(r.i1, r.i2, alpha, C)
        assert (L, H) == (r.L, r.H)
        assert alpha[r.i1] == r.a1_old and alpha[r.i2] == r.a2_old


def test_reference_targets_are_what_sigmoid_fit_fits_to():
    """sigmoid_fit's optimum makes the gradient of the cross-entropy vanish:
    sum (t - p) f = 0 and sum (t - p) = 0 with its own targets; with the
    reference targets both vanish, with hard targets they do not."""
    from svmlab.svm._probability import sigmoid_fit, sigmoid_predict

    rng = np.random.default_rng(0)
    y = np.where(rng.random(80) < 0.4, 1.0, -1.0)
    f = 1.2 * y + rng.normal(size=80)
    A, B, _ = sigmoid_fit(f, y, eps=1e-12, max_iter=500)
    p = sigmoid_predict(f, A, B)
    t = exf.reference_targets(y)
    assert abs(np.sum(t - p)) < 1e-9 and abs(np.dot(t - p, f)) < 1e-9
    hard = (y > 0).astype(float)
    assert abs(np.sum(hard - p)) > 1e-3


# --------------------------------------------------------------------------
# wrong answers fail at their first wrong case, with a hint
# --------------------------------------------------------------------------
def _first_wrong(fn, cases, same):
    for k, c in enumerate(cases, start=1):
        try:
            got = fn(*[np.array(v, copy=True) if isinstance(v, np.ndarray) else v
                       for v in c.args.values()])
        except Exception:  # noqa: BLE001
            return k
        if not same(got, c):
            return k
    return None


def _svr_same(got, c):
    return np.allclose(got, c.expected, atol=1e-9, rtol=0)


def _all_plus(t1, t2, alpha, C):
    n = len(C)
    a1, a2, C1, C2 = alpha[t1], alpha[t2], C[t1 % n], C[t2 % n]
    return max(0.0, a1 + a2 - C1), min(C2, a1 + a2)


def _one_bound(t1, t2, alpha, C):
    n = len(C)
    a1, a2, Cb = alpha[t1], alpha[t2], C[t1 % n]
    if (t1 < n) != (t2 < n):
        return max(0.0, a2 - a1), min(Cb, Cb + a2 - a1)
    return max(0.0, a1 + a2 - Cb), min(Cb, a1 + a2)


def _swapped(t1, t2, alpha, C):
    L, H = sol.svr_pair_bounds(t1, t2, alpha, C)
    return H, L


def _no_clip_at_zero(t1, t2, alpha, C):
    n = len(C)
    a1, a2, C1, C2 = alpha[t1], alpha[t2], C[t1 % n], C[t2 % n]
    if (t1 < n) != (t2 < n):
        return a2 - a1, min(C2, C1 + a2 - a1)
    return a1 + a2 - C1, min(C2, a1 + a2)


def _index_by_t(t1, t2, alpha, C):
    return sol.svr_pair_bounds(t1, t2, alpha, np.r_[C, C][: max(t1, t2) + 1]
                               if max(t1, t2) >= len(C) else C)


@pytest.mark.parametrize("wrong, hint", [
    (_all_plus, "equal sign"),
    (_one_bound, "its own bound"),
    (_swapped, "lower end"),
    (_no_clip_at_zero, "outside the box"),
], ids=["signs all +1", "one bound", "L and H swapped", "no clip at 0"])
def test_wrong_svr_bounds_fail_at_their_first_wrong_case(wrong, hint):
    cases = list(exf.svr_bounds_cases())
    k = _first_wrong(wrong, cases, _svr_same)
    assert k is not None
    res = check_svr_pair_bounds(wrong)
    assert not res.passed and res.case_number == k, (res.case_number, k, res.message)
    assert hint in res.message and "hint:" in res.message and "sign y1" in res.message
    assert 0 < res.n_passed < res.n_total and res.first_failure == res.message


def test_property_check_accepts_right_answers_written_another_way():
    def by_search(t1, t2, alpha, C):
        """Walk along the line and keep the points inside the box (exact on a
        grid that contains the ends)."""
        n = len(C)
        s = (1 if t1 < n else -1) * (1 if t2 < n else -1)
        a1, a2, C1, C2 = alpha[t1], alpha[t2], C[t1 % n], C[t2 % n]
        cands = sorted({0.0, C2, a2 + (a1 - 0.0) * s, a2 + (a1 - C1) * s})
        inside = [v for v in cands
                  if -1e-12 <= v <= C2 + 1e-12 and -1e-12 <= a1 + s * (a2 - v) <= C1 + 1e-12]
        return min(inside), max(inside)

    assert check_svr_pair_bounds(by_search).passed
    # a tuple, a list and numpy scalars are all fine
    assert check_svr_pair_bounds(lambda *a: list(np.float64(v) for v in sol.svr_pair_bounds(*a)))


def test_bad_returns_are_reported_not_raised():
    r = check_svr_pair_bounds(lambda t1, t2, alpha, C: None)
    assert not r.passed and "forget the `return`" in r.message
    r = check_svr_pair_bounds(lambda t1, t2, alpha, C: (1.0, 2.0, 3.0))
    assert not r.passed and "return the pair (L, H)" in r.message
    r = check_svr_pair_bounds(lambda t1, t2, alpha, C: alpha[t1 + 100])
    assert not r.passed and "IndexError" in r.message

    def starter(t1, t2, alpha, C):
        raise NotImplementedError

    r = check_svr_pair_bounds(starter)
    assert r.status == "not implemented" and r.n_total is None and r.score == 0.0
    r = check_platt_targets(lambda labels: 0.5)
    assert not r.passed and "one target per label" in r.message
    r = check_platt_targets(lambda labels: np.full(len(labels), np.nan))
    assert not r.passed and "finite" in r.message


def _hard(labels):
    return (np.asarray(labels) > 0).astype(float)


def _swap_counts(labels):
    pos = np.asarray(labels) > 0
    npos, nneg = pos.sum(), (~pos).sum()
    return np.where(pos, (nneg + 1) / (nneg + 2), 1 / (npos + 2))


def _negatives_own_class(labels):
    pos = np.asarray(labels) > 0
    npos, nneg = pos.sum(), (~pos).sum()
    return np.where(pos, (npos + 1) / (npos + 2), (nneg + 1) / (nneg + 2))


def _pooled(labels):
    pos = np.asarray(labels) > 0
    n = len(pos)
    return np.where(pos, (pos.sum() + 1) / (n + 2), 1 / (n + 2))


def _plus_one_only(labels):
    pos = np.asarray(labels) > 0
    npos, nneg = pos.sum(), (~pos).sum()
    return np.where(pos, npos / (npos + 1), 1 / (nneg + 1))


@pytest.mark.parametrize("wrong, hint", [
    (_hard, "hard targets"),
    (_swap_counts, "swapped"),
    (_negatives_own_class, "probability of the *negative* class"),
    (_pooled, "estimate over all"),
    (_plus_one_only, "rule of succession"),
], ids=["hard", "swapped counts", "negatives' own class", "pooled", "(s+1)/(m+1)"])
def test_wrong_targets_fail_at_their_first_wrong_case(wrong, hint):
    cases = list(exf.platt_targets_cases())
    k = _first_wrong(wrong, cases, lambda g, c: np.allclose(g, c.expected, atol=1e-12, rtol=0))
    res = check_platt_targets(wrong)
    assert not res.passed and res.case_number == k, (res.case_number, k)
    assert hint in res.message, res.message
    assert res.n_passed < res.n_total


# --------------------------------------------------------------------------
# the guard and the lock
# --------------------------------------------------------------------------
def test_a_call_into_svmlab_fails_with_the_guard(fresh_locks):
    def via_reference(t1, t2, alpha, C):
        return exf.reference_svr_bounds(t1, t2, alpha, C)

    def via_sigmoid_fit(labels):
        from svmlab.svm import _probability   # noqa: F401 - holds the targets
        return _hard(labels)

    for check, fn in ((check_svr_pair_bounds, via_reference),
                      (check_platt_targets, via_sigmoid_fit)):
        res = check(fn)
        assert not res.passed and res.guard_fired and "calls svmlab's own code" in res.message
        assert res.score == 0.0
        assert not reg.revealed(res.exercise_id)


def test_passing_unlocks_the_hidden_segment_lines(fresh_locks):
    from svmlab.reference._source import tagged_lines
    from svmlab.reference.dual import Dual

    lines = tagged_lines(Dual.take_step)
    segment = {i for i, (_, tags) in enumerate(lines) if "segment" in tags}
    assert len(segment) == 4
    hidden = reg.hidden_lines(Dual.take_step)
    assert segment <= set(hidden) and {hidden[i] for i in segment} == {"08.svr_pair_bounds"}
    text = "\n".join(lines[i][0] for i in segment)
    assert "min(C2, C1 + a2 - a1)" in text and "min(C2, a2 + a1)" in text
    # the same step and threshold as notebook 01's exercises: hidden for those
    assert set(hidden.values()) == {"08.svr_pair_bounds", "01.take_step", "01.threshold"}
    assert check_svr_pair_bounds(sol.svr_pair_bounds).passed
    assert not segment & set(reg.hidden_lines(Dual.take_step))
    reg.reveal("01.take_step", "01.threshold")
    assert reg.hidden_lines(Dual.take_step) == {}
    assert check_platt_targets(sol.platt_targets).passed and reg.revealed("08.platt_targets")


def test_the_notebook_cells_run_unsolved():
    """The starter cells of svmlab.exercises.family.CELLS, executed: each
    check says "not implemented yet" and raises nothing."""
    for kind, src in exf.CELLS:
        if kind != "code":
            continue
        ns = {}
        body, last = src.rsplit("\n", 1)
        exec(body, ns)  # noqa: S102 - our own cells
        res = eval(last, ns)  # noqa: S307
        assert res.status == "not implemented"
