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
C-SVC dual (one bound per example, ``p = -1``, no second equality) and take
the kernel by name.  Which code runs a fit (:func:`backend`):

``"rows"``
    C-SVC, named kernel, finite C, gamma > 0, cold start: svmlab's compiled
    C-SVC estimators (SMO, IRWLS, blocked decomposition) on kernel rows;
``"full"``
    C-SVC with ``solver="full"``: each pair's whole kernel matrix (from
    class blocks, :class:`ClassBlocks`) in the compiled SMO with WSS 2;
``"dual"``
    everything else: the compiled generalised dual (``svmlab.smo.DualRun``)
    on kernel rows, or on the whole matrix for ``solver="full"``.

C-SVC with ``C = inf`` (a hard margin) or a warm start (the compiled C-SVC
runs take no start) always goes to the generalised dual.

``solver="auto"`` (:func:`choose_solver`):

* C-SVC with a named kernel (the row path): the blocked decomposition on
  dense data of 16 to 32 features from 3000 rows in the largest pair
  (:func:`svmlab.decomposition._blocked.prefers_blocked_lowdim`; it then
  runs with float32 rows and a working set of 256, decision 30w01);
  otherwise ``"wss2"`` while the kernel
  matrix of the largest pair fits ``cache_size`` at float64 (every row is
  computed once; WSS 2's steps are then the cheapest), or the data is
  sparse or has fewer than :data:`BLOCKED_MIN_FEATURES` features; else the
  blocked decomposition (its kernel blocks are matrix products);
* everything else: ``"wss2"`` on the compiled generalised dual.

The rules and the measurements behind them:
``docs/decisions/2501-svm-family-solver-choice.md``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..decomposition._blocked import prefers_blocked_lowdim
from ..kernels.cache import n_slots_for

__all__ = ["SOLVERS", "C_SVC_ONLY", "ProblemResult", "choose_solver",
           "solve_csvc_compiled", "BLOCKED_MIN_FEATURES"]

SOLVERS = ("auto", "platt", "wss2", "irwls", "blocked", "full")
#: the solvers written for the C-SVC dual only
C_SVC_ONLY = ("platt", "irwls", "blocked")
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
    if impl != "c_svc" or rows_reason(est, kernel_kind) is not None:
        return "wss2"  # the compiled generalised dual on kernel rows
    if prefers_blocked_lowdim(n_pair, X):  # 16-32 features, >= 3000 rows (30w01)
        return "blocked"
    if fits or sp.issparse(X) or X.shape[1] < BLOCKED_MIN_FEATURES:
        return "wss2"
    return "blocked"


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
    each pair's whole kernel matrix) or ``"dual"`` (the compiled
    generalised dual, ``svmlab.smo.DualRun``)."""
    if impl == "c_svc" and hard_reason(est) is None:
        if est.solver_ == "full":
            return "full"
        if est.solver_ in ("wss2", "platt", "irwls", "blocked") \
                and rows_reason(est, kernel_kind) is None:
            return "rows"
    return "dual"


def uses_compiled_csvc(est, impl, kernel_kind):
    """Whether the fit runs svmlab's compiled C-SVC estimators on rows."""
    return backend(est, impl, kernel_kind) == "rows"


def full_pair_run(opts, G, y_pm, U, seed, cache_dtype, estimator=None):
    """The compiled SMO (WSS 2, shrinking as ``opts.shrinking``) on the whole
    kernel matrix ``G`` of one pair (``y_pm`` +1 for the pair's first
    class, bounds ``U``): an ``SMORun`` over a precomputed kernel whose
    cache holds every row (one gather; rows in ``cache_dtype``).  ``opts``:
    the estimator's :class:`svmlab._stepping.FitOptions` (``tol``,
    ``cache_size``, ``shrinking``, ``max_iter``); ``estimator`` is only
    held (named in messages), never read."""
    from ..kernels import Kernel
    from ..smo._estimator import SMORun

    same = bool(np.all(U == U[0]))
    run = SMORun(estimator, G, y_pm, Kernel(G, "precomputed"),
                 C=float(U[0]) if same else 1.0,
                 tol=float(opts.tol), eps=1e-12, cache_size=float(opts.cache_size),
                 shrinking=bool(opts.shrinking), selection="wss2", seed=int(seed),
                 max_iter=int(opts.max_iter), progress=False,
                 Cv=None if same else np.ascontiguousarray(U), full_kernel=True,
                 cache_dtype=cache_dtype)
    run.n_jobs = 1
    run.blas_threads = 1
    return run


