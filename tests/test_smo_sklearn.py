"""scikit-learn's estimator checks for SMOClassifier (no exceptions needed)."""

import warnings

import pytest
from sklearn.utils.estimator_checks import check_estimator

from svmlab import SMOClassifier


@pytest.mark.parametrize("selection", ["platt", "wss2"])
def test_check_estimator(selection):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(SMOClassifier(selection=selection, progress=False))


def test_check_estimator_defaults():
    # the defaults as a user gets them (progress bar on, Platt selection)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(SMOClassifier())
