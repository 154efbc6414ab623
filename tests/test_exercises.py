"""The notebook exercises (svmlab.exercises) and their instructor solutions.

* every solution in instructor/solutions passes its checker;
* for every checker, several wrong answers fail, each at the FIRST case where
  it differs from the reference (found here independently, by running the
  wrong function over the checker's own cases), with a hint in words;
* the starter cells (svmlab.exercises.starters) run without raising and
  report "not implemented yet";
* a student function that calls svmlab's own code (which holds the answers)
  fails with a message that says so (the guard), found in its code or while
  it runs, also through a helper and through a compiled function;
* the result carries what a grader needs (id, cases passed, score, first
  failure, guard) and a pass unlocks the exercise's hidden reference lines;
* the "derive" exercises are checked by properties (segment ends, the
  one-plane QP): right answers written differently pass, wrong ones fail
  with a hint about the property they break;
* the checkers' references agree with the recorded steps of the solvers and
  with independent computations (a grid search along the SMO segment, the
  readable references in svmlab.reference).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from svmlab.smo._pairstep import pair_step, pair_threshold
from svmlab.exercises import (ExerciseResult, check_count_pairs, check_irwls_weights,
                              check_most_violated, check_one_plane_qp, check_ordinal_constraint,
                              check_reorder, check_segment_ends, check_sweep, check_take_step,
                              check_threshold, check_working_set_slack)
from svmlab.exercises import cutting_plane as ex_cp
from svmlab.exercises import irwls as ex_irwls
from svmlab.exercises import ordinal as ex_ord
from svmlab.exercises import smo as ex_smo
from svmlab.exercises.starters import CELLS, handoff_markdown

SOLUTIONS = Path(__file__).resolve().parent.parent / "instructor" / "solutions"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, SOLUTIONS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sol01 = _load("solutions_01_smo")
sol03 = _load("solutions_03_cutting_plane")
sol04 = _load("solutions_04_ordinal")
sol05 = _load("solutions_05_irwls")


# --------------------------------------------------------------------------
# every solution passes
# --------------------------------------------------------------------------
@pytest.mark.parametrize("check, fn, min_cases", [
    (check_segment_ends, sol01.segment_ends, 150),
    (check_take_step, sol01.take_step, 150),
    (check_threshold, sol01.threshold, 150),
    (check_most_violated, sol03.most_violated, 30),
    (check_working_set_slack, sol03.working_set_slack, 30),
    (check_one_plane_qp, sol03.one_plane_qp, 15),
    (check_count_pairs, sol04.count_pairs, 15),
    (check_sweep, sol04.ordinal_sweep, 35),
    (check_ordinal_constraint, sol04.ordinal_constraint, 20),
    (check_irwls_weights, sol05.irwls_weights, 60),
    (check_reorder, sol05.reorder_sets, 25),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_solution_passes(check, fn, min_cases):
    res = check(fn)
    assert isinstance(res, ExerciseResult)
    assert res.passed, res.message
    assert res.status == "passed" and res.case_number is None
    assert res.n_cases >= min_cases
    assert f"all {res.n_cases} cases agree" in res.message
    # what a grader reads: every case passed (a speed test counts as one more)
    speed = check in (check_sweep, check_count_pairs)
    assert res.n_total == res.n_cases + speed == res.n_passed and res.score == 1.0
    assert res.first_failure is None and not res.guard_fired and res.exercise_id
    row = res.as_dict()
    assert row["exercise_id"] == res.exercise_id and row["passed"] and row["score"] == 1.0
    assert str(res) == repr(res) == res.message
    assert "Well done" in res._repr_html_()


# --------------------------------------------------------------------------
# wrong answers fail at the first differing case
# --------------------------------------------------------------------------
def _first_difference(cases, fn, same):
    """1-based number of the first case where ``fn`` disagrees with the
    expected answer (an exception counts as a disagreement)."""
    for k, c in enumerate(cases, 1):
        try:
            got = fn(*[np.array(v) if isinstance(v, np.ndarray) else v
                       for v in c.args.values()])
            agrees = same(got, c.expected, c)
        except Exception:
            return k, c
        if not agrees:
            return k, c
    raise AssertionError("the wrong answer agrees on every case")


def _assert_fails_first(check, cases_fn, fn, same, hint):
    res = check(fn)
    k, case = _first_difference(cases_fn(), fn, same)
    assert not res.passed and res.status == "failed"
    assert res.case_number == k, res.message
    assert f"case {k} ({case.label})" in res.message
    assert hint in res.message, res.message
    return res


# -- 01: take_step ---------------------------------------------------------
def _step_same(got, exp, case):
    try:
        return all(abs(float(g) - float(e)) <= 1e-9 * max(1, case.args["C"])
                   for g, e in zip(got, exp)) and len(got) == 2
    except TypeError:
        return False


def _bounds(y1, y2, a1, a2, C):
    if y1 != y2:
        return max(0.0, a2 - a1), min(C, C + a2 - a1)
    return max(0.0, a2 + a1 - C), min(C, a2 + a1)


def step_no_clipping(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    eta = K11 + K22 - 2 * K12
    a2n = a2 + y2 * (E1 - E2) / eta
    return a1 + y1 * y2 * (a2 - a2n), a2n


def step_wrong_s(*args):
    y1, y2, a1, a2 = args[:4]
    a1n, a2n = sol01.take_step(*args)
    return a1 - y1 * y2 * (a2 - a2n), a2n


def step_platt_sign(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    L, H = _bounds(y1, y2, a1, a2, C)
    if L >= H:
        return a1, a2
    eta = K11 + K22 - 2 * K12
    a2n = min(max(a2 - y2 * (E1 - E2) / eta, L), H)
    return a1 + y1 * y2 * (a2 - a2n), a2n


def step_one_bounds_rule(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    # uses the y1 != y2 ends for every pair
    L, H = max(0.0, a2 - a1), min(C, C + a2 - a1)
    if L >= H:
        return a1, a2
    eta = K11 + K22 - 2 * K12
    a2n = min(max(a2 + y2 * (E1 - E2) / eta, L), H)
    return a1 + y1 * y2 * (a2 - a2n), a2n


def step_ignores_eta0(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    L, H = _bounds(y1, y2, a1, a2, C)
    if L >= H:
        return a1, a2
    eta = K11 + K22 - 2 * K12
    a2n = min(max(a2 + y2 * (E1 - E2) / eta, L), H)  # eta = 0: ZeroDivisionError
    return a1 + y1 * y2 * (a2 - a2n), a2n


@pytest.mark.parametrize("fn, hint", [
    (step_no_clipping, "a2 must be clipped to [L, H]: you returned 2.4 > H = 1.0"),
    (step_wrong_s, "a1 moved the wrong way"),
    (step_platt_sign, "wrong sign"),
    (step_one_bounds_rule, "(y1 == y2) the segment is [L, H]"),
    (step_ignores_eta0, "raised ZeroDivisionError"),
    (lambda *a: sol01.take_step(*a)[1], "wrong type or shape"),
    (lambda *a: None, "returned None"),
])
def test_take_step_wrong_answers(fn, hint):
    _assert_fails_first(check_take_step, ex_smo.take_step_cases, fn, _step_same, hint)


def test_take_step_eta_nonpositive_hint():
    def always_clip(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
        eta = K11 + K22 - 2 * K12
        if eta <= 0:
            L, H = _bounds(y1, y2, a1, a2, C)
            if L < H:
                return a1 + y1 * y2 * (a2 - L), L  # always the lower end
        return sol01.take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C)

    res = _assert_fails_first(check_take_step, ex_smo.take_step_cases, always_clip, _step_same,
                              "eta = K11 + K22 - 2 K12 = 0.0 <= 0")
    assert "better end" in res.message


# -- 01: threshold ---------------------------------------------------------
def _scalar_same(got, exp, case):
    return abs(float(got) - float(exp)) <= 1e-9 * (1 + abs(float(exp)))


def thr_swapped(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    d1, d2 = y1 * (a1_new - a1), y2 * (a2_new - a2)
    b1 = b - E1 - d1 * K11 - d2 * K12
    b2 = b - E2 - d1 * K12 - d2 * K22
    if 0 < a1_new < C:
        return b2
    if 0 < a2_new < C:
        return b1
    return 0.5 * (b1 + b2)


def thr_platt_sign(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    d1, d2 = y1 * (a1_new - a1), y2 * (a2_new - a2)
    b1 = E1 + d1 * K11 + d2 * K12 + b
    b2 = E2 + d1 * K12 + d2 * K22 + b
    return b1 if 0 < a1_new < C else (b2 if 0 < a2_new < C else 0.5 * (b1 + b2))


def thr_always_average(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    d1, d2 = y1 * (a1_new - a1), y2 * (a2_new - a2)
    return 0.5 * ((b - E1 - d1 * K11 - d2 * K12) + (b - E2 - d1 * K12 - d2 * K22))


def thr_no_average(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    d1, d2 = y1 * (a1_new - a1), y2 * (a2_new - a2)
    return b - E1 - d1 * K11 - d2 * K12 if 0 < a1_new < C or not 0 < a2_new < C else \
        b - E2 - d1 * K12 - d2 * K22


@pytest.mark.parametrize("fn, hint", [
    (thr_swapped, "so b must be b1"),
    (thr_platt_sign, "sign convention"),
    (thr_always_average, "use b1"),
    (thr_no_average, "svmlab takes their average"),
    (lambda *a: "b", "b_new must be a number"),
])
def test_threshold_wrong_answers(fn, hint):
    if fn is thr_always_average:
        hint = "so b must be b"
    _assert_fails_first(check_threshold, ex_smo.threshold_cases, fn, _scalar_same, hint)


def thr_always_b1(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    d1, d2 = y1 * (a1_new - a1), y2 * (a2_new - a2)
    return b - E1 - d1 * K11 - d2 * K12


def test_threshold_always_b1_gets_the_choice_hint_not_the_sign_hint():
    """A threshold that always returns b1 picks the wrong candidate; its hint
    names the rule of the choice (never "sign convention"), at every case
    where it fails."""
    res = _assert_fails_first(check_threshold, ex_smo.threshold_cases, thr_always_b1,
                              _scalar_same, "so b must be b2")
    assert "sign convention" not in res.message
    for c in ex_smo.threshold_cases():
        got = thr_always_b1(*c.args.values())
        hint = ex_smo._threshold_hint(c, got)
        assert hint is None or "sign convention" not in hint, c.label
    assert 0 < res.n_passed < res.n_total and 0 < res.score < 1


# -- 01: segment_ends (derive, checked by properties) ---------------------------
def ends_by_clipping(y1, y2, a1, a2, C):
    """Right, written otherwise: the a2 range where both a1 and a2 stay in [0, C]."""
    s = y1 * y2
    lo, hi = 0.0, C
    k = a1 + s * a2                       # a1_new = k - s a2_new
    if s > 0:                             # 0 <= k - a2 <= C
        lo, hi = max(lo, k - C), min(hi, k)
    else:                                 # 0 <= k + a2 <= C
        lo, hi = max(lo, -k), min(hi, C - k)
    return lo, hi


def ends_swapped_rules(y1, y2, a1, a2, C):
    return sol01.segment_ends(-y1, y2, a1, a2, C)


def ends_box_only(y1, y2, a1, a2, C):
    return 0.0, C


def ends_too_short(y1, y2, a1, a2, C):
    L, H = sol01.segment_ends(y1, y2, a1, a2, C)
    return L, L + 0.5 * (H - L) if H > a2 else H


def _ends_same(got, exp, case):
    return all(abs(float(g) - float(e)) <= 1e-9 * max(1.0, case.args["C"])
               for g, e in zip(got, exp))


def test_segment_ends_accepts_a_different_derivation():
    assert check_segment_ends(ends_by_clipping).passed


@pytest.mark.parametrize("fn, hint", [
    (ends_swapped_rules, "is outside the box"),
    (ends_box_only, "is outside the box"),
    (ends_too_short, "the segment is longer"),
    (lambda y1, y2, a1, a2, C: (a2, a2), "the segment is longer"),
    (lambda y1, y2, a1, a2, C: sol01.segment_ends(y1, y2, a1, a2, C)[::-1], "L is the lower end"),
])
def test_segment_ends_wrong_answers(fn, hint):
    _assert_fails_first(check_segment_ends, ex_smo.segment_ends_cases, fn, _ends_same, hint)


def test_segment_ends_properties_are_the_reference_ends():
    """The properties the checker tests pin the ends down: the reference ends
    pass them, and moving either end by 1e-6 fails them."""
    for c in ex_smo.segment_ends_cases():
        L, H = c.expected
        assert ex_smo._ends_hint(c, (L, H)) is None, c.label
        C = c.args["C"]
        for bad in ((L - 1e-6 * C, H), (L, H + 1e-6 * C)):
            assert ex_smo._ends_hint(c, bad) is not None, c.label
        if H - L > 1e-5 * C:
            assert ex_smo._ends_hint(c, (L + 1e-6 * C, H)) is not None, c.label


# -- 03: one_plane_qp (derive, checked by the objective) ----------------------------
def _w_close(got, exp, case):
    g, d, C = case.args.values()
    return (ex_cp.one_plane_objective(got, g, d, C)
            <= ex_cp.one_plane_objective(exp, g, d, C) + 1e-9 * (1 + abs(
                ex_cp.one_plane_objective(exp, g, d, C))))


def qp_by_bisection(g, d, C):
    """Right, found another way: minimise along g by bisection on the slope."""
    g = np.asarray(g, float)
    gg = g @ g
    if gg == 0 or d <= 0:
        return np.zeros_like(g)
    lo, hi = 0.0, max(C, d / gg) * 2
    for _ in range(200):
        t = 0.5 * (lo + hi)
        slope = t * gg - (C * gg if d - t * gg > 0 else 0.0)
        lo, hi = (t, hi) if slope < 0 else (lo, t)
    return 0.5 * (lo + hi) * g


@pytest.mark.parametrize("fn, hint", [
    (lambda g, d, C: C * g if d > 0 else 0 * g, "the plane holds with room to spare"),
    (lambda g, d, C: (d / (g @ g)) * g if d > 0 and g @ g > 0 else 0 * g, "beyond t = C"),
    (lambda g, d, C: np.zeros_like(g), "still violated"),
    (lambda g, d, C: min(C, abs(d) / (g @ g)) * g if g @ g > 0 else 0 * g, "no w can lower"),
    (lambda g, d, C: np.append(g, 0.0), "must have the shape of g"),
])
def test_one_plane_qp_wrong_answers(fn, hint):
    _assert_fails_first(check_one_plane_qp, ex_cp.one_plane_cases, fn, _w_close, hint)


def test_one_plane_qp_accepts_another_method_and_matches_the_solver():
    assert check_one_plane_qp(qp_by_bisection).passed
    # the recorded cases: the solver's second iterate is the one-plane minimiser
    its = ex_cp.recorded_cutting_plane_iterations()
    recorded = [c for c in ex_cp.one_plane_cases() if "record" in c.extra]
    assert len(recorded) == 2
    for c in recorded:
        name = next(nm for nm, _, _, r in its if r is c.extra["record"])
        second = next(r for nm, _, _, r in its if nm == name and r.iteration == 2)
        np.testing.assert_allclose(np.append(second.w, second.b), c.expected, atol=1e-9)


# -- the guard ----------------------------------------------------------------------
def step_calls_pair_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    out = pair_step(y1, y2, a1, a2, E1, E2, 0.0, K11, K12, K22, C, 1e-12)
    return out[1], out[2]


def _helper_bounds(y1, y2, a1, a2, C):
    from svmlab.smo import _pairstep
    return _pairstep.pair_bounds(y1, y2, a1, a2, C)


def ends_through_a_helper(y1, y2, a1, a2, C):
    return _helper_bounds(y1, y2, a1, a2, C)


def ends_hidden_import(y1, y2, a1, a2, C):
    mod = __import__("importlib").import_module("svm" + "lab.smo._pairstep")
    f = getattr(mod, "pair" + "_bounds")
    return f(y1, y2, a1, a2, C)


def sweep_calls_the_explorer(scores, y):
    return viz_ordinal_sweep_counts(scores, y)


def viz_ordinal_sweep_counts(scores, y):
    import importlib
    return importlib.import_module("svm" + "lab.viz.ordinal").sweep_counts(scores, y)


@pytest.mark.parametrize("check, fn, target", [
    (check_take_step, step_calls_pair_step, "pair_step"),          # a compiled function, by name
    (check_segment_ends, ends_through_a_helper, "svmlab.smo"),      # through the student's helper
    (check_segment_ends, ends_hidden_import, "pair_bounds"),        # no svmlab name in the code
    (check_sweep, sweep_calls_the_explorer, "svmlab.viz.ordinal"),  # a Python function of svmlab
])
def test_guard_refuses_calls_into_svmlab(check, fn, target, fresh_locks):
    res = check(fn)
    assert not res.passed and res.status == "failed" and res.guard_fired
    assert target in res.guard_call and "calls svmlab's own code" in res.message
    assert res.score == 0.0 and res.first_failure == res.message
    assert not ex_reg.revealed(res.exercise_id) or not ex_reg.locks_enabled()


def test_guard_leaves_numpy_and_own_helpers_alone():
    def helper(a, b):
        return max(0.0, a), min(b, 1.0)

    def ends(y1, y2, a1, a2, C):
        return sol01.segment_ends(y1, y2, a1, a2, C) if helper(0, 1) else None

    assert check_segment_ends(ends).passed


# -- reveal locks -------------------------------------------------------------------
import svmlab.exercises._registry as ex_reg  # noqa: E402


@pytest.fixture
def fresh_locks(monkeypatch):
    monkeypatch.delenv(ex_reg.LOCKS_ENV, raising=False)
    ex_reg.reset_locks()
    yield ex_reg
    ex_reg.reset_locks()


#: expressions of each answer that its lock must hide in the reference source
_ANSWER_TEXT = {
    "01.segment_ends": ["min(C2, C1 + alph2 - alph1)", "max(0.0, alph2 + alph1 - C1)"],
    "01.take_step": ["alph2 + y2 * (E1 - E2) / eta", "a2 = H", "a1 = alph1 + s * (alph2 - a2)"],
    "01.threshold": ["b1 = b - E1 - d1 * k11 - d2 * k12", "b_new = 0.5 * (b1 + b2)",
                     "if 0.0 < a1 < C1:"],
    "03.most_violated": ["margins < 1.0", "g = (c * v * y) @ X / n"],
    "03.working_set_slack": ["max(0.0, float((d[1:] - G @ w).max()))"],
    "04.count_pairs": ["np.sum(size * (np.cumsum(size) - size))"],
    "04.ordinal_sweep": ["c_plus[i] = n_lower[rank[i]] - passed[:rank[i]].sum()"],
    "04.ordinal_constraint": ["g = (c_plus - c_minus) @ X / m"],
    "05.reorder_sets": ["(sp.sets == S2) & (ye > sp.tol)", "new[high] = C * y[F][high]"],
    "08.svr_pair_bounds": ["min(C2, C1 + a2 - a1)", "max(0.0, a2 + a1 - C1)"],
}


def _function(spec):
    import importlib
    mod, qual = spec.split(":")
    obj = importlib.import_module(f"svmlab.reference.{mod}")
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_lock_rule_finds_its_lines_and_hides_the_answer(fresh_locks):
    from svmlab.reference._source import tagged_lines

    for eid, ex in ex_reg.EXERCISES.items():
        assert eid.split(".")[1] == ex.function
        hidden_text = []
        for h in ex.hides:
            func = _function(h.function)
            lines = tagged_lines(func)
            idx = ex_reg.lines_of(h, lines)
            assert idx, f"{eid}: {h} finds no line"
            hidden = ex_reg.hidden_lines(func)
            assert idx <= set(hidden), eid
            hidden_text += [lines[i][0] for i in idx]
        for text in _ANSWER_TEXT.get(eid, []):
            assert any(text in line for line in hidden_text), (eid, text)
    assert set(_ANSWER_TEXT) == {e for e, x in ex_reg.EXERCISES.items() if x.hides}


def test_locks_open_on_pass_reveal_and_instructor_override(fresh_locks, monkeypatch):
    from svmlab.reference.smo import PlattSMO

    calls = []

    class Listener:
        def changed(self):
            calls.append(1)

    listener = Listener()
    ex_reg.on_lock_change(listener.changed)
    take = PlattSMO.take_step
    assert not ex_reg.revealed("01.threshold") and ex_reg.hidden_lines(take)
    assert check_threshold(sol01.threshold).passed
    assert ex_reg.revealed("01.threshold") and calls
    still = set(ex_reg.hidden_lines(take).values())
    assert "01.threshold" not in still and "01.take_step" in still
    ex_reg.reveal("01.take_step", "01.segment_ends")
    assert ex_reg.hidden_lines(take) == {}
    ex_reg.reset_locks()
    assert ex_reg.hidden_lines(take)
    monkeypatch.setenv(ex_reg.LOCKS_ENV, "off")
    assert ex_reg.revealed("01.take_step") and ex_reg.hidden_lines(take) == {}
    ex_reg.set_locks(True)  # the student build: locks on whatever the environment says
    assert not ex_reg.revealed("01.take_step")
    ex_reg.set_locks(None)
    assert ex_reg.revealed("01.take_step")
    with pytest.raises(KeyError):
        ex_reg.revealed("99.nothing")
    # a wrong answer or a guarded call unlocks nothing
    monkeypatch.delenv(ex_reg.LOCKS_ENV)
    assert not check_take_step(step_calls_pair_step).passed
    assert not ex_reg.revealed("01.take_step")


# -- 03: most_violated -------------------------------------------------------
def _cp_same(got, exp, case):
    c_e, g_e, d_e = ex_cp.reference_most_violated(*case.args.values())
    if case.extra.get("record") is not None:
        c_e, d_e = exp[0], exp[2]
    c, g, d = got
    return (np.shape(c) == c_e.shape and np.array_equal(np.asarray(c, bool), c_e)
            and np.shape(g) == g_e.shape and np.allclose(g, g_e, atol=1e-9, rtol=0)
            and abs(d - d_e) <= 1e-12)


def mv(rule, scale_g=True, use_y=True):
    def f(X, y, w):
        n = len(y)
        m = y * (X @ w)
        c = rule(m, X @ w)
        g = ((c * y) if use_y else c * 1.0) @ X
        return c, (g / n if scale_g else g), c.sum() / n
    return f


@pytest.mark.parametrize("fn, hint", [
    (mv(lambda m, s: m <= 1), "exactly on the margin"),
    (mv(lambda m, s: m < 0), "not only when the example is misclassified"),
    (mv(lambda m, s: s < 1), "needs the label"),
    (mv(lambda m, s: m < 1, scale_g=False), "Divide by n"),
    (mv(lambda m, s: m < 1, use_y=False), "multiplied by its label"),
    (lambda X, y, w: (np.flatnonzero(y * (X @ w) < 1), np.zeros(X.shape[1]), 0.0),
     "not the indices of the violated ones"),
])
def test_most_violated_wrong_answers(fn, hint):
    _assert_fails_first(check_most_violated, ex_cp.most_violated_cases, fn, _cp_same, hint)


@pytest.mark.parametrize("fn, hint", [
    (lambda G, d, w: float(np.max(d - G @ w)) if len(d) else 0.0, "never negative"),
    (lambda G, d, w: max(0.0, float(np.min(d - G @ w))) if len(d) else 0.0, "the largest"),
    (lambda G, d, w: max(0.0, float(np.max(d - G @ w))), "raised ValueError"),
    (lambda G, d, w: max(0.0, float(np.max(G @ w - d))) if len(d) else 0.0, "xi = max(0,"),
])
def test_working_set_slack_wrong_answers(fn, hint):
    _assert_fails_first(check_working_set_slack, ex_cp.slack_cases, fn, _scalar_same, hint)


# -- 04: ordinal ---------------------------------------------------------------
def _pair_same(got, exp, case):
    return all(np.shape(g) == np.shape(e) and np.array_equal(g, e) for g, e in zip(got, exp))


def sweep_with_ties(scores, y):  # processes 'd' before 'u' at equal values: counts s_i - s_j = 1
    s = np.asarray(scores, float)
    y = np.asarray(y)
    viol = (y[:, None] > y[None, :]) & (s[:, None] - s[None, :] <= 1.0)
    return viol.sum(axis=1), viol.sum(axis=0)


def sweep_off_by_one(scores, y):
    cp, cm = sol04.ordinal_sweep(scores, y)
    # counts the ranks r' <= r instead of r' < r for c_plus
    s = np.asarray(scores, float)
    y = np.asarray(y)
    extra = np.array([np.sum((y == y[i]) & (s[i] - s < 1.0)) - 1 for i in range(len(s))],
                     dtype=np.int64)
    return cp + extra, cm


def sweep_quadratic(scores, y):
    s = np.asarray(scores, float)
    y = np.asarray(y)
    viol = (y[:, None] > y[None, :]) & (s[:, None] - s[None, :] < 1.0)
    return viol.sum(axis=1), viol.sum(axis=0)


@pytest.mark.parametrize("fn, hint", [
    (sweep_with_ties, "s_i - s_j = 1 exactly is not violated"),
    (lambda s, y: sol04.ordinal_sweep(s, y)[::-1], "swapped"),
    (sweep_off_by_one, "pairs of equal rank are not preference pairs"),
    (lambda s, y: sol04.ordinal_sweep(s, y)[0], "return the pair (c_plus, c_minus)"),
])
def test_sweep_wrong_answers(fn, hint):
    _assert_fails_first(check_sweep, ex_ord.sweep_cases, fn, _pair_same, hint)


def test_sweep_counting_pairs_is_correct_but_too_slow():
    res = check_sweep(sweep_quadratic)
    assert not res.passed and res.case_number is None
    assert "too slow" in res.message and "O(n^2)" in res.message
    assert res.n_passed == res.n_total - 1 and res.first_failure == res.message
    assert check_sweep(sweep_quadratic, check_speed=False).passed


def test_count_pairs_comparing_every_pair_is_right_but_too_slow():
    def quadratic(y):
        y = np.asarray(y)
        return int(np.sum(y[:, None] > y[None, :]))

    res = check_count_pairs(quadratic)
    assert not res.passed and res.case_number is None and "too slow" in res.message
    assert check_count_pairs(quadratic, check_speed=False).passed


def test_sweep_off_by_one_hint_names_the_example():
    def minus_off(scores, y):
        cp, cm = sol04.ordinal_sweep(scores, y)
        cm = cm.copy()
        cm[cm > 0] -= 1
        return cp, cm

    res = _assert_fails_first(check_sweep, ex_ord.sweep_cases, minus_off, _pair_same,
                              "c_minus[")
    assert "higher-ranked examples i" in res.message


@pytest.mark.parametrize("fn, hint", [
    (lambda y: int(np.sum(np.asarray(y)[:, None] != np.asarray(y)[None, :])), "counted twice"),
    (lambda y: len(y) * (len(y) - 1) // 2, "equal rank"),
    (lambda y: [sol04.count_pairs(y)], "one whole number"),
    (lambda y: sol04.count_pairs(y) + 0.5, "whole number"),
])
def test_count_pairs_wrong_answers(fn, hint):
    _assert_fails_first(check_count_pairs, ex_ord.count_pairs_cases, fn,
                        lambda g, e, c: np.ndim(g) == 0 and g == e, hint)


def _gd_same(got, exp, case):
    g, d = got
    return (np.shape(g) == np.shape(exp[0]) and np.allclose(g, exp[0], atol=1e-9, rtol=0)
            and abs(d - exp[1]) <= 1e-12)


@pytest.mark.parametrize("fn, hint", [
    (lambda X, cp, cm, m: ((cm - cp) / m @ X, cp.sum() / m), "Wrong sign"),
    (lambda X, cp, cm, m: ((cp - cm) @ X, cp.sum() / m), "Divide by m"),
    (lambda X, cp, cm, m: (cp / m @ X, cp.sum() / m), "use c_plus - c_minus"),
    (lambda X, cp, cm, m: ((cp - cm) / m @ X, cp.sum()), "divide by m"),
])
def test_ordinal_constraint_wrong_answers(fn, hint):
    _assert_fails_first(check_ordinal_constraint, ex_ord.constraint_cases, fn, _gd_same, hint)


# -- 05: IRWLS -------------------------------------------------------------------
def _w_same(got, exp, case):
    got = np.asarray(got, float)
    if got.shape != exp.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.where(np.isinf(exp), got == exp,
                                    np.abs(got - exp) <= 1e-12 * np.abs(exp))))


def w_wrong_split(ye, C):  # C / (e y) for every nonzero e y, negative weights included
    with np.errstate(divide="ignore"):
        return np.where(ye == 0, np.inf, C / np.where(ye == 0, 1.0, ye))


@pytest.mark.parametrize("fn, hint", [
    (w_wrong_split, "Outside the margin (e y < 0, S2) the weight is 0"),
    (lambda ye, C: np.where(ye > 0, ye / C, np.where(ye == 0, np.inf, 0.0)), "not (e y) / C"),
    (lambda ye, C: np.where(ye > 0, C / np.where(ye > 0, ye, 1.0), 0.0), "infinite"),
    (lambda ye, C: sol05.irwls_weights(ye, C)[:-1], "must have the shape of the input"),
    (lambda ye, C: 1 / 0, "raised ZeroDivisionError"),
])
def test_irwls_weights_wrong_answers(fn, hint):
    _assert_fails_first(check_irwls_weights, ex_irwls.weights_cases, fn, _w_same, hint)


def reorder_no_wait(sets, y_beta, ye, C, tol):
    new = sets.copy()
    new[(sets == 1) & (y_beta < 0)] = 2
    new[(sets == 1) & (y_beta > C)] = 3
    new[(sets == 2) & (ye > tol)] = 1
    new[(sets == 3) & (ye < -tol)] = 1
    return new


def reorder_not_strict(sets, y_beta, ye, C, tol):
    new = sets.copy()
    a, b = (sets == 1) & (y_beta <= 0), (sets == 1) & (y_beta >= C)
    new[a], new[b] = 2, 3
    if not (a.any() or b.any()):
        new[(sets == 2) & (ye >= tol)] = 1
        new[(sets == 3) & (ye <= -tol)] = 1
    return new


def reorder_no_rule_d(sets, y_beta, ye, C, tol):
    new = sol05.reorder_sets(sets, y_beta, ye, C, tol)
    back = (sets == 3) & (new == 1)
    new[back] = 3
    return new


@pytest.mark.parametrize("fn, hint", [
    (reorder_no_wait, "rules c and d wait"),
    (reorder_not_strict, "stays in S1"),
    (reorder_no_rule_d, "Rule d: a sample of S3 moves to S1 when e y < -tol"),
    (lambda sets, yb, ye, C, tol: sol05.reorder_sets(sets, yb, ye, C, tol) - 1,
     "must hold 1 (S1), 2 (S2) or 3 (S3)"),
])
def test_reorder_wrong_answers(fn, hint):
    _assert_fails_first(check_reorder, ex_irwls.reorder_cases, fn,
                        lambda g, e, c: np.shape(g) == e.shape and np.array_equal(g, e), hint)


# --------------------------------------------------------------------------
# starter code, odd inputs, display
# --------------------------------------------------------------------------
def _run_cells(cells):
    ns, results = {}, []
    for kind, src in cells:
        if kind != "code":
            continue
        body, last = src.rsplit("\n\n\n", 1)
        exec(compile(body, "<starter>", "exec"), ns)  # noqa: S102 - our own cell text
        results.append((ns, eval(compile(last, "<starter>", "eval"), ns)))  # noqa: S307
    return results


@pytest.mark.parametrize("notebook", sorted(CELLS))
def test_starter_cells_report_not_implemented(notebook):
    cells = CELLS[notebook]
    n_code = sum(kind == "code" for kind, _ in cells)
    assert 2 <= n_code <= 4  # two to four exercises per notebook
    assert [k for k, _ in cells] == ["markdown", "code"] * n_code
    for _, res in _run_cells(cells):
        assert isinstance(res, ExerciseResult)
        assert res.status == "not implemented" and not res.passed
        assert "not implemented yet" in res.message and res.n_cases == 0
        assert "\n" not in res.message  # one stable line for nbval
        assert "not implemented yet" in res._repr_html_()
    md = handoff_markdown(notebook)
    for _, src in cells:
        assert src in md


@pytest.mark.parametrize("notebook, module", [
    ("01_smo_geometry", sol01), ("03_cutting_plane", sol03),
    ("04_ordinal_regression", sol04), ("05_irwls", sol05)])
def test_starter_cells_pass_with_the_solutions(notebook, module):
    """The check call of each starter cell accepts the solution of the same
    name (the starter names match the solution modules)."""
    cells = [(k, s) for k, s in CELLS[notebook] if k == "code"]
    for _, src in cells:
        body, last = src.rsplit("\n\n\n", 1)
        ns = {}
        exec(compile(body, "<starter>", "exec"), ns)  # noqa: S102
        name = last[last.index("(") + 1:-1]
        ns[name] = getattr(module, name)
        check = last[:last.index("(")]
        kwargs = {"check_speed": False} if check in ("check_sweep", "check_count_pairs") else {}
        assert ns[check](ns[name], **kwargs).passed


def test_not_implemented_later_and_bad_callables():
    def partial(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
        if K11 + K22 - 2 * K12 <= 0:
            raise NotImplementedError
        return sol01.take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C)

    res = check_take_step(partial)
    assert res.status == "failed" and "not handled yet" in res.message
    assert res.case_number == 9  # the first eta <= 0 case
    res = check_take_step(42)
    assert res.status == "failed" and "expected a function" in res.message
    res = check_take_step(lambda *a: (float("nan"), 0.0))
    assert "finite" in res.message and res.case_number == 1


def test_inputs_are_copied():
    """A student function that scribbles over its inputs does not change the
    next case's inputs."""
    def scribbling(sets, y_beta, ye, C, tol):
        new = sol05.reorder_sets(sets, y_beta, ye, C, tol)
        sets[:] = 1
        y_beta[:] = -1.0
        return new

    assert check_reorder(scribbling).passed


