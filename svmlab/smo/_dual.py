"""The generalised SVM dual (LIBSVM's ``Solver`` / ``Solver_NU``) by WSS 2,
with step hooks: :class:`DualRun`.

Problem (l dual variables over n examples)::

    min_a  f(a) = 1/2 a'Qa + p'a   s.t.  y'a = Delta,  0 <= a_t <= U_t,
    Q_ts = y_t y_s K(x_idx(t), x_idx(s))

``Delta`` is fixed by the feasible start ``a0`` (``y'a0``).  The SVM family
in this form (LIBSVM's ``svm.cpp``; n examples, labels or targets ``z``):

============  ======  ==============  ================  =============  ===========
problem       l       y               p                 U              idx
============  ======  ==============  ================  =============  ===========
C-SVC         n       labels +-1      -1                C_i            identity
epsilon-SVR   2n      [+1.., -1..]    [eps-z, eps+z]    [C_i, C_i]     [0..n-1]*2
one-class     n       +1              0                 1 (*)          identity
nu-SVC        n       labels +-1      0                 1 (*)          identity
nu-SVR        2n      [+1.., -1..]    [-z, z]           [C_i, C_i]     [0..n-1]*2
============  ======  ==============  ================  =============  ===========

(*) after LIBSVM's scaling; the nu forms and one-class need a feasible
start with ``sum a0`` set by nu (LIBSVM's ``solve_*`` functions), and the
nu forms run with ``nu=True`` (LIBSVM's ``Solver_NU``: i chosen per class,
the pair in one class, stopping and shrinking per class).  ``U_t = inf``
is a hard margin (an unbounded direction then stops the run as stalled).

API::

    run = DualRun(kernel, y, p, upper, idx=None, nu=False, alpha0=None, tol=1e-3,
                  cache_size=200, cache_dtype="float64", full_kernel=False,
                  shrinking=True, max_iter=-1, progress=False, estimator=None)
    rec = run.step()          # a DualStep (svmlab.smo._records), None at the end
    for rec in run: ...       # the same, as an iterator
    run.run()                 # fast path to the end (no records; the same steps)
    run.result()              # dict: alpha, G, Gbar, rho, r, intercept, objective, ...
    run.finish()              # warnings; stores the fit on ``estimator`` (if given)

It is an :class:`svmlab._stepping.SolverRun`: ``max_iter`` (-1: LIBSVM's
safeguard cap), ``n_iter``, ``converged`` (the maximal violation ``m - M``
is within ``tol``), ``stop_reason`` (``"converged"``, ``"max_iter"``,
``"iteration_cap"``, ``"stalled"`` with ``stall_reason``, ``"callback"``,
``"interrupted"``), Ctrl-C handling, progress and scikit-learn callbacks
through an estimator's ``fit`` (:class:`svmlab._stepping.SteppedFitMixin`
drives ``run.step()``/``run.run()`` and ``run.finish()``).

Results (:meth:`DualRun.result`; the state reached, also after an early
stop): ``alpha`` (l,); ``G`` (l,), LIBSVM's gradient ``Qa + p`` (every
variable, shrunk ones reconstructed); ``Gbar`` (l,), LIBSVM's
``sum_{a_s = U_s} U_s Q_ts``; ``rho``: LIBSVM's ``rho`` (decision
``sum_t a_t y_t K(x_idx(t), x) - rho``), so svmlab's intercept is
``intercept = -rho``; ``r``: ``Solver_NU``'s ``r`` (nu problems; nu-SVC
divides alpha, rho and the bounds by it; NaN otherwise); ``objective``:
``f(a)`` (LIBSVM's ``obj``); ``n_iter``, ``converged``, ``stop_reason``;
the cache counters.  Decision values of a point: ``sum_t alpha_t y_t
K(x_idx(t), x) + intercept``.

Records (``step()``, callbacks): :class:`svmlab.smo._records.DualStep`.
The compiled loop is :func:`svmlab.smo._dual_core.dual_run`; the readable
twin is ``svmlab.reference.dual``.
"""

from __future__ import annotations

import numpy as np

from .._stepping import SolverRun
from ..kernels.cache import KernelCache
from . import _core as core
from ._core import blocks_switch
from ._dual_core import (COPY_MIN_ACTIVE, DualIterate, DualOptions, DualProblem, DualRows,
                         dual_gradient, dual_init, dual_run_gated)
from ._records import DUAL_BUFFER, DualStep, decode_dual

__all__ = ["DualRun", "DualStep"]


