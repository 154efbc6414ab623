"""Model interchange: LIBSVM's text model files.

:func:`save_libsvm_model` writes a fitted binary classifier in the format
of LIBSVM's ``svm_save_model`` (the file ``svm-train`` writes and
``svm-predict`` reads); :func:`load_libsvm_model` reads such a file back
into a :class:`LibSVMModel`, a small fitted classifier with
``decision_function``/``predict``.

The format (binary C-SVC, as written here)::

    svm_type c_svc
    kernel_type rbf               linear | polynomial | rbf | sigmoid
    degree 3                      polynomial only
    gamma 0.5                     polynomial, rbf, sigmoid
    coef0 0                       polynomial, sigmoid
    nr_class 2
    total_sv 7
    rho -0.25
    label -1 1
    nr_sv 3 4
    SV
    <coef> <index>:<value> ...    one line per support vector, indices 1-based

LIBSVM's decision value is ``dec(x) = sum_i coef_i K(sv_i, x) - rho`` and
``dec(x) > 0`` predicts ``label[0]``; ``coef_i = y_i alpha_i`` with
``y_i = +1`` for the class ``label[0]``; the support vectors are grouped by
class in label order, ``nr_sv`` of each.

svmlab (and scikit-learn) write ``f(x) = sum_i dual_coef_i K(sv_i, x) +
intercept_`` with ``f > 0`` predicting ``classes_[1]`` (sorted).  The
writer uses the label order of scikit-learn's bundled LIBSVM (which sorts
the labels): ``label classes_[0] classes_[1]``, so ``dec = -f``, i.e.
``coef = -dual_coef_`` and ``rho = intercept_``.  These are exactly the
arrays :class:`sklearn.svm.SVC` keeps from LIBSVM (``_dual_coef_`` and
``-_intercept_``), which ``tests/test_io.py`` checks.

Decisions where the task left a choice:

* Numbers are written with 17 significant digits (``%.17g``), so a round
  trip is exact; LIBSVM itself writes ``%.16g`` coefficients and ``%.8g``
  feature values, and its reader accepts either.
* Labels must be integers (LIBSVM's reader parses them with ``%d``);
  float labels with integer values (``-1.0``, ``1.0``) are written as
  integers.  Other labels (strings...) raise a ValueError.
* Only binary C-SVC models (``nr_class 2``), with the kernels svmlab has,
  are read or written; anything else is a clear ValueError.  ``probA``,
  ``probB`` lines are accepted and ignored.
* A LIBSVM model does not record the number of features.  The loaded model
  treats missing features as 0, as LIBSVM does: ``X`` may have fewer or more
  columns than the largest support-vector index (pass ``n_features`` to
  :func:`load_libsvm_model` to have ``predict`` check the width instead).
* The cutting-plane classifier (and any linear model with ``coef_``,
  ``intercept_`` and ``classes_``, e.g. :class:`sklearn.svm.LinearSVC`) is
  written as a linear-kernel model with a single support vector ``w`` of
  coefficient -1 and ``rho = intercept_`` (``dec = -(w.x + b)``).
"""

from __future__ import annotations

import io as _io
import os
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.utils.validation import check_array

from ._validation import to_csr32
from .kernels._rows import Kernel

__all__ = ["LibSVMModel", "load_libsvm_model", "save_libsvm_model"]

#: svmlab's kernel names <-> LIBSVM's ``kernel_type`` names
_TO_LIBSVM = {"linear": "linear", "poly": "polynomial", "rbf": "rbf", "sigmoid": "sigmoid"}
_FROM_LIBSVM = {v: k for k, v in _TO_LIBSVM.items()}


def _fmt(x):
    return "%.17g" % float(x)


def _label_text(c):
    """LIBSVM labels are integers; refuse anything else."""
    if isinstance(c, (bool, np.bool_)):
        raise ValueError(f"LIBSVM model labels must be integers, got the boolean {c!r}.")
    if isinstance(c, (Integral, np.integer)):
        return str(int(c))
    if isinstance(c, (float, np.floating)) and np.isfinite(c) and float(c) == int(c):
        return str(int(c))
    raise ValueError(
        f"LIBSVM model files store integer class labels; the estimator's class {c!r} "
        "is not an integer. Encode the classes as integers (e.g. -1/+1) before fitting.")


