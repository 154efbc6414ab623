"""svmlab.SVC against LIBSVM's trajectory on an ill-conditioned fit
(docs/decisions/33a01, 36a01): iris standardised, the gallery's C = 1e10
and gamma = 1e-4 (examples/svm/plot_rbf_parameters.py), and C = 1e6.

LIBSVM's steps come from two habits: ties in the choice of i go to the last
maximising index (svmlab's ``takes_i``) and the kernel values are computed
in double and rounded to float32 (``Qfloat``).  With both, svmlab's SVC
takes LIBSVM's steps to within a few percent and ends at its dual objective;
with the first maximising index and float32 values it took 4283 steps at
C = 1e6 (LIBSVM 704), with float64 values and either index 7.0 million at
C = 1e10 (LIBSVM 386 thousand).  The drop-in's default rows for a fit this
small are float64 values rounded to float32 precision
(``Kernel(qfloat=True)``, the compiled one-vs-one driver's rows included):
the second test; the first asks for float32 rows through
``resolve_cache_dtype`` (the large fits' rows).  A third checks that the
rounding is what does it: the same fit with unrounded float64 values
takes millions of steps.  Step counts and each pair's dual objective of
scikit-learn's SVC (LIBSVM) are computed here."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as LibsvmSVC

import svmlab


def _pair_objectives(model, gamma):
    """Each one-vs-one pair's dual objective ``1/2 c'Kc - sum |c|`` (``c =
    y alpha``, LIBSVM's form, minimised) from scikit-learn's layout of
    ``dual_coef_`` (row ``b-1`` holds class a's coefficients of pair (a, b),
    row ``a`` class b's), with the kernel computed here in float64."""
    sv = np.asarray(model.support_vectors_)
    dc = np.asarray(model.dual_coef_)
    start = np.concatenate([[0], np.cumsum(model.n_support_)])
    k = len(model.n_support_)
    out = []
    for a in range(k):
        for b in range(a + 1, k):
            ia, ib = slice(start[a], start[a + 1]), slice(start[b], start[b + 1])
            c = np.concatenate([dc[b - 1, ia], dc[a, ib]])
            S = np.vstack([sv[ia], sv[ib]])
            out.append(0.5 * c @ rbf_kernel(S, S, gamma=gamma) @ c - np.abs(c).sum())
    return np.array(out)


@pytest.fixture(scope="module")
def iris_split():
    X = StandardScaler().fit_transform(load_iris().data)
    y = load_iris().target
    X_train, _, y_train, _ = train_test_split(X, y, train_size=0.8, random_state=0)
    return X_train, y_train


def _check_against_libsvm(X, y, C, gamma):
    lib = LibsvmSVC(C=C, gamma=gamma).fit(X, y)
    ours = svmlab.SVC(C=C, gamma=gamma).fit(X, y)
    steps_lib = np.asarray(lib.n_iter_)
    steps = np.asarray(ours.n_iter_)
    assert steps.shape == steps_lib.shape == (3,)
    # no pair takes more than 10% over LIBSVM's steps (the old rules: 18x
    # on pair (1, 2) at C = 1e10, 2.7x at C = 1e6)
    assert np.all(steps <= 1.1 * steps_lib + 5), (steps, steps_lib)
    if C == 1e10:
        # and on the gallery's cell it follows LIBSVM's trajectory: within 10%
        assert np.all(steps >= 0.9 * steps_lib - 5), (steps, steps_lib)
    w_lib = _pair_objectives(lib, gamma)
    w = _pair_objectives(ours, gamma)
    assert np.all(np.abs(w - w_lib) <= 1e-6 * np.abs(w_lib)), (w, w_lib)


@pytest.mark.parametrize("C", [1e10, 1e6])
def test_with_qfloat_rows_svc_takes_libsvm_steps(iris_split, C, monkeypatch):
    """LIBSVM's rules (last i, float32 kernel values): LIBSVM's steps."""
    import svmlab._base as base

    seen = []

    def qfloat(cache_dtype, n, cache_size_mb):
        seen.append(cache_dtype)
        return "float32"

    monkeypatch.setattr(base, "resolve_cache_dtype", qfloat)
    X, y = iris_split
    _check_against_libsvm(X, y, C, 1e-4)
    assert seen  # the drop-in's run asked for its cache type here


@pytest.mark.parametrize("C", [1e10, 1e6])
def test_default_svc_takes_libsvm_steps_on_the_gallery_cell(iris_split, C):
    """The drop-in's own rows (float64, rounded to float32 precision, the
    one-vs-one driver's class blocks) give LIBSVM's steps and objective."""
    X, y = iris_split
    _check_against_libsvm(X, y, C, 1e-4)


def test_unrounded_float64_values_leave_libsvm_trajectory(iris_split, monkeypatch):
    """The rounding is the half that matters on this cell: with the kernel's
    float64 values left unrounded (``qfloat=False`` forced where the fit
    makes its kernel) the pair (1, 2) takes more than ten times LIBSVM's
    steps (7.1 million with the last index, measured in 33a01), so the
    test above fails without it.  The step cap keeps this short."""
    import svmlab._base as base

    real = base.Kernel
    seen = []

    def unrounded(*args, **kw):
        seen.append(kw.get("qfloat"))
        kw["qfloat"] = False
        return real(*args, **kw)

    monkeypatch.setattr(base, "Kernel", unrounded)
    X, y = iris_split
    lib = LibsvmSVC(C=1e10, gamma=1e-4).fit(X, y)
    with pytest.warns(Warning):
        ours = svmlab.SVC(C=1e10, gamma=1e-4, max_iter=5_000_000).fit(X, y)
    assert seen == [True]  # the drop-in asked for the rounding there
    assert np.asarray(ours.n_iter_)[2] > 10 * np.asarray(lib.n_iter_)[2]
