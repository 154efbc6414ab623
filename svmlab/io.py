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
* C-SVC models with the kernels svmlab has are read and written, binary
  or multiclass; anything else is a clear ValueError.  ``probA``,
  ``probB`` lines are accepted and ignored.
* Multiclass (``nr_class k > 2``, LIBSVM's one-vs-one): every SV line has
  ``k - 1`` coefficients, ``rho`` has one value per pair ``(i, j)``, ``i <
  j`` in label order, and LIBSVM's pair value ``sum coef K - rho`` is
  positive for ``label[i]``.  These are exactly the arrays of a multiclass
  :class:`sklearn.svm.SVC` (``dual_coef_``, ``-intercept_``) and of the
  svmlab kernel classifiers' native one-vs-one fit (:mod:`svmlab._multiclass`,
  SVC's layout), written with the sorted labels.  A file whose labels are
  not sorted (``svm-train`` orders them by first appearance) is read into
  the sorted layout: pairs whose two labels swap order change sign.
  One-vs-rest linear models (``coef_`` with k rows: the cutting plane,
  LinearSVC) have no LIBSVM model format and are refused.
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
    """``coef idx:val ...`` lines (1-based indices, non-zeros only);
    ``coef`` (n_SV,) or, multiclass, (k-1, n_SV): k-1 numbers per line."""
    SV = sp.csr_matrix(SV)
    SV.sort_indices()
    lines = []
    for k in range(SV.shape[0]):
        lo, hi = SV.indptr[k], SV.indptr[k + 1]
        feats = " ".join(f"{int(j) + 1}:{_fmt(v)}"
                         for j, v in zip(SV.indices[lo:hi], SV.data[lo:hi]) if v != 0.0)
        lead = (_fmt(coef[k]) if coef.ndim == 1
                else " ".join(_fmt(c) for c in coef[:, k]))
        lines.append(f"{lead} {feats}".rstrip() + " ")
    return lines


def save_libsvm_model(estimator, path):
    """Write a fitted classifier as a LIBSVM text model file.

    ``estimator``: a fitted svmlab kernel classifier (:class:`SMOClassifier`,
    :class:`IRWLSClassifier`, :class:`ChunkingClassifier`,
    :class:`DecompositionClassifier`), a fitted :class:`sklearn.svm.SVC`, a
    :class:`LibSVMModel`, or a fitted linear model with
    ``coef_``/``intercept_``/``classes_`` and no support vectors
    (:class:`CuttingPlaneClassifier`, :class:`sklearn.svm.LinearSVC`), which
    is written as a linear-kernel model.  Kernel classifiers may be
    multiclass (one-vs-one, SVC's layout); linear models must be binary.
    ``path``: a file name or a text file object.  See the module docstring
    for the sign conventions.

    Example: ``save_libsvm_model(SMOClassifier().fit(X, y), "model.txt")``.
    """
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        raise ValueError(
            f"{type(estimator).__name__} is not a fitted classifier (no classes_); "
            "save_libsvm_model writes fitted classifiers.")
    labels = [_label_text(c) for c in classes]
    k = len(classes)
    if k > 2:
        return _save_multiclass(estimator, path, labels)
    if hasattr(estimator, "support_vectors_"):
        kernel, gamma, degree, coef0 = _kernel_params(estimator)
        dual = np.asarray(estimator.dual_coef_, dtype=np.float64).reshape(-1)
        SV = estimator.support_vectors_
        if SV.shape[0] != dual.shape[0]:
            raise ValueError("dual_coef_ and support_vectors_ disagree in length.")
        intercept = float(np.asarray(estimator.intercept_).reshape(-1)[0])
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
    _write(path, kernel, gamma, degree, coef0, labels, [rho], nr_sv, coef, SV)


def _kernel_params(estimator):
    kernel = getattr(estimator, "kernel", None)
    if kernel not in _TO_LIBSVM:
        raise ValueError(
            f"kernel {kernel!r} has no LIBSVM model equivalent here; use one of "
            f"{sorted(_TO_LIBSVM)}.")
    return (kernel, _numeric_gamma(estimator, kernel), int(getattr(estimator, "degree", 3)),
            float(getattr(estimator, "coef0", 0.0)))


def _save_multiclass(estimator, path, labels):
    """A k-class one-vs-one kernel model (SVC's layout: ``support_vectors_``
    grouped by class, ``dual_coef_`` (k-1, n_SV), ``intercept_`` (k(k-1)/2,),
    ``classes_`` sorted) as LIBSVM's file: ``sv_coef = dual_coef_``, ``rho =
    -intercept_``."""
    k = len(labels)
    if not hasattr(estimator, "support_vectors_"):
        raise ValueError(
            f"{type(estimator).__name__} is a {k}-class model without support vectors "
            "(a one-vs-rest linear model); LIBSVM's multiclass model files are "
            "one-vs-one kernel models, so it cannot be written as one.")
    kernel, gamma, degree, coef0 = _kernel_params(estimator)
    SV = estimator.support_vectors_
    coef = np.asarray(estimator.dual_coef_, dtype=np.float64)
    rho = -np.asarray(estimator.intercept_, dtype=np.float64).reshape(-1)
    nr_sv = [int(v) for v in np.asarray(estimator.n_support_).reshape(-1)]
    if coef.shape != (k - 1, SV.shape[0]) or rho.shape != (k * (k - 1) // 2,) \
            or len(nr_sv) != k or sum(nr_sv) != SV.shape[0]:
        raise ValueError(
            f"{type(estimator).__name__}'s dual_coef_ {coef.shape}, intercept_ "
            f"{rho.shape}, n_support_ ({len(nr_sv)},) and support_vectors_ "
            f"{SV.shape} are not SVC's one-vs-one layout for {k} classes.")
    _write(path, kernel, gamma, degree, coef0, labels, rho, nr_sv, coef, SV)


def _write(path, kernel, gamma, degree, coef0, labels, rho, nr_sv, coef, SV):
    head = ["svm_type c_svc", f"kernel_type {_TO_LIBSVM[kernel]}"]
    if kernel == "poly":
        head.append(f"degree {degree}")
    if kernel != "linear":
        head.append(f"gamma {_fmt(gamma)}")
    if kernel in ("poly", "sigmoid"):
        head.append(f"coef0 {_fmt(coef0)}")
    head += [f"nr_class {len(labels)}", f"total_sv {SV.shape[0]}",
             "rho " + " ".join(_fmt(r) for r in rho),
             "label " + " ".join(str(l) for l in labels),
             "nr_sv " + " ".join(str(v) for v in nr_sv), "SV"]
    text = "\n".join(head + _sv_lines(coef, SV)) + "\n"
    if hasattr(path, "write"):
        path.write(text)
    else:
        with open(os.fspath(path), "w", encoding="ascii") as f:
            f.write(text)


class LibSVMModel:
    """A C-SVC read from a LIBSVM model file (:func:`load_libsvm_model`).

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

    Multiclass files (k > 2 labels, one-vs-one) are held in SVC's layout
    with the labels sorted: ``support_vectors_`` grouped by class,
    ``n_support_`` (k,), ``dual_coef_`` (k-1, n_SV), ``intercept_``
    (k(k-1)/2,), ``coef_`` (k(k-1)/2, d) for the linear kernel;
    ``labels_``, ``rho_`` (k(k-1)/2,) and ``sv_coef_`` (k-1, n_SV) stay the
    file's own.  ``decision_function`` follows ``decision_function_shape``
    (``"ovr"``, the default, or ``"ovo"``; SVC's values), ``predict`` is
    LIBSVM's vote, and :meth:`libsvm_decision_function` gives LIBSVM's
    (n, k(k-1)/2) pair values in the file's label order.
    """

    def __init__(self, *, kernel, gamma, degree, coef0, labels, rho, sv_coef, nr_sv,
                 support_vectors, n_features=None):
        self.kernel = kernel
        self.gamma_ = float(gamma) if gamma is not None else 1.0
        self.degree = int(degree)
        self.coef0 = float(coef0)
        self.labels_ = np.asarray(labels)
        self.sv_coef_ = np.asarray(sv_coef, dtype=np.float64)
        self.support_vectors_ = to_csr32(support_vectors)
        self.n_features_in_ = n_features
        self._kernels = {}
        if len(self.labels_) > 2:
            self.rho_ = np.asarray(rho, dtype=np.float64).reshape(-1)
            self.decision_function_shape = "ovr"
            self._init_multiclass(nr_sv)
            return
        self.rho_ = float(rho)
        # scikit-learn's sign: f > 0 predicts classes_[1] (classes_ sorted)
        self.classes_ = np.sort(self.labels_)
        sign = 1.0 if self.labels_[0] == self.classes_[1] else -1.0
        self.dual_coef_ = (sign * self.sv_coef_)[None, :]
        self.intercept_ = np.array([-sign * self.rho_])
        nr = np.asarray(nr_sv, dtype=np.int32)
        self.n_support_ = nr if sign < 0 else nr[::-1].copy()
        if kernel == "linear":
            w = self.dual_coef_ @ self.support_vectors_
            self.coef_ = np.asarray(w).reshape(1, -1)

    def _init_multiclass(self, nr_sv):
        """SVC's layout from the file's (see the class docstring): the
        classes sorted, the SVs regrouped by sorted class, and every pair's
        coefficients and intercept with the sign of the sorted pair (LIBSVM's
        pair value is positive for the first label of the pair in the file's
        order, SVC's for the first in sorted order)."""
        from ._multiclass import class_pairs

        labels = self.labels_
        k = len(labels)
        order = np.argsort(labels, kind="stable")      # sorted index -> file index
        rank = np.empty(k, dtype=np.intp)
        rank[order] = np.arange(k)                      # file index -> sorted index
        self.classes_ = labels[order]
        nr = np.asarray(nr_sv, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(nr)])
        file_cls = np.repeat(np.arange(k), nr)
        perm = np.concatenate([np.arange(starts[f], starts[f + 1]) for f in order]
                              ).astype(np.intp)
        self.support_vectors_ = to_csr32(self.support_vectors_[perm])
        self.n_support_ = nr[order].astype(np.int32)
        pair_index = {pq: t for t, pq in enumerate(class_pairs(k))}
        dual = np.zeros((k - 1, len(perm)))
        for pos, s in enumerate(perm):
            fc = file_cls[s]
            sc = rank[fc]
            for fo in range(k):
                if fo == fc:
                    continue
                so = rank[fo]
                sign = 1.0 if rank[min(fc, fo)] == min(sc, so) else -1.0
                dual[so if so < sc else so - 1, pos] = sign * self.sv_coef_[
                    fo if fo < fc else fo - 1, s]
        intercept = np.zeros(len(pair_index))
        self._file_pairs = []   # per file pair: (sorted pair index, sign)
        for (i, j), t in sorted(pair_index.items(), key=lambda kv: kv[1]):
            ri, rj = rank[i], rank[j]
            sign = 1.0 if ri < rj else -1.0
            q = pair_index[(min(ri, rj), max(ri, rj))]
            intercept[q] = -sign * self.rho_[t]
            self._file_pairs.append((q, sign))
        self.dual_coef_ = dual
        self.intercept_ = intercept
        if self.kernel == "linear":
            S = self.support_vectors_
            self.coef_ = np.vstack([np.asarray(self._pair_dual(p) @ S[self._pair_svs(p)])
                                    .reshape(-1) for p in range(len(intercept))])

    def _pair_svs(self, p):
        """The positions (in ``support_vectors_``) of pair p's two classes
        and, by :meth:`_pair_dual`, their coefficients."""
        from ._multiclass import class_pairs

        a, b = class_pairs(len(self.classes_))[p]
        st = np.concatenate([[0], np.cumsum(self.n_support_)])
        return np.r_[st[a]:st[a + 1], st[b]:st[b + 1]]

    def _pair_dual(self, p):
        from ._multiclass import class_pairs

        a, b = class_pairs(len(self.classes_))[p]
        st = np.concatenate([[0], np.cumsum(self.n_support_)])
        return np.concatenate([self.dual_coef_[b - 1, st[a]:st[a + 1]],
                               self.dual_coef_[a, st[b]:st[b + 1]]])

    def _ovo_values(self, X):
        """SVC's one-vs-one values (n, k(k-1)/2), sorted labels."""
        X, d = self._prepare(X)
        K = self._kernel_for(d).matrix(Z=X)
        P = len(self.intercept_)
        dec = np.empty((X.shape[0], P))
        for p in range(P):
            dec[:, p] = self._pair_dual(p) @ K[self._pair_svs(p)] + self.intercept_[p]
        return dec

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
        (positive predicts ``labels_[0]``); multiclass: (n, k(k-1)/2), pair
        ``(i, j)`` of the file's labels positive for ``labels_[i]``."""
        if len(self.labels_) > 2:
            dec = self._ovo_values(X)
            return np.column_stack([sign * dec[:, q] for q, sign in self._file_pairs])
        X, d = self._prepare(X)
        K = self._kernel_for(d).matrix(Z=X)
        return self.sv_coef_ @ K - self.rho_

    def decision_function(self, X):
        """``f(x)``, positive for ``classes_[1]`` (scikit-learn's sign);
        multiclass: SVC's values for ``decision_function_shape``."""
        if len(self.labels_) > 2:
            from sklearn.utils.multiclass import _ovr_decision_function

            dec = self._ovo_values(X)
            if self.decision_function_shape == "ovr":
                return _ovr_decision_function(dec < 0, -dec, len(self.classes_))
            return dec
        dec = self.libsvm_decision_function(X)
        return dec if self.labels_[0] == self.classes_[1] else -dec

    def predict(self, X):
        if len(self.labels_) > 2:
            # LIBSVM's vote in the file's label order (ties go to the label
            # that comes first in the file, as in svm_predict_values)
            from ._multiclass import ovo_votes

            dec = self.libsvm_decision_function(X)
            return self.labels_[ovo_votes(dec, len(self.labels_))]
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
    if nr_class < 2:
        raise ValueError(f"{where}: nr_class {nr_class}; a classifier needs two or more.")
    total_sv = int(one("total_sv"))
    n_pairs = nr_class * (nr_class - 1) // 2
    rho = [float(v) for v in head.get("rho", [])]
    if len(rho) != n_pairs:
        raise ValueError(f"{where}: 'rho' must have {n_pairs} value(s) for "
                         f"{nr_class} classes, got {len(rho)}.")
    labels = [int(v) for v in head.get("label", [])]
    if len(labels) != nr_class or len(set(labels)) != nr_class:
        raise ValueError(f"{where}: 'label' must give {nr_class} distinct values.")
    nr_sv = [int(v) for v in head.get("nr_sv", [])]
    if len(nr_sv) != nr_class or sum(nr_sv) != total_sv:
        raise ValueError(f"{where}: 'nr_sv' must give {nr_class} counts adding up to "
                         "total_sv.")
    gamma = float(one("gamma")) if kernel != "linear" else None
    degree = int(one("degree", "3"))
    coef0 = float(one("coef0", "0"))
    body = "\n".join(l for l in lines[k + 1:] if l.strip())
    if nr_class > 2:
        SV, coef = _parse_multiclass_sv(body, nr_class - 1, where)
    elif total_sv == 0:
        SV = sp.csr_matrix((0, 0))
        coef = np.zeros(0)
    else:
        SV, coef = load_svmlight_file(_io.BytesIO(body.encode("ascii")), zero_based=False,
                                      dtype=np.float64)
    if SV.shape[0] != total_sv:
        raise ValueError(f"{where}: total_sv is {total_sv} but there are {SV.shape[0]} "
                         "SV lines.")
    return LibSVMModel(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                       labels=labels, rho=rho[0] if nr_class == 2 else rho, sv_coef=coef,
                       nr_sv=nr_sv, support_vectors=SV, n_features=n_features)


def _parse_multiclass_sv(body, m, where):
    """SV lines of a multiclass model: ``m`` coefficients, then 1-based
    ``index:value`` pairs.  Returns ``(SV (CSR), coef (m, n_SV))``."""
    coefs, indptr, indices, data = [], [0], [], []
    for t, line in enumerate(body.splitlines()):
        parts = line.split()
        if len(parts) < m or any(":" in p for p in parts[:m]):
            raise ValueError(f"{where}: SV line {t + 1} should start with {m} coefficients.")
        try:
            coefs.append([float(p) for p in parts[:m]])
            for p in parts[m:]:
                j, v = p.split(":")
                if int(j) < 1:
                    raise ValueError
                indices.append(int(j) - 1)
                data.append(float(v))
        except ValueError:
            raise ValueError(f"{where}: SV line {t + 1} is not 'coef ... index:value ...' "
                             "with 1-based indices.") from None
        indptr.append(len(indices))
    d = max(indices) + 1 if indices else 0
    SV = sp.csr_matrix((np.asarray(data, dtype=np.float64), np.asarray(indices, np.int64),
                        np.asarray(indptr, np.int64)), shape=(len(coefs), d))
    SV.sum_duplicates()
    coef = np.asarray(coefs, dtype=np.float64).reshape(len(coefs), m).T.copy()
    return SV, coef
