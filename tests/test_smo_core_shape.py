"""The shape of the compiled SMO loops (svmlab.smo._platt, svmlab.smo._dual_core,
their shared svmlab.smo._core, and svmlab.smo._records).

* The record buffers' slots are generated from SMOStep's and DualStep's
  fields: the slot lists agree with the dataclasses, each compiled writer
  (``_platt._record``, ``_dual_core._dual_record``) has exactly one line per
  slot, and every decoded field of every step equals a value computed
  here, independently, from the multipliers before and after the step
  (brute-force kernel matrix from scikit-learn, dual objective, errors).
  A writer and a field list that disagree (a slot swapped, a field added on
  one side only, a stale numba cache) fail here.
* No unused integer/float state slots.
* The compiled functions of the named-state interface document every
  parameter (numpydoc ``Parameters`` section).
"""

import ast
import dataclasses
import inspect
import pathlib
import re

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.metrics.pairwise import rbf_kernel

from svmlab import SMOClassifier
from svmlab.kernels import Kernel
from svmlab.smo import DualRun
from svmlab.smo import _core as core
from svmlab.smo import _dual_core as dual_core
from svmlab.smo import _platt as platt
from svmlab.smo import _records as records
from svmlab.smo._records import DualStep, SMOStep

PKG = pathlib.Path(core.__file__).resolve().parents[1]


# ----------------------------------------------------------------- records
def test_slots_are_smostep_fields_in_order():
    names = [f.name for f in dataclasses.fields(SMOStep)]
    expected = [n for n in names if n not in records.RUN_FIELDS]
    assert set(records.RUN_FIELDS) <= set(names)
    assert list(records.RECORD_FIELDS) == expected
    assert records.SLOT._fields == tuple(expected)
    assert list(records.SLOT) == list(range(len(expected)))
    assert records.R_SIZE == len(expected)
    assert records.R_LAYOUT == records.R_SIZE and records.R_BUFFER == records.R_SIZE + 1
    # the loops write the layouts they were compiled with
    assert platt.SLOT is records.SLOT and dual_core.DUAL_SLOT is records.DUAL_SLOT
    names = [f.name for f in dataclasses.fields(DualStep)]
    expected = [n for n in names if n not in records.RUN_FIELDS]
    assert list(records.DUAL_FIELDS) == expected
    assert list(records.DUAL_SLOT) == list(range(len(expected)))
    assert records.DUAL_LAYOUT == records.DUAL_SIZE == len(expected)


def _writer_slots(writer=platt._record, slot="SLOT"):
    """The slots the compiled writer assigns, from its source: ``rec[SLOT.x] = ...``."""
    tree = ast.parse(inspect.getsource(writer.py_func))
    slots, others = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                        and t.value.id == "rec":
                    s = t.slice
                    if isinstance(s, ast.Attribute) and isinstance(s.value, ast.Name) \
                            and s.value.id == slot:
                        slots.append(s.attr)
                    else:
                        others.append(ast.unparse(s))
    return slots, others


def test_writer_has_one_line_per_field():
    slots, others = _writer_slots()
    assert sorted(slots) == sorted(records.RECORD_FIELDS)
    assert len(slots) == len(set(slots))
    assert others == ["R_LAYOUT"]  # the layout checksum, nothing else
    slots, others = _writer_slots(dual_core._dual_record, "DUAL_SLOT")
    assert sorted(slots) == sorted(records.DUAL_FIELDS)
    assert len(slots) == len(set(slots))
    assert others == ["DUAL_LAYOUT"]


def test_stale_layout_is_refused():
    rec = np.zeros(records.R_BUFFER)
    with pytest.raises(RuntimeError, match="stale numba cache"):
        records.decode_record(rec, True, cache_hits=0, cache_misses=0, kernel_evaluations=0)
    with pytest.raises(RuntimeError, match="stale numba cache"):
        records.decode_record(np.zeros(records.R_SIZE), True, cache_hits=0, cache_misses=0,
                              kernel_evaluations=0)
    with pytest.raises(RuntimeError, match="stale numba cache"):
        records.decode_dual(np.zeros(records.DUAL_BUFFER), cache_hits=0, cache_misses=0,
                            kernel_evaluations=0)


def _dual(K, y, a):
    v = a * y
    return a.sum() - 0.5 * v @ K @ v