def _numeric_gamma(est, kernel):
    """The gamma value the estimator used (svmlab: ``gamma_``, SVC: ``_gamma``)."""
    if kernel == "linear":
        return None
    for name in ("gamma_", "_gamma"):
        g = getattr(est, name, None)
        if g is not None:
            return float(g)
    g = getattr(est, "gamma", None)
    if isinstance(g, (Integral, float, np.floating)) and not isinstance(g, bool):
        return float(g)
    raise ValueError(
        f"cannot find the numeric gamma of {type(est).__name__} (no gamma_ or _gamma "
        "attribute, and gamma is not a number).")


def _sv_lines(coef, SV):
    """``coef idx:val ...`` lines (1-based indices, non-zeros only)."""
    SV = sp.csr_matrix(SV)
    SV.sort_indices()
    lines = []
    for k in range(SV.shape[0]):
        lo, hi = SV.indptr[k], SV.indptr[k + 1]
        feats = " ".join(f"{int(j) + 1}:{_fmt(v)}"
                         for j, v in zip(SV.indices[lo:hi], SV.data[lo:hi]) if v != 0.0)
        lines.append(f"{_fmt(coef[k])} {feats}".rstrip() + " ")
    return lines


def save_libsvm_model(estimator, path):
    """Write a fitted binary classifier as a LIBSVM text model file.

    ``estimator``: a fitted svmlab kernel classifier (:class:`SMOClassifier`,
    :class:`IRWLSClassifier`, :class:`ChunkingClassifier`,
    :class:`DecompositionClassifier`), a fitted :class:`sklearn.svm.SVC`
    (binary), a :class:`LibSVMModel`, or a fitted linear model with
    ``coef_``/``intercept_``/``classes_`` and no support vectors
    (:class:`CuttingPlaneClassifier`, :class:`sklearn.svm.LinearSVC`), which
    is written as a linear-kernel model.  ``path``: a file name or a text
    file object.  See the module docstring for the sign conventions.

    Example: ``save_libsvm_model(SMOClassifier().fit(X, y), "model.txt")``.
    """
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        raise ValueError(
            f"{type(estimator).__name__} is not a fitted classifier (no classes_); "
            "save_libsvm_model writes fitted binary classifiers.")
    if len(classes) != 2:
        raise ValueError(
            f"LIBSVM model files written here are binary (nr_class 2); the estimator has "
            f"{len(classes)} classes.")
    labels = [_label_text(classes[0]), _label_text(classes[1])]
    if hasattr(estimator, "support_vectors_"):
        kernel = getattr(estimator, "kernel", None)
        if kernel not in _TO_LIBSVM:
            raise ValueError(
                f"kernel {kernel!r} has no LIBSVM model equivalent here; use one of "
                f"{sorted(_TO_LIBSVM)}.")
        dual = np.asarray(estimator.dual_coef_, dtype=np.float64).reshape(-1)
        SV = estimator.support_vectors_
        if SV.shape[0] != dual.shape[0]:
            raise ValueError("dual_coef_ and support_vectors_ disagree in length.")
        intercept = float(np.asarray(estimator.intercept_).reshape(-1)[0])
        gamma = _numeric_gamma(estimator, kernel)
        degree = int(getattr(estimator, "degree", 3))
        coef0 = float(getattr(estimator, "coef0", 0.0))
        # LIBSVM groups the SVs by class in label order: classes_[0] (dual
        # coefficient < 0, i.e. y = -1 in svmlab's convention) first
        neg = dual < 0
        order = np.concatenate([np.flatnonzero(neg), np.flatnonzero(~neg)])
        nr_sv = [int(neg.sum()), int((~neg).sum())]
        coef = -dual[order]        # LIBSVM's y_i alpha_i, y = +1 for label[0]
        SV = SV[order]
        rho = intercept            # dec = -f  =>  rho = intercept_
    elif hasattr(estimator, "coef_") and hasattr(estimator, "intercept_"):
        w = np.asarray(estimator.coef_, dtype=np.float64)
        if w.ndim == 2 and w.shape[0] != 1:
            raise ValueError("a linear model written as a LIBSVM file must be binary "
                             f"(coef_ has {w.shape[0]} rows).")
        kernel, gamma, degree, coef0 = "linear", None, 3, 0.0
        SV = w.reshape(1, -1)
        coef = np.array([-1.0])   # dec = -(w.x + b)
        rho = float(np.asarray(estimator.intercept_).reshape(-1)[0])
        nr_sv = [0, 1]             # a negative LIBSVM coefficient: label[1]'s side
    else:
        raise ValueError(
            f"{type(estimator).__name__} has neither support_vectors_ nor coef_: nothing "
            "a LIBSVM model file can hold.")
    head = ["svm_type c_svc", f"kernel_type {_TO_LIBSVM[kernel]}"]
    if kernel == "poly":
        head.append(f"degree {degree}")
    if kernel != "linear":
        head.append(f"gamma {_fmt(gamma)}")
    if kernel in ("poly", "sigmoid"):
        head.append(f"coef0 {_fmt(coef0)}")
    head += ["nr_class 2", f"total_sv {SV.shape[0]}", f"rho {_fmt(rho)}",
             f"label {labels[0]} {labels[1]}", f"nr_sv {nr_sv[0]} {nr_sv[1]}", "SV"]
    text = "\n".join(head + _sv_lines(coef, SV)) + "\n"
    if hasattr(path, "write"):
        path.write(text)
    else:
        with open(os.fspath(path), "w", encoding="ascii") as f:
            f.write(text)


