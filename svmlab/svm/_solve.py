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
``"blocked"`` the blocked decomposition                   C-SVC, epsilon-SVR,
              (``DecompositionClassifier(engine="smo")``; nu-SVR, one-class
              for the other three its generalised form,
              ``BlockedDualRun``)
``"full"``    the whole kernel matrix by one matrix       all five
              product (when it fits ``cache_size``),
              then WSS 2 on it
============  ==========================================  ===================

Platt's heuristics, IRWLS and the blocked decomposition are written for the
C-SVC dual (one bound per example, ``p = -1``, no second equality) and take
the kernel by name.  Which code runs a fit is a :class:`Backend` object,
chosen once per fit (:func:`select_backend`; its ``name`` below):

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

The layer.  An estimator converts its parameters once, in ``start`` (as
scikit-learn's ``_base.py`` does before it calls libsvm): into a
:class:`FitProblem` (the kernel data, the formulation, the per-example
bounds, the problems' rows) and a :class:`svmlab._stepping.FitOptions`
(tolerances, cache, iteration limit, the solvers' options).  A backend's
:meth:`Backend.open` turns them into a :class:`Solving`: the runs of the
problems, made one by one as the fit reaches them, and the
:class:`ProblemResult` of each from the state a run reached.  No run reads
or writes the estimator (it is only held, to receive the fit and to be
named in messages); the estimator's ``finish`` reads the results.

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
* epsilon-SVR, nu-SVR and one-class with a named kernel on dense data of
  at least 5000 rows (a finite C, a cold start): the blocked decomposition
  of the generalised dual (:func:`prefers_blocked_dual`, decision 31b01);
* everything else: ``"wss2"`` on the compiled generalised dual.

The rules and the measurements behind them:
``docs/decisions/2501-svm-family-solver-choice.md``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple, Optional

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .._stepping import blas_thread_limit
from ..decomposition._blocked import prefers_blocked_lowdim
from ..kernels.cache import n_slots_for
from ..reference import dual as ref_dual

__all__ = ["SOLVERS", "C_SVC_ONLY", "ProblemResult", "FitProblem", "Backend", "Solving",
           "ROWS", "FULL", "DUAL", "select_backend", "choose_solver", "solve_csvc_compiled",
           "BLOCKED_MIN_FEATURES"]

SOLVERS = ("auto", "platt", "wss2", "irwls", "blocked", "full")
#: the solvers written for the C-SVC dual only
C_SVC_ONLY = ("platt", "irwls")
#: the formulations besides C-SVC that the blocked decomposition solves
#: (its generalised form, :mod:`svmlab.decomposition._blocked_dual`)
BLOCKED_DUAL_IMPLS = ("epsilon_svr", "nu_svr", "one_class")
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
    if solver == "blocked" and impl != "c_svc":
        if impl not in BLOCKED_DUAL_IMPLS:
            raise ValueError(
                f"solver='blocked' solves the C-SVC, epsilon-SVR, nu-SVR and one-class duals; "
                f"{type(est).__name__} takes solver='auto', 'wss2' or 'full'.")
        if not np.isfinite(float(getattr(est, "C", 1.0))):
            raise ValueError("solver='blocked' needs a finite C; use solver='auto' or 'wss2'.")
        return solver
    if solver in C_SVC_ONLY or solver == "blocked":
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
    if impl != "c_svc":
        return "blocked" if prefers_blocked_dual(est, impl, X, kernel_kind) else "wss2"
    if rows_reason(est, kernel_kind) is not None:
        return "wss2"  # the compiled generalised dual on kernel rows
    if prefers_blocked_lowdim(n_pair, X):  # 16-32 features, >= 3000 rows (30w01)
        return "blocked"
    if fits or sp.issparse(X) or X.shape[1] < BLOCKED_MIN_FEATURES:
        return "wss2"
    return "blocked"


def prefers_blocked_dual(est, impl, X, kernel_kind):
    """Whether ``solver="auto"`` takes the blocked decomposition for an
    epsilon-SVR, nu-SVR or one-class fit: a named kernel on dense data of at
    least :data:`svmlab.decomposition._blocked_dual.AUTO_MIN_ROWS` rows, a
    finite C and a cold start.  There it took 0.22-0.43 of LIBSVM's time,
    and at 1000-3000 rows the compiled SMO on rows was as fast or faster
    (decision 31b01); sparse data was not measured."""
    from ..decomposition._blocked_dual import AUTO_MIN_ROWS

    if impl not in BLOCKED_DUAL_IMPLS or kernel_kind != "named" or sp.issparse(X):
        return False
    if n_rows(X) < AUTO_MIN_ROWS or not np.isfinite(float(getattr(est, "C", 1.0))):
        return False
    return not (est.warm_start and getattr(est, "_last_alpha", None) is not None)


def hard_reason(est):
    """Why this C-SVC fit can only run on the readable generalised solver
    (``C=inf``: the compiled step's snap band ``1e-12 C`` is infinite; a
    warm start: the compiled runs take no start), or None."""
    if not math.isfinite(float(est.C)):
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


def select_backend(est, impl, kernel_kind):
    """The :class:`Backend` that runs this fit (module docstring):
    :data:`ROWS` (svmlab's compiled C-SVC runs on kernel rows), :data:`FULL`
    (the compiled SMO with WSS 2 on each pair's whole kernel matrix) or
    :data:`DUAL` (the compiled generalised dual, ``svmlab.smo.DualRun``).
    Needs ``est.solver_`` (:func:`choose_solver`)."""
    if impl == "c_svc" and hard_reason(est) is None:
        if est.solver_ == "full":
            return FULL
        if est.solver_ in ("wss2", "platt", "irwls", "blocked") \
                and rows_reason(est, kernel_kind) is None:
            return ROWS
    return DUAL


def backend(est, impl, kernel_kind):
    """The name of the backend that runs this fit (``"rows"``, ``"full"``
    or ``"dual"``; :func:`select_backend`)."""
    return select_backend(est, impl, kernel_kind).name


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

def compiled_estimator(solver, opts, gamma, seed, C=1.0, n_jobs=None):
    """svmlab's compiled C-SVC estimator for ``solver`` with bound ``C``
    (per-example bounds come in as sample weights ``C_i / C``), the
    options ``opts`` (:class:`svmlab._stepping.FitOptions`: the kernel,
    ``tol``, ``cache_size``, ``max_iter``, ``shrinking``) and ``n_jobs``
    (its one-vs-one pairs at once).  The family's fits no longer make it
    (:func:`start_compiled` builds the runs from :func:`compiled_options`);
    it states what those options stand for, and the tests compare them."""
    from ..smo import SMOClassifier

    common = dict(C=float(C), kernel=opts.kernel, gamma=gamma, degree=opts.degree,
                  coef0=float(opts.coef0), tol=float(opts.tol),
                  cache_size=float(opts.cache_size), max_iter=int(opts.max_iter),
                  progress=False, n_jobs=n_jobs)
    if solver in ("wss2", "platt"):
        return SMOClassifier(selection=solver, shrinking=bool(opts.shrinking),
                             random_state=seed, **common)
    if solver == "irwls":
        from ..decomposition.irwls import IRWLSClassifier
        return IRWLSClassifier(random_state=seed, **common)
    if solver == "blocked":
        # float32 rows (LIBSVM's Qfloat): one SGEMM per block; "auto" would
        # take float64 where every row fits, a loop per entry (30w01)
        from ..decomposition.estimators import DecompositionClassifier
        return DecompositionClassifier(engine="smo", cache_dtype="float32", **common)
    raise ValueError(f"no compiled C-SVC estimator for solver={solver!r}")


#: per compiled estimator class, its parameters' defaults over FitOptions' fields
#: (read once)
_DEFAULTS = {}


#: per solver, :func:`_direct`'s answer (its imports go through the rooms'
#: first-touch lookups: a few microseconds, twice a fit)
_DIRECT = {}


def _direct(solver):
    """``(estimator class, make_run, cache_dtype)`` of the compiled C-SVC
    run of ``solver`` (what :func:`compiled_estimator` picks), found once
    per solver."""
    out = _DIRECT.get(solver)
    if out is None:
        out = _DIRECT[solver] = _find_direct(solver)
    return out


def _find_direct(solver):
    if solver in ("wss2", "platt"):
        from ..smo import SMOClassifier
        from ..smo._estimator import smo_run
        return SMOClassifier, smo_run, "auto"
    if solver == "irwls":
        from ..decomposition.irwls import IRWLSClassifier, irwls_run
        return IRWLSClassifier, irwls_run, "auto"
    if solver == "blocked":
        from ..decomposition.estimators import DecompositionClassifier, decomposition_run

        def make(X, y, kernel, o):
            return decomposition_run(DecompositionClassifier, X, y, kernel, o)
        # float32 rows (LIBSVM's Qfloat): see compiled_estimator
        return DecompositionClassifier, make, "float32"
    raise ValueError(f"no compiled C-SVC run for solver={solver!r}")


def compiled_options(solver, opts, seed, C):
    """The :class:`svmlab._stepping.FitOptions` that
    ``FitOptions.of(compiled_estimator(solver, opts, ..., C=C))`` gives
    (``Cv`` and ``cache_dtype`` are set at the run's start), made from the
    estimator class's defaults (read once) with no estimator object."""
    import dataclasses
    import inspect

    from .._stepping import FitOptions

    cls, _, _ = _direct(solver)
    base = _DEFAULTS.get(cls)
    if base is None:
        # the class's defaults over FitOptions' fields, once per class
        dflt = {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()
                if p.default is not inspect.Parameter.empty}
        base = {f.name: dflt.get(f.name, f.default) for f in dataclasses.fields(FitOptions)
                if f.name not in ("Cv", "cache_dtype")}
        _DEFAULTS[cls] = base
    vals = dict(base)
    vals.update(C=float(C), kernel=opts.kernel, degree=opts.degree, coef0=float(opts.coef0),
                tol=float(opts.tol), cache_size=float(opts.cache_size),
                max_iter=int(opts.max_iter), progress=False)
    if solver in ("wss2", "platt"):
        vals.update(selection=solver, shrinking=bool(opts.shrinking), random_state=seed)
    elif solver == "irwls":
        vals.update(random_state=seed)
    else:
        vals.update(engine="smo")
    return FitOptions(**vals)


def start_compiled(solver, opts, X, y_idx, k, U, gamma, seed, n_jobs=None, checked=True,
                   name=None):
    """The compiled C-SVC run (binary, or one-vs-one over ``k`` classes) of
    the rows ``X`` (labels ``y_idx`` in 0..k-1, bounds ``U``) with the
    family's options ``opts``, made directly by
    :func:`svmlab._base.start_kernel_run` from the options
    (:func:`compiled_options`) and the solver's run function
    (:func:`svmlab.smo._estimator.smo_run`,
    :func:`svmlab.decomposition.irwls.irwls_run`,
    :func:`svmlab.decomposition.estimators.decomposition_run`), with no
    estimator object.  ``name`` is what the runs' messages call the fit
    (the family class the user fitted, ``"SVC"``); None: the estimator
    class the run replaces (``SMOClassifier``, ...).
    X, y and the parameters were validated at the family estimator's start
    (check_scale included): not twice; ``checked=False`` (rows not
    validated as a classification problem: the probability folds)
    validates them as the estimator's ``start`` did.  The solvers' own data
    checks (``_check_extra``) read only parameters that these options leave
    at values they accept (no working-set size), so none runs here.  The
    bounds: a scalar ``C`` when every example has the same (the unweighted
    solver path), else ``C = 1`` and ``U`` as sample weights.  The drop-in's WSS 2 run rounds its float64
    kernel values to float32 precision (``qfloat``: LIBSVM's ``Qfloat``,
    with LIBSVM's tie rule for i it takes LIBSVM's steps; decision record
    36a01)."""
    from .._base import start_kernel_run
    from .._validation import check_classification

    cls, make_run, cache_dtype = _direct(solver)
    same = bool(np.all(U == U[0]))
    C = float(U[0]) if same else 1.0
    o = compiled_options(solver, opts, seed, C)
    if sp.issparse(X) or not checked:
        X, y_idx, classes = check_classification(X, y_idx)
    else:
        X, classes = np.ascontiguousarray(X), np.arange(k, dtype=y_idx.dtype)
    run, _ = start_kernel_run(X, y_idx, classes, None if same else U, o, make_run,
                              gamma=gamma, cache_dtype=cache_dtype, n_jobs=n_jobs,
                              name=cls.__name__ if name is None else name,
                              qfloat=solver == "wss2")
    return run


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
    sizes = np.bincount(y_kept, minlength=k).tolist()  # once per class
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]  # LIBSVM's order
    intercepts, n_iter = res["intercepts"], res["n_iter"]
    for p, alpha in enumerate(res["alphas"]):
        alpha = np.asarray(alpha, dtype=np.float64)
        # alpha y: +1 over class a's rows, -1 over class b's (the product
        # in place on a copy: the same values as by a vector of signs)
        coef = alpha.copy()
        coef[sizes[pairs[p][0]]:] *= -1.0
        reason = _reason(reasons[p]) if reasons is not None else _reason(inner.stop_reason)
        msg = (inner.part_messages[p] or "") if reasons is not None else ""
        out.append(ProblemResult(coef, -float(intercepts[p]), alpha,
                                 int(n_iter[p]), reason, np.nan, np.nan, msg))
    return out


def _pair_of(p, k):
    for a in range(k):
        for b in range(a + 1, k):
            if p == 0:
                return a, b
            p -= 1
    raise IndexError(p)


def solve_csvc_compiled(solver, opts, X, y_idx, k, U, gamma, seed):
    """All one-vs-one pairs of a C-SVC problem (``y_idx`` in 0..k-1, bounds
    ``U``) with svmlab's compiled estimator, run to the end (no records);
    returns ``(results, rows)``: per pair (LIBSVM's order) a
    :class:`ProblemResult` over the pair's rows ``rows[p]`` (positions in X:
    class a's, then class b's), LIBSVM's sign (+1 for the pair's first
    class); ``opts`` as :func:`compiled_estimator` reads them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        run = start_compiled(solver, opts, X, y_idx, k, U, gamma, seed, checked=False)
        run.progress = False
        run.run()
    results = compiled_results(run.result(), run, y_idx, k)
    rows = [np.concatenate([np.flatnonzero(y_idx == a), np.flatnonzero(y_idx == b)])
            for a, b in (_pair_of(p, k) for p in range(len(results)))]
    return results, rows


def gram_dtype(cache_size, n_kept):
    """The type of the class blocks of the full path: float64 when the
    whole kernel matrix of the kept rows fits ``cache_size`` at float64,
    else float32 (LIBSVM's ``Qfloat``: one SGEMM per block at twice the
    speed; the compiled full path then caches float32 rows)."""
    if gram_fits(n_kept, cache_size):
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


# ------------------------------------------------------------- the layer

def check_finite_gram(K):
    """``K``, or scikit-learn's error when it has NaN or infinite values."""
    if not np.all(np.isfinite(K)):
        raise ValueError(
            "The dual coefficients or intercepts are not finite. The input data may "
            "contain large values and need to be preprocessed. (The kernel matrix has "
            "NaN or infinite values: scale the features, e.g. with StandardScaler, or "
            "check the kernel.)")
    return K


def check_kernel_finite(kern, rows):
    """scikit-learn's error before any solver work when the kernel values
    over ``rows`` would not be finite (data so large that squared norms
    overflow, or a Gram matrix with NaN or inf)."""
    if kern.named:
        bad = not np.all(np.isfinite(kern.kernel_obj.data.sqnorm[rows]))
    else:
        bad = not np.all(np.isfinite(kern.G[np.ix_(rows, rows)]))
    if bad:
        check_finite_gram(np.array([np.nan]))


def base_kernel(kern, Xt, rows, gamma, degree, coef0):
    """A :class:`svmlab.kernels.Kernel` over the training rows ``rows`` (the
    base points of a problem): the named kernel on those rows, or the Gram
    matrix's block as a precomputed kernel.  Its float64 values are
    rounded to float32 precision (``qfloat``: LIBSVM's ``Qfloat``, whose
    steps the drop-in classes follow; docs/decisions/36a01)."""
    from ..kernels import Kernel

    if kern.named:
        return Kernel(Xt[rows], kern.name, gamma, degree, coef0, qfloat=True)
    return Kernel(np.ascontiguousarray(kern.G[np.ix_(rows, rows)]), "precomputed", qfloat=True)


class FitProblem(NamedTuple):
    """The frozen description of one fit's problems, made once by the
    estimator's ``start`` (everything a backend needs; it reads no
    estimator).

    ``impl`` the formulation (LIBSVM's name: ``"c_svc"``, ``"nu_svc"``,
    ``"one_class"``, ``"epsilon_svr"``, ``"nu_svr"``); ``solver`` the
    solver that runs (:func:`choose_solver`); ``X`` the data as given to
    ``fit`` (the support vectors come from it), ``Xt`` the rows the solvers
    train on, ``kern`` the training kernel (:class:`svmlab.svm._kernel.
    TrainKernel`) and its parameters ``gamma``, ``degree``, ``coef0``;
    ``U`` (n,) the per-example bounds over X and ``keep`` the rows with a
    positive one; per problem, ``rows`` its base points (rows of X) and
    ``bounds`` its variables' bounds; classifiers: ``y_idx`` (n,) the label
    indices, ``k`` the classes, ``pairs`` the one-vs-one pairs and
    ``signs`` each pair's +1/-1 over its rows (None for the
    :data:`ROWS` backend, which never reads them); ``nu``; ``duals`` the
    :class:`svmlab.reference.dual.DualProblem` of a single problem (made at
    ``start``), None for the pairs (made when a pair's turn comes)."""

    impl: str
    solver: str
    X: Any
    Xt: Any
    kern: Any
    gamma: float
    degree: int
    coef0: float
    U: np.ndarray
    keep: np.ndarray
    rows: list
    bounds: list
    y_idx: Optional[np.ndarray] = None
    k: int = 1
    pairs: Optional[list] = None
    signs: Optional[list] = None
    nu: float = 0.5
    duals: Optional[list] = None

    def dual_problem(self, p):
        """Problem p in the generalised dual's terms (its ``K`` not set)."""
        if self.duals is not None:
            return self.duals[p]
        w = self.U[self.rows[p]]
        if self.impl == "c_svc":
            return ref_dual.c_svc(None, self.signs[p], 1.0, weight=w)
        return ref_dual.nu_svc(None, self.signs[p], self.nu, weight=w)

    def base_kernel(self, rows):
        """A :class:`svmlab.kernels.Kernel` over the training rows ``rows``."""
        return base_kernel(self.kern, self.Xt, rows, self.gamma, self.degree, self.coef0)


class Solving:
    """One fit's problems in a backend's hands: ``n_parts`` runs (the parts
    of :class:`svmlab.svm._run.FamilyRun`, with ``threads`` cores for them),
    :meth:`open_part` makes part i's run when the fit reaches it, and
    :meth:`results` gives each problem's :class:`ProblemResult` in the
    state the whole run reached.  Subclasses convert a part's result
    (:meth:`_convert`)."""

    def __init__(self, problem, n_parts, threads=1):
        self.problem = problem
        self.n_parts = n_parts
        self.threads = threads
        #: the backend that opened it and the options it was given (set by
        #: :meth:`Backend.open`): the probability folds train with them
        self.backend = None
        self.opts = None

    def open_part(self, i):  # pragma: no cover - every backend gives its own
        raise NotImplementedError

    def results(self, run):
        """Per problem, a :class:`ProblemResult` of the state ``run`` (the
        :class:`svmlab.svm._run.FamilyRun` over these parts) reached: a
        problem not begun counts as all-zero multipliers and intercept 0."""
        out = []
        steps = run.part_steps()
        for i, reason in enumerate(run.part_reasons):
            res = run.part_result(i)
            if reason == "running":
                reason = "pending"
            if res is None:
                m = len(run.problem_rows(i))
                out.append(ProblemResult(np.zeros(m), 0.0, np.zeros(m), 0, "pending", np.nan,
                                         np.nan, ""))
                continue
            out.append(self._convert(i, res, int(steps[i]), reason,
                                     run.part_messages[i] or ""))
        return out

    def _convert(self, i, res, n_iter, reason, message):  # pragma: no cover
        raise NotImplementedError


def _dual_run_one_thread(opts, kernel, prob, full, a0, est):
    """The compiled generalised dual run of one problem
    (:func:`compiled_dual_run`), made and stepped with one BLAS thread, as
    LIBSVM computes its rows: its rows are DGEMVs of one row of X at a time
    (and the feasible start's rows one DGEMM, while the run is made), far
    too small for a second thread, whose wake-ups and spin-waits cost up to
    100 times the row itself on a busy machine (decision record 28s01)."""
    with blas_thread_limit(1):
        run = compiled_dual_run(opts, kernel, prob, full_kernel=full, a0=a0, estimator=est)
    run.blas_threads = 1
    return run


class _DualSolving(Solving):
    def __init__(self, problem, opts, last, estimator, threads, kernel=None):
        super().__init__(problem, len(problem.rows), threads)
        self._kernel = kernel  # a single problem's, made at open
        self.opts = opts
        self.last = last
        self.estimator = estimator
        # each problem's DualProblem, once its run is made
        self.probs = list(problem.duals) if problem.duals is not None \
            else [None] * len(problem.rows)

    def open_part(self, p):
        pb = self.problem
        kernel = pb.base_kernel(pb.rows[p]) if pb.duals is None else self._kernel
        prob = pb.dual_problem(p)
        self.probs[p] = prob
        a0 = None if self.last is None else project_start(
            prob, self.last[0][p], self.last[1][p], kernel_rows=kernel.block)
        if pb.solver == "blocked":
            from ..decomposition._blocked_dual import BlockedDualRun

            if a0 is not None:
                prob = self.probs[p] = prob._replace(a0=np.asarray(a0, np.float64))
            return BlockedDualRun(kernel, prob, tol=float(self.opts.tol),
                                  cache_size=float(self.opts.cache_size),
                                  max_iter=int(self.opts.max_iter), estimator=self.estimator)
        return _dual_run_one_thread(self.opts, kernel, prob, pb.solver == "full", a0,
                                    self.estimator)

    def part_traits(self, p):
        """Pair p's run's ``(step_name, steps_per_task, first_chunk,
        chunk_growth)`` without making it (:class:`svmlab.svm._run.FamilyRun`),
        for the pairs of a classifier on :class:`svmlab.smo.DualRun`
        (``l`` = the pair's rows); None otherwise (the caller opens it)."""
        pb = self.problem
        if pb.duals is not None or pb.solver == "blocked" or len(pb.rows) < 2:
            return None
        from types import SimpleNamespace

        from ..smo import DualRun

        # DualRun's own rule, read from its property on a stand-in
        first = DualRun.first_chunk.fget(SimpleNamespace(n_samples=len(pb.rows[p])))
        return DualRun.step_name, DualRun.steps_per_task, first, DualRun.chunk_growth

    def _convert(self, i, res, n_iter, reason, message):
        coef, rho, alpha, r, obj = compiled_dual_result(self.probs[i], res,
                                                        len(self.problem.rows[i]))
        return ProblemResult(coef, rho, alpha, n_iter, reason, obj, r, message)


class _FullSolving(Solving):
    def __init__(self, problem, opts, seed, estimator, threads):
        super().__init__(problem, len(problem.pairs), threads)
        self.opts = opts
        self.seed = seed
        self.estimator = estimator
        pb = problem
        yk = pb.y_idx[pb.keep]
        self.blocks = ClassBlocks(pb.kern, [pb.keep[yk == c] for c in range(pb.k)],
                                  gram_dtype(opts.cache_size, len(pb.keep)))

    def open_part(self, p):
        pb = self.problem
        G = check_finite_gram(self.blocks.pair_gram(*pb.pairs[p]))
        return full_pair_run(self.opts, G, pb.signs[p], pb.U[pb.rows[p]], self.seed,
                             self.blocks.dtype, estimator=self.estimator)

    def _convert(self, i, res, n_iter, reason, message):
        coef, rho, alpha = full_pair_result(res, self.problem.signs[i])
        return ProblemResult(coef, rho, alpha, n_iter, reason, np.nan, np.nan, message)


class _RowsSolving(Solving):
    """svmlab's compiled C-SVC run (binary, or its one-vs-one
    :class:`svmlab._multiclass.MulticlassRun`) as the one part of the fit;
    it runs the pairs on ``threads`` cores itself."""

    def __init__(self, problem, opts, seed, threads, name=None):
        super().__init__(problem, 1)
        pb = problem
        self.yk = pb.y_idx[pb.keep]
        self._opts, self._seed, self._threads = opts, seed, threads
        self._name = name  # what the run's messages call the fit
        self.inner = None  # the compiled run, once made

    def open_part(self, i):
        pb, yk = self.problem, self.yk
        Xk = pb.Xt if len(pb.keep) == pb.Xt.shape[0] else pb.Xt[pb.keep]
        inner = start_compiled(pb.solver, self._opts, Xk, yk, pb.k, pb.U[pb.keep], pb.gamma,
                               self._seed, n_jobs=self._threads, name=self._name)
        inner.progress = False
        self.inner = inner
        return inner

    def results(self, run):
        if self.inner is None:
            return super().results(run)
        return compiled_results(run.part_result(0), self.inner, self.yk, self.problem.k)


class Backend:
    """Which code runs a fit's problems: one object per kind (:data:`ROWS`,
    :data:`FULL`, :data:`DUAL`), chosen once per fit by
    :func:`select_backend`, with one interface: :meth:`open` (the runs of a
    fit, as a :class:`Solving`) and :meth:`solve_binary` (one binary
    problem run to the end: the cross-validation of ``probability=True``).
    ``name`` is the kind's name (module docstring)."""

    name = None

    def open(self, problem, opts, *, seed=0, threads=1, last=None, estimator=None):
        """The :class:`Solving` of ``problem`` (a :class:`FitProblem`) with the
        options ``opts`` (:class:`svmlab._stepping.FitOptions`), the seed of
        the randomised solvers, ``threads`` cores for the pairs, ``last``
        the warm start ``(alphas, bounds)`` or None; ``estimator`` is only
        held by the runs (named in messages), never read."""
        solving = self._open(problem, opts, seed, threads, last, estimator)
        solving.backend, solving.opts = self, opts
        return solving

    def _open(self, problem, opts, seed, threads, last, estimator):
        raise NotImplementedError  # pragma: no cover

    def solve_binary(self, problem, opts, train_rows, y_pm, U, seed, estimator=None):
        """``(coef, rho)`` of the binary problem of ``problem``'s formulation
        over the training rows ``train_rows`` (signs ``y_pm``, bounds ``U``),
        run to the end with no records: ``coef`` over ``train_rows``, LIBSVM's
        sign (+1 for ``y_pm > 0``)."""
        raise NotImplementedError  # pragma: no cover

    def __repr__(self):
        return f"<svmlab.svm backend {self.name!r}>"


class _Rows(Backend):
    name = "rows"

    def _open(self, problem, opts, seed, threads, last, estimator):
        # the compiled run's messages name the class the user fitted ("SVC
        # stalled after ..."), not the solver estimator it stands in for
        return _RowsSolving(problem, opts, seed, threads,
                            None if estimator is None else type(estimator).__name__)

    def solve_binary(self, problem, opts, train_rows, y_pm, U, seed, estimator=None):
        yl = (y_pm < 0).astype(np.int64)  # class index 0 for +1 (the pair's first)
        results, prow = solve_csvc_compiled(problem.solver, opts, problem.Xt[train_rows], yl,
                                            2, U, problem.gamma, seed)
        coef = np.zeros(len(train_rows))
        coef[prow[0]] = results[0].coef
        return coef, results[0].rho


class _Full(Backend):
    name = "full"

    def _open(self, problem, opts, seed, threads, last, estimator):
        return _FullSolving(problem, opts, seed, estimator, threads)

    def solve_binary(self, problem, opts, train_rows, y_pm, U, seed, estimator=None):
        G = check_finite_gram(problem.kern.gram(train_rows, train_rows))
        run = full_pair_run(opts, G, y_pm, U, seed,
                            gram_dtype(opts.cache_size, len(train_rows)), estimator=estimator)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            run.run()
        coef, rho, _ = full_pair_result(run.result(), y_pm)
        return coef, rho


class _Dual(Backend):
    name = "dual"

    def _open(self, problem, opts, seed, threads, last, estimator):
        # the kernel values are checked before any work
        if problem.duals is not None and problem.kern.named:
            # a single problem over the kept rows: its kernel made now, and
            # its own squared norms checked (the same rows' values the
            # training kernel's would give, without building that second
            # kernel over every row: a small regression fit paid for it)
            kernel = problem.base_kernel(problem.keep)
            if not np.all(np.isfinite(kernel.data.sqnorm)):
                check_finite_gram(np.array([np.nan]))
            return _DualSolving(problem, opts, last, estimator, threads, kernel)
        check_kernel_finite(problem.kern, problem.keep)
        kernel = problem.base_kernel(problem.keep) if problem.duals is not None else None
        return _DualSolving(problem, opts, last, estimator, threads, kernel)

    def solve_binary(self, problem, opts, train_rows, y_pm, U, seed, estimator=None):
        kernel = problem.base_kernel(train_rows)
        if problem.impl == "c_svc":
            prob = ref_dual.c_svc(None, y_pm, 1.0, weight=U)
        else:
            prob = ref_dual.nu_svc(None, y_pm, float(problem.nu), weight=U)
        run = compiled_dual_run(opts, kernel, prob, full_kernel=False, estimator=estimator)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            run.run()
        coef, rho, _, _, _ = compiled_dual_result(prob, run.result(), len(train_rows))
        return coef, rho


#: svmlab's compiled C-SVC runs on kernel rows
ROWS = _Rows()
#: the compiled SMO with WSS 2 on each pair's whole kernel matrix
FULL = _Full()
#: the compiled generalised dual (``svmlab.smo.DualRun``)
DUAL = _Dual()


# ------------------------------------------------------------ warm starts

def project_start(prob, a, U_old=None, *, seeding="scale", kernel_rows=None):
    """A feasible start for ``prob`` near the solution ``a`` of an earlier
    fit (warm start; DeCoste and Wagstaff's "alpha seeding").

    1. When every bound changed by the same factor (a new ``C``, the usual
       step along a regularisation path) and ``seeding="scale"``, ``a`` is
       scaled by it: the variables at a bound stay at the bound, the free
       ones keep their proportions, and ``y'a`` keeps its value.
       (``seeding="keep"``: the old values stay, those at the old bound move
       to the new one.)
    2. ``a`` is clipped to the new box ``[0, U]``; values within ``1e-12 U``
       of a bound go onto it (the solver's own rule: a value left a rounding
       error away from its bound would count as free).
    3. The equality constraints are restored per sign class, greedily along
       the gradient ``G = Q a + p`` (the first-order change of the
       objective): a class whose sum is too large gives up mass from its
       variables of largest ``G`` first, one whose sum is too small takes
       mass on its variables of smallest ``G`` first, each moved to a bound
       but the last.  C-SVC and epsilon-SVR need ``sum_+ a = sum_- a`` (the
       larger side gives up the difference); the nu forms and one-class
       need each class's sum at the start's (``nu`` sets it).

    ``kernel_rows(B)``: the kernel rows ``K[B, :]`` over the base points
    (default: read from ``prob.K``)."""
    a = np.asarray(a, dtype=np.float64).copy()
    U = np.asarray(prob.U, dtype=np.float64)
    y = np.asarray(prob.y, dtype=np.float64)
    if U_old is not None and len(U_old) == len(U):
        U_old = np.asarray(U_old, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = U / U_old
        if np.all(np.isfinite(ratio)) and np.ptp(ratio) <= 1e-12 * ratio.max():
            if seeding == "scale":
                a *= ratio[0]
            else:
                a[a >= U_old] = U[a >= U_old]
    a = _snap(np.clip(a, 0.0, U), U)
    if prob.kind == "one_class":
        target = {1.0: prob.a0.sum()}
    elif prob.nu:
        target = {c: prob.a0[y == c].sum() for c in (1.0, -1.0)}
    else:
        common = min(a[y > 0].sum(), a[y < 0].sum())
        target = {1.0: common, -1.0: common}
    idx = np.asarray(prob.idx)
    sv = np.flatnonzero(a > 0)
    if kernel_rows is None:
        def kernel_rows(B):
            return prob.K[B]
    F = (y[sv] * a[sv]) @ kernel_rows(idx[sv])[:, idx] if len(sv) else np.zeros(len(y))
    G = y * F + np.asarray(prob.p, dtype=np.float64)
    for c, t in target.items():
        cls = np.flatnonzero(y == c)
        diff = a[cls].sum() - t
        if diff > 0:  # give up mass: largest G first
            for s in cls[np.argsort(-G[cls], kind="stable")]:
                if diff <= 0:
                    break
                take = min(a[s], diff)
                a[s] -= take
                diff -= take
        elif diff < 0:  # take mass: smallest G first
            for s in cls[np.argsort(G[cls], kind="stable")]:
                if diff >= 0:
                    break
                put = min(U[s] - a[s], -diff)
                a[s] += put
                diff += put
    # (the last variable moved may end a rounding error from its bound)
    return _snap(np.clip(a, 0.0, U), U)


def _snap(a, U):
    """Values within ``1e-12 U`` of 0 or U put on the bound (the solvers'
    rule after a step; a start must follow it too, else a variable a
    rounding error from its bound counts as free and no step can move it)."""
    band = 1e-12 * np.where(np.isfinite(U), U, 0.0)
    a = np.where(a < band, 0.0, a)
    return np.where(np.isfinite(U) & (a > U - band), U, a)
