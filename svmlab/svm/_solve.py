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


def n_rows(X):
    from sklearn.utils.validation import _num_samples

    return _num_samples(X)


def gram_fits(n, cache_size):
    """Whether an n x n float64 kernel matrix fits in ``cache_size`` MB."""
    return n_slots_for(n, float(cache_size), 8) >= n


def choose_solver(est, impl, X, y_idx, kernel_kind, n_classes):
    """The solver ``est.solver`` names, or the one ``"auto"`` picks (module
    docstring).  Raises ValueError for a solver that does not apply."""
    solver = est.solver
    n_pair = _largest_pair(impl, y_idx, n_classes) if y_idx is not None else n_rows(X)
    fits = gram_fits(n_pair, est.cache_size)
    if solver in C_SVC_ONLY:
        if impl != "c_svc":
            raise ValueError(
                f"solver={solver!r} solves the C-SVC dual only (SVC); "
                f"{type(est).__name__} takes solver='auto', 'wss2' or 'full'.")
        reason = rows_reason(est, kernel_kind)
        if reason is not None:
            raise ValueError(
                f"solver={solver!r} needs a named kernel, a finite C, gamma > 0 and a cold "
                f"start; this fit has {reason}. Use solver='auto', 'wss2' or 'full'.")
        return solver
    if solver == "full":
        if not fits:
            raise ValueError(
                f"solver='full' needs the whole kernel matrix ({n_pair} x {n_pair} float64, "
                f"{8 * n_pair * n_pair / 2**20:.0f} MB) in cache_size={est.cache_size} MB; "
                "raise cache_size or use solver='auto'.")
        return solver
    if solver != "auto":
        return solver
    if impl != "c_svc" or hard_reason(est) is not None:
        return "full" if fits else "wss2"
    if fits and (full_path_available() or rows_reason(est, kernel_kind) is not None):
        return "full"
    if rows_reason(est, kernel_kind) is not None:
        return "wss2"
    if fits or sp.issparse(X) or X.shape[1] < BLOCKED_MIN_FEATURES:
        return "wss2"
    return "blocked"


def full_path_available():
    """Whether the kernel room takes precomputed Gram matrices and the SMO
    room a full-kernel cache (``SMORun(full_kernel=True)``): then the
    ``"full"`` solver runs compiled for C-SVC."""
    try:
        import inspect

        from ..kernels import ALL_KERNELS
        from ..smo._estimator import SMORun
    except ImportError:
        return False
    return ("precomputed" in ALL_KERNELS
            and "full_kernel" in inspect.signature(SMORun.__init__).parameters)


def hard_reason(est):
    """Why this C-SVC fit can only run on the readable generalised solver
    (``C=inf``: the compiled step's snap band ``1e-12 C`` is infinite; a
    warm start: the compiled runs take no start), or None."""
    if not np.isfinite(float(est.C)):
        return "C=inf"
    if est.warm_start and getattr(est, "_last_alpha", None) is not None:
        return "warm_start"
    return None


def rows_reason(est, kernel_kind):
    """Why the compiled C-SVC estimators on kernel rows cannot take this
    fit (they need a kernel by name and gamma > 0), or None."""
    if kernel_kind != "named":
        return f"kernel={est.kernel!r}" if isinstance(est.kernel, str) else "a callable kernel"
    if getattr(est, "_gamma", 1.0) == 0.0:
        return "gamma=0"
    return hard_reason(est)


def backend(est, impl, kernel_kind):
    """Which code runs the fit: ``"rows"`` (svmlab's compiled C-SVC
    estimators on kernel rows), ``"full"`` (the compiled SMO with WSS 2 on
    each pair's whole kernel matrix) or ``"reference"`` (the readable
    generalised dual solver)."""
    if impl == "c_svc" and hard_reason(est) is None:
        if est.solver_ == "full" and full_path_available():
            return "full"
        if est.solver_ in ("wss2", "platt", "irwls", "blocked") \
                and rows_reason(est, kernel_kind) is None:
            return "rows"
    return "reference"