class DualState:
    """The arrays of one run of the compiled dual loop, and the calls into it
    (shared by :class:`DualRun` and ``SMOClassifier(selection="wss2")``'s
    run).  See :class:`DualRun` for the parameters; ``kernel`` is a
    :class:`svmlab.kernels.Kernel`, ``cache`` a
    :class:`svmlab.kernels.KernelCache` over it (or None: one is made from
    ``cache_size``, ``cache_dtype`` and ``full_kernel``)."""

    def __init__(self, kernel, y, p, upper, *, idx=None, nu=False, alpha0=None, tol=1e-3,
                 cache=None, cache_size=200.0, cache_dtype="float64", full_kernel=False,
                 shrinking=True, eps=1e-12, check=True):
        n = kernel.n_samples
        y = np.ascontiguousarray(y, dtype=np.float64).ravel()
        l = y.shape[0]
        p = _as_vector(p, l)
        U = _as_vector(upper, l)
        mapped = idx is not None
        idx = (np.arange(l, dtype=np.int64) if idx is None
               else np.ascontiguousarray(idx, dtype=np.int64).ravel())
        if check:
            _check_problem(n, y, p, U, idx, alpha0)
        if not mapped and l != n:
            raise ValueError(f"y has {l} entries but the kernel {n} examples; pass idx to map "
                             "the variables to examples")
        # an identity map is the identity, whatever the caller passed
        mapped = mapped and not (l == n and np.array_equal(idx, np.arange(n)))
        self.n_samples, self.l = n, l
        self.kernel = kernel
        self.y, self.p, self.U, self.idx = y, p, U, idx
        # v = -y p: the linear term in the loop's f0 form (exactly y for p = -1)
        self.yp = -y * p
        self.tol = float(tol)
        self.eps = float(eps)
        self.nu = bool(nu)
        self.mapped = bool(mapped)
        self.shrinking = bool(shrinking)
        self.shrink_every = int(min(l, 1000))
        # the shrunk loop's contiguous copies from this many active
        # variables on (tests set it to take both sides of the gate)
        self.copy_min = int(COPY_MIN_ACTIVE)
        if cache is None:
            cache = KernelCache(kernel, cache_size, dtype=cache_dtype, full=full_kernel)
        self.cache = cache
        self.kd = kernel.data
        self.cd = cache.data
        kdiag = kernel.diag()
        self.kdiag = np.ascontiguousarray(kdiag[idx] if mapped else kdiag, dtype=np.float64)
        self.alpha = (np.zeros(l) if alpha0 is None
                      else np.array(alpha0, dtype=np.float64).ravel().copy())
        self.G = np.zeros(l)
        self.Gbar = np.zeros((2, l))
        self.full = np.zeros(l)
        self.rowfull = np.zeros(n, dtype=np.bool_)
        if cache.full and not mapped:
            # (a mapped problem's rowfull marks the rows the loop computed
            # by kernel_row, which its gradient reconstruction reads in
            # place: not a kernel matrix filled by blocks; decision 34f01)
            self.rowfull[:] = True
        # (the loop reads its rows in place: no row buffers; the field keeps
        # its type, so the compiled signatures are unchanged)
        self.rb = np.zeros((2, 0), dtype=self.cd.rows.dtype)
        # the loop's feature switches (None: compiled without the feature)
        self.switches = (True if self.nu else None, True if self.mapped else None,
                         blocks_switch(self.kd, self.cd, not self.mapped))
        self.active = np.full(l, core.ACTIVE, dtype=np.int8)
        self.act = np.arange(l, dtype=np.int64)
        self.ist = np.zeros(core.IS_SIZE, dtype=np.int64)
        self.ist[core.IS_N_ACTIVE] = l
        self.ist[core.IS_SHRINK_COUNTER] = self.shrink_every
        if alpha0 is not None:
            self.ist[core.IS_NB] = int(np.count_nonzero((self.alpha > 0) & (self.alpha < U)))
        self.fst = np.zeros(core.FS_SIZE)
        self.rec = np.zeros(DUAL_BUFFER)
        self._no_rec = np.zeros(DUAL_BUFFER)
        if alpha0 is not None and np.any(self.alpha != 0):
            # the feasible start's rows as one block (one DGEMM for dense
            # float64 rows), then LIBSVM's initial gradient from the cache
            if not cache.full:
                cache.fill(idx[np.flatnonzero(self.alpha)], gemm=True)
            dual_init(*self._state(False)[:3])
            if mapped:
                self.rowfull[:] = False

    def _state(self, want_rec):
        """The named state :func:`svmlab.smo._dual_core.dual_run` takes."""
        return (DualRows(self.kd, self.cd, self.full, self.rowfull, self.rb),
                DualProblem(self.y, self.yp, self.U, self.kdiag, self.idx, self.tol, self.eps),
                DualIterate(self.alpha, self.G, self.Gbar, self.fst, self.ist, self.active,
                            self.act),
                self.rec if want_rec else self._no_rec,
                DualOptions(self.shrinking, self.shrink_every, bool(want_rec)))

    def advance(self, kmax, want_rec):
        """Up to ``kmax`` steps of the compiled loop; returns how many."""
        if self.ist[core.IS_DONE]:
            return 0
        return int(dual_run_gated(*self._state(want_rec), int(kmax), *self.switches,
                                  int(self.copy_min)))

    @property
    def done(self):
        """0 running, 1 converged, 2 stalled (``ist[IS_DONE]``)."""
        return int(self.ist[core.IS_DONE])

    def decode(self, **run_fields):
        return decode_dual(self.rec, **run_fields)

    def gradient_f0(self):
        """``f0_t = sum_s a_s y_s K_ts`` of every variable (shrunk ones
        reconstructed; the state is not changed)."""
        if not (self.active != core.ACTIVE).any():
            # nothing shrunk (every converged run: the loop unshrinks before
            # its last check): G is every variable's, and the reconstruction
            # would leave it as it is -- one call of a compiled function
            # (whose dispatch of the named tuples costs tens of microseconds,
            # per pair of a one-vs-one fit) is skipped
            return self.G.copy()
        rows, pb, it = self._state(False)[:3]
        return dual_gradient(rows, pb, it, *self.switches[1:])

    def gbar(self):
        """LIBSVM's ``G_bar`` (l,): ``y_t sum_{a_s = U_s} U_s y_s K_ts``, the
        pending changes included."""
        gb = self.Gbar[0].copy()
        pend = np.flatnonzero(self.Gbar[1])
        if pend.size:
            K = self.kernel.block(self.idx[pend])
            gb += self.Gbar[1, pend] @ K[:, self.idx]
        return self.y * gb

    def intercepts(self, f0=None):
        """``(rho, r)`` by LIBSVM's ``calculate_rho`` (``Solver_NU``'s for nu
        problems; ``r`` NaN otherwise), from ``v_t - f0_t = -y_t grad_t``."""
        if f0 is None:
            f0 = self.gradient_f0()
        v = self.yp - f0
        if not self.nu:
            from .._kkt import intercept
            return -float(intercept(v, self.y, self.alpha, self.U)), float("nan")
        from .._kkt import intercept_np
        pos = self.y > 0
        # LIBSVM's r1 (positive class) and r2 from G = -y v: r1 = -b+, r2 = b-
        r1 = -intercept_np(v[pos], self.y[pos], self.alpha[pos], self.U[pos]) if pos.any() else 0.0
        neg = ~pos
        r2 = intercept_np(v[neg], self.y[neg], self.alpha[neg], self.U[neg]) if neg.any() else 0.0
        return 0.5 * (r1 - r2), 0.5 * (r1 + r2)

    def objective(self, f0=None):
        """``1/2 a'Qa + p'a`` (LIBSVM's ``obj``)."""
        if f0 is None:
            f0 = self.gradient_f0()
        return float(np.dot(self.alpha, 0.5 * self.y * f0 + self.p))