# --------------------------------------------------------------------------
# the references against the solvers' records and independent computations
# --------------------------------------------------------------------------
def test_smo_records_reproduced_by_the_pair_step():
    steps = ex_smo.recorded_smo_steps()
    etas = np.array([r.eta for _, r in steps])
    assert (etas == 0).any() and (etas < 0).any() and (etas > 0).any()
    for _, r in steps:
        moved, a1n, a2n, *_ = pair_step(r.y1, r.y2, r.a1_old, r.a2_old, r.E1, r.E2, r.b_old,
                                        r.K11, r.K12, r.K22, 1.0, 1e-6)
        assert moved and a1n == pytest.approx(r.a1_new, abs=1e-12)
        assert a2n == pytest.approx(r.a2_new, abs=1e-12)
        b = pair_threshold(r.y1, r.y2, r.a1_old, r.a2_old, r.a1_new, r.a2_new, r.E1, r.E2,
                           r.b_old, r.K11, r.K12, r.K22, 1.0)
        assert b == pytest.approx(r.b_new, abs=1e-10)


_LABEL_BRANCH = [("inside the segment", "interior"), ("clipped at H", "clip-H"),
                 ("clipped at L", "clip-L"), ("L == H", "point"),
                 ("better end is L", "eta<=0 to L"), ("better end is H", "eta<=0 to H"),
                 ("equally good", "eta<=0 tie"), ("no change", "no move"),
                 ("end at C", "clip-H")]