def uses_compiled_csvc(est, impl, kernel_kind):
    """Whether the fit runs svmlab's compiled C-SVC estimators on rows."""
    return backend(est, impl, kernel_kind) == "rows"


def full_pair_run(est, G, y_pm, U, seed, cache_dtype):
    """The compiled SMO (WSS 2, shrinking as ``est.shrinking``) on the whole
    kernel matrix ``G`` of one pair (``y_pm`` +1 for the pair's first
    class, bounds ``U``): an ``SMORun`` over a precomputed kernel whose
    cache holds every row (one gather; rows in ``cache_dtype``)."""
    from ..kernels import Kernel
    from ..smo._estimator import SMORun

    est.cache_dtype_ = cache_dtype  # SMORun reads the estimator's cache dtype
    same = bool(np.all(U == U[0]))
    run = SMORun(est, G, y_pm, Kernel(G, "precomputed"), C=float(U[0]) if same else 1.0,
                 tol=float(est.tol), eps=1e-12, cache_size=float(est.cache_size),
                 shrinking=bool(est.shrinking), selection="wss2", seed=int(seed),
                 max_iter=int(est.max_iter), progress=False,
                 Cv=None if same else np.ascontiguousarray(U), full_kernel=True)
    run.n_jobs = 1
    run.blas_threads = 1
    return run


def full_pair_result(res, y_pm):
    """``(coef, rho, alpha)`` in LIBSVM's sign from an ``SMORun`` result
    over a pair whose +1 is the first class."""
    alpha = np.asarray(res["alpha"], dtype=np.float64)
    return alpha * y_pm, -float(res["intercept"]), alpha


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

