"""SVC's start checks each thing once (decision record 31e01): the
shortcuts give scikit-learn's answers.

* parameter validation remembered per class for plain values: an invalid
  value is refused every time, also after valid fits with other values, and
  values that are not plain (dicts, RandomState) are checked every time;
* a plain float64 array skips ``validate_data``: ``n_features_in_`` is set
  and an earlier fit's ``feature_names_in_`` is dropped, as scikit-learn's
  validation does; other inputs still get its errors.
"""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.svm import SVC as SkSVC

import svmlab

X, Y = load_iris(return_X_y=True)


@pytest.mark.parametrize("cls", [svmlab.SVC, svmlab.NuSVC, svmlab.SVR])
def test_invalid_parameters_refused_after_valid_fits(cls):
    y = Y if cls is not svmlab.SVR else X[:, 0]
    m = cls()
    m.fit(X, y)
    m.fit(X, y)  # the remembered set
    for bad in (dict(C=-1.0), dict(kernel="bogus"), dict(tol="x"), dict(max_iter=-2),
                dict(gamma=-0.5), dict(shrinking=2)):
        if "C" in bad and cls is svmlab.NuSVC:
            continue
        with pytest.raises(ValueError):
            cls(**bad).fit(X, y)
        with pytest.raises(ValueError):  # twice: never remembered as valid
            cls(**bad).fit(X, y)
    # a valid set is accepted after the invalid ones
    cls().fit(X, y)


def test_non_plain_values_checked_every_time():
    svmlab.SVC(class_weight={0: 1.0}).fit(X, Y)
    with pytest.raises(ValueError):
        svmlab.SVC(class_weight="heavy").fit(X, Y)
    svmlab.SVC(random_state=np.random.RandomState(0)).fit(X, Y)
    with pytest.raises(ValueError):
        svmlab.SVC(random_state="seed").fit(X, Y)


def test_true_and_one_are_different_values():
    """``1`` and ``True`` hash alike; the remembered key holds the type too,
    so an ``int`` where only booleans are allowed is refused after ``True``."""
    svmlab.SVC(probability=False, shrinking=True).fit(X, Y)
    with pytest.raises(ValueError):
        svmlab.SVC(shrinking=1).fit(X, Y)
    with pytest.raises(ValueError):
        SkSVC(shrinking=1).fit(X, Y)  # scikit-learn's answer too


def test_plain_arrays_set_what_validate_data_sets():
    """An earlier fit's feature names (set here as a dataframe fit leaves
    them: no dataframe library in this environment) are dropped by a fit
    on a plain array, and ``n_features_in_`` follows the new X, as
    scikit-learn's ``validate_data`` does for its SVC."""
    m, ref = svmlab.SVC(), SkSVC()
    for est in (m, ref):
        est.feature_names_in_ = np.array([f"f{i}" for i in range(4)], dtype=object)
        est.fit(X, Y)
    assert not hasattr(m, "feature_names_in_") and not hasattr(ref, "feature_names_in_")
    assert m.n_features_in_ == ref.n_features_in_ == 4
    m.fit(X[:, :3], Y)
    assert m.n_features_in_ == 3
    with pytest.raises(ValueError, match="features"):
        m.predict(X)


@pytest.mark.parametrize("bad", ["nan_x", "inf_y", "2d_y", "short_y", "empty"])
def test_other_inputs_get_scikit_learns_errors(bad):
    Xb, yb = X.copy(), Y.astype(float)
    if bad == "nan_x":
        Xb[3, 1] = np.nan
    elif bad == "inf_y":
        yb[2] = np.inf
    elif bad == "2d_y":
        yb = np.c_[yb, yb]
    elif bad == "short_y":
        yb = yb[:-1]
    else:
        Xb, yb = Xb[:0], yb[:0]
    with pytest.raises(ValueError) as ours:
        svmlab.SVC().fit(Xb, yb)
    with pytest.raises(ValueError) as theirs:
        SkSVC().fit(Xb, yb)
    assert str(ours.value).split("\n")[0][:40] == str(theirs.value).split("\n")[0][:40]
