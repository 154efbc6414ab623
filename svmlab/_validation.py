"""Input and parameter validation shared by every estimator.

All checks run before any solver work starts, and never modify the caller's
arrays (everything that needs a different dtype or layout is copied).

Extreme data are refused here too (:func:`check_scale`, called by
:func:`check_data` and :func:`check_classification`, so by every estimator
on in-memory data; and :func:`check_kernel_scale` for the kernel
estimators): values whose squares overflow float64 would give infinite
squared norms, ``gamma="scale"`` of 0 or infinity, and NaN kernel values,
i.e. a NaN model, so the message says to scale the data.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_array, check_X_y

from .kernels._csr import (  # noqa: F401  (re-exported: their home is below kernels)
    MAX_CSR32_NNZ,
    _refuse_too_many,
    as_csr32,
    canonical_csr32,
    to_csr32,
)
from .kernels._rows import KERNELS

__all__ = [
    "KERNEL_CONSTRAINTS",
    "RANDOM_STATE_CONSTRAINT",
    "SOLVER_CONSTRAINTS",
    "MAX_SUM_OF_SQUARES",
    "check_binary",
    "check_classification",
    "check_kernel_scale",
    "check_scale",
    "class_and_sample_weights",
    "check_data",
    "check_weights",
    "to_csr32",
    "as_csr32",
    "canonical_csr32",
]

#: scikit-learn style constraints for the kernel parameters (same names and
#: meanings as :class:`sklearn.svm.SVC`).
KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNELS))],
    "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="neither")],
    "degree": [Interval(Integral, 0, None, closed="left")],
    "coef0": [Interval(Real, None, None, closed="neither")],
}

#: constraints common to the iterative kernel solvers.  Only parameters
#: every one of them has: an estimator adds its own (``random_state`` for
#: SMO and IRWLS, ...), so that ``_parameter_constraints`` lists exactly the
#: parameters of its ``__init__`` (tests/test_estimator_hygiene.py checks).
SOLVER_CONSTRAINTS = {
    "C": [Interval(Real, 0.0, None, closed="neither")],
    "tol": [Interval(Real, 0.0, None, closed="neither")],
    "max_iter": [Interval(Integral, -1, None, closed="left")],
}

#: the constraint of a ``random_state`` parameter (SMO, IRWLS)
RANDOM_STATE_CONSTRAINT = {"random_state": ["random_state"]}


#: the largest sum of the squared values of a data set that is accepted: a
#: quarter of float64's largest number.  Then every squared norm, the sum of
#: squared deviations behind ``gamma="scale"`` (at most 4 times the sum of
#: squares) and every inner product ``|<x, z>| <= |x| |z|`` stay finite.
MAX_SUM_OF_SQUARES = float(np.finfo(np.float64).max) / 4

_SCALE_ADVICE = ("Scale the features first (e.g. sklearn.preprocessing.StandardScaler or "
                 "MaxAbsScaler, in a Pipeline).")


def check_scale(X):
    """Refuse data whose squared values overflow float64 (see
    :data:`MAX_SUM_OF_SQUARES`): ``X`` validated, dense or CSR.  One pass
    over the stored values, on one thread (``einsum``, not BLAS: OpenBLAS
    would wake every core for it, and its threads then spin for tens of
    milliseconds beside the fit that follows, decision 27b01); raises a
    ValueError that says to scale the data."""
    data = X.data if sp.issparse(X) else X.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        s = float(np.einsum("i,i->", data, data)) if data.size else 0.0
    if not s <= MAX_SUM_OF_SQUARES:
        big = float(np.max(np.abs(data)))
        raise ValueError(
            f"The data are too large for float64 arithmetic: the largest |value| is "
            f"{big:.3g} and the sum of the squared values is {s:.3g} (more than "
            f"{MAX_SUM_OF_SQUARES:.3g}), so squared norms, gamma='scale' and kernel values "
            f"would overflow to infinity and the model to NaN. {_SCALE_ADVICE}")


def check_kernel_scale(gamma, kernel, sqnorm_max, degree, coef0):
    """Refuse a kernel whose values would not be finite on the training data:
    ``gamma`` the resolved value (``"scale"`` on data with a tiny variance
    gives infinity), ``sqnorm_max`` the largest squared norm of a training
    row.  Bounds: linear ``|K| <= sqnorm_max``, poly ``|K| <= (gamma
    sqnorm_max + |coef0|)**degree``, sigmoid's argument ``gamma sqnorm_max +
    |coef0|``; rbf needs only a finite gamma."""
    if not math.isfinite(gamma) or gamma < 0:
        raise ValueError(
            f"gamma_ = {float(gamma)!r} is not a finite non-negative number: with gamma='scale' "
            "the data's variance is too small for float64 (1 / (n_features * var) "
            f"overflows). {_SCALE_ADVICE}")
    if kernel not in ("linear", "poly", "sigmoid"):
        return  # rbf: values in (0, 1] for any finite gamma >= 0
    with np.errstate(over="ignore", invalid="ignore"):
        if kernel == "linear":
            bound = sqnorm_max
        elif kernel == "poly":
            bound = np.float64(gamma * sqnorm_max + abs(coef0)) ** float(degree)
        else:
            bound = gamma * sqnorm_max + abs(coef0)
    if not np.isfinite(bound):
        raise ValueError(
            f"The {kernel} kernel values overflow float64 on this data (gamma_={gamma:.3g}, "
            f"largest squared norm {sqnorm_max:.3g}"
            + (f", degree={degree}" if kernel == "poly" else "") + "): the model would be NaN. "
            + _SCALE_ADVICE + (" Or lower gamma or degree." if kernel == "poly" else ""))


def check_data(X, *, reset_estimator=None, dense_only=False):
    """Validate a feature matrix: 2-D, finite, float64, dense or CSR."""
    X = check_array(
        X,
        accept_sparse=False if dense_only else ["csr", "csc", "coo"],
        dtype=np.float64,
        ensure_all_finite=True,
    )
    if sp.issparse(X):
        X = to_csr32(X)
    else:
        X = np.ascontiguousarray(X)
    check_scale(X)
    return X


def check_binary(X, y, *, dense_only=False):
    """Validate a binary classification problem.

    Returns ``(X, y_pm, classes)`` where ``y_pm`` is float64 in {-1, +1}
    (``classes[0]`` maps to -1, ``classes[1]`` to +1, as in scikit-learn's
    ``decision_function`` convention) and X is float64 C-contiguous dense or
    canonical CSR with int32 indices: a CSR input that is already canonical
    comes back as a matrix over its own arrays (:func:`canonical_csr32`),
    any other as a canonical copy; the caller's matrix is never modified.
    """
    X, y_idx, classes = check_classification(X, y, dense_only=dense_only, max_classes=2)
    return X, np.where(y_idx == 1, 1.0, -1.0), classes


def check_classification(X, y, *, dense_only=False, max_classes=None):
    """Validate a classification problem with two or more classes (at most
    ``max_classes`` when given: more raise a ValueError pointing to
    scikit-learn's multiclass wrappers).

    Returns ``(X, y_idx, classes)``: ``classes`` the sorted labels,
    ``y_idx`` (n,) int64 the index of each example's label in ``classes``,
    X as in :func:`check_binary`.
    """
    if not _plain_valid_xy(X, y):
        X, y = check_X_y(
            X,
            y,
            accept_sparse=False if dense_only else ["csr", "csc", "coo"],
            dtype=np.float64,
            y_numeric=False,
            ensure_all_finite=True,
        )
    _check_label_type(y)
    # the sorted labels, then each example's by binary search: numpy's
    # unique(return_inverse=True) argsorts the labels (16-24 ms on a9a's
    # 32561 labels on the 2-core machine, against 0.25 ms for these two;
    # docs/decisions/30m01-exact-plane-fast-checks-certified-pstar.md)
    classes = np.unique(y)
    y_idx = np.searchsorted(classes, y)
    if len(classes) < 2:
        raise ValueError(
            f"The training labels contain a single class, only one class ({classes[0]!r}); "
            "a support vector classifier needs two classes."
        )
    if max_classes is not None and len(classes) > max_classes:
        raise ValueError(
            "Only binary classification is supported. The type of the target "
            f"is {type_of_target(y)} ({len(classes)} classes). For multi-class "
            "problems wrap the estimator in "
            "sklearn.multiclass.OneVsRestClassifier or OneVsOneClassifier."
        )
    if sp.issparse(X):
        X = as_csr32(X)
    else:
        X = np.ascontiguousarray(X)
    check_scale(X)
    return X, np.asarray(y_idx, dtype=np.int64).ravel(), classes


def _plain_valid_xy(X, y):
    """True when ``check_X_y`` would hand back ``X`` and ``y`` themselves
    (no copy, no warning, no error): X a float64 numpy array, 2-D, at least
    one row and one column, all finite; y a 1-D numpy array of numbers
    (integer, boolean, or finite floating) with one label per row.  Then
    :func:`check_classification` skips ``check_X_y``, whose checks of
    dataframe types are a sizeable part of a small fit
    (docs/decisions/2406-validation-shortcuts.md); every other input goes
    through it, with its errors."""
    if type(X) is not np.ndarray or type(y) is not np.ndarray:
        return False
    if X.dtype != np.float64 or X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        return False
    if y.ndim != 1 or y.shape[0] != X.shape[0] or y.dtype.kind not in "biuf":
        return False
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        return False
    return bool(np.isfinite(X).all())


def _check_label_type(y):
    """scikit-learn's ``check_classification_targets`` on the 1-d label
    array that ``check_X_y`` returned, without its cost where its answer is
    known: integer or boolean labels, and floating labels that are all
    integral (its own test, ``y != y.astype(int64)``), are "binary" or
    "multiclass", always accepted.  Everything else (strings, objects,
    non-integral floats) goes through scikit-learn's check, with its
    errors.  (Decision: its ``type_of_target`` is a sizeable part of a small
    fit, docs/decisions/2406-validation-shortcuts.md.)"""
    kind = getattr(getattr(y, "dtype", None), "kind", "")
    if isinstance(y, np.ndarray) and y.ndim == 1 and y.shape[0] > 0:
        if kind in "biu" and kind:
            return
        if kind == "f" and not np.any(y != y.astype(np.int64).astype(y.dtype)):
            return
    check_classification_targets(y)



def class_and_sample_weights(y_idx, classes, sample_weight=None, class_weight=None):
    """The validated weights of a problem with ``k = len(classes)`` classes:
    ``(class_weight_ (k,), sample_weight (n,) or None)``.

    ``y_idx`` (n,) the class index of each row; ``class_weight`` None, a dict
    ``{label: weight}`` (labels of ``classes``, weights finite and
    non-negative) or ``"balanced"`` (``n / (k count(label))``, scikit-learn's
    ``compute_class_weight``); ``sample_weight`` None, a number or (n,)
    finite non-negative values.  Raises ValueError, naming the problem,
    before any work.  Shared by :func:`check_weights` (two classes) and
    :func:`svmlab._multiclass.multiclass_weights` (k classes)."""
    n = y_idx.shape[0]
    if isinstance(class_weight, dict):
        unknown = [k for k in class_weight if k not in set(classes.tolist())]
        if unknown:
            raise ValueError(f"class_weight has labels {unknown!r} that are not in the "
                             f"training classes {classes.tolist()!r}.")
        for k, v in class_weight.items():
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"class_weight[{k!r}] = {v!r}: class weights must be "
                                 "finite and non-negative.")
    cw = np.asarray(compute_class_weight(class_weight, classes=classes, y=classes[y_idx]),
                    dtype=np.float64)
    if sample_weight is None:
        return cw, None
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.ndim == 0:
        sw = np.full(n, float(sw))
    if sw.shape != (n,):
        raise ValueError(f"sample_weight has shape {sw.shape}; expected ({n},), "
                         "one weight per training example.")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sw < 0):
        bad = np.flatnonzero(sw < 0)
        raise ValueError(
            f"sample_weight must be non-negative: {len(bad)} negative value(s), "
            f"e.g. sample_weight[{bad[0]}] = {float(sw[bad[0]])!r}. A weight scales the "
            "example's bound C_i = C * weight; use 0 to remove an example.")
    return cw, sw

def check_weights(y_pm, classes, sample_weight=None, class_weight=None):
    """Validate ``sample_weight`` and ``class_weight`` of a binary problem
    and combine them, as :class:`sklearn.svm.SVC` does.

    ``y_pm`` (n,) in {-1, +1} (``+1`` for ``classes[1]``, from
    :func:`check_binary`); ``sample_weight`` None, a number or (n,)
    non-negative finite values; ``class_weight`` None, a dict ``{label:
    weight}`` (labels of ``classes``, weights finite and non-negative) or
    ``"balanced"`` (``n / (2 count(label))`` over all n rows, scikit-learn's
    ``compute_class_weight``).

    Returns ``(weight, class_weight_, keep)``: ``weight_i = class_weight[y_i]
    * sample_weight_i`` (the kernel solvers' bound is ``C_i = C * weight_i``,
    LIBSVM's meaning), ``class_weight_`` the (2,) weights of ``classes`` and
    ``keep`` None when every weight is positive, else the indices of the
    rows with a positive weight (rows of weight 0 are to be removed, as
    LIBSVM in scikit-learn does).  Raises ValueError, naming the problem,
    for a wrong shape, NaN/inf, a negative weight, an unknown class label,
    or weights that leave fewer than two classes."""
    n = y_pm.shape[0]
    if sample_weight is None and class_weight is None:
        # no weights: compute_class_weight(None) is all ones (skipped: a
        # sizeable part of a small fit)
        return np.ones(n), np.ones(len(classes)), None
    y_idx = (y_pm > 0).astype(np.intp)
    cw, sw = class_and_sample_weights(y_idx, classes, sample_weight, class_weight)
    w = cw[y_idx] if sw is None else cw[y_idx] * sw
    keep = None
    if np.any(w <= 0):
        keep = np.flatnonzero(w > 0)
        left = np.unique(y_pm[keep])
        if len(left) < 2:
            raise ValueError(
                "sample_weight and class_weight give zero weight to every example of "
                f"{'both classes' if len(left) == 0 else 'a class'} ({len(keep)} of {n} "
                "examples keep a positive weight); a support vector classifier needs "
                "two classes with positive weight.")
    return w, cw, keep