class LibSVMModel:
    """A binary C-SVC read from a LIBSVM model file (:func:`load_libsvm_model`).

    scikit-learn's conventions: ``classes_`` sorted, ``decision_function(X)
    = dual_coef_ @ K(support_vectors_, X) + intercept_`` with positive values
    predicting ``classes_[1]``.  :meth:`libsvm_decision_function` gives
    LIBSVM's own value (``sum coef K - rho``, positive for ``labels_[0]``).

    Attributes: ``kernel`` (svmlab's name), ``gamma_``, ``degree``,
    ``coef0``, ``labels_`` (the file's label order), ``rho_``, ``sv_coef_``
    (the file's coefficients), ``n_support_`` (in ``classes_`` order),
    ``support_vectors_`` (CSR), ``dual_coef_`` (1, n_SV), ``intercept_``
    (1,), ``classes_``, ``n_features_in_`` (``None`` unless given at load),
    ``coef_`` (linear kernel).  Not an estimator: it cannot be refitted.
    """

    def __init__(self, *, kernel, gamma, degree, coef0, labels, rho, sv_coef, nr_sv,
                 support_vectors, n_features=None):
        self.kernel = kernel
        self.gamma_ = float(gamma) if gamma is not None else 1.0
        self.degree = int(degree)
        self.coef0 = float(coef0)
        self.labels_ = np.asarray(labels)
        self.rho_ = float(rho)
        self.sv_coef_ = np.asarray(sv_coef, dtype=np.float64)
        self.support_vectors_ = to_csr32(support_vectors)
        self.n_features_in_ = n_features
        # scikit-learn's sign: f > 0 predicts classes_[1] (classes_ sorted)
        self.classes_ = np.sort(self.labels_)
        sign = 1.0 if self.labels_[0] == self.classes_[1] else -1.0
        self.dual_coef_ = (sign * self.sv_coef_)[None, :]
        self.intercept_ = np.array([-sign * self.rho_])
        nr = np.asarray(nr_sv, dtype=np.int32)
        self.n_support_ = nr if sign < 0 else nr[::-1].copy()
        self._kernels = {}
        if kernel == "linear":
            w = self.dual_coef_ @ self.support_vectors_
            self.coef_ = np.asarray(w).reshape(1, -1)

    def _prepare(self, X):
        X = check_array(X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64,
                        ensure_all_finite=True)
        if self.n_features_in_ is not None and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the model was loaded with "
                f"n_features={self.n_features_in_}.")
        d = max(X.shape[1], self.support_vectors_.shape[1])
        if X.shape[1] < d:  # missing features are 0, as in LIBSVM
            X = sp.csr_matrix(X) if sp.issparse(X) else X
            if sp.issparse(X):
                X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))
            else:
                X = np.hstack([X, np.zeros((X.shape[0], d - X.shape[1]))])
        if sp.issparse(X):
            X = to_csr32(X)
        return X, d

    def _kernel_for(self, d):
        if d not in self._kernels:
            S = self.support_vectors_
            S = sp.csr_matrix((S.data, S.indices, S.indptr), shape=(S.shape[0], d))
            self._kernels[d] = Kernel(to_csr32(S), self.kernel, self.gamma_, self.degree,
                                      self.coef0)
        return self._kernels[d]

    def libsvm_decision_function(self, X):
        """LIBSVM's decision value ``sum_i coef_i K(sv_i, x) - rho``
        (positive predicts ``labels_[0]``)."""
        X, d = self._prepare(X)
        K = self._kernel_for(d).matrix(Z=X)
        return self.sv_coef_ @ K - self.rho_

    def decision_function(self, X):
        """``f(x)``, positive for ``classes_[1]`` (scikit-learn's sign)."""
        dec = self.libsvm_decision_function(X)
        return dec if self.labels_[0] == self.classes_[1] else -dec

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def score(self, X, y):
        """Mean accuracy."""
        return float(np.mean(self.predict(X) == np.asarray(y)))