def test_take_step_hand_cases_are_what_their_labels_say():
    for c in ex_smo._hand_step_cases():
        want = [b for text, b in _LABEL_BRANCH if text in c.label]
        assert want and ex_smo.branch_of_step(c.args) == want[0], c.label


def test_take_step_expected_answers_maximise_the_dual_on_a_grid():
    """Independent of the analytic formula: the expected a2_new maximises the
    gain of the dual y2 (E1 - E2) d - eta d^2 / 2 over a fine grid of [L, H]."""
    cases = list(ex_smo._hand_step_cases()) + list(ex_smo._random_step_cases())
    for c in cases:
        a = c.args
        L, H = _bounds(a["y1"], a["y2"], a["a1"], a["a2"], a["C"])
        if L >= H or ex_smo.branch_of_step(a) in ("eta<=0 tie", "no move"):
            continue
        eta = a["K11"] + a["K22"] - 2 * a["K12"]
        grid = np.linspace(L, H, 20001)
        d = grid - a["a2"]
        gain = a["y2"] * (a["E1"] - a["E2"]) * d - 0.5 * eta * d * d
        best = grid[np.argmax(gain)]
        assert abs(c.expected[1] - best) <= (H - L) / 20000 + 1e-12, c.label
        s = a["y1"] * a["y2"]
        assert a["y1"] * c.expected[0] + a["y2"] * c.expected[1] == pytest.approx(
            a["y1"] * a["a1"] + a["y2"] * a["a2"], abs=1e-12)
        assert s in (-1.0, 1.0)