def compiled_estimator(solver, est, gamma, seed, C=1.0):
    """svmlab's compiled C-SVC estimator for ``solver`` with bound ``C``
    (per-example bounds come in as sample weights ``C_i / C``)."""
    from ..decomposition import DecompositionClassifier, IRWLSClassifier
    from ..smo import SMOClassifier

    common = dict(C=float(C), kernel=est.kernel, gamma=gamma, degree=est.degree,
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


def compiled_for(solver, est, U, gamma, seed):
    """``(model, sample_weight, C)``: the compiled C-SVC estimator for the
    bounds ``U``: a scalar ``C`` when every example has the same bound (the
    unweighted solver path, about 25% faster on small problems than
    per-example bounds), else ``C = 1`` and the bounds as sample weights."""
    same = bool(np.all(U == U[0]))
    C = float(U[0]) if same else 1.0
    return compiled_estimator(solver, est, gamma, seed, C=C), (None if same else U), C


def _reason(r):
    if r in ("converged", "max_iter", "stalled", "callback", "interrupted", "pending"):
        return r
    return "max_iter" if r == "iteration_cap" else "stalled"


def compiled_results(res, inner, y_kept, k):
    """Per pair (LIBSVM's order), a :class:`ProblemResult` from the compiled
    C-SVC run ``inner`` and its result dict ``res``: coefficients over the
    pair's kept rows (class a's, then class b's; LIBSVM's sign, +1 for a)."""
    out = []
    if k == 2:
        r = np.concatenate([np.flatnonzero(y_kept == 0), np.flatnonzero(y_kept == 1)])
        y_l = np.where(y_kept[r] == 0, 1.0, -1.0)
        alpha = np.asarray(res["alpha"], dtype=np.float64)[r]
        # svmlab's binary sign is +1 for classes_[1]: its b is LIBSVM's rho
        out.append(ProblemResult(alpha * y_l, float(res["intercept"]), alpha, int(inner.n_iter),
                                 _reason(inner.stop_reason), np.nan, np.nan,
                                 inner.warning_message() or ""))
        return out
    reasons = getattr(inner, "part_reasons", None)
    for p, alpha in enumerate(res["alphas"]):
        a, b = _pair_of(p, k)
        n_a = int(np.sum(y_kept == a))
        y_l = np.r_[np.ones(n_a), -np.ones(len(alpha) - n_a)]
        alpha = np.asarray(alpha, dtype=np.float64)
        reason = _reason(reasons[p]) if reasons is not None else _reason(inner.stop_reason)
        msg = (inner.part_messages[p] or "") if reasons is not None else ""
        out.append(ProblemResult(alpha * y_l, -float(res["intercepts"][p]), alpha,
                                 int(res["n_iter"][p]), reason, np.nan, np.nan, msg))
    return out


def _pair_of(p, k):
    for a in range(k):
        for b in range(a + 1, k):
            if p == 0:
                return a, b
            p -= 1
    raise IndexError(p)


def solve_csvc_compiled(solver, est, X, y_idx, k, U, gamma, seed):
    """All one-vs-one pairs of a C-SVC problem (``y_idx`` in 0..k-1, bounds
    ``U``) with svmlab's compiled estimator, run to the end (no records);
    returns ``(results, rows)``: per pair (LIBSVM's order) a
    :class:`ProblemResult` over the pair's rows ``rows[p]`` (positions in X:
    class a's, then class b's), LIBSVM's sign (+1 for the pair's first
    class)."""
    model, sw, _ = compiled_for(solver, est, U, gamma, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        run = model.start(X, y_idx, sample_weight=sw)
        run.progress = False
        run.run()
    results = compiled_results(run.result(), run, y_idx, k)
    rows = [np.concatenate([np.flatnonzero(y_idx == a), np.flatnonzero(y_idx == b)])
            for a, b in (_pair_of(p, k) for p in range(len(results)))]
    return results, rows


def gram_dtype(est, n_kept, bk):
    """The type of the class blocks: float64 when the whole kernel matrix
    of the kept rows fits ``cache_size`` at float64 (or for the readable
    solver, which computes in float64), else float32 (LIBSVM's ``Qfloat``:
    one SGEMM per block at twice the speed; the compiled full path then
    caches float32 rows)."""
    if bk != "full" or gram_fits(n_kept, est.cache_size):
        return "float64"
    return "float32"


class ClassBlocks:
    """Kernel blocks between classes, ``K(X_a, X_b)``, for the pairs of a
    one-vs-one fit on whole kernel matrices: each block is one matrix
    product (float32: one SGEMM), computed when a pair first needs it; the
    diagonal blocks ``K(X_a, X_a)`` are kept (every pair of class a reads
    it), an off-diagonal block is used by one pair only.  ``class_rows[c]``
    holds the rows of X of class c (kept rows, in X's order)."""

    def __init__(self, kern, class_rows, dtype="float64"):
        self.kern = kern
        self.class_rows = class_rows
        self.dtype = dtype
        self._diag = {}

    def block(self, a, b):
        ra, rb = self.class_rows[a], self.class_rows[b]
        if self.dtype == "float32" and self.kern.named:
            k = self.kern.kernel_obj
            return k.block(ra, rb, dtype=np.float32).astype(np.float64)
        return self.kern.gram(ra, rb)

    def pair_gram(self, a, b):
        """The kernel matrix of pair (a, b) over class a's rows, then class
        b's (float64, C-contiguous)."""
        if len(self.class_rows) == 2:  # one pair: one product over all its rows
            rows = np.concatenate(self.class_rows)
            if self.dtype == "float32" and self.kern.named:
                return self.kern.kernel_obj.block(rows, rows,
                                                  dtype=np.float32).astype(np.float64)
            return self.kern.gram(rows, rows)
        for c in (a, b):
            if c not in self._diag:
                self._diag[c] = self.block(c, c)
        Kab = self.block(a, b)
        return np.ascontiguousarray(np.block([[self._diag[a], Kab], [Kab.T, self._diag[b]]]))