_REAL_KEYS = {"gamma", "coef0", "rho"}


def load_libsvm_model(path, *, n_features=None):
    """Read a binary C-SVC LIBSVM text model file; return a :class:`LibSVMModel`.

    ``path``: a file name or a text file object.  ``n_features``: the input
    width ``predict`` should insist on (None: any width, missing features
    count as 0).  Files from ``svm-train``, from LIBSVM's ``svm_save_model``
    and from :func:`save_libsvm_model` are read; multi-class, regression and
    one-class models, and precomputed kernels, raise a ValueError naming
    what is unsupported.  The SV lines are parsed by
    :func:`sklearn.datasets.load_svmlight_file` (the coefficient is the
    line's "label").

    Example: ``model = load_libsvm_model("model.txt"); model.predict(X)``.
    """
    if hasattr(path, "read"):
        text = path.read()
        where = getattr(path, "name", "<file object>")
    else:
        with open(os.fspath(path), encoding="ascii") as f:
            text = f.read()
        where = os.fspath(path)
    if isinstance(text, bytes):
        text = text.decode("ascii")
    lines = text.splitlines()
    head = {}
    k = 0
    while k < len(lines) and lines[k].strip() != "SV":
        parts = lines[k].split()
        k += 1
        if not parts:
            continue
        head[parts[0]] = parts[1:]
    if k == len(lines):
        raise ValueError(f"{where}: no 'SV' line; not a LIBSVM model file.")

    def one(key, default=None):
        if key not in head:
            if default is not None:
                return default
            raise ValueError(f"{where}: the model header lacks '{key}'.")
        if len(head[key]) != 1:
            raise ValueError(f"{where}: '{key}' should have one value, got {head[key]}.")
        return head[key][0]

    svm_type = one("svm_type")
    if svm_type != "c_svc":
        raise ValueError(f"{where}: svm_type {svm_type!r} is not supported (only c_svc).")
    kt = one("kernel_type")
    if kt not in _FROM_LIBSVM:
        raise ValueError(
            f"{where}: kernel_type {kt!r} is not supported (one of {sorted(_FROM_LIBSVM)}).")
    kernel = _FROM_LIBSVM[kt]
    nr_class = int(one("nr_class"))
    if nr_class != 2:
        raise ValueError(f"{where}: nr_class {nr_class}; only binary models are supported.")
    total_sv = int(one("total_sv"))
    rho = float(one("rho"))
    labels = [int(v) for v in head.get("label", [])]
    if len(labels) != 2:
        raise ValueError(f"{where}: a binary model needs 'label' with two values.")
    nr_sv = [int(v) for v in head.get("nr_sv", [])]
    if len(nr_sv) != 2 or sum(nr_sv) != total_sv:
        raise ValueError(f"{where}: 'nr_sv' must give two counts adding up to total_sv.")
    gamma = float(one("gamma")) if kernel != "linear" else None
    degree = int(one("degree", "3"))
    coef0 = float(one("coef0", "0"))
    body = "\n".join(l for l in lines[k + 1:] if l.strip())
    if total_sv == 0:
        SV = sp.csr_matrix((0, 0))
        coef = np.zeros(0)
    else:
        SV, coef = load_svmlight_file(_io.BytesIO(body.encode("ascii")), zero_based=False,
                                      dtype=np.float64)
    if SV.shape[0] != total_sv:
        raise ValueError(f"{where}: total_sv is {total_sv} but there are {SV.shape[0]} "
                         "SV lines.")
    return LibSVMModel(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                       labels=labels, rho=rho, sv_coef=coef, nr_sv=nr_sv,
                       support_vectors=SV, n_features=n_features)
