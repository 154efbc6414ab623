"""IRWLS-SVC: Perez-Cruz, Alarcon-Diana, Navia-Vazquez & Artes-Rodriguez,
"Fast Training of Support Vector Classifiers", NIPS 13 (2000).

Problem solved (the SVC dual of :mod:`svmlab._base`, in the paper's
variables ``beta_i = y_i alpha_i``)::

    max_beta   sum_i y_i beta_i - 1/2 sum_ij beta_i beta_j K(x_i, x_j)
    s.t.       sum_i beta_i = 0,    0 <= y_i beta_i <= C

equivalently the primal ``min 1/2 ||w||^2 + C sum_i xi_i`` rewritten as the
iteratively reweighted least squares ``1/2 ||w||^2 + 1/2 sum_i a_i e_i^2``
with ``e_i = y_i - (phi(x_i)'w + b)`` and the weights of eq. (8):
``a_i = 0`` if ``e_i y_i < 0``, ``a_i = C / (e_i y_i)`` if ``e_i y_i >= 0``.
Samples split into S1 (``0 < y beta < C``: ``a_i`` infinite, ``e_i = 0``),
S2 (``beta = 0``: ``a_i = 0``) and S3 (``y beta = C``: ``beta_i = C y_i``).

Algorithm (paper's numbering):

* Table 1 -- one IRWLS iteration: solve the weighted least-squares system
  (3) on S1 with S2/S3 fixed, update ``G = K beta`` and ``Gb = sum beta``,
  compute e and the weights (8), reorder with rules
  a (S1 -> S2 if ``y beta < 0``), b (S1 -> S3 if ``y beta > C``),
  c (S2 -> S1 if ``y e > 0``), d (S3 -> S1 if ``y e < 0``).
  Implemented by :class:`svmlab.decomposition._active_set.ActiveSetSubproblem`
  (``rule="irwls"``),
  which is also the ``"irwls"`` engine of the decomposition family.
* Section 2.1 -- chunking: IRWLS runs on a working set Sw of
  ``working_set_size`` samples; the inactive samples Sin keep their beta
  (anchored SVs at C, or 0) and enter through ``G_in = K_{w,in} beta_in``
  and ``Gb_in = sum beta_in``.
* Section 3 -- sample selection for the next Sw
  (:func:`svmlab.decomposition._working_set.irwls_select`).
* Stopping conditions (9)-(11), with tolerance ``tol``:
  (9) ``y_i e_i <= tol`` on S2, (10) ``y_i e_i >= -tol`` on S3,
  (11) ``|e_i| <= tol`` on S1.  (``y_i e_i = 1 - y_i f(x_i)``, so these are
  the KKT conditions that ``tests/reference.py`` checks.)

One step (record) is one IRWLS iteration.  ``intercept_`` is ``b``:
``f(x) = sum_i alpha_i y_i K(x_i, x) + b``.

Kernel values.  The working-set block ``K_ww`` comes from the kernel-block
layer (:func:`svmlab.decomposition._kblock.kernel_block_into`) and is
float64 whatever ``cache_dtype`` is: it is factorised by Cholesky, and the
sub-problem's stopping test (0.9 tol) is read from it.  ``G_in = G_w -
K_ww beta_w`` takes ``G = K beta`` from the global gradient, which the
samples whose multiplier changed update with full rows from the row cache
(:func:`svmlab.decomposition._kblock.add_rows`); with the default
``cache_dtype="auto"`` those rows may be LIBSVM's ``Qfloat``, so ``G``
carries their rounding (relative 6e-8 per term, far below ``tol``) while
``K_ww``, ``beta`` and ``b`` stay float64.  ``cache_dtype="float64"``
gives the float64 iterates that the readable reference
(:mod:`svmlab.reference.irwls`) reproduces step for step.

Our additions to the paper, each a decision with its measurements in
``docs/decisions/``:

* the section 3 selection balances the violators it adds by the sign of
  ``e_i`` and, by default (``selection="mixed"``), fills half of each
  sign's share with the largest ``|e_i|`` (26d04);
* ``working_set_size=None`` is every sample up to 800 of them, else 400
  (:func:`default_working_set`, 26d04);
* Table 1 hands a working set over to the line-search mode after a release
  larger than S1, counts a K_11 that Cholesky cannot factor as a singular
  (3), and judges "downhill" with a relative tolerance (26d05);
* the line-search mode frees at most 10 violators after a full step, the
  worst of each sign of ``e`` (26d03), and runs compiled on a kept Cholesky
  factor (26d06).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import BaseKernelSVC
from .._kkt import intercept_from_v
from ._active_set import S1, S2, S3, ActiveSetSubproblem
from ._kblock import add_rows, kernel_block_into
from .._stepping import FitOptions, SolverRun
from .._validation import RANDOM_STATE_CONSTRAINT
from ._working_set import SELECTIONS, irwls_select
from ..kernels.cache import KernelCache

__all__ = ["IRWLSClassifier", "IRWLSRecord", "IRWLSRun", "onto_plane"]

#: working_set_size=None means DEFAULT_WORKING_SET, or every sample when
#: n_samples <= 2 * DEFAULT_WORKING_SET (see default_working_set)
DEFAULT_WORKING_SET = 400


def default_working_set(n):
    """``working_set_size=None``: all n samples (one working set, IRWLS
    without chunking) when ``n <= 2 * DEFAULT_WORKING_SET``, else
    ``DEFAULT_WORKING_SET``.  Below about two working sets' worth, chunking
    costs more (a block, a selection and a G update per working set, free
    SVs split between working sets) than it saves
    (docs/decisions/26d04-irwls-working-sets.md)."""
    return n if n <= 2 * DEFAULT_WORKING_SET else DEFAULT_WORKING_SET


def onto_plane(alpha, y, C, target):
    """The point of ``{a : y'a = target, 0 <= a <= C}`` that a common shift
    along ``y`` reaches from ``alpha``: ``a_i = clip(alpha_i + lam y_i, 0,
    C_i)`` with the one ``lam`` that puts ``y'a`` on ``target``, moving only
    the free coordinates of ``alpha`` (``0 < alpha_i < C_i``) when they can
    carry the change, else every coordinate (then ``a`` is the Euclidean
    projection of ``alpha`` onto the box and the plane).  ``y`` is +-1,
    ``C`` a scalar or per-coordinate bounds; ``alpha`` is clipped to the box
    first.  Returns a new array, or None when no point of the box lies on
    the plane.

    Why this point: an IRWLS sub-problem accepts an iterate whose ``sum
    beta`` is within 1e-9 (1 + C m) of its target (the rounding of the
    solve of (3) grows with C and m), so a fit stopped there would report a
    model off the dual's plane by that much.  Shifting only free
    coordinates keeps the support and the bounded multipliers as they are.
    Every moved coordinate moves in the direction ``sign(lam) y_i``, so
    ``||a - alpha||_1 = |target - y'alpha|`` =: d exactly (after the clip):
    the dual objective ``D(a) = 1'a - 1/2 a'Qa`` changes by at most
    ``||grad D(alpha)||_inf d + 1/2 max|Q_ij| d^2``, the tolerance the tests
    check.  ``lam`` is found exactly: ``y'a(lam)`` is non-decreasing and
    piecewise linear in ``lam``, with its breaks where a coordinate reaches
    a bound; a binary search over the sorted breaks finds the segment, and
    the linear piece gives ``lam`` on it."""
    y = np.asarray(y, dtype=np.float64)
    Cv = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape)
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, Cv)
    target = float(target)
    free = (a > 0.0) & (a < Cv)
    for movable in (free, np.ones(len(a), dtype=bool)):
        idx = np.flatnonzero(movable)
        if len(idx) == 0:
            continue
        am, ym, Cm = a[idx], y[idx], Cv[idx]
        fixed = float(y @ a - ym @ am)

        def h(lam):
            return fixed + ym @ np.clip(am + lam * ym, 0.0, Cm)

        # coordinate i is linear in lam between its two breaks (it reaches
        # 0 and C_i); outside all of them y'a(lam) is flat at its extremes
        brk = np.unique(np.concatenate([-am * ym, (Cm - am) * ym]))
        lo_h, hi_h = h(brk[0]), h(brk[-1])
        if not lo_h <= target <= hi_h:
            continue
        lo, hi = 0, len(brk) - 1  # h(brk[lo]) <= target <= h(brk[hi])
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if h(brk[mid]) <= target:
                lo = mid
            else:
                hi = mid
        h0, h1 = h(brk[lo]), h(brk[hi])
        lam = brk[lo] if h1 == h0 else brk[lo] + (target - h0) * (brk[hi] - brk[lo]) / (h1 - h0)
        out = a.copy()
        out[idx] = np.clip(am + lam * ym, 0.0, Cm)
        # the rounding left by the linear piece, onto the coordinate with the
        # most room in the direction it needs
        res = target - float(y @ out)
        if res != 0.0:
            room = np.where(y * res > 0, Cv - out, out)
            room[~movable] = -1.0
            k = int(np.argmax(room))
            if room[k] >= abs(res):
                out[k] = min(max(out[k] + y[k] * res, 0.0), Cv[k])
        return out
    return None


@dataclass(frozen=True, slots=True)
class IRWLSRecord:
    """One IRWLS iteration (Table 1) inside chunk ``chunk`` (section 2.1).

    Arrays are over the working set; ``working_set`` holds their global
    sample indices.

    ``weights``  the a_i of (8): ``inf`` on S1, 0 on S2, ``C/(y_i e_i)`` on S3.
    ``ye``       ``e_i y_i`` (``= 1 - y_i f(x_i)``).
    ``beta``     ``y_i alpha_i``.
    ``b``        the intercept (multiplier of ``sum beta = 0``).
    ``sets``     1 = S1, 2 = S2, 3 = S3 after the reordering.
    ``moved``    how many samples rules a, b, c, d moved this iteration.
    ``mode``     ``"table1"`` (all violators at once) or ``"line"`` (the
                 line-search safeguard after a repeated set configuration,
                 a downhill or singular Table 1 step, or a hand-over).
    ``method``   how (3) was solved: cholesky, lu, lstsq (or bounds: S1 empty).
    ``chunk_done`` whether the working-set problem is solved after this step.
    """

    iteration: int
    chunk: int
    working_set: np.ndarray
    beta: np.ndarray
    weights: np.ndarray
    ye: np.ndarray
    b: float
    sets: np.ndarray
    moved: tuple
    mode: str
    method: str
    chunk_done: bool

    @property
    def S1(self):
        return self.working_set[self.sets == S1]

    @property
    def S2(self):
        return self.working_set[self.sets == S2]

    @property
    def S3(self):
        return self.working_set[self.sets == S3]


def irwls_run(X, y, kernel, opts, estimator=None):
    """The :class:`IRWLSRun` over ``(X, y)`` with the options ``opts`` (what
    :meth:`IRWLSClassifier._make_run` makes; ``estimator`` None for a run
    made from a frozen problem, the SVM family's)."""
    return IRWLSRun(estimator, X, y, kernel, opts)


class IRWLSRun(SolverRun):
    """State of an IRWLS-SVC fit: global beta, G = K beta, b, the sets, and
    the IRWLS sub-problem of the current working set (``sub``)."""

    step_name = "IRWLS iteration"
    #: small dense blocks: one BLAS thread (see svmlab._stepping.blas_thread_limit)
    blas_threads = 1

    def __init__(self, est, X, y, kernel, opts):
        # opts: a svmlab._stepping.FitOptions (the run reads nothing of est,
        # which only receives the fitted attributes at finish)
        super().__init__(est, opts.max_iter, opts.progress)
        n = len(y)
        self.n = n
        self.n_samples = n
        self.y = y
        self.C = float(opts.C)
        # the upper bounds: the scalar C, or per-example C_i = C * weight_i
        # when weights differ (0 <= y_i beta_i <= C_i; see svmlab._base)
        self.Cb = opts.bounds(n)
        self.tol = float(opts.tol)
        ws = opts.working_set_size
        # None: see default_working_set and IRWLSClassifier's docstring
        self.m = default_working_set(n) if ws is None else int(ws)
        self.strategy = opts.selection
        self.rng = check_random_state(opts.random_state)
        self.cache = KernelCache(kernel, opts.cache_size, dtype=opts.cache_dtype)
        self.kd = kernel.data
        self.beta = np.zeros(n)
        self.G = np.zeros(n)  # G = K beta (no b)
        self.b = 0.0
        self.sets = np.full(n, S2, np.int8)
        self.chunk = 0
        self.sub = None
        self.Sw = None
        self.G_in = None  # over Sw: K_{w,in} beta_in
        self.Gb_in = 0.0  # sum_{in} beta
        self._stalls = 0
        self._direct_evals = 0  # block entries computed outside the row cache
        self._bufs = None  # arrays kept between working sets (_open_chunk)

    # -- chunking (section 2.1) ---------------------------------------------------
    def errors(self):
        """e_i = y_i - G_i - b for every sample (at the last closed chunk)."""
        return self.y - self.G - self.b

    def violations(self, e=None):
        """Stopping conditions (9), (10), (11): masks of the violators."""
        e = self.errors() if e is None else e
        ye = self.y * e
        return ((self.sets == S2) & (ye > self.tol),
                (self.sets == S3) & (ye < -self.tol),
                (self.sets == S1) & (np.abs(e) > self.tol))

    def _open_chunk(self):
        e = self.errors()
        alpha = np.clip(self.y * self.beta, 0.0, self.Cb)
        Sw = irwls_select(e, self.y, self.sets, self.m, self.strategy, self.rng, self.tol,
                          v=self.y - self.G, alpha=alpha, C=self.Cb)
        k = len(Sw)
        if self._bufs is None or self._bufs[0].shape != (k, k):
            # the block, its scratch and the factor's workspace, kept from
            # one working set to the next (see kernel_block_into)
            self._bufs = tuple(np.empty((k, k)) for _ in range(3))
        Kww, tmp, work = self._bufs
        n_direct = kernel_block_into(self.kd, self.cache.data, Sw, Sw, Kww, tmp)
        self._direct_evals += int(n_direct)
        beta_w = self.beta[Sw]
        self.G_in = self.G[Sw] - Kww @ beta_w
        self.Gb_in = float(self.beta.sum() - beta_w.sum())
        r = self.y[Sw] - self.G_in
        # a small margin below tol so that rounding between the working-set
        # and the global errors can't leave a violator the sub-problem ignores
        Cw = self.Cb if np.ndim(self.Cb) == 0 else self.Cb[Sw]
        self.sub = ActiveSetSubproblem(Kww, self.y[Sw], beta_w, r, Cw, 0.9 * self.tol,
                                       rule="irwls", s0=-self.Gb_in, workspace=work)
        self.Sw = Sw
        self.chunk += 1

    def _close_chunk(self):
        sub, Sw = self.sub, self.Sw
        d = sub.beta - self.beta[Sw]
        nz = d != 0.0
        if nz.any() and len(Sw) == self.n:
            # the working set is every sample (Sw = 0..n-1): its block is the
            # whole kernel matrix, and G += K d needs no rows (the rows
            # would cost as much as the block again)
            self.G += sub.K @ d
        elif nz.any():
            add_rows(self.kd, self.cache.data, self.G, Sw[nz], d[nz])
        self._stalls = 0 if nz.any() else self._stalls + 1
        self.beta[Sw] = sub.beta
        self.b = sub.b
        self.sets[Sw] = sub.sets
        self.sub = None

    def _step_impl(self, make_record):
        if self.sub is None or self.sub.done:
            if self.sub is not None:
                self._close_chunk()
                v9, v10, v11 = self.violations()
                if not (v9.any() or v10.any() or v11.any()):
                    self.converged = True
                    return None
                if self._stalls >= 3:
                    # three working sets in a row changed nothing: the
                    # remaining violations are below what (3) resolves in
                    # floating point; stop here, as a stall (converged_
                    # stays False, and finish() warns)
                    n_viol = int(v9.sum() + v10.sum() + v11.sum())
                    self._mark_stalled(
                        f"three working sets in a row changed no multiplier while "
                        f"{n_viol} samples violate the stopping conditions (9)-(11) "
                        f"(tol={self.tol:g})")
                    return None
            self._open_chunk()
        sub = self.sub
        sub.iterate()
        if not make_record:
            return True
        return IRWLSRecord(
            iteration=self.n_iter + 1,
            chunk=self.chunk,
            working_set=self.Sw.copy(),
            beta=sub.beta.copy(),
            weights=sub.weights(),
            ye=sub.y * sub.errors(),
            b=float(sub.b),
            sets=sub.sets.copy(),
            moved=sub.moved,
            mode=sub.mode,
            method=sub.method,
            chunk_done=sub.done,
        )

    def _step(self):
        return self._step_impl(True)

    def _advance(self, max_steps):
        k = 0
        t0 = time.perf_counter()
        while k < max_steps:
            if k and self._chunk_should_end(t0):  # Ctrl-C within one step
                break
            sub = self.sub
            if sub is not None and not sub.done and sub.mode == "line":
                # no records: the line-search iterations run compiled
                k += sub.iterate_many(max_steps - k)
                continue
            if self._step_impl(False) is None:
                break
            k += 1
        return k

    def _open_chunk_state(self):
        """``(beta_w, b)`` to report for the open working-set problem when
        the fit stops before it is solved (a callback returning False,
        ``max_iter``, or ``iter_fit`` closed early).

        The state reached is reported whenever it is feasible: the current
        iterate if it satisfies ``sum beta_w = s0`` (the equality of the
        dual, with the same tolerance as the sub-problem's own feasibility
        test in :meth:`ActiveSetSubproblem.iterate`) and the box ``0 <= y
        beta <= C`` (up to rounding, clipped afterwards).  This is always the
        case in the line-search mode, whose steps are scaled to stay feasible,
        and after a full Table 1 step.  A Table 1 iterate clipped by rules
        a/b (``sum beta != s0``) is *not* a point of the dual's feasible set;
        then the last feasible point of the sub-problem is reported instead.

        The point chosen is then put exactly on the plane ``y'alpha = 0`` of
        the whole problem (the multipliers outside the working set as they
        are) by :func:`onto_plane`: the sub-problem's feasibility test
        accepts ``sum beta_w`` within 1e-9 (1 + C m) of its target, and an
        interrupted fit at C = 1000 was seen 2.2e-4 off the plane.  The shift
        moves the free multipliers only, by ``|y'alpha|`` in total (l1), so
        the dual objective changes by at most ``||grad||_inf |y'alpha| +
        1/2 max|K| (y'alpha)^2`` (see :func:`onto_plane`).

        The intercept is recomputed for the reported beta by the rule of
        :func:`svmlab._kkt.intercept_from_v` over the working set (mean of
        ``v = y - G`` over its free samples, else the middle of the interval
        the bounded samples allow); after a full solve of (3) that is the b
        of (3) itself, since ``e_i = 0`` on S1."""
        sub = self.sub
        if sub.done:
            return sub.beta, sub.b
        Cw = sub.Cv
        yb = sub.y * sub.beta
        box_tol = 1e-9 * (1.0 + sub._Cmax)
        in_box = bool(np.all(yb >= -box_tol) and np.all(yb <= Cw + box_tol))
        on_plane = abs(sub.beta.sum() - sub.s0) <= 1e-9 * (1.0 + sub._Cmax * sub.m)
        # the plane as result() will read it: the samples outside the working
        # set keep their (clipped) multipliers, so the working set's share of
        # y'alpha = 0 is minus theirs
        out = np.ones(self.n, dtype=bool)
        out[self.Sw] = False
        target = -float(self.y[out] @ np.clip(self.y[out] * self.beta[out], 0.0,
                                              self.Cb if np.ndim(self.Cb) == 0 else self.Cb[out]))
        for beta_w, Kb in ((sub.beta, sub.Kb), (sub.feasible_beta, sub.feasible_Kb)):
            if beta_w is sub.beta and not (in_box and on_plane):
                continue
            alpha_w = onto_plane(sub.y * beta_w, sub.y, Cw, target)
            if alpha_w is not None:
                break
        else:
            # no point of the working set's box on the plane (not met: the
            # last feasible point is one, up to the closed working sets'
            # rounding); the last feasible point as it is
            beta_w, Kb = sub.feasible_beta, sub.feasible_Kb
            alpha_w = np.clip(sub.y * beta_w, 0.0, Cw)
        new = sub.y * alpha_w
        moved = np.flatnonzero(new != beta_w)
        if len(moved):
            Kb = Kb + sub.K[:, moved] @ (new[moved] - beta_w[moved])
        b = intercept_from_v(sub.r - Kb, sub.y, alpha_w, Cw)
        return new, b

    def result(self):
        beta = self.beta.copy()
        b = self.b
        if self.sub is not None:
            # a fit stopped inside a working set: report the feasible state
            # reached there (see _open_chunk_state)
            beta[self.Sw], b = self._open_chunk_state()
        alpha = np.clip(self.y * beta, 0.0, self.Cb)
        return {"alpha": alpha, "intercept": b, "n_chunks": self.chunk,
                "kernel_evaluations": self.cache.kernel_evaluations + self._direct_evals}


class IRWLSClassifier(BaseKernelSVC):
    """IRWLS-SVC (Perez-Cruz et al. 2000) with chunking and sample selection.

    Parameters
    ----------
    C : float, default=1.0
    kernel, gamma, degree, coef0 : as :class:`sklearn.svm.SVC`.  The paper's
        RBF width sigma is ``gamma = 1 / (2 sigma^2)``.
    tol : float, default=1e-3
        Tolerance of the stopping conditions (9)-(11).
    working_set_size : int or None, default=None
        Size of Sw (section 2.1); None means every sample when
        ``n_samples <= 800`` (one working set: no chunking, see
        ``default_working_set``), else 400.  Must be in ``[2, n_samples]``.
        A working set should hold the free SVs with room to spare; larger
        ones cost O(m^2) memory and O(|S1|^3) factors
        (docs/decisions/26d04-irwls-working-sets.md).
    selection : {"mixed", "random", "largest", "smallest"}, default="mixed"
        Section 3 strategy for completing the working set (see
        :func:`svmlab.decomposition._working_set.irwls_select`).
        ``"random"`` is the paper's rule (random violators, then the
        violators of lowest ``|e_i|``).  Our default ``"mixed"`` takes the
        paper's random violators, then half of each sign's share of the
        room by largest ``|e_i|`` and half by lowest: the lowest are the
        samples likely to end as free SVs (the paper's reason), the largest
        the gross violators that mostly end at a bound, clipped at once, and
        that the paper's rule reaches only after many working sets
        (measurements: docs/decisions/26d04-irwls-working-sets.md).
    random_state : int, RandomState or None
    cache_size : float, default=200
        Kernel-row cache in MB.
    cache_dtype : {"auto", "float32", "float64"}, default="auto"
        Type of the cached kernel values (LIBSVM's ``Qfloat``): float32 holds
        twice as many rows in ``cache_size`` and computes dense rows with
        single-precision BLAS; ``"float64"`` keeps float64 kernel values (the
        precision of each path: :mod:`svmlab.kernels._blocks`).  ``"auto"``: float32 unless the whole
        kernel matrix fits in ``cache_size`` at float64 (then every row is
        computed once, and float64 costs nothing); the choice made is
        ``cache_dtype_`` (see :mod:`svmlab._base`).
    n_jobs : int or None, default=None
        BLAS threads for large kernel blocks (``None``: 1 unless in a
        ``joblib.parallel_config`` context; -1: all cores; see
        :mod:`svmlab._base`).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        With more than two classes (LIBSVM's one-vs-one, see
        :mod:`svmlab._multiclass`): ``"ovr"`` makes ``decision_function``
        return (n, k) values, ``"ovo"`` the (n, k(k-1)/2) pair values, as
        :class:`sklearn.svm.SVC`.  Ignored for two classes.
    max_iter : int, default=-1
        Maximum number of IRWLS iterations (records); -1 means the
        safeguard cap ``max(100_000_000, 100 * n_samples)`` (see
        :mod:`svmlab._stepping`), which an explicit value overrides.
        A fit stopped inside a working set (``max_iter``, a callback
        returning False, ``iter_fit`` closed early) stores the feasible
        state reached there: the current iterate when it is feasible (always
        in the line-search mode), else the working set's last feasible point,
        shifted exactly onto ``y'alpha = 0`` along its free multipliers
        (see ``IRWLSRun._open_chunk_state`` and ``onto_plane``).
        Three working sets in a row that change nothing stop the fit as a
        stall (``converged_ = False``, ``stop_reason_ = "stalled"``,
        ConvergenceWarning).
    progress : bool, default=True
        tqdm progress bar for fits longer than 2 s (``SVMLAB_PROGRESS=0``
        turns all bars off).
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, as :class:`sklearn.svm.SVC`: example i gets the
        upper bound ``C_i = C * class_weight[y_i] * sample_weight_i``
        (``fit(X, y, sample_weight=...)``); ``"balanced"`` is
        ``n / (k * count(y_i))`` over the k classes.  See :mod:`svmlab._base`
        (zero weights remove the example).

    Attributes
    ----------
    As :class:`svmlab._base.BaseKernelSVC`, plus ``n_chunks_`` (working sets
    used) and ``kernel_evaluations_``.  ``n_iter_`` counts IRWLS iterations.

    scikit-learn callbacks (``set_callbacks``, scikit-learn >= 1.9) get one
    task per IRWLS iteration (:mod:`svmlab._stepping`).
    """

    _parameter_constraints = {
        **BaseKernelSVC._parameter_constraints,
        **RANDOM_STATE_CONSTRAINT,
        "working_set_size": [Interval(Integral, 2, None, closed="left"), None],
        "selection": [StrOptions(set(SELECTIONS))],
    }

    def __init__(self, *, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 working_set_size=None, selection="mixed", random_state=None,
                 cache_size=200.0, max_iter=-1, progress=True, class_weight=None,
                 cache_dtype="auto", n_jobs=None, decision_function_shape="ovr"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.working_set_size = working_set_size
        self.selection = selection
        self.random_state = random_state
        self.cache_size = cache_size
        self.cache_dtype = cache_dtype
        self.n_jobs = n_jobs
        self.decision_function_shape = decision_function_shape
        self.max_iter = max_iter
        self.progress = progress
        self.class_weight = class_weight

    def _check_extra(self, X, y):
        n = X.shape[0]
        ws = self.working_set_size
        if ws is not None and ws > n:
            raise ValueError(
                f"working_set_size={ws} is larger than the number of samples ({n}); "
                "use a value in [2, n_samples] or None for the default (all samples up to "
                "800, else 400)."
            )

    def _make_run(self, X, y, kernel, opts=None):
        return irwls_run(X, y, kernel, FitOptions.of(self) if opts is None else opts,
                         estimator=self)