def _as_vector(v, l):
    """``v`` (a number or an array of l) as a new C-contiguous float64 (l,)
    array (a scalar without NumPy's broadcasting machinery: a small fit
    makes several of these per pair)."""
    if isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, bool):
        return np.full(l, float(v))
    # a copy, never broadcast_to's read-only view: numba types a read-only
    # array apart, which would compile the dual loops a second time
    return np.array(np.broadcast_to(np.asarray(v, dtype=np.float64), (l,)), dtype=np.float64)


def _check_problem(n, y, p, U, idx, alpha0):
    """Bad input gets a clear error before any work (ValueError)."""
    l = y.shape[0]
    if l == 0:
        raise ValueError("the dual needs at least one variable")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("y must hold +1 and -1 only")
    if not np.all(np.isfinite(p)):
        raise ValueError("p must be finite")
    if np.any(np.isnan(U)) or np.any(U <= 0):
        raise ValueError("upper bounds must be > 0 (inf allowed)")
    if idx.shape != (l,) or (l and (idx.min() < 0 or idx.max() >= n)):
        raise ValueError(f"idx must hold {l} example indices in [0, {n})")
    if alpha0 is not None:
        a = np.asarray(alpha0, dtype=np.float64).ravel()
        if a.shape != (l,):
            raise ValueError(f"alpha0 has shape {a.shape}, expected ({l},)")
        if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(a > U):
            raise ValueError("alpha0 must be feasible: 0 <= alpha0 <= upper, finite")