def test_threshold_cases_cover_every_branch():
    branches = {ex_smo.branch_of_threshold(c.args) for c in ex_smo.threshold_cases()}
    assert branches == {"b1", "b2", "average"}


def test_cutting_plane_records_match_the_reference():
    its = ex_cp.recorded_cutting_plane_iterations()
    assert len(its) >= 10
    for _, Xb, y, r in its:
        w = np.append(r.w, r.b)
        c, g, d = ex_cp.reference_most_violated(Xb, y, w)
        assert np.array_equal(c, r.constraint)
        assert d == pytest.approx(r.constraint_offset, abs=1e-14)
        assert np.linalg.norm(g) == pytest.approx(r.constraint_norm, abs=1e-12)
        assert d - w @ g == pytest.approx(r.xi_new, abs=1e-12)
    # the records left out for a margin within 1e-9 of 1 are few
    assert sum(1 for _ in ex_cp._recorded_cases()) >= len(its) - 3


def test_cutting_plane_reference_agrees_with_the_readable_reference():
    ref = pytest.importorskip("svmlab.reference.cutting_plane")
    for c in ex_cp.most_violated_cases():
        X, y, w = c.args.values()
        assert np.array_equal(ref.most_violated(X, y, w), ex_cp.reference_most_violated(X, y, w)[0])