def full_pair_result(res, y_pm):
    """``(coef, rho, alpha)`` in LIBSVM's sign from an ``SMORun`` result
    over a pair whose +1 is the first class."""
    alpha = np.asarray(res["alpha"], dtype=np.float64)
    return alpha * y_pm, -float(res["intercept"]), alpha


# ------------------------------------------------------------ compiled C-SVC

def compiled_estimator(solver, est, gamma, seed, C=1.0, n_jobs=None):
    """svmlab's compiled C-SVC estimator for ``solver`` with bound ``C``
    (per-example bounds come in as sample weights ``C_i / C``) and
    ``n_jobs`` (its one-vs-one pairs at once)."""
    from ..smo import SMOClassifier

    common = dict(C=float(C), kernel=est.kernel, gamma=gamma, degree=est.degree,
                  coef0=float(est.coef0), tol=float(est.tol), cache_size=float(est.cache_size),
                  max_iter=int(est.max_iter), progress=False, n_jobs=n_jobs)
    if solver in ("wss2", "platt"):
        return SMOClassifier(selection=solver, shrinking=bool(est.shrinking), random_state=seed,
                             **common)
    if solver == "irwls":
        from ..decomposition.irwls import IRWLSClassifier
        return IRWLSClassifier(random_state=seed, **common)
    if solver == "blocked":
        # float32 rows (LIBSVM's Qfloat): one SGEMM per block; "auto" would
        # take float64 where every row fits, a loop per entry (30w01)
        from ..decomposition.estimators import DecompositionClassifier
        return DecompositionClassifier(engine="smo", cache_dtype="float32", **common)
    raise ValueError(f"no compiled C-SVC estimator for solver={solver!r}")


def compiled_for(solver, est, U, gamma, seed, n_jobs=None):
    """``(model, sample_weight, C)``: the compiled C-SVC estimator for the
    bounds ``U``: a scalar ``C`` when every example has the same bound (the
    unweighted solver path, about 25% faster on small problems than
    per-example bounds), else ``C = 1`` and the bounds as sample weights."""
    same = bool(np.all(U == U[0]))
    C = float(U[0]) if same else 1.0
    return (compiled_estimator(solver, est, gamma, seed, C=C, n_jobs=n_jobs),
            (None if same else U), C)


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
    sizes = np.bincount(y_kept, minlength=k)  # once per class
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]  # LIBSVM's order
    for p, alpha in enumerate(res["alphas"]):
        a, b = pairs[p]
        n_a = int(sizes[a])
        alpha = np.asarray(alpha, dtype=np.float64)
        y_l = np.ones(len(alpha))
        y_l[n_a:] = -1.0
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


def compiled_dual_run(opts, kernel, prob, *, full_kernel, a0=None, estimator=None):
    """``svmlab.smo.DualRun`` on the problem ``prob`` (a
    :class:`svmlab.reference.dual.DualProblem`; its ``K`` is not read) over
    the base points of ``kernel`` (a :class:`svmlab.kernels.Kernel`), with
    the options ``opts`` (:class:`svmlab._stepping.FitOptions`: ``tol``,
    ``cache_size``, ``shrinking``, ``max_iter``); ``estimator`` is only
    held (it receives the fit when the run is finished on its own)."""
    from ..smo import DualRun

    cache_dtype = "float64" if gram_fits(kernel.n_samples, opts.cache_size) else "float32"
    run = DualRun(kernel, prob.y, prob.p, prob.U, idx=prob.idx, nu=bool(prob.nu),
                  alpha0=prob.a0 if a0 is None else a0, tol=float(opts.tol),
                  cache_size=float(opts.cache_size), cache_dtype=cache_dtype,
                  full_kernel=bool(full_kernel), shrinking=bool(opts.shrinking),
                  max_iter=int(opts.max_iter), progress=False, estimator=estimator)
    run.n_jobs = 1
    return run


def compiled_dual_result(prob, res, n_base):
    """``(coef, rho, alpha, r, objective)`` of a ``DualRun`` result in the
    reference's terms (:func:`svmlab.reference.dual.model`)."""
    from ..reference.dual import DualResult, model

    dr = DualResult(np.asarray(res["alpha"], dtype=np.float64), res.get("G"), res["rho"],
                    res["r"], res["objective"], res["n_iter"], res["converged"],
                    res["stop_reason"], [])
    coef, intercept = model(prob, dr, n=n_base)
    return coef, -intercept, dr.alpha, dr.r, dr.objective
