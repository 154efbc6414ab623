"""svmlab.viz.primer: the three KKT cases, labelled decision panels, the C/gamma grid.

References are independent of the code under test: the KKT cases are checked
against a point-by-point loop over Platt's TR eq. 12, and the C/gamma models
against LIBSVM (scikit-learn SVC) on the same problem.
"""

import numpy as np
import pytest

from svmlab import SMOClassifier, datasets
from svmlab.kernels import Kernel
from svmlab.viz import primer as vpr
from svmlab.viz import smo as vsmo


def _cases_by_loop(alpha, yf, C, tol):
    case, bad = [], []
    for a, m in zip(alpha, yf):
        if a == 0:
            case.append(0)
            bad.append(m < 1 - tol)
        elif a == C:
            case.append(2)
            bad.append(m > 1 + tol)
        else:
            case.append(1)
            bad.append(abs(m - 1) > tol)
    return np.array(case), np.array(bad)


def test_kkt_cases_match_the_three_conditions_point_by_point(rng):
    C, tol = 2.0, 1e-3
    alpha = rng.choice([0.0, C, 0.7, 1.3], size=200)
    yf = 1.0 + rng.choice([-0.5, -2e-3, 0.0, 5e-4, 2e-3, 0.8], size=200)
    case, viol = vpr.kkt_cases(alpha, yf, C, tol)
    want_case, want_viol = _cases_by_loop(alpha, yf, C, tol)
    assert np.array_equal(case, want_case)
    assert np.array_equal(viol, want_viol)
    assert viol.any() and not viol.all()


def test_violators_are_the_purple_crosses_of_notebook_01():
    """The primer's violators at a step are exactly the explorer's (01) ones."""
    X, y = datasets.toy_2d("moons", n=40, random_state=0)
    clf = SMOClassifier(C=10.0, kernel="rbf", gamma=1.0, random_state=0, progress=False)
    from svmlab.viz import record_trace

    trace = record_trace(clf, X, y)
    ex = vsmo.SMOStepExplorer.from_estimator(clf, X, y, trace.records)
    ypm = np.where(y == clf.classes_[1], 1.0, -1.0)
    K = Kernel(X, "rbf", 1.0).matrix()
    alphas, bs = vsmo.replay(trace.records, len(X))
    n_seen = 0
    for t in (1, 10, 40, len(trace)):
        yf = ypm * (K @ (alphas[t] * ypm) + bs[t])
        _, viol = vpr.kkt_cases(alphas[t], yf, 10.0, tol=ex.tol)
        assert np.array_equal(np.flatnonzero(viol), ex.violators_after(t - 1))
        n_seen += viol.sum()
    assert n_seen > 0     # the comparison saw some violators
    assert not viol.any()  # and none after the last step


def test_kkt_cases_reject_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        vpr.kkt_cases([0.0, 1.0], [1.0], 1.0)
    with pytest.raises(ValueError, match=r"\[0, C\]"):
        vpr.kkt_cases([0.0, 2.0], [1.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="positive"):
        vpr.kkt_cases([0.0], [1.0], 0.0)


def test_plot_kkt_cases_draws_violators_as_purple_crosses():
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    alpha = np.array([0.0, 0.0, 0.5, 1.0, 1.0])
    yf = np.array([1.5, 0.2, 1.0, 0.3, 2.0])      # violators: index 1 and 4
    fig, ax = plt.subplots()
    out = vpr.plot_kkt_cases(ax, alpha, yf, 1.0)
    assert np.array_equal(np.flatnonzero(out["violates"]), [1, 4])
    crosses = out["artists"]["viol"]
    assert len(crosses.get_offsets()) == 2
    assert to_hex(crosses.get_facecolor()[0]) == "#9467bd"
    assert np.allclose(crosses.get_offsets()[:, 1], [0.2, 2.0])
    assert ax.get_legend().get_texts()[0].get_fontsize() >= 9
    plt.close(fig)


def test_label_decision_axes_adds_labels_and_a_legend():
    import matplotlib.pyplot as plt

    X, y = datasets.toy_2d("moons", n=30, random_state=1)
    clf = SMOClassifier(C=1.0, gamma=1.0, progress=False).fit(X, y)
    fig, ax = plt.subplots()
    from svmlab.viz import plot_decision_regions

    plot_decision_regions(ax, clf, X, y)
    leg = vpr.label_decision_axes(ax)
    assert ax.get_xlabel() == "$x_1$" and ax.get_ylabel() == "$x_2$"
    texts = [t.get_text() for t in leg.get_texts()]
    assert texts == ["class $-1$", "class $+1$", "support vector", "$f=0$", r"$f=\pm1$"]
    assert all(t.get_fontsize() >= 9 for t in leg.get_texts())
    assert vpr.label_decision_axes(ax, legend=False) is None
    plt.close(fig)


def test_C_gamma_grid_models_agree_with_libsvm():
    import matplotlib.pyplot as plt
    from sklearn.svm import SVC

    X, y = datasets.toy_2d("moons", n=40, random_state=0)
    Cs, gammas = (0.1, 10.0), (0.5, 5.0)
    fig, axes, models = vpr.plot_C_gamma_grid(X, y, Cs, gammas)
    assert axes.shape == (2, 2) and set(models) == {(C, g) for C in Cs for g in gammas}
    Xg = np.random.default_rng(0).uniform(X.min(0), X.max(0), size=(200, 2))
    ypm = np.where(y == models[(Cs[0], gammas[0])].classes_[1], 1.0, -1.0)
    for (C, g), m in models.items():
        ref = SVC(C=C, kernel="rbf", gamma=g, tol=1e-8).fit(X, y)
        a_ref = np.zeros(len(y))
        a_ref[ref.support_] = np.abs(ref.dual_coef_[0])
        K = Kernel(X, "rbf", g).matrix()
        W = lambda a: a.sum() - 0.5 * (a * ypm) @ K @ (a * ypm)   # TR eq. 11, computed here
        assert W(m.alpha_) == pytest.approx(W(a_ref), rel=1e-4, abs=1e-4)
        # same function up to the intercept (b is not unique when no SV is free, as at C=0.1)
        d = ((m.decision_function(Xg) - m.intercept_[0])
             - (ref.decision_function(Xg) - ref.intercept_[0]))
        assert np.max(np.abs(d)) < 0.02
        assert f"{len(m.support_)} SVs" in axes[Cs.index(C), gammas.index(g)].get_title()
    # the effect the primer describes: small C puts every point inside the margin
    assert np.all(models[(0.1, 0.5)].alpha_ == 0.1)
    assert len(models[(10.0, 0.5)].support_) < len(models[(0.1, 0.5)].support_)
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one"):
        vpr.fit_C_gamma_grid(X, y, (), (1.0,))