def test_ordinal_references_agree():
    viz_ord = pytest.importorskip("svmlab.viz.ordinal")
    cases = list(ex_ord.sweep_cases())
    for c in cases:
        s, y = c.args.values()
        if len(s) >= 2:
            cp, cm = viz_ord.sweep_counts(s, y)
            assert np.array_equal(cp, c.expected[0]) and np.array_equal(cm, c.expected[1])
    for X, y, r in ex_ord.recorded_ordinal_iterations():
        g, d = ex_ord.reference_constraint(X, r.c_plus, r.c_minus, r.n_pairs)
        assert d == pytest.approx(r.constraint_offset, abs=1e-14)
        assert d - r.w @ g == pytest.approx(r.xi_new, abs=1e-12)
        assert r.n_pairs == viz_ord.n_pairs(y)


def test_ordinal_sweep_agrees_with_the_readable_reference():
    ref = pytest.importorskip("svmlab.reference.ordinal")
    for c in ex_ord.sweep_cases():
        s, y = c.args.values()
        if len(s) == 0 or len(np.unique(y)) < 1:
            continue
        cp, cm = ref.sweep_counts(s, y)
        assert np.array_equal(cp, c.expected[0]) and np.array_equal(cm, c.expected[1])


def test_irwls_record_weights_follow_eq8_where_the_sets_agree():
    n_checked = 0
    for _, est, recs, _ in ex_irwls.recorded_irwls_fits():
        for r in recs:
            ye = np.asarray(r.ye)
            a = ex_irwls.irwls_weight(ye, est.C)
            agree = ((r.sets == 2) & (ye < 0)) | ((r.sets == 3) & (ye > 0))
            np.testing.assert_allclose(r.weights[agree], a[agree], rtol=1e-12)
            n_checked += int(agree.sum())
    assert n_checked > 100


def test_irwls_recorded_reorderings_cover_rules_c_and_d():
    steps = ex_irwls.recorded_reorder_steps()
    assert len(steps) >= 10
    assert {name for name, *_ in steps} == {"moons", "blobs", "xor"}
    assert any(r.moved[2] > 0 for *_, r, _ in steps) and any(r.moved[3] > 0 for *_, r, _ in steps)
    # the reference reproduces every one of them (no record is filtered out)
    for _, est, before, r, yw in steps:
        got = ex_irwls.reference_reorder(before, yw * r.beta, r.ye, est.C, 0.9 * est.tol)
        assert np.array_equal(got, r.sets)
