"""The solvers behind the SVM family, and which one ``solver="auto"`` takes.

Problem.  Each estimator reduces a fit to one or more binary problems of
LIBSVM's generalised dual (:mod:`svmlab.reference.dual`): one per pair of
classes for SVC / NuSVC, one for SVR, NuSVR and OneClassSVM.  This module
solves them and returns, per problem, the coefficients over its base points
and LIBSVM's ``rho``.

Solvers and the formulations they take:

============  ==========================================  ===================
``solver``    what runs                                   formulations
============  ==========================================  ===================
``"wss2"``    SMO with LIBSVM's second-order selection    all five
              (WSS 2): C-SVC with a named kernel through
              svmlab's compiled ``SMOClassifier(selection=
              "wss2")``; every other case through the
              generalised dual solver
``"platt"``   Platt's SMO heuristics (``SMOClassifier``)  C-SVC only
``"irwls"``   Perez-Cruz et al.'s IRWLS                   C-SVC only
              (``IRWLSClassifier``)
``"blocked"`` the blocked decomposition                   C-SVC only
              (``DecompositionClassifier(engine="smo")``)
``"full"``    the whole kernel matrix by one matrix       all five
              product (when it fits ``cache_size``),
              then WSS 2 on it
============  ==========================================  ===================

Platt's heuristics, IRWLS and the blocked decomposition are written for the
C-SVC dual (one bound per example, ``p = -1``, no second equality); the
named-kernel compiled estimators also need the kernel by name.  So C-SVC
with a precomputed or callable kernel, an infinite ``C`` (a hard margin:
the compiled step puts values within ``1e-12 C`` of a bound onto it, which
has no meaning for ``C = inf``) or a warm start goes through the
generalised dual solver.

The generalised dual solver is, for now, the readable
:mod:`svmlab.reference.dual` on a dense kernel matrix (pure NumPy, a few
tens of microseconds a step; the compiled ``svmlab.smo._dual.DualRun``
replaces it once it is on main).  It needs the problem's kernel matrix in
memory, so it refuses problems whose matrix would exceed
:data:`DENSE_DUAL_MAX_BYTES`.

``solver="auto"`` (:func:`choose_solver`):

* SVR, NuSVR, OneClassSVM, NuSVC, and C-SVC that must use the generalised
  solver (above): ``"wss2"``;
* C-SVC with a named kernel: ``"wss2"`` while the kernel matrix of the
  largest pair fits ``cache_size`` at float64 (every row is computed once;
  WSS 2's steps are then the cheapest), else the blocked decomposition on
  dense data with at least :data:`BLOCKED_MIN_FEATURES` features (its
  kernel blocks are matrix products) and ``"wss2"`` on sparse or
  low-dimensional data.  The rules and the measurements behind them:
  ``docs/decisions/2501-svm-family-solver-choice.md``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..kernels.cache import n_slots_for
from ..reference import dual as ref_dual

__all__ = ["SOLVERS", "C_SVC_ONLY", "ProblemResult", "choose_solver", "solve_dual",
           "solve_csvc_compiled", "DENSE_DUAL_MAX_BYTES", "BLOCKED_MIN_FEATURES"]

SOLVERS = ("auto", "platt", "wss2", "irwls", "blocked", "full")
#: the solvers written for the C-SVC dual only
C_SVC_ONLY = ("platt", "irwls", "blocked")
#: the largest kernel matrix (bytes, float64) the dense dual solver takes
DENSE_DUAL_MAX_BYTES = 2 << 30
#: fewest features for which "auto" takes the blocked decomposition on
#: large dense C-SVC problems
BLOCKED_MIN_FEATURES = 16
#: largest problem (rows) "auto" gives to the readable dual solver
REFERENCE_AUTO_MAX = 600


class ProblemResult(NamedTuple):
    """One solved binary problem: ``coef`` (n_base,) the decision
    function's coefficients over the problem's base points (LIBSVM's
    ``sv_coef``: ``y a``, SVR ``a - a*``, nu-SVC divided by ``r``), ``rho``
    (the decision function is ``coef . K - rho``), ``alpha`` the solver's
    variables (l,), ``n_iter``, ``status`` (``"converged"``, ``"max_iter"``,
    ``"stalled"``), ``objective`` (``f`` of the generalised dual, before the
    nu-SVC rescaling; nan when the solver does not report it), ``r`` (the nu
    forms' second multiplier) and ``message`` (why it did not converge)."""

    coef: np.ndarray
    rho: float
    alpha: np.ndarray
    n_iter: int
    status: str
    objective: float
    r: float
    message: str


def _largest_pair(impl, y_idx, k):
    if impl not in ("c_svc", "nu_svc") or k <= 2:
        return len(y_idx)
    counts = np.sort(np.bincount(y_idx, minlength=k))
    return int(counts[-1] + counts[-2])


def must_use_dual(est, kernel_kind):
    """Why this C-SVC fit cannot use svmlab's compiled C-SVC estimators and
    needs the generalised dual solver (a string), or None."""
    if kernel_kind != "named":
        return f"kernel={est.kernel!r}" if isinstance(est.kernel, str) else "a callable kernel"
    if not np.isfinite(float(est.C)):
        return "C=inf"
    if getattr(est, "_gamma", 1.0) == 0.0:
        return "gamma=0"
    if est.warm_start and getattr(est, "_last_alpha", None) is not None:
        return "warm_start"
    return None


def n_rows(X):
    from sklearn.utils.validation import _num_samples

    return _num_samples(X)


def gram_fits(n, cache_size):
    """Whether an n x n float64 kernel matrix fits in ``cache_size`` MB."""
    return n_slots_for(n, float(cache_size), 8) >= n


def reference_ok(n):
    """Whether the readable dual solver may take an n-row problem in
    ``solver="auto"`` (it is the interim generalised solver: pure NumPy, so
    "auto" keeps it to small problems)."""
    return n <= REFERENCE_AUTO_MAX


def choose_solver(est, impl, X, y_idx, kernel_kind, n_classes):
    """The solver ``est.solver`` names, or the one ``"auto"`` picks (module
    docstring).  Raises ValueError for a solver that does not apply."""
    solver = est.solver
    dual_reason = must_use_dual(est, kernel_kind) if impl == "c_svc" else None
    if solver in C_SVC_ONLY:
        if impl != "c_svc":
            raise ValueError(
                f"solver={solver!r} solves the C-SVC dual only (SVC); "
                f"{type(est).__name__} takes solver='auto', 'wss2' or 'full'.")
        if dual_reason is not None:
            raise ValueError(
                f"solver={solver!r} needs a named kernel, a finite C, gamma > 0 and a cold "
                f"start; this fit has {dual_reason}. Use solver='auto', 'wss2' or 'full'.")
        return solver
    n_pair = _largest_pair(impl, y_idx, n_classes) if y_idx is not None else n_rows(X)
    if solver == "full":
        if not gram_fits(n_pair, est.cache_size):
            raise ValueError(
                f"solver='full' needs the whole kernel matrix ({n_pair} x {n_pair} float64, "
                f"{8 * n_pair * n_pair / 2**20:.0f} MB) in cache_size={est.cache_size} MB; "
                "raise cache_size or use solver='auto'.")
        return solver
    if solver != "auto":
        return solver
    if impl != "c_svc" or dual_reason is not None:
        return "full" if gram_fits(n_pair, est.cache_size) else "wss2"
    if gram_fits(n_pair, est.cache_size) and reference_ok(n_pair):
        return "full"
    if gram_fits(n_pair, est.cache_size) or sp.issparse(X) \
            or X.shape[1] < BLOCKED_MIN_FEATURES:
        return "wss2"
    return "blocked"


def uses_compiled_csvc(est, impl, kernel_kind):
    """Whether the fit runs svmlab's compiled C-SVC estimators."""
    return (impl == "c_svc" and est.solver_ in ("wss2", "platt", "irwls", "blocked")
            and must_use_dual(est, kernel_kind) is None)


# ------------------------------------------------------------ generalised dual

def solve_dual(prob, *, tol, max_iter, kdiag=None, a0=None):
    """Solve a :class:`svmlab.reference.dual.DualProblem` (optionally from
    the feasible start ``a0``) with the generalised dual solver; returns
    :class:`ProblemResult`.  ``max_iter=-1``: no limit."""
    l = len(prob.y)
    nbytes = 8.0 * prob.K.shape[0] ** 2
    if nbytes > DENSE_DUAL_MAX_BYTES:
        raise ValueError(
            f"This problem's kernel matrix ({prob.K.shape[0]} rows, {nbytes / 2**30:.1f} GiB) "
            "is too large for svmlab's dense generalised dual solver. For C-SVC use "
            "SVC(solver='blocked') or 'wss2' with a named kernel; SVR, NuSVR, OneClassSVM "
            "and NuSVC on this size need the compiled generalised solver.")
    if a0 is not None:
        prob = prob._replace(a0=np.asarray(a0, dtype=np.float64))
    res = ref_dual.solve(prob, tol=tol, max_iter=max_iter, record=False, kdiag=kdiag)
    coef, intercept = ref_dual.model(prob, res)
    message = ""
    if res.stop_reason == "stalled":
        message = ("a violating pair exists on which no step can move (a kernel that is not "
                   "positive semi-definite, or a tolerance below rounding)")
    assert len(res.alpha) == l
    return ProblemResult(coef, -intercept, res.alpha, res.n_iter, res.stop_reason,
                         res.objective, res.r, message)


# ------------------------------------------------------------ compiled C-SVC

def compiled_estimator(solver, est, gamma, seed):
    """svmlab's compiled C-SVC estimator for ``solver``, with ``C = 1``:
    the bounds come in as sample weights ``C_i``."""
    from ..decomposition import DecompositionClassifier, IRWLSClassifier
    from ..smo import SMOClassifier

    common = dict(C=1.0, kernel=est.kernel, gamma=gamma, degree=est.degree,
                  coef0=float(est.coef0), tol=float(est.tol), cache_size=float(est.cache_size),
                  max_iter=int(est.max_iter), progress=False)
    if solver in ("wss2", "platt"):
        return SMOClassifier(selection=solver, shrinking=bool(est.shrinking), random_state=seed,
                             **common)
    if solver == "irwls":
        return IRWLSClassifier(random_state=seed, **common)
    if solver == "blocked":
        return DecompositionClassifier(engine="smo", **common)
    raise ValueError(f"no compiled C-SVC estimator for solver={solver!r}")


def solve_csvc_compiled(solver, est, X, y_idx, k, U, gamma, seed):
    """All one-vs-one pairs of a C-SVC problem (``y_idx`` in 0..k-1, bounds
    ``U``) with svmlab's compiled estimator; returns ``(results, rows)``:
    per pair (LIBSVM's order) a :class:`ProblemResult` over the pair's rows
    ``rows[p]`` (positions in X: class a's, then class b's), LIBSVM's sign
    (+1 for the pair's first class)."""
    model = compiled_estimator(solver, est, gamma, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X, y_idx, sample_weight=U)
    message = " ".join(str(w.message) for w in caught
                       if issubclass(w.category, ConvergenceWarning))
    results, rows = [], []
    if k == 2:
        # svmlab's binary sign is +1 for classes_[1]; LIBSVM's pair (0, 1) has +1 for 0
        r = np.concatenate([np.flatnonzero(y_idx == 0), np.flatnonzero(y_idx == 1)])
        y_l = np.where(y_idx[r] == 0, 1.0, -1.0)
        alpha = np.asarray(model.alpha_)[r]
        status = _status(model)
        results.append(ProblemResult(alpha * y_l, float(model.intercept_[0]), alpha,
                                     int(model.n_iter_), status, np.nan, np.nan,
                                     message if status != "converged" else ""))
        rows.append(r)
        return results, rows
    P = k * (k - 1) // 2
    alphas = np.asarray(model.alpha_)
    n_iter = np.asarray(model.n_iter_)
    p = 0
    for a in range(k):
        for b in range(a + 1, k):
            r = np.concatenate([np.flatnonzero(y_idx == a), np.flatnonzero(y_idx == b)])
            y_l = np.where(y_idx[r] == a, 1.0, -1.0)
            alpha = alphas[p, r]
            status = _status(model) if p == P - 1 or model.converged_ else "converged"
            results.append(ProblemResult(alpha * y_l, -float(model.intercept_[p]), alpha,
                                         int(n_iter[p]), status, np.nan, np.nan, ""))
            rows.append(r)
            p += 1
    if not model.converged_:
        # which pairs failed is in the message; mark them all as the fit's reason
        results = [res._replace(status=_status(model), message=message) for res in results]
    return results, rows


def _status(model):
    reason = getattr(model, "stop_reason_", "converged")
    if reason == "converged":
        return "converged"
    if reason in ("max_iter", "iteration_cap"):
        return "max_iter"
    return "stalled"
