"""Model interchange: LIBSVM's text model files.

:func:`save_libsvm_model` writes a fitted classifier in the format of
LIBSVM's ``svm_save_model`` (the file ``svm-train`` writes and
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

Choices the format leaves open:

* Numbers are written with 17 significant digits (``%.17g``), so a round
  trip is exact; LIBSVM itself writes ``%.16g`` coefficients and ``%.8g``
  feature values, and its reader accepts either.
* Labels must be integers that fit LIBSVM's ``int`` (its reader parses them
  with ``%d``); float labels with integer values (``-1.0``, ``1.0``) are
  written as integers.  Other labels (strings...) raise a ValueError, and so
  does a model holding NaN or infinity (no reader could use it).
* C-SVC models with the kernels svmlab has are read and written, binary
  or multiclass; anything else is a clear ValueError.  ``probA``,
  ``probB`` lines are checked and otherwise ignored.
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

Files from untrusted sources
----------------------------
A model file is data, never code (no pickle, no eval), and the reader is
meant for files from anywhere (README, "Security"):

* **Bounded work.**  Reading costs time linear in the file's size and
  memory in proportion to the model's numbers: the file is streamed in
  blocks (no copy of the text, no list of lines; runs of blank lines cost
  no Python object each), and nothing is allocated in proportion to what
  the header *claims* before the lines that back the claim have been seen.
  What a file may ask for is capped, each cap a keyword of
  :func:`load_libsvm_model`:
  ``max_bytes`` (:data:`MAX_MODEL_BYTES`, 1 GiB), ``max_classes``
  (:data:`MAX_CLASSES`, 1000), ``max_support_vectors``
  (:data:`MAX_SUPPORT_VECTORS`, 10**7), ``max_feature_index``
  (:data:`MAX_FEATURE_INDEX`, 2**31 - 1, the largest index a CSR matrix with
  int32 indices holds) and ``max_line_bytes`` (:data:`MAX_LINE_BYTES`,
  64 MiB).  A file beyond a cap is refused before the work it would cause.
* **LIBSVM's reading, or a refusal.**  A file svmlab accepts gives the
  model LIBSVM's ``svm_load_model`` reads from it
  (``docs/decisions/27r01-libsvm-number-syntax.md``): numbers are decimal
  literals (LIBSVM's ``strtod`` would read ``1_0`` as 1, ``0x1p3`` as 8,
  ``2.5abc`` as 2.5: refused); only spaces and tabs separate values, a CR
  may end a line, any other control byte is refused; exactly ``total_sv``
  SV lines follow ``SV`` with no blank line among them (LIBSVM would read
  a blank one as a support vector).
* **Validation.**  Every header field and every number is checked: known
  field names only, each once; integers where LIBSVM reads ``%d``; every
  real finite (``nan``, ``inf`` and ``1e309`` are refused); ``gamma >= 0``,
  ``degree >= 0``; ``nr_class`` labels, all distinct; ``nr_class (nr_class
  - 1) / 2`` values of ``rho``; ``nr_sv`` non-negative and adding up to
  ``total_sv``, which must equal the number of SV lines present; each SV
  line ``k - 1`` coefficients then ``index:value`` pairs with indices
  increasing from 1 (LIBSVM's own dot product assumes that order).  A
  violation raises a ValueError naming the file, the line and the field.
* **Bounded prediction.**  :class:`LibSVMModel` computes kernel values
  between its sparse support vectors and ``X`` directly, in blocks: a row
  costs ``O(nnz(SV) + n_SV)`` for the binary model (plus ``k`` times the
  coefficients for ``k`` classes, and ``k (k - 1) / 2`` for the vote),
  whatever the largest index in the file; multiclass rows go in blocks so
  small that ``predict`` needs memory independent of the number of rows,
  whatever ``k`` (an SV with index 2,000,000,000 is
  one stored value, not a 2e9-wide row).  ``coef_`` of a linear model is a
  dense array built on first use, and refused when it would hold more than
  :data:`MAX_DENSE_COEF` values.
* **Honest output.**  A decision value that is not finite (a valid file
  whose numbers overflow the kernel for this ``X``) raises a ValueError
  rather than becoming a vote.  A file with valid syntax can still hold a
  model that predicts badly: nothing in the format proves where it came
  from.
"""

from __future__ import annotations

import os
import re
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

from ._validation import to_csr32

__all__ = ["LibSVMModel", "load_libsvm_model", "save_libsvm_model", "MAX_MODEL_BYTES",
           "MAX_CLASSES", "MAX_SUPPORT_VECTORS", "MAX_FEATURE_INDEX", "MAX_LINE_BYTES",
           "MAX_DENSE_COEF"]

#: the largest model file :func:`load_libsvm_model` reads by default (bytes)
MAX_MODEL_BYTES = 1 << 30
#: the most classes a model file may have by default (k (k - 1) / 2 pairs)
MAX_CLASSES = 1000
#: the most support vectors a model file may have by default
MAX_SUPPORT_VECTORS = 10_000_000
#: the largest feature index by default (int32 CSR indices hold index - 1)
MAX_FEATURE_INDEX = 2**31 - 1
#: the longest line by default (bytes)
MAX_LINE_BYTES = 1 << 26
#: the most values of the dense ``coef_`` a linear :class:`LibSVMModel` builds
MAX_DENSE_COEF = 1 << 27
#: LIBSVM reads labels and counts as C ``int``
_INT_MAX = 2**31 - 1
#: kernel values computed at once while predicting (n_SV x rows of a block)
_BLOCK_VALUES = 1 << 21