class DualRun(SolverRun):
    """The generalised dual by WSS 2, one pair step at a time (see the module
    docstring for the problem, the parameters' meaning and the results).

    Parameters
    ----------
    kernel : svmlab.kernels.Kernel
        The kernel over the n examples (any kind, ``"precomputed"`` included).
    y : array (l,)
        Signs, +1 or -1.
    p : float or array (l,)
        The linear term.
    upper : float or array (l,)
        Upper bounds ``U_t > 0`` (inf: no bound).
    idx : int array (l,), optional
        The example of each variable (default: the identity, l = n).
    nu : bool, default=False
        LIBSVM's ``Solver_NU`` (nu-SVC, nu-SVR).
    alpha0 : array (l,), optional
        A feasible start (default 0); ``G`` and ``Gbar`` are computed from it.
    tol : float, default=1e-3
        Stop when the maximal violation ``m - M`` is at most ``tol``.
    cache_size : float, default=200
        Kernel-row cache in MB.
    cache_dtype : {"float64", "float32"}, default="float64"
    full_kernel : bool, default=False
        Compute the whole kernel matrix at once (it must fit ``cache_size``;
        :func:`svmlab.kernels.cache.full_cache`).
    shrinking : bool, default=True
    max_iter : int, default=-1
        Most pair steps (-1: LIBSVM's safeguard cap).
    progress : bool, default=False
    estimator : object, optional
        The estimator that owns the run (:meth:`finish` calls its
        ``_store_run(run)``); messages name it.
    """

    step_name = "pair step"
    steps_per_task = 1000

    def __init__(self, kernel, y, p, upper, *, idx=None, nu=False, alpha0=None, tol=1e-3,
                 cache_size=200.0, cache_dtype="float64", full_kernel=False, shrinking=True,
                 max_iter=-1, progress=False, estimator=None):
        self.state = DualState(kernel, y, p, upper, idx=idx, nu=nu, alpha0=alpha0, tol=tol,
                               cache_size=cache_size, cache_dtype=cache_dtype,
                               full_kernel=full_kernel, shrinking=shrinking)
        self.n_samples = self.state.l
        super().__init__(estimator, max_iter=max_iter, progress=progress,
                         name="DualRun" if estimator is None else None)

    # -- the state ---------------------------------------------------------
    @property
    def alpha(self):
        return self.state.alpha

    @property
    def cache(self):
        return self.state.cache

    @property
    def cache_hits(self):
        return self.state.cache.hits

    @property
    def cache_misses(self):
        return self.state.cache.misses

    @property
    def kernel_evaluations(self):
        return self.state.cache.kernel_evaluations

    @property
    def first_chunk(self):
        """About 2**22 / l steps (at least 64): a step costs O(l), so the
        first chunk lasts tens of milliseconds and a small fit is one call."""
        return max(64, (1 << 22) // max(int(self.n_samples), 1))

    chunk_growth = 8

    # -- stepping ----------------------------------------------------------
    def _call(self, kmax, want_rec):
        k = self.state.advance(kmax, want_rec)
        done = self.state.done
        if done == 1:
            self.converged = True
        elif done == 2 and not self.stalled:
            self._mark_stalled(
                "the working-set selection found a violating pair on which the analytic "
                "step cannot move (eta <= 0 with equal ends, a change below rounding, no "
                "partner, or an unbounded direction with an infinite upper bound)")
        return k

    def _advance(self, max_steps):
        return self._call(max_steps, False)

    def _step(self):
        if self._call(1, True) == 0:
            return None
        return self.state.decode(cache_hits=self.cache_hits, cache_misses=self.cache_misses,
                                 kernel_evaluations=self.kernel_evaluations)

    # -- results -----------------------------------------------------------
    def result(self):
        s = self.state
        f0 = s.gradient_f0()
        rho, r = s.intercepts(f0)
        return {
            "alpha": s.alpha.copy(),
            "G": s.y * f0 + s.p,
            "Gbar": s.gbar(),
            "rho": rho,
            "r": r,
            "intercept": -rho,
            "objective": s.objective(f0),
            "n_iter": int(self.n_iter),
            "converged": bool(self.converged),
            "stop_reason": self.stop_reason,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "kernel_evaluations": self.kernel_evaluations,
        }

    def finish(self):
        """Warn how the run ended (ConvergenceWarning) and store the fit on
        the estimator, if any; returns the estimator (or the run)."""
        if self.estimator is not None:
            return super().finish()
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        msg = self.warning_message()
        if msg is not None:
            warnings.warn(msg, ConvergenceWarning, stacklevel=2)
        return self