@pytest.mark.parametrize("selection", ["platt", "wss2"])
def test_every_recorded_field_matches_an_independent_value(selection):
    X, y01 = make_moons(70, noise=0.3, random_state=2)
    C, gamma = 3.0, 1.5
    sw = np.where(np.arange(70) % 5 == 0, 2.0, 1.0)  # per-example bounds C_i
    est = SMOClassifier(C=C, gamma=gamma, selection=selection, random_state=4, progress=False,
                        cache_dtype="float64")
    run = est.start(X, y01, sample_weight=sw)
    yp = np.where(y01 == est.classes_[1], 1.0, -1.0)
    Cv = C * sw
    K = rbf_kernel(X, gamma=gamma)
    steps = 0
    heuristics = set()
    while True:
        a_before = run.alpha.copy()
        b_before = run.b
        n_before = run.n_iter
        r = run.step()
        if r is None:
            break
        steps += 1
        a_after = run.alpha
        moved = np.flatnonzero(a_after != a_before)
        i1, i2 = r.i1, r.i2
        assert set(moved) <= {i1, i2} and len(moved) >= 1
        assert r.iteration == n_before + 1 == run.n_iter
        assert (r.a1_old, r.a2_old) == (a_before[i1], a_before[i2])
        assert (r.a1_new, r.a2_new) == (a_after[i1], a_after[i2])
        assert (r.b_old, r.b_new) == (b_before, run.b)
        assert (r.y1, r.y2) == (yp[i1], yp[i2])
        assert (r.C1, r.C2) == (Cv[i1], Cv[i2])
        f = K @ (a_before * yp) + b_before
        np.testing.assert_allclose([r.E1, r.E2], [f[i1] - yp[i1], f[i2] - yp[i2]], atol=1e-9)
        np.testing.assert_allclose([r.K11, r.K12, r.K22], [K[i1, i1], K[i1, i2], K[i2, i2]],
                                   atol=1e-12)
        assert r.eta == pytest.approx(r.K11 + r.K22 - 2 * r.K12, abs=1e-12)
        assert r.delta_objective == pytest.approx(
            _dual(K, yp, a_after) - _dual(K, yp, a_before), abs=1e-9)
        # the segment of a2 in the pair's box, and the clipping flag
        lo = max(0.0, r.a2_old - r.a1_old) if r.y1 != r.y2 else max(0.0, r.a1_old + r.a2_old - r.C1)
        hi = (min(r.C2, r.C1 + r.a2_old - r.a1_old) if r.y1 != r.y2
              else min(r.C2, r.a1_old + r.a2_old))
        assert (r.L, r.H) == pytest.approx((lo, hi), abs=1e-12)
        if r.eta > 0:
            assert r.a2_unclipped == pytest.approx(r.a2_old + r.y2 * (r.E1 - r.E2) / r.eta,
                                                   rel=1e-9, abs=1e-12)
        assert r.clipped == (r.eta <= 0 or not (r.L <= r.a2_unclipped <= r.H))
        nonbound = np.count_nonzero((a_after > 0) & (a_after < Cv))
        assert r.n_nonbound == nonbound
        assert r.n_active == np.count_nonzero(run.active == core.ACTIVE) or selection == "wss2"
        assert r.examine_all in (True, False)
        if selection == "wss2":
            assert r.heuristic == "wss2" and r.examine_all is False
        heuristics.add(r.heuristic)
        assert (r.cache_hits, r.cache_misses) == (run.cache_hits, run.cache_misses)
    assert steps > 20 and run.converged
    if selection == "platt":
        assert {"max|E1-E2|", "full-scan"} <= heuristics