#: svmlab's kernel names <-> LIBSVM's ``kernel_type`` names
_TO_LIBSVM = {"linear": "linear", "poly": "polynomial", "rbf": "rbf", "sigmoid": "sigmoid"}
_FROM_LIBSVM = {v: k for k, v in _TO_LIBSVM.items()}


def _fmt(x):
    return "%.17g" % float(x)


def _label_text(c):
    """LIBSVM labels are integers; refuse anything else."""
    if isinstance(c, (bool, np.bool_)):
        raise ValueError(f"LIBSVM model labels must be integers, got the boolean {c!r}.")
    if isinstance(c, (Integral, np.integer)) or (
            isinstance(c, (float, np.floating)) and np.isfinite(c) and float(c) == int(c)):
        if abs(int(c)) > _INT_MAX:
            raise ValueError(
                f"LIBSVM model labels are C ints; the estimator's class {c!r} is outside "
                f"[-{_INT_MAX}, {_INT_MAX}]. Encode the classes as small integers before "
                "fitting.")
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
    SVc = sp.csr_matrix(SV)
    for what, v in (("gamma", [gamma if gamma is not None else 0.0]), ("coef0", [coef0]),
                    ("rho (the intercepts)", rho), ("the dual coefficients", coef),
                    ("the support vectors", SVc.data)):
        if not np.all(np.isfinite(np.asarray(v, dtype=np.float64))):
            raise ValueError(
                f"{what} of the model hold NaN or infinity; a LIBSVM model file of it could "
                "not be read back. Refit (scaling the data) before saving.")
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


def _pairs(k):
    """The pairs ``(a, b)``, ``a < b``, of k classes in LIBSVM's order, as
    two index arrays (``np.triu_indices`` walks rows first: (0, 1), (0, 2),
    ..., (1, 2), ...: LIBSVM's order)."""
    a, b = np.triu_indices(k, 1)
    return a.astype(np.intp), b.astype(np.intp)


def _pair_index(a, b, k):
    """Position of pair ``(a, b)``, ``a < b``, in LIBSVM's order (arrays)."""
    return a * (2 * k - a - 1) // 2 + (b - a - 1)


