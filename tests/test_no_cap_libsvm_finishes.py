"""``max_iter=-1`` never stops a fit that scikit-learn's LIBSVM finishes.

Issue 31, item 0: with ``max_iter=-1`` scikit-learn's LIBSVM has no step cap.
svmlab keeps a safeguard (:func:`svmlab._stepping.iteration_cap`), which
must lie above what such fits take.  The case: the poly SVR of scikit-learn's
``examples/svm/plot_svm_regression.py`` on one of its (unseeded) random
draws, which svmlab solves in about 11 million pair steps: upstream
LIBSVM's ``max(10_000_000, 100 n)`` stopped it with a ConvergenceWarning
before the optimality conditions held (decision 35c01).  The test fits with
the default ``max_iter`` and checks the stop reason and the dual objective,
computed here from ``dual_coef_``, against scikit-learn's.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVR as SkSVR

from svmlab._stepping import iteration_cap
from svmlab.svm import SVR

KW = dict(kernel="poly", C=100.0, gamma="auto", degree=3, epsilon=0.1, coef0=1.0)


def _draw(seed):
    rng = np.random.RandomState(seed)
    X = np.sort(5 * rng.rand(40, 1), axis=0)
    y = np.sin(X).ravel()
    y[::5] += 3 * (0.5 - rng.rand(8))
    return X, y


def _dual(model, X, y):
    """SVR's dual objective (maximised), computed here from the model's
    coefficients beta = alpha - alpha*."""
    beta = np.zeros(len(y))
    beta[model.support_] = model.dual_coef_.ravel()
    K = (1.0 * X @ X.T + 1.0) ** 3  # gamma="auto" on one feature: 1.0
    f = K @ beta
    obj = -0.5 * beta @ f - KW["epsilon"] * np.abs(beta).sum() + y @ beta
    return obj


def test_gallery_poly_svr_finishes_without_a_cap_stop():
    # draw 0: LIBSVM 14.9 million steps, svmlab 14.7 million with LIBSVM's
    # tie rule and rounded kernel values (36a01; draw 6, which took 11.1
    # million before, now takes LIBSVM's 4.9 million)
    X, y = _draw(0)
    assert iteration_cap(len(y)) > 20_000_000
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ours = SVR(**KW).fit(X, y)
    ref = SkSVR(**KW).fit(X, y)
    assert ours.stop_reason_ == "converged" and ours.converged_
    steps = int(np.sum(ours.n_iter_))
    assert steps > 10_000_000, steps  # past upstream LIBSVM's cap: the case still tests it
    o_ours = _dual(ours, X, y)
    o_ref = _dual(ref, X, y)
    # both stop at tol=1e-3 on nearby paths; ours must be as far up the
    # (maximised) dual as LIBSVM's stopping point to 1e-6 relative (measured:
    # ours 448.09205, LIBSVM's 448.09212), and a feasible point of the same
    # problem
    assert o_ours >= o_ref - 1e-6 * abs(o_ref), (o_ours, o_ref)
    beta = ours.dual_coef_.ravel()
    assert np.all(np.abs(beta) <= KW["C"] * (1 + 1e-12)) and abs(beta.sum()) <= 1e-8 * KW["C"]
