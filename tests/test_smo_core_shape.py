"""The shape of the compiled SMO core (svmlab.smo._core, svmlab.smo._records).

* The record buffer's slots are generated from SMOStep's fields: the slot
  list agrees with the dataclass, the compiled writer ``_record`` has exactly
  one line per slot, and every decoded field of every step equals a value
  computed here, independently, from the multipliers before and after the
  step (brute-force kernel matrix from scikit-learn, dual objective, errors).
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
from svmlab.smo import _core as core
from svmlab.smo import _records as records
from svmlab.smo._records import SMOStep

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
    # the core re-exports the layout it was compiled with
    assert core.SLOT is records.SLOT and core.R_BUFFER == records.R_BUFFER


def _writer_slots():
    """The slots the compiled writer assigns, from its source: ``rec[SLOT.x] = ...``."""
    tree = ast.parse(inspect.getsource(core._record.py_func))
    slots, others = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                        and t.value.id == "rec":
                    s = t.slice
                    if isinstance(s, ast.Attribute) and isinstance(s.value, ast.Name) \
                            and s.value.id == "SLOT":
                        slots.append(s.attr)
                    else:
                        others.append(ast.unparse(s))
    return slots, others


def test_writer_has_one_line_per_field():
    slots, others = _writer_slots()
    assert sorted(slots) == sorted(records.RECORD_FIELDS)
    assert len(slots) == len(set(slots))
    assert others == ["R_LAYOUT"]  # the layout checksum, nothing else


def test_stale_layout_is_refused():
    rec = np.zeros(records.R_BUFFER)
    with pytest.raises(RuntimeError, match="stale numba cache"):
        records.decode_record(rec, True, cache_hits=0, cache_misses=0, kernel_evaluations=0)
    with pytest.raises(RuntimeError, match="stale numba cache"):
        records.decode_record(np.zeros(records.R_SIZE), True, cache_hits=0, cache_misses=0,
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
@pytest.mark.parametrize("name", ["smo_run", "_record", "_modes"])
def test_compiled_functions_document_their_parameters(name):
    fn = getattr(core, name).py_func
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
    for cls in (core.KernelSide, core.Problem, core.Iterate, core.PlattLists, core.Layout,
                core.ErrorCache, core.Options):
        src = inspect.getsource(cls)
        for field in cls._fields:
            # each field is preceded by a "#:" comment line
            assert re.search(r"#:.*\n(\s*#:.*\n)*\s*" + field + r":", src), (cls.__name__, field)