def test_every_dual_field_matches_an_independent_value():
    """Every DualStep field of an epsilon-SVR run (l = 2n variables over n
    examples, per-example bounds) against values computed here."""
    X, z = make_moons(45, noise=0.3, random_state=5)
    z = z + 0.1 * X[:, 0]
    n, gamma, eps = len(z), 1.2, 0.1
    Cn = np.where(np.arange(n) % 4 == 0, 2.0, 1.0)
    y = np.r_[np.ones(n), -np.ones(n)]
    p = np.r_[eps - z, eps + z]
    U = np.r_[Cn, Cn]
    idx = np.r_[np.arange(n), np.arange(n)]
    run = DualRun(Kernel(X, "rbf", gamma=gamma), y, p, U, idx=idx, tol=1e-4, shrinking=False)
    K = rbf_kernel(X, gamma=gamma)[np.ix_(idx, idx)]
    Q = y[:, None] * y[None, :] * K
    f = lambda a: 0.5 * a @ Q @ a + p @ a  # noqa: E731
    steps = 0
    while True:
        a0 = run.alpha.copy()
        b0 = float(run.state.fst[core.FS_B])
        r = run.step()
        if r is None:
            break
        steps += 1
        a1 = run.alpha
        i1, i2 = r.i1, r.i2
        assert set(np.flatnonzero(a1 != a0)) <= {i1, i2}
        assert r.iteration == run.n_iter == steps
        assert (r.a1_old, r.a2_old, r.a1_new, r.a2_new) == (a0[i1], a0[i2], a1[i1], a1[i2])
        assert (r.y1, r.y2, r.C1, r.C2) == (y[i1], y[i2], U[i1], U[i2])
        assert (r.p1, r.p2) == pytest.approx((p[i1], p[i2]), abs=1e-15)
        grad = Q @ a0 + p
        np.testing.assert_allclose([r.E1, r.E2], [y[i1] * grad[i1] + b0, y[i2] * grad[i2] + b0],
                                   atol=1e-9)
        assert r.b_old == b0 and r.b_new == float(run.state.fst[core.FS_B])
        np.testing.assert_allclose([r.K11, r.K12, r.K22], [K[i1, i1], K[i1, i2], K[i2, i2]],
                                   atol=1e-12)
        assert r.eta == pytest.approx(r.K11 + r.K22 - 2 * r.K12, abs=1e-12)
        assert r.delta_objective == pytest.approx(f(a0) - f(a1), abs=1e-9)
        v = -y * grad
        up = np.where(y > 0, a0 < U, a0 > 0)
        low = np.where(y > 0, a0 > 0, a0 < U)
        assert r.m == pytest.approx(v[up].max(), abs=1e-9) and v[i1] == pytest.approx(r.m)
        assert r.M == pytest.approx(v[low].min(), abs=1e-9)
        assert r.gap == pytest.approx(r.m - r.M, abs=1e-12) and r.gap > 1e-4
        aij = K[i1, i1] + K[i2, i2] - 2 * K[i1, i2]
        assert r.gain == pytest.approx(-(r.m - v[i2]) ** 2 / max(aij, 1e-12), rel=1e-7)
        lo = max(0.0, r.a2_old - r.a1_old) if r.y1 != r.y2 else max(0.0, r.a1_old + r.a2_old - r.C1)
        hi = (min(r.C2, r.C1 + r.a2_old - r.a1_old) if r.y1 != r.y2
              else min(r.C2, r.a1_old + r.a2_old))
        assert (r.L, r.H) == pytest.approx((lo, hi), abs=1e-12)
        assert r.clipped == (r.eta <= 0 or not (r.L <= r.a2_unclipped <= r.H))
        assert r.sign_class == 0 and r.n_active == 2 * n
        assert r.n_free == np.count_nonzero((a1 > 0) & (a1 < U))
        assert (r.cache_hits, r.cache_misses) == (run.cache_hits, run.cache_misses)
    assert steps > 20 and run.converged


# ------------------------------------------------------------ state slots
def test_no_unused_state_slots():
    """Every integer (IS_*) and float (FS_*) state slot is read or written
    somewhere besides its definition; the slots number 0..SIZE-1."""
    source = "\n".join(p.read_text() for p in PKG.rglob("*.py"))
    for prefix, size in (("IS_", core.IS_SIZE), ("FS_", core.FS_SIZE)):
        names = [n for n in vars(core) if n.startswith(prefix) and n != prefix + "SIZE"]
        assert sorted(getattr(core, n) for n in names) == list(range(size))
        for n in names:
            uses = len(re.findall(r"\b" + n + r"\b", source))
            assert uses >= 2, f"{n} is defined but never used"


# ------------------------------------------------------------------- docs
@pytest.mark.parametrize("module,name", [(platt, "platt_run"), (platt, "_record"),
                                         (platt, "_modes"), (dual_core, "dual_run"),
                                         (dual_core, "_dual_record")])
def test_compiled_functions_document_their_parameters(module, name):
    fn = getattr(module, name).py_func
    doc = inspect.getdoc(fn)
    params = list(inspect.signature(fn).parameters)
    assert "Parameters\n----------" in doc
    documented = set()
    for line in doc.splitlines():
        m = re.match(r"^([A-Za-z_][\w, ]*?) :", line)
        if m:
            documented |= {p.strip() for p in m.group(1).split(",")}
    missing = [p for p in params if p not in documented]
    assert not missing, f"{name}: undocumented parameters {missing}"


def test_named_state_fields_are_documented():
    for cls in (platt.KernelSide, platt.Problem, platt.Iterate, platt.PlattLists,
                platt.Layout, platt.ErrorCache, platt.Options, dual_core.DualRows,
                dual_core.DualProblem, dual_core.DualIterate, dual_core.DualOptions):
        src = inspect.getsource(cls)
        for field in cls._fields:
            # each field is preceded by a "#:" comment line
            assert re.search(r"#:.*\n(\s*#:.*\n)*\s*" + field + r":", src), (cls.__name__, field)