class LibSVMModel:
    """A C-SVC read from a LIBSVM model file (:func:`load_libsvm_model`).

    scikit-learn's conventions: ``classes_`` sorted, ``decision_function(X)
    = dual_coef_ @ K(support_vectors_, X) + intercept_`` with positive values
    predicting ``classes_[1]``.  :meth:`libsvm_decision_function` gives
    LIBSVM's own value (``sum coef K - rho``, positive for ``labels_[0]``).

    Attributes: ``kernel`` (svmlab's name), ``gamma_``, ``degree``,
    ``coef0``, ``labels_`` (the file's label order), ``rho_``, ``sv_coef_``
    (the file's coefficients), ``n_support_`` (in ``classes_`` order),
    ``support_vectors_`` (CSR, as wide as the largest index), ``dual_coef_``
    (1, n_SV), ``intercept_`` (1,), ``classes_``, ``n_features_in_``
    (``None`` unless given at load), ``coef_`` (linear kernel only: dense,
    built on first use, see the module docstring).  Not an estimator: it
    cannot be refitted.

    Multiclass files (k > 2 labels, one-vs-one) are held in SVC's layout
    with the labels sorted: ``support_vectors_`` grouped by class,
    ``n_support_`` (k,), ``dual_coef_`` (k-1, n_SV), ``intercept_``
    (k(k-1)/2,), ``coef_`` (k(k-1)/2, d) for the linear kernel;
    ``labels_``, ``rho_`` (k(k-1)/2,) and ``sv_coef_`` (k-1, n_SV) stay the
    file's own.  ``decision_function`` follows ``decision_function_shape``
    (``"ovr"``, the default, or ``"ovo"``; SVC's values), ``predict`` is
    LIBSVM's vote, and :meth:`libsvm_decision_function` gives LIBSVM's
    (n, k(k-1)/2) pair values in the file's label order.

    Prediction never widens ``X`` or the support vectors to a common width:
    the kernel values come from the stored entries (see the module
    docstring), so a file's largest index costs nothing by itself.  A
    decision value that is not finite raises a ValueError.
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
        if len(self.labels_) > 2:
            self.rho_ = np.asarray(rho, dtype=np.float64).reshape(-1)
            self.decision_function_shape = "ovr"
            self._init_multiclass(nr_sv)
        else:
            self.rho_ = float(rho)
            # scikit-learn's sign: f > 0 predicts classes_[1] (classes_ sorted)
            self.classes_ = np.sort(self.labels_)
            sign = 1.0 if self.labels_[0] == self.classes_[1] else -1.0
            self.dual_coef_ = (sign * self.sv_coef_)[None, :]
            self.intercept_ = np.array([-sign * self.rho_])
            nr = np.asarray(nr_sv, dtype=np.int32)
            self.n_support_ = nr if sign < 0 else nr[::-1].copy()
        S = self.support_vectors_
        with np.errstate(over="ignore"):   # an overflow shows as a non-finite decision
            self._sv_sqnorm = np.asarray(S.multiply(S).sum(axis=1), dtype=np.float64).ravel()

    def _init_multiclass(self, nr_sv):
        """SVC's layout from the file's (see the class docstring): the
        classes sorted, the SVs regrouped by sorted class, and every pair's
        coefficients and intercept with the sign of the sorted pair (LIBSVM's
        pair value is positive for the first label of the pair in the file's
        order, SVC's for the first in sorted order).  Vectorised: the work is
        O(k n_SV + k^2), the size of the coefficients and of ``rho``."""
        labels = self.labels_
        k = len(labels)
        order = np.argsort(labels, kind="stable")      # sorted index -> file index
        rank = np.empty(k, dtype=np.intp)
        rank[order] = np.arange(k)                      # file index -> sorted index
        self.classes_ = labels[order]
        nr = np.asarray(nr_sv, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(nr)])
        n_sv = int(starts[-1])
        # perm: position in the sorted grouping -> SV line of the file
        perm = np.concatenate([np.arange(starts[f], starts[f + 1]) for f in order]
                              + [np.zeros(0, np.int64)]).astype(np.intp)
        self.support_vectors_ = to_csr32(self.support_vectors_[perm])
        self.n_support_ = nr[order].astype(np.int32)
        file_cls = np.repeat(np.arange(k), nr)[perm]    # file class of each sorted SV
        sc = rank[file_cls]                              # its sorted class
        dual = np.zeros((k - 1, n_sv))
        for fo in range(k):                              # the other class, file index
            so = rank[fo]
            pos = np.flatnonzero(file_cls != fo)
            fc = file_cls[pos]
            src_row = np.where(fo < fc, fo, fo - 1)      # the file's coefficient row
            dst_row = np.where(so < sc[pos], so, so - 1)  # SVC's row
            same = (fc < fo) == (sc[pos] < so)           # pair order kept by sorting?
            dual[dst_row, pos] = np.where(same, 1.0, -1.0) * self.sv_coef_[src_row, perm[pos]]
        fa, fb = _pairs(k)                               # the file's pairs, in order
        ra, rb = rank[fa], rank[fb]
        sign = np.where(ra < rb, 1.0, -1.0)
        q = _pair_index(np.minimum(ra, rb), np.maximum(ra, rb), k)
        intercept = np.zeros(len(q))
        intercept[q] = -sign * self.rho_
        self._file_q = q        # file pair t is sorted pair q[t], with sign[t]
        self._file_sign = sign
        self.dual_coef_ = dual
        self.intercept_ = intercept

    # ------------------------------------------------------------- coef_
    @property
    def coef_(self):
        """Linear kernel only: the primal weights, (1, d) for two classes,
        (k(k-1)/2, d) with SVC's pair rows for k, d the largest index.
        Built on first use; refused (ValueError) when it would hold more than
        :data:`MAX_DENSE_COEF` values (use :meth:`decision_function`)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available for the linear kernel")
        cached = self.__dict__.get("_coef")
        if cached is not None:
            return cached
        S = self.support_vectors_
        P = len(self.intercept_)
        if P * S.shape[1] > MAX_DENSE_COEF:
            raise ValueError(
                f"coef_ would be a dense ({P}, {S.shape[1]}) array (more than "
                f"MAX_DENSE_COEF = {MAX_DENSE_COEF} values): the model file has a feature "
                "index that large. decision_function and predict work without it.")
        if len(self.classes_) == 2:
            w = np.asarray(self.dual_coef_ @ S).reshape(1, -1)
        else:
            w = np.vstack([np.asarray(self._pair_dual(p) @ S[self._pair_svs(p)]).reshape(-1)
                           for p in range(P)]) if P else np.zeros((0, S.shape[1]))
        self.__dict__["_coef"] = w
        return w

    def _pair_svs(self, p):
        """The positions (in ``support_vectors_``) of pair p's two classes."""
        a, b = (int(v[p]) for v in _pairs(len(self.classes_)))
        st = np.concatenate([[0], np.cumsum(self.n_support_)])
        return np.r_[st[a]:st[a + 1], st[b]:st[b + 1]]

    def _pair_dual(self, p):
        a, b = (int(v[p]) for v in _pairs(len(self.classes_)))
        st = np.concatenate([[0], np.cumsum(self.n_support_)])
        return np.concatenate([self.dual_coef_[b - 1, st[a]:st[a + 1]],
                               self.dual_coef_[a, st[b]:st[b + 1]]])

    # -------------------------------------------------------- prediction
    def _prepare(self, X):
        X = check_array(X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64,
                        ensure_all_finite=True)
        if self.n_features_in_ is not None and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the model was loaded with "
                f"n_features={self.n_features_in_}.")
        if sp.issparse(X):
            X = to_csr32(X)
        return X

    def _blocks(self, n, per_row):
        """Row blocks of ``X`` so that a block's kernel values and decision
        arrays (``per_row`` values per row) stay near ``_BLOCK_VALUES``."""
        step = max(1, _BLOCK_VALUES // max(1, per_row))
        return [(s, min(n, s + step)) for s in range(0, n, step)]

    def _kernel(self, Xb):
        """Kernel values ``K(support_vectors_, Xb)``, (n_SV, rows).  Features
        beyond ``Xb``'s width are 0 in ``Xb`` (LIBSVM's semantics): only the
        support vectors' entries below that width enter the dot products,
        and their full squared norms enter the rbf distance."""
        p = Xb.shape[1]
        sqx = None
        if self.kernel == "rbf":   # the full squared norms of the rows of X
            with np.errstate(over="ignore"):
                sqx = (np.asarray(Xb.multiply(Xb).sum(axis=1)).ravel() if sp.issparse(Xb)
                       else np.einsum("ij,ij->i", Xb, Xb))
        S = self.support_vectors_
        d_sv = S.shape[1]
        if d_sv > p:            # only the SV entries below X's width meet X
            cached = self.__dict__.get("_narrow")
            if cached is None or cached[0] != p:
                cached = (p, to_csr32(S[:, :p]))
                self.__dict__["_narrow"] = cached
            S = cached[1]
        elif d_sv < p:          # X's extra columns meet zeros in every SV
            Xb = Xb[:, :d_sv]
        dot = S @ Xb.T
        dot = dot.toarray() if sp.issparse(dot) else np.asarray(dot)
        if self.kernel == "linear":
            return dot
        g = self.gamma_
        with np.errstate(over="ignore", invalid="ignore"):  # checked by _finite
            if self.kernel == "rbf":
                d2 = self._sv_sqnorm[:, None] + sqx[None, :] - 2.0 * dot
                np.maximum(d2, 0.0, out=d2)
                return np.exp(-g * d2)
            if self.kernel == "poly":
                return (g * dot + self.coef0) ** float(self.degree)
            return np.tanh(g * dot + self.coef0)

    @staticmethod
    def _finite(dec, what):
        if not np.all(np.isfinite(dec)):
            raise ValueError(
                f"the model's {what} are not finite for this X (its kernel values or "
                "coefficients overflow): the model file does not describe a usable model "
                "for this data (is X scaled as the training data were?).")
        return dec

    def _binary_values(self, X):
        """LIBSVM's ``sum coef K - rho`` (two classes), (n,)."""
        X = self._prepare(X)
        n = X.shape[0]
        out = np.empty(n)
        for s, e in self._blocks(n, self.support_vectors_.shape[0]):
            with np.errstate(over="ignore", invalid="ignore"):   # checked below
                out[s:e] = self.sv_coef_ @ self._kernel(X[s:e]) - self.rho_
        return self._finite(out, "decision values")

    def _ovo_blocks(self, X):
        """SVC's one-vs-one values in row blocks: yields ``(s, e, values)``
        with ``values`` (e - s, k(k-1)/2), sorted labels; pair (a, b) is
        ``sum_{s in a} dual[b-1, s] K(s, x) + sum_{s in b} dual[a, s] K(s, x)
        + intercept``, from per-class sums of ``dual_coef_ @ K``.

        A block has so few rows that its kernel values, its per-class sums
        (k (k-1) per row) and its pair values (a few arrays of k (k-1)/2 per
        row) stay near :data:`_BLOCK_VALUES` values: the memory of a
        prediction does not grow with the number of rows, whatever k."""
        X = self._prepare(X)
        k = len(self.classes_)
        n = X.shape[0]
        A, B = _pairs(k)
        st = np.concatenate([[0], np.cumsum(self.n_support_)]).astype(np.intp)
        per_row = self.support_vectors_.shape[0] + k * (k - 1) + 3 * len(A)
        for s, e in self._blocks(n, per_row):
            K = self._kernel(X[s:e])
            D = np.empty((k, k - 1, e - s))      # D[c] = dual[:, class c] @ K[class c]
            with np.errstate(over="ignore", invalid="ignore"):   # checked below
                for c in range(k):
                    D[c] = self.dual_coef_[:, st[c]:st[c + 1]] @ K[st[c]:st[c + 1]]
                del K
                vals = D[A, B - 1]
                vals += D[B, A]
                del D
                vals = vals.T
                vals += self.intercept_
            yield s, e, self._finite(vals, "pair decision values")

    def _ovo_values(self, X):
        """SVC's one-vs-one values (n, k(k-1)/2) (see :meth:`_ovo_blocks`)."""
        out = None
        for s, e, vals in self._ovo_blocks(X):
            if out is None:
                out = np.empty((_n_rows(X), vals.shape[1]))
            out[s:e] = vals
        return out if out is not None else np.empty((0, len(_pairs(len(self.classes_))[0])))

    def libsvm_decision_function(self, X):
        """LIBSVM's decision value ``sum_i coef_i K(sv_i, x) - rho``
        (positive predicts ``labels_[0]``); multiclass: (n, k(k-1)/2), pair
        ``(i, j)`` of the file's labels positive for ``labels_[i]``."""
        if len(self.labels_) > 2:
            P = len(self._file_q)
            out = np.empty((_n_rows(X), P))
            for s, e, vals in self._ovo_blocks(X):
                np.multiply(vals[:, self._file_q], self._file_sign, out=out[s:e])
            return out
        return self._binary_values(X)

    def decision_function(self, X):
        """``f(x)``, positive for ``classes_[1]`` (scikit-learn's sign);
        multiclass: SVC's values for ``decision_function_shape`` ("ovr":
        (n, k), computed block by block; "ovo": (n, k(k-1)/2))."""
        if len(self.labels_) > 2:
            if self.decision_function_shape == "ovr":
                k = len(self.classes_)
                out = np.empty((_n_rows(X), k))
                for s, e, vals in self._ovo_blocks(X):
                    out[s:e] = _ovr_values(vals, k)
                return out
            return self._ovo_values(X)
        dec = self._binary_values(X)
        return dec if self.labels_[0] == self.classes_[1] else -dec

    def predict(self, X):
        """The predicted labels.  Multiclass: LIBSVM's vote in the file's
        label order (ties go to the label that comes first in the file, as
        in ``svm_predict_values``), computed block by block: memory bounded
        whatever the number of rows and classes (:meth:`_ovo_blocks`)."""
        if len(self.labels_) > 2:
            k = len(self.labels_)
            a, b = _pairs(k)
            out = np.empty(_n_rows(X), dtype=np.intp)
            for s, e, vals in self._ovo_blocks(X):
                win = np.where(vals[:, self._file_q] * self._file_sign > 0, a, b)
                win += np.arange(e - s)[:, None] * k
                votes = np.bincount(win.ravel(), minlength=(e - s) * k)
                out[s:e] = np.argmax(votes.reshape(e - s, k), axis=1)
            return self.labels_[out]
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def score(self, X, y):
        """Mean accuracy."""
        return float(np.mean(self.predict(X) == np.asarray(y)))


def _n_rows(X):
    """The number of rows of ``X`` (validated later by ``_prepare``)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2:
        return int(shape[0])
    return len(X)


def _ovr_values(dec, k):
    """SVC's "ovr" shape of one-vs-one values (scikit-learn's transform):
    each class's vote count plus the sum of its pair confidences squashed
    into (-1/3, 1/3), so that the votes decide and the confidences only break
    ties.  Pair (a, b)'s value ``v`` gives its vote to a when ``v >= 0`` and
    adds ``v`` to a's confidence sum and ``-v`` to b's."""
    a, b = _pairs(k)
    P = len(a)
    ones = np.ones(P)
    to_a = sp.csr_matrix((ones, (np.arange(P), a)), shape=(P, k))
    to_b = sp.csr_matrix((ones, (np.arange(P), b)), shape=(P, k))
    pos = (dec >= 0).astype(np.float64)   # scikit-learn's: 0 votes for a
    votes = np.asarray(pos @ to_a + (1.0 - pos) @ to_b)
    conf = np.asarray(dec @ to_a - dec @ to_b)
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


#: header fields of a C-SVC model file (LIBSVM's ``svm_load_model``), and how
#: many values each holds: an int, a count that depends on nr_class, or one
_FIELDS = ("svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv",
           "rho", "label", "probA", "probB", "nr_sv")
#: the number syntax svmlab reads (``docs/decisions/27r01-libsvm-number-syntax.md``):
#: decimal literals, on which C's ``strtod``/``strtol`` and Python's ``float``/
#: ``int`` agree exactly; anything else (``1_0``, ``0x10``, ``inf``, ``1e``,
#: ``1.5abc``) is refused, where LIBSVM would read a prefix or garbage
_INT_RE = re.compile(r"[+-]?+\d++")
_REAL = r"[+-]?+(?:\d++\.?+\d*+|\.\d++)(?:[eE][+-]?+\d++)?+"
_REAL_RE = re.compile(_REAL)
#: ``index:value`` pairs separated by spaces or tabs (possessive: linear time)
_FEATURES_RE = re.compile(rf"(?:[+-]?+\d++:{_REAL}(?:[ \t]++|\Z))*+")
#: SV tokens converted to numbers at once (bounds the Python strings alive)
_CHUNK_TOKENS = 1 << 16
#: bytes read from the file at a time
_READ_BLOCK = 1 << 20
#: the bytes a model file may hold: printable ASCII, space, tab, newline, and
#: carriage return (only right before a newline: CRLF files)
_ALLOWED = bytes(range(0x20, 0x7F)) + b"\t\n\r"
#: a carriage return that does not end a line (``\Z``: the file's last byte)
_LONE_CR = re.compile(r"\r(?!\n|\Z)")
#: a line that is not blank (``^`` anchored: blank runs are skipped in C)
_NONBLANK = re.compile(r"^[ \t\r]*+[^ \t\r\n][^\n]*+", re.M)


class _Where:
    """Error messages naming the file, the line and the field."""

    def __init__(self, name):
        self.name = name

    def fail(self, line, field, msg):
        at = f", line {line}" if line is not None else ""
        what = f" ({field})" if field else ""
        raise ValueError(f"{self.name}{at}{what}: {msg}")


def _lines(path, where, max_bytes, max_line_bytes):
    """The file's non-blank lines as ``(line number, text)``, streamed.

    The file (a path, or a binary or text file object) is read in blocks
    of :data:`_READ_BLOCK` bytes, at most ``max_bytes`` in all; only the
    current block and an unfinished line are held, so memory does not grow
    with the number of lines, and runs of blank lines are skipped by a
    regular expression without a Python object per line.  Every byte is
    checked: ASCII, no control character but tab, newline and a carriage
    return at the end of a line (``docs/decisions/27r01-...``); a line is at
    most ``max_line_bytes`` long.  The carriage return is dropped."""
    own = not hasattr(path, "read")
    fh = open(os.fspath(path), "rb") if own else path
    try:
        total = 0
        line_no = 1             # number of the first line of ``carry``
        carry = ""
        while True:
            piece = fh.read(_READ_BLOCK)
            total += len(piece)
            if total > max_bytes:
                where.fail(None, None, f"the file is larger than max_bytes={max_bytes} bytes; "
                           "pass a larger max_bytes to load_libsvm_model if you trust it.")
            if isinstance(piece, str):
                if not piece.isascii():
                    bad = next(i for i, ch in enumerate(piece) if ord(ch) > 127)
                    where.fail(line_no + carry.count("\n") + piece.count("\n", 0, bad), None,
                               f"character {piece[bad]!r}: a LIBSVM model file is ASCII.")
                piece = piece.encode("ascii")
            left = piece.translate(None, _ALLOWED)
            if left:
                bad = min(piece.find(bytes([c])) for c in set(left))
                code = piece[bad]
                no = line_no + carry.count("\n") + piece.count(b"\n", 0, bad)
                if code > 127:
                    where.fail(no, None, f"byte 0x{code:02x} at offset {total - len(piece) + bad}:"
                               " a LIBSVM model file is ASCII.")
                where.fail(no, None, f"control byte 0x{code:02x} at offset "
                           f"{total - len(piece) + bad}: only spaces and tabs separate the "
                           "values of a LIBSVM model file (LIBSVM splits lines at ' ' and "
                           "'\\t'; svmlab refuses other control characters rather than read "
                           "them differently).")
            text = carry + piece.decode("ascii")
            end = len(text) if not piece else text.rfind("\n") + 1
            cr = _LONE_CR.search(text, 0, end)
            if cr is not None:
                where.fail(line_no + text.count("\n", 0, cr.start()), None,
                           "a carriage return that does not end a line (only CRLF line ends "
                           "are read).")
            pos = 0
            for m in _NONBLANK.finditer(text, 0, end):
                line_no += text.count("\n", pos, m.start())
                pos = m.start()
                line = m.group()
                if len(line) > max_line_bytes:
                    where.fail(line_no, None,
                               f"the line is longer than max_line_bytes={max_line_bytes}.")
                if line.endswith("\r"):
                    line = line[:-1]
                yield line_no, line
            line_no += text.count("\n", pos, end)
            carry = text[end:]
            if len(carry) > max_line_bytes:
                where.fail(line_no, None,
                           f"the line is longer than max_line_bytes={max_line_bytes}.")
            if not piece:
                return
    finally:
        if own:
            fh.close()


def _int(where, line, field, tok, lo, hi, hint=""):
    if not _INT_RE.fullmatch(tok):
        where.fail(line, field, f"{tok[:40]!r} is not an integer.")
    if len(tok.lstrip("+-").lstrip("0")) > 18:       # beyond any cap (and int64)
        where.fail(line, field, f"{tok[:40]}... is outside [{lo}, {hi}].{hint}")
    v = int(tok)
    if not lo <= v <= hi:
        where.fail(line, field, f"{v} is outside [{lo}, {hi}].{hint}")
    return v


def _reals(where, line, field, toks):
    """Finite floats in the decimal syntax of ``_REAL_RE``; anything else,
    NaN, infinity and overflowing literals are refused."""
    for t in toks:
        if not _REAL_RE.fullmatch(t):
            where.fail(line, field, f"{t[:40]!r} is not a number (a decimal literal such as "
                       "-1.5e-3).")
    v = np.array(toks, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        t = int(np.flatnonzero(~np.isfinite(v))[0])
        where.fail(line, field, f"{toks[t]!r} is not a finite number (value {t + 1}).")
    return v


def load_libsvm_model(path, *, n_features=None, max_bytes=MAX_MODEL_BYTES,
                      max_classes=MAX_CLASSES, max_support_vectors=MAX_SUPPORT_VECTORS,
                      max_feature_index=MAX_FEATURE_INDEX, max_line_bytes=MAX_LINE_BYTES):
    """Read a C-SVC LIBSVM text model file; return a :class:`LibSVMModel`.

    ``path``: a file name or a file object (text or binary).
    ``n_features``: the input width ``predict`` should insist on (None: any
    width, missing features count as 0).  Files from ``svm-train``, from
    LIBSVM's ``svm_save_model`` and from :func:`save_libsvm_model` are read,
    binary or multiclass; regression and one-class models, and precomputed
    kernels, raise a ValueError naming what is unsupported.

    The file is untrusted input: every field is validated, and a ValueError
    names the line and the field of the first violation.  The keywords
    ``max_bytes``, ``max_classes``, ``max_support_vectors``,
    ``max_feature_index`` and ``max_line_bytes`` bound what a file may ask
    for (defaults: the module constants, see the module docstring); raise
    one to read a larger file you trust.  The file is streamed: memory is
    proportional to the model's numbers, not to the file's lines.

    Example: ``model = load_libsvm_model("model.txt"); model.predict(X)``.
    """
    for name, v in (("max_bytes", max_bytes), ("max_classes", max_classes),
                    ("max_support_vectors", max_support_vectors),
                    ("max_feature_index", max_feature_index),
                    ("max_line_bytes", max_line_bytes)):
        if isinstance(v, bool) or not isinstance(v, Integral) or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}.")
    if max_feature_index > MAX_FEATURE_INDEX:
        raise ValueError(f"max_feature_index cannot exceed {MAX_FEATURE_INDEX} (int32 CSR "
                         "indices).")
    where = _Where(getattr(path, "name", "<file object>") if hasattr(path, "read")
                   else os.fspath(path))
    lines = _lines(path, where, int(max_bytes), int(max_line_bytes))
    try:
        head, sv_at = _read_header(lines, where, max_classes)
        h = _check_header(head, where, max_classes, max_support_vectors)
        k = h["nr_class"]
        SV, coef = _read_sv_lines(lines, sv_at, k - 1, h["total_sv"], where,
                                  max_feature_index)
    finally:
        lines.close()
    return LibSVMModel(kernel=h["kernel"], gamma=h["gamma"], degree=h["degree"],
                       coef0=h["coef0"], labels=h["label"],
                       rho=h["rho"][0] if k == 2 else h["rho"],
                       sv_coef=coef[0] if k == 2 else coef, nr_sv=h["nr_sv"],
                       support_vectors=SV, n_features=n_features)


class _Truncated(list):
    """The first values of a header line that has more than any field may
    hold (see :func:`_read_header`); counted as "more than" its length."""


def _n(vals):
    """How many values a header field has, for messages."""
    return f"more than {len(vals) - 1}" if isinstance(vals, _Truncated) else str(len(vals))


def _read_header(lines, where, max_classes):
    """``({field: (line number, values)}, line number of the 'SV' line)``.

    No field has more values than ``rho`` for ``max_classes`` classes, so a
    line is split into at most that many tokens: a long line of short
    tokens costs no string per token beyond that."""
    most = max(2, max_classes) * (max(2, max_classes) - 1) // 2 + 1
    head = {}
    for no, raw in lines:
        parts = raw.split(None, most)
        key = parts[0]
        if len(parts) > most:   # refused by the count checks, in their order
            parts = _Truncated(parts)       # the last one is the rest of the line
        if key == "SV" and len(parts) == 1:
            return head, no
        if key not in _FIELDS:
            where.fail(no, key, f"unknown header field {key[:40]!r} (a C-SVC model has "
                       f"{', '.join(_FIELDS)}, then 'SV').")
        if key in head:
            where.fail(no, key, f"'{key}' appears twice (first on line {head[key][0]}).")
        head[key] = (no, _Truncated(parts[1:]) if isinstance(parts, _Truncated) else parts[1:])
    where.fail(None, None, "no 'SV' line; not a LIBSVM model file.")


def _check_header(head, where, max_classes, max_sv):
    """Every header field validated, in an order that refuses a file before
    any work proportional to what it claims."""

    def get(key, default=None):
        if key not in head:
            if default is not None:
                return None, [default]
            where.fail(None, key, f"the model header lacks '{key}'.")
        return head[key]

    def one(key, default=None):
        line, vals = get(key, default)
        if len(vals) != 1:
            where.fail(line, key, f"'{key}' should have one value, got {_n(vals)}.")
        return line, vals[0]

    out = {}
    line, svm_type = one("svm_type")
    if svm_type != "c_svc":
        where.fail(line, "svm_type", f"svm_type {svm_type!r} is not supported (only c_svc).")
    line, kt = one("kernel_type")
    if kt not in _FROM_LIBSVM:
        where.fail(line, "kernel_type", f"kernel_type {kt!r} is not supported (one of "
                   f"{sorted(_FROM_LIBSVM)}).")
    kernel = out["kernel"] = _FROM_LIBSVM[kt]
    line, v = one("nr_class")
    k = out["nr_class"] = _int(
        where, line, "nr_class", v, 2, max(2, max_classes),
        f" A classifier has two classes or more, and files with more than max_classes="
        f"{max_classes} are refused (pass a larger max_classes if you trust the file).")
    line, v = one("total_sv")
    out["total_sv"] = _int(
        where, line, "total_sv", v, 0, max_sv,
        f" Files with more than max_support_vectors={max_sv} support vectors are refused "
        "(pass a larger max_support_vectors if you trust the file).")
    n_pairs = k * (k - 1) // 2
    line, vals = get("rho")
    if len(vals) != n_pairs:
        where.fail(line, "rho", f"'rho' must have {n_pairs} value(s) for {k} classes, got "
                   f"{_n(vals)}.")
    out["rho"] = _reals(where, line, "rho", vals)
    for key in ("probA", "probB"):           # accepted, checked, not used
        if key in head:
            line, vals = head[key]
            if len(vals) != n_pairs:
                where.fail(line, key, f"'{key}' must have {n_pairs} value(s), got {_n(vals)}.")
            _reals(where, line, key, vals)
    line, vals = get("label")
    if len(vals) != k:
        where.fail(line, "label", f"'label' must give {k} distinct values, got {_n(vals)}.")
    labels = [_int(where, line, "label", t, -_INT_MAX, _INT_MAX) for t in vals]
    if len(labels) != k or len(set(labels)) != k:
        where.fail(line, "label", f"'label' must give {k} distinct values, got {len(labels)} "
                   f"({len(set(labels))} distinct).")
    out["label"] = labels
    line, vals = get("nr_sv")
    if len(vals) != k:
        where.fail(line, "nr_sv", f"'nr_sv' must give {k} counts, got {_n(vals)}.")
    nr = [_int(where, line, "nr_sv", t, 0, max_sv) for t in vals]
    if sum(nr) != out["total_sv"]:
        where.fail(line, "nr_sv", f"'nr_sv' must give {k} counts adding up to total_sv "
                   f"({out['total_sv']}), they add up to {sum(nr)}.")
    out["nr_sv"] = nr
    # kernel parameters: every one present is checked, whatever the kernel
    out["gamma"] = None
    if kernel != "linear" or "gamma" in head:
        line, v = one("gamma")
        g = float(_reals(where, line, "gamma", [v])[0])
        if g < 0:
            where.fail(line, "gamma", f"gamma {v} is negative.")
        out["gamma"] = g if kernel != "linear" else None
    line, v = one("degree", "3")
    out["degree"] = _int(where, line, "degree", v, 0, _INT_MAX)
    line, v = one("coef0", "0")
    out["coef0"] = float(_reals(where, line, "coef0", [v])[0])
    return out


def _bad_pairs(where, n, rest):
    """Name what is wrong with the ``index:value`` part ``rest`` of line n."""
    for tok in rest.split():
        parts = tok.split(":")
        if len(parts) == 2 and _INT_RE.fullmatch(parts[0]) and not _REAL_RE.fullmatch(parts[1]):
            where.fail(n, "SV value", f"{parts[1][:40]!r} is not a number (a decimal literal "
                       "such as -1.5e-3).")
    where.fail(n, "SV line", "expected 'coef ... index:value ...' with integer indices, "
               "decimal values, one ':' per pair, pairs separated by spaces or tabs.")


def _read_sv_lines(lines, sv_at, m, total_sv, where, max_index):
    """The SV lines that follow the 'SV' line (number ``sv_at``): ``m``
    coefficients, then 1-based ``index:value`` pairs, indices increasing.
    Returns ``(SV (CSR), coef (m, n_SV))``.

    Exactly ``total_sv`` lines, one right after the other: a blank line
    among them is refused (LIBSVM would read it as a support vector with
    coefficient 0 and miss the last one); blank lines after them are
    skipped, anything else after them is refused.  Lines are converted and
    checked in chunks of about :data:`_CHUNK_TOKENS` tokens, so the Python
    objects alive at once are bounded whatever the file; what is kept is
    the model's numbers in numpy arrays."""
    coef_parts, idx_parts, val_parts, count_parts = [], [], [], []
    c_tok, f_txt, f_count, chunk_no = [], [], [], []
    state = {"n": 0, "d": 0}
    plural = "s" * (m > 1)

    def flush():
        if not chunk_no:
            return
        coef = np.array(c_tok, dtype=np.float64).reshape(len(chunk_no), m)
        if not np.all(np.isfinite(coef)):
            s = int(np.flatnonzero(~np.isfinite(coef).all(axis=1))[0])
            where.fail(chunk_no[s], "SV coefficient", "a coefficient is not finite.")
        pieces = " ".join(f_txt).replace(":", " ").split()
        counts = np.array(f_count, dtype=np.int64)
        ends = np.cumsum(counts)

        def at(t):              # line number of the t-th pair of the chunk
            return chunk_no[int(np.searchsorted(ends, t, side="right"))]

        itoks = pieces[0::2]
        long_ = [t for t, tok in enumerate(itoks) if len(tok) > 12]
        for t in long_:
            if len(itoks[t].lstrip("+-").lstrip("0")) > 18:
                where.fail(at(t), "SV index", f"index {itoks[t][:40]}... is larger than "
                           f"max_feature_index={max_index}.")
        idx = np.array(itoks, dtype=np.int64)
        val = np.array(pieces[1::2], dtype=np.float64)
        del pieces, itoks
        if idx.size:
            if idx.min() < 1:
                where.fail(at(int(np.argmax(idx < 1))), "SV index", "feature indices start at 1.")
            if idx.max() > max_index:
                where.fail(at(int(np.argmax(idx > max_index))), "SV index",
                           f"index {int(idx.max())} is larger than max_feature_index={max_index}.")
            if not np.all(np.isfinite(val)):
                where.fail(at(int(np.argmax(~np.isfinite(val)))), "SV value",
                           "a feature value is not finite.")
            step = np.diff(idx) <= 0
            inner = ends[:-1][(ends[:-1] > 0) & (ends[:-1] < idx.size)]
            step[inner - 1] = False          # a new line may start anywhere
            if np.any(step):
                where.fail(at(int(np.argmax(step)) + 1), "SV index",
                           "indices must increase along a line (LIBSVM's order).")
            state["d"] = max(state["d"], int(idx.max()))
        coef_parts.append(coef)
        idx_parts.append((idx - 1).astype(np.int32))
        val_parts.append(val)
        count_parts.append(counts.astype(np.int32))
        c_tok.clear(), f_txt.clear(), f_count.clear(), chunk_no.clear()

    pending = 0
    expect = sv_at + 1
    for n, ln in lines:
        if state["n"] == total_sv:          # count the rest (streamed), then refuse
            more = 1 + sum(1 for _ in lines)
            where.fail(n, "total_sv", f"total_sv is {total_sv} but there are "
                       f"{total_sv + more} SV lines (LIBSVM would ignore the last {more}; "
                       "svmlab refuses a file whose header and body disagree).")
        if n != expect:
            where.fail(expect, "SV line", "a blank line among the SV lines (LIBSVM would read "
                       "it as a support vector with coefficient 0 and miss the last SV line).")
        expect = n + 1
        toks = ln.split(None, m)
        if len(toks) < m:
            where.fail(n, "SV line", f"an SV line should start with {m} coefficient{plural}.")
        rest = toks[m] if len(toks) > m else ""
        for t in toks[:m]:
            if not _REAL_RE.fullmatch(t):
                where.fail(n, "SV coefficient" if ":" not in t else "SV line",
                           f"an SV line should start with {m} coefficient{plural} (decimal "
                           f"literals), then index:value pairs; {t[:40]!r} is not a number.")
        if rest and not _FEATURES_RE.fullmatch(rest):
            _bad_pairs(where, n, rest)
        c_tok.extend(toks[:m])
        nf = rest.count(":")
        f_txt.append(rest)
        f_count.append(nf)
        chunk_no.append(n)
        state["n"] += 1
        pending += m + nf
        if pending >= _CHUNK_TOKENS:
            flush()
            pending = 0
    flush()
    n_sv = state["n"]
    if n_sv != total_sv:
        where.fail(None, "total_sv", f"total_sv is {total_sv} but there are {n_sv} SV lines.")
    coef = (np.concatenate(coef_parts) if coef_parts else np.zeros((0, m))).T
    coef_parts.clear()
    idx = np.concatenate(idx_parts) if idx_parts else np.zeros(0, np.int32)
    idx_parts.clear()
    val = np.concatenate(val_parts) if val_parts else np.zeros(0)
    val_parts.clear()
    indptr = np.zeros(n_sv + 1, dtype=np.int64)
    if count_parts:
        np.cumsum(np.concatenate(count_parts), out=indptr[1:])
    SV = sp.csr_matrix((val, idx, indptr), shape=(n_sv, state["d"]))
    return SV, coef
