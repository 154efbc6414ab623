"""The one-vs-one pairs of a small C-SVC fit, several in one compiled call.

Problem.  A one-vs-one fit of k classes solves k(k-1)/2 binary C-SVC duals
(:mod:`svmlab._multiclass`), each by the compiled WSS 2 loop
(:func:`svmlab.smo._dual_core.dual_run`).  On small sets (iris: 150 rows, 3
pairs; digits: 1797 rows, 45 pairs) the loop's own work is a fraction of a
millisecond per pair, while making a pair's state from Python (its
:class:`svmlab.kernels.Kernel`, :class:`svmlab.kernels.KernelCache`,
:class:`svmlab.smo._dual.DualState`, about 60 NumPy calls) and calling the
loop (numba types its named tuples at every call) cost about as much again
(docs/decisions/31d01, 32o01).

Contract.  :func:`ovo_pairs` makes, for each pair from ``p0`` on, exactly
the arrays a pair's :class:`svmlab.smo.SMORun` (WSS 2, float64 or float32
row cache over the fit's :class:`svmlab.kernels.cache.SharedRowStore`) would
hold --
the pair's rows of X copied as two slices of the class-ordered set, their
squared norms and kernel diagonal as slices of the whole set's (the same
values: row-wise sums do not depend on the other rows), the bounds, a fresh
row cache of the same number of slots whose misses the store serves, and
for a float32 cache the rows' float32 copy (slices of the set's) -- runs
the same compiled loop on them and takes LIBSVM's intercept as
``DualState.intercepts`` does.  So every step, multiplier and intercept is
the run-by-run path's, bit for bit.  It returns after the first pair that
does not converge within its step allowance (the caller then runs that pair
through its own run, which gives its stop reason and message), or once
``budget`` steps were taken (the caller checks Ctrl-C between calls).

The pairs' arrays that scale with their size (the rows' copy, its transpose,
the row cache, the float32 rows) live in scratch memory the caller makes
once per fit (:meth:`FastPairs._scratch`), reused from pair to pair: fresh
pages cost system time on every pair otherwise (docs/decisions/33n01).

Only dense float64 rows (no CSR, no bit-packed rows, no precomputed kernel)
take this path; the caller (:meth:`FastPairs.advance`) checks that, and
:class:`svmlab._multiclass.MulticlassRun` that no step hook or callback
asked for records.

:class:`FastPairs` is the fast path a one-vs-one run takes for pairs made
by :func:`svmlab.smo._estimator.smo_run` (and ``SMOClassifier._make_run``)
with WSS 2: the run maker carries it as ``ovo_fast_path``, so the shared
one-vs-one machinery (:mod:`svmlab._multiclass`) never imports this solver
room.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from .. import _stepping
from .._jit import njit
from .._kkt import intercept
from .._stepping import blas_thread_limit
from ..kernels._rows import TRANSPOSE_MAX_BYTES, TRANSPOSE_MAX_DENSITY, KernelData
from ..kernels.cache import CacheData, KernelCache, SharedRows
from ._core import ACTIVE, FS_SIZE, IS_DONE, IS_N_ACTIVE, IS_SHRINK_COUNTER, IS_SIZE
from ._dual import DualState
from ._dual_core import (DualIterate, DualOptions, DualProblem, DualRows, dual_gradient,
                         dual_run)
from ._records import DUAL_BUFFER

__all__ = ["FastPairs", "ovo_pairs"]


@njit(cache=True)
def ovo_pairs(kd, tmpl, pa, pb, p0, kdiag_all, Cv, C, uniform, tol, eps, shrinking, want_rec,
              limits, slots, offsets, alpha_out, n_iter, done, icpt, counts, budget,
              keeps, xbuf, tbuf, cbuf, x32buf, blocks):
    """Run pairs ``p0, p0+1, ...`` to their end; returns the index of the
    first pair not run to convergence by this call (``len(pa)`` when all
    were), and the steps taken.

    Parameters
    ----------
    kd : KernelData
        The kept training rows ordered by class (dense float64); its
        ``qround`` (LIBSVM's float32 rounding of the float64 values) goes
        to every pair's rows.
    tmpl : SharedRows
        A view of the fit's store (its LRU arrays, ``kd`` and class
        offsets ``coff``); each pair gets its own ``gmap``, ``cls`` and
        ``counts``.
    pa, pb : int64 (P,)
        The pairs' classes (LIBSVM's order).
    kdiag_all : float64 (N,)
        ``K(x_i, x_i)`` of the class-ordered rows.
    Cv : float64 (N,)
        The per-example bounds in class order; ``C`` the scalar bound and
        ``uniform[p]`` whether pair p's bounds are all ``C`` (the run then
        holds ``np.full(n, C)``, else a copy of its slice of ``Cv``).
    tol, eps, shrinking, want_rec : the loop's options (``want_rec`` False).
    limits : int64 (P,)
        The most steps pair p may take in this call (its ``max_iter`` or
        safeguard cap, cut to the caller's allowance).
    slots : int64 (P,)
        The number of rows pair p's cache holds.
    offsets : int64 (P+1,)
        Pair p's multipliers go to ``alpha_out[offsets[p]:offsets[p+1]]``.
    n_iter, done : int64 (P,)
        Out: steps, and 1 when the pair converged.
    icpt : float64 (P,)
        Out: LIBSVM's intercept (svmlab's sign, ``SMORun.intercept``).
    counts : int64 (P, 3)
        Out: cache hits, cache misses, kernel values the store computed.
    budget : int
        Return after the pair during which the steps of this call reach it.
    keeps : bool (P,)
        Whether each pair's rows keep a transpose, as
        :class:`svmlab.kernels.Kernel` decides it for them (``keeps_transpose``, decided once per fit by
        the caller from each class's nonzeros).
    xbuf, tbuf : float64 (at least n d,)
        The memory of the pair's copy of its rows and of its transpose
        (``tbuf`` may be empty when no pair keeps one): reused from pair to
        pair and from call to call, so that the pairs do not fault in fresh
        pages (docs/decisions/33n01).
    cbuf : float64 or float32 (at least ``slots[p] * n``,)
        The memory of the pair's row cache; its dtype is the cache's.
    x32buf : float32
        Empty for a float64 cache; for a float32 cache (at least n d,) the
        memory of the pair's float32 rows (``Kernel.ensure_float32``: the
        same values as the class-ordered set's ``kd.dense32``, sliced).
    blocks : None or bool
        The loop's ``blocks`` switch (:func:`svmlab.smo._core.blocks_switch`):
        None for a float64 cache, True for a float32 one of dense rows.
    """
    P = pa.shape[0]
    coff = tmpl.coff
    d = kd.dense.shape[1]
    taken = 0
    for p in range(p0, P):
        a = pa[p]
        b = pb[p]
        a0 = coff[a]
        a1 = coff[a + 1]
        b0 = coff[b]
        b1 = coff[b + 1]
        na = a1 - a0
        n = na + b1 - b0
        # the pair's rows: class a's, then class b's (copies, as the run's
        # Kernel), in the caller's memory
        Xp = xbuf[:n * d].reshape((n, d))
        Xp[:na] = kd.dense[a0:a1]
        Xp[na:] = kd.dense[b0:b1]
        sq = np.empty(n)
        sq[:na] = kd.sqnorm[a0:a1]
        sq[na:] = kd.sqnorm[b0:b1]
        # the pair's transpose as Kernel(Xp) decides it (kept, unfilled:
        # keeps_transpose's rule, the caller's ``keeps``)
        if keeps[p]:
            XT = tbuf[:d * n].reshape((d, n))
        else:
            XT = np.zeros((0, 0))
        if x32buf.shape[0] > 0:
            X32 = x32buf[:n * d].reshape((n, d))
            X32[:na] = kd.dense32[a0:a1]
            X32[na:] = kd.dense32[b0:b1]
        else:
            X32 = kd.dense32
        kdp = KernelData(kd.sparse, Xp, kd.indptr, kd.indices, kd.data, sq, kd.ktype,
                         kd.gamma, kd.coef0, kd.degree, kd.work, kd.binary, kd.bits,
                         kd.brows, kd.bcount, kd.table, kd.bwork, X32, kd.cols,
                         XT, np.zeros(1, np.int64), kd.qround)
        gmap = np.empty(n, np.int64)
        for t in range(na):
            gmap[t] = a0 + t
        for t in range(na, n):
            gmap[t] = b0 + t - na
        cls = np.empty(2, np.int64)
        cls[0] = a
        cls[1] = b
        cnt = np.zeros(3, np.int64)
        sh = SharedRows(tmpl.rows, tmpl.slot_of, tmpl.owner, tmpl.prev, tmpl.next, tmpl.meta,
                        gmap, tmpl.kd, cls, coff, cnt)
        m = slots[p]
        meta = np.zeros(5, np.int64)
        meta[0] = -1
        meta[1] = -1
        cd = CacheData(cbuf[:m * n].reshape((m, n)), np.full(n, -1, np.int64),
                       np.full(m, -1, np.int64),
                       np.full(m, -1, np.int64), np.full(m, -1, np.int64), meta, sh)
        # the problem: y = +1 for class a, -1 for class b; p = -1, v = -y p
        y = np.ones(n)
        for t in range(na, n):
            y[t] = -1.0
        yp = np.empty(n)
        for t in range(n):
            yp[t] = -y[t] * -1.0
        U = np.empty(n)
        if uniform[p]:
            for t in range(n):
                U[t] = C
        else:
            U[:na] = Cv[a0:a1]
            U[na:] = Cv[b0:b1]
        kdiag = np.empty(n)
        kdiag[:na] = kdiag_all[a0:a1]
        kdiag[na:] = kdiag_all[b0:b1]
        idx = np.arange(n)
        alpha = np.zeros(n)
        G = np.zeros(n)
        Gbar = np.zeros((2, n))
        full = np.zeros(n)
        rowfull = np.zeros(n, np.bool_)
        rb = np.zeros((2, 0), cbuf.dtype)
        active = np.full(n, ACTIVE, np.int8)
        act = np.arange(n)
        ist = np.zeros(IS_SIZE, np.int64)
        ist[IS_N_ACTIVE] = n
        ist[IS_SHRINK_COUNTER] = min(n, 1000)
        fst = np.zeros(FS_SIZE)
        rec = np.zeros(DUAL_BUFFER)
        rows = DualRows(kdp, cd, full, rowfull, rb)
        prob = DualProblem(y, yp, U, kdiag, idx, tol, eps)
        it = DualIterate(alpha, G, Gbar, fst, ist, active, act)
        opt = DualOptions(shrinking, min(n, 1000), want_rec)
        k = dual_run(rows, prob, it, rec, opt, limits[p], None, None, blocks)
        taken += k
        n_iter[p] = k
        counts[p, 0] = meta[3]
        counts[p, 1] = meta[4]
        counts[p, 2] = cnt[0]
        if ist[IS_DONE] != 1:
            return p, taken
        # LIBSVM's intercept from -y grad = v - f0 (DualState.intercepts)
        shrunk = False
        for t in range(n):
            if active[t] != ACTIVE:
                shrunk = True
                break
        if shrunk:
            f0 = dual_gradient(rows, prob, it, None, blocks)
        else:
            f0 = G.copy()
        icpt[p] = intercept(yp - f0, y, alpha, U)
        alpha_out[offsets[p]:offsets[p] + n] = alpha
        done[p] = 1
        if taken >= budget:
            return p + 1, taken
    return P, taken


class FastPairs:
    """The fast path of a :class:`svmlab._multiclass.MulticlassRun` whose
    pairs are :class:`svmlab.smo.SMORun` objects with WSS 2 (``run_cls``): every
    remaining pair to its end without its run object, with the same steps
    and model (module docstring).  :meth:`advance` is the run's ``_advance``
    on ``run()`` with one worker and no callback tasks; a pair that stalls,
    reaches its step limit or is interrupted goes to its run
    (``mc._open_part``), which gives its stop reason and message."""

    def __init__(self, run_cls):
        self.run_cls = run_cls
        self.step_name = run_cls.step_name
        self.tol_name = run_cls.tol_name
        self.steps_per_task = run_cls.steps_per_task
        #: SMORun's growth of a short wss2 chunk
        self.chunk_growth = 8

    @staticmethod
    def accepts(opts):
        """Whether the pairs' runs under ``opts`` take this path (WSS 2)."""
        return getattr(opts, "selection", None) == "wss2"

    @staticmethod
    def first_chunk(n):
        """SMORun's first chunk (WSS 2) for a pair of ``n`` examples."""
        return max(64, (1 << 22) // max(int(n), 1))

    def _lean_state(self, mc, p):
        """Pair p's ``(kernel, cache, DualState)``: what its
        :class:`svmlab.smo.SMORun` would hold (the same arrays, made by the
        same calls: :class:`svmlab.kernels.Kernel`,
        :class:`svmlab.kernels.KernelCache` over this run's store,
        :class:`svmlab.smo._dual.DualState` as ``SMORun._init_dual`` makes
        it), without the run object around them."""
        o = mc.opts
        _, yp, Cvp, kp = mc._pair_kernel(p)  # the pair's set-up, as its run's
        cache = KernelCache(kp, o.cache_size, dtype=np.dtype(o.cache_dtype))
        C = float(o.C)
        d = DualState(kp, yp, -1.0, C if bool(np.all(Cvp == C)) else Cvp, tol=float(o.tol),
                      cache=cache, shrinking=bool(o.shrinking), eps=1e-12, check=False)
        return kp, cache, d

    def _lean_run_of(self, mc, p, state, steps):
        """The :class:`svmlab.smo.SMORun` of pair p holding the lean path's
        ``state`` after ``steps`` steps (for a pair that did not converge or
        was interrupted: its stop reason, message and further steps are then
        the run's own)."""
        kp, cache, d = state
        r = mc._open_part(p)
        r.kernel, r.cache, r.kd, r.cd, r.dual = kp, cache, d.kd, d.cd, d
        r.alpha, r.G, r.Gbar, r.fst, r.ist = d.alpha, d.G, d.Gbar, d.fst, d.ist
        r.active, r.act, r.full, r.rowfull = d.active, d.act, d.full, d.rowfull
        r.kdiag = d.kdiag
        r.n_iter = int(steps)
        return r

    def _driver_ok(self, mc):
        """Whether the pairs may run several to a compiled call
        (:func:`svmlab.smo._ovo.ovo_pairs`): dense float64 rows with a named
        kernel, and a float64 row cache or a float32 one (whose pairs' float32
        rows are then slices of the class-ordered set's, ``dense32``, which
        the store made)."""
        ok = getattr(mc, "_drv_ok", None)
        if ok is None:
            k = mc.kernel
            d = k.data
            dt = mc.opts.cache_dtype
            ok = (isinstance(k.X, np.ndarray) and not k.binary and k.kernel != "precomputed"
                  and not d.sparse and d.dense.dtype == np.float64 and d.dense.shape[0] > 0
                  and mc.store.dtype == np.dtype(dt)
                  and ((dt == "float64" and d.dense32.shape[0] == 0)
                       or (dt == "float32" and d.dense32.shape == d.dense.shape)))
            mc._drv_ok = ok
        return ok

    @staticmethod
    def _scratch(a):
        """One caller's (the main thread's, a worker's) memory for
        :func:`ovo_pairs`' pairs: ``(xbuf, tbuf, cbuf, x32buf)``, each the
        size of the largest pair's use, made once per fit and caller and
        reused by every pair it runs (the rows' copy, their transpose, the
        row cache, the float32 rows): no fresh pages per pair
        (docs/decisions/33n01)."""
        return (np.empty(a["xlen"]), np.empty(a["tlen"]), np.empty(a["clen"], a["cdtype"]),
                np.empty(a["x32len"], np.float32))

    def _driver_args(self, mc):
        """The arrays :func:`svmlab.smo._ovo.ovo_pairs` reads and writes (made
        once per run)."""
        o = mc.opts
        P = len(mc.pairs)
        sizes = np.asarray(mc._pos.sizes, dtype=np.int64)
        C = float(o.C)
        Cv = np.ascontiguousarray(mc.Cv, dtype=np.float64)
        eq = Cv == C
        pa, pb = np.ascontiguousarray(np.array(mc.pairs, dtype=np.int64).T)
        if eq.all():
            uniform = np.ones(P, dtype=np.bool_)
        else:
            cls_eq = np.logical_and.reduceat(eq, mc.coff[:-1])
            uniform = cls_eq[pa] & cls_eq[pb]
        # each pair's cache slots, as KernelCache gives them over the store
        # (svmlab.kernels.cache.n_slots_for of the pair's share)
        cdtype = np.dtype(o.cache_dtype)
        mb = min(float(o.cache_size), mc.store.pair_cache_mb)
        rows_fit = (mb * (1 << 20)) // (float(cdtype.itemsize) * np.maximum(sizes, 1))
        slots = np.minimum(np.maximum(rows_fit, 2), np.maximum(sizes, 1)).astype(np.int64)
        # each pair's transpose rule (keeps_transpose, stated here on all
        # pairs at once) from the nonzeros of each class's rows, counted
        # once per class and only when some pair's size allows a transpose:
        # a pair's are its two classes'
        kd = mc.kernel.data
        d = int(kd.dense.shape[1])
        size = sizes * d
        keeps = (size > 0) & (8 * size <= TRANSPOSE_MAX_BYTES)
        if kd.binary:
            keeps[:] = False
        elif keeps.any():
            c = mc.coff
            nnz = np.array([np.count_nonzero(kd.dense[c[k]:c[k + 1]]) for k in range(len(c) - 1)],
                           dtype=np.int64)
            keeps &= nnz[pa] + nnz[pb] <= TRANSPOSE_MAX_DENSITY * size
        # each pair's allowance in one call: 8 of SMORun's first chunks (a
        # pair that needs more goes to its own run, which chunks it)
        allow = 8 * np.maximum(64, (1 << 22) // np.maximum(sizes, 1))
        limits = np.minimum(np.asarray(mc._limits, dtype=np.int64), allow)
        offsets = np.zeros(P + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        f32 = cdtype == np.float32
        return dict(
            kd=kd, tmpl=mc.store.view(0, 1), pa=pa, pb=pb,
            kdiag_all=np.ascontiguousarray(mc.kernel.diag(), dtype=np.float64),
            Cv=Cv, C=C, uniform=uniform,
            tol=float(o.tol), eps=1e-12, shrinking=bool(o.shrinking), want_rec=False,
            limits=limits, slots=slots, offsets=offsets, alpha_out=np.zeros(int(offsets[-1])),
            n_iter=np.zeros(P, dtype=np.int64), done=np.zeros(P, dtype=np.int64),
            icpt=np.zeros(P), counts=np.zeros((P, 3), dtype=np.int64),
            budget=int(allow.max()), keeps=keeps,
            # the scratch sizes (_scratch) and the loop's blocks switch
            xlen=int(sizes.max()) * d, tlen=int(sizes[keeps].max(initial=0)) * d,
            clen=int(np.max(slots * sizes)), cdtype=cdtype,
            x32len=int(sizes.max()) * d if f32 else 0, blocks=True if f32 else None)

    @staticmethod
    def _call(a, kd, tmpl, S, p0, off, alpha, n_iter, done, icpt, counts, bufs):
        """:func:`ovo_pairs` on the pairs ``S`` (indices into the fit's
        pairs; None: all of them, the outputs then the fit's) from the
        ``p0``-th on, over the store view ``tmpl`` and the caller's scratch
        ``bufs`` (:meth:`_scratch`)."""
        sel = (lambda v: v) if S is None else (lambda v: v[S])
        return ovo_pairs(kd, tmpl, sel(a["pa"]), sel(a["pb"]), int(p0), a["kdiag_all"], a["Cv"],
                         a["C"], sel(a["uniform"]), a["tol"], a["eps"], a["shrinking"],
                         a["want_rec"], sel(a["limits"]), sel(a["slots"]), off, alpha, n_iter,
                         done, icpt, counts, a["budget"], sel(a["keeps"]), *bufs,
                         a["blocks"])

    def _advance_driver(self, mc):
        """Pairs from the running one on through
        :func:`svmlab.smo._ovo.ovo_pairs` (several per compiled call; the
        same steps and model as their runs): records each converged pair's
        result and stops at the first that did not converge in its
        allowance, or when Ctrl-C was noted between calls.  Returns the
        steps of the converged pairs."""
        a = getattr(mc, "_drv", None)
        if a is None:
            a = mc._drv = self._driver_args(mc)
        taken = 0
        while mc.part < mc.n_parts:
            p0 = mc.part
            bufs = getattr(mc, "_drv_bufs", None)
            if bufs is None:
                bufs = mc._drv_bufs = self._scratch(a)
            stop, _ = self._call(a, a["kd"], a["tmpl"], None, p0, a["offsets"], a["alpha_out"],
                                 a["n_iter"], a["done"], a["icpt"], a["counts"], bufs)
            off, done, n_iter, counts = a["offsets"], a["done"], a["n_iter"], a["counts"]
            for p in range(p0, int(stop)):
                if not done[p]:
                    break
                mc.part_results[p] = {
                    "alpha": a["alpha_out"][off[p]:off[p + 1]].copy(),
                    "intercept": float(a["icpt"][p]),
                    "cache_hits": int(counts[p, 0]),
                    "cache_misses": int(counts[p, 1]),
                    "kernel_evaluations": int(counts[p, 2]),
                }
                mc.part_reasons[p] = "converged"
                mc.part_n_iter[p] = int(n_iter[p])
                mc.part_messages[p] = None
                taken += int(n_iter[p])
                mc.part += 1
            if mc.part == int(stop) < mc.n_parts and not done[mc.part]:
                return taken  # this pair goes to its own run
            if mc._stop_requested():
                return taken
        return taken

    @staticmethod
    def _batches(todo, cost, workers):
        """A function ``grab(w)`` handing worker w its next batch of the
        pending pairs ``todo`` (None when none is left), under a lock.

        Each worker owns a run of the pairs in LIBSVM's order (``(0, 1),
        (0, 2), ...``: grouped by their first class), the runs of about
        equal ``cost``: a class's rows are then met by fewer workers, and
        each worker's store computes fewer of the class blocks another
        worker's store computes too (the block of a row against its own
        class serves every pair of that class; decision 33n01).  A worker
        takes its own pairs largest first, in batches of about a quarter of
        its cost left (few compiled calls); once its run is empty it takes
        the smallest pairs left at the end of the run with the most cost
        left (a ``4 * workers``-th of it), so the workers' ends even out
        whatever the machine's load."""
        order = sorted(todo)
        total = float(sum(cost[p] for p in order))
        runs, cur, acc = [], [], 0.0
        for p in order:
            # a run ends before the pair that would take it further past its
            # share than it is short of it
            bound = total * (len(runs) + 1) / workers
            if len(runs) < workers - 1 and cur and acc + cost[p] - bound > bound - acc:
                runs.append(cur)
                cur = []
            cur.append(p)
            acc += cost[p]
        runs.append(cur)
        while len(runs) < workers:
            runs.append([])
        queues = [sorted(r, key=lambda p: (-cost[p], p)) for r in runs]
        left = [float(sum(cost[p] for p in q)) for q in queues]
        lock = threading.Lock()

        def grab(w):
            with lock:
                q = queues[w]
                if q:
                    want, v, front = left[w] / 4.0, w, True
                else:
                    v = max(range(len(queues)), key=lambda i: left[i])
                    if not queues[v]:
                        return None
                    want, front = left[v] / (4.0 * workers), False
                q = queues[v]
                out, c = [], 0.0
                while q and (not out or c < want):
                    p = q.pop(0) if front else q.pop()
                    out.append(p)
                    c += cost[p]
                left[v] -= c
                return out

        return grab

    def advance_parallel(self, mc):
        """The pending pairs in ``mc.workers`` workers, each running batches
        of pairs through :func:`ovo_pairs` (the GIL released inside: the
        compiled functions are ``nogil``) over its own store of class blocks
        and kernel scratch (``mc._prepare_workers``), each pair with its own
        row cache: a pair's steps, multipliers and intercept are those of
        :meth:`advance` (which model a pair gets does not depend on the
        order, the worker or what the store holds), so the model is the
        one-worker fit's bit for bit.  The batches are balanced by the pairs'
        sizes (:meth:`_batches`) and handed out as the workers ask.

        Worker 0 is the calling thread, the others helper threads
        (:func:`svmlab._multiclass.run_pair_workers`); each
        helper makes its own store in its thread (``mc._worker_store``) and
        records its pairs' results itself, so that Python work overlaps the
        other workers' compiled calls instead of adding to the fit's serial
        part (docs/decisions/35n01).  A pair the driver hands back (not
        converged within its allowance) runs afterwards through its own run
        (``mc._advance_parallel``, threads as before), which gives its stop
        reason and message.  Ctrl-C: the workers stop after their call in
        flight (at most ``budget`` steps), the pairs finished are kept, the
        run is ``interrupted``.  Returns the steps taken."""
        from .._multiclass import run_pair_workers

        a = getattr(mc, "_drv", None)
        if a is None:
            a = mc._drv = self._driver_args(mc)
        todo = [p for p in range(mc.part, mc.n_parts) if mc.part_reasons[p] == "pending"]
        sizes = np.asarray(mc._pos.sizes, dtype=np.int64)
        # a pair's work: about n steps of O(n) each
        cost = sizes.astype(np.float64) ** 2
        n_workers = min(int(mc.workers), len(todo))
        mc._prepare_workers(n_workers, lazy=True)
        grab = self._batches(todo, cost, n_workers)
        handed, errors = [], []
        taken = [0] * n_workers
        failed = threading.Event()
        results, reasons, n_iters, messages = (mc.part_results, mc.part_reasons,
                                               mc.part_n_iter, mc.part_messages)

        def halt():
            return failed.is_set() or mc._stop_requested()

        def work(w):
            try:
                if w == 0:
                    kd, tmpl = a["kd"], a["tmpl"]
                    bufs = getattr(mc, "_drv_bufs", None)
                    if bufs is None:
                        bufs = mc._drv_bufs = self._scratch(a)
                else:
                    store = mc._worker_store(w)
                    kd, tmpl = store.kernel.data, store.view(0, 1)
                    bufs = self._scratch(a)
                while not halt():
                    S = grab(w)
                    if S is None:
                        return
                    S = np.asarray(S, dtype=np.int64)
                    m = len(S)
                    off = np.zeros(m + 1, dtype=np.int64)
                    np.cumsum(sizes[S], out=off[1:])
                    alpha = np.zeros(int(off[-1]))
                    n_iter = np.zeros(m, dtype=np.int64)
                    done = np.zeros(m, dtype=np.int64)
                    icpt = np.zeros(m)
                    counts = np.zeros((m, 3), dtype=np.int64)
                    j = 0
                    while j < m:
                        stop, _ = self._call(a, kd, tmpl, S, j, off, alpha, n_iter, done,
                                             icpt, counts, bufs)
                        stop = int(stop)
                        for q in range(j, min(stop + 1, m)):
                            if done[q]:
                                # the pair's result, recorded by its worker
                                # (list items: one store each, under the GIL)
                                p = int(S[q])
                                c = counts[q]
                                results[p] = {
                                    "alpha": alpha[off[q]:off[q + 1]].copy(),
                                    "intercept": float(icpt[q]),
                                    "cache_hits": int(c[0]),
                                    "cache_misses": int(c[1]),
                                    "kernel_evaluations": int(c[2]),
                                }
                                n_iters[p] = int(n_iter[q])
                                messages[p] = None
                                reasons[p] = "converged"
                                taken[w] += int(n_iter[q])
                        if stop < m and not done[stop]:
                            handed.append(int(S[stop]))  # to its own run, below
                            stop += 1
                        j = stop
                        if j < m and halt():
                            return
            except BaseException as exc:  # re-raised by the main thread
                errors.append(exc)
                failed.set()

        # the process-wide BLAS count at the pairs' own (as mc._advance_parallel)
        run_pair_workers(work, n_workers, mc.part_blas, failed, errors)
        steps = int(sum(taken))
        mc.cur = None
        left = [p for p in range(mc.n_parts) if mc.part_reasons[p] == "pending"]
        if left and mc._stop_requested():
            mc.part = left[0]
            mc.interrupted = True  # Ctrl-C: the pairs reached are kept
            return steps
        if handed:
            mc.part = min(handed)
            return steps + mc._advance_parallel(sorted(handed))
        mc.part = mc.n_parts
        mc.done = True
        mc.converged = all(r == "converged" for r in mc.part_reasons)
        return steps

    def advance(self, mc):
        """Every remaining pair to its end, each without its run object:
        the arrays of :meth:`_lean_state` advanced by the compiled WSS 2 loop
        (:func:`svmlab.smo._dual_core.dual_run`, in the chunks
        :meth:`svmlab._stepping.SolverRun.run` would take: chunk ends never
        change the iterates), and a converged pair's result (multipliers,
        LIBSVM's intercept, cache counts) read off the arrays: the model is
        the run-by-run path's bit for bit.  A pair that stalls, reaches its
        step limit or is interrupted (Ctrl-C, seen between chunks) is handed
        to its :class:`svmlab.smo.SMORun` (:meth:`_lean_run_of`), which
        then gives its stop reason and message (or continues).  Returns the
        steps taken."""

        cap = 20000
        eager = _stepping._jit_mode() == "eager"
        taken = 0
        with blas_thread_limit(mc.pair_threads):
            while mc.part < mc.n_parts:
                if mc.cur is None and self._driver_ok(mc):
                    taken += self._advance_driver(mc)
                    if mc.part >= mc.n_parts:
                        break
                    if mc._stop_requested():
                        mc.interrupted = True  # Ctrl-C: the pairs reached are kept
                        return taken
                    # a pair the driver did not run to convergence: its own run below
                p = mc.part
                cur = mc.cur
                if cur is not None:
                    if cur.n_iter:
                        return taken  # stepped: the run-by-run path goes on
                    state = (cur.kernel, cur.cache, cur.dual)
                    mc.cur = None
                else:
                    state = self._lean_state(mc, p)
                d = state[2]
                args = d._state(False)
                sw = d.switches
                ist = d.ist
                limit = int(mc._limits[p])
                # SMORun.first_chunk's size, grown as SolverRun.run grows it
                size = min(cap, max(64, (1 << 22) // max(int(d.l), 1)))
                probe = not eager
                steps = 0
                k = -1
                halted = False
                while ist[IS_DONE] == 0 and steps < limit:
                    want = min(1 if probe else size, limit - steps)
                    t0 = time.perf_counter()
                    k = int(dual_run(*args, int(want), *sw))
                    dt = time.perf_counter() - t0
                    steps += k
                    size = _stepping.next_chunk_size(size, k, dt, cap, 8, probe)
                    probe = False
                    if k == 0:
                        break
                    if mc._stop_requested() and ist[IS_DONE] == 0:
                        halted = True
                        break
                taken += steps
                if ist[IS_DONE] == 1:
                    cache = state[1]
                    mc.part_results[p] = {
                        "alpha": d.alpha.copy(),
                        "intercept": -d.intercepts()[0],
                        "cache_hits": cache.hits,
                        "cache_misses": cache.misses,
                        "kernel_evaluations": cache.kernel_evaluations,
                    }
                    mc.part_reasons[p] = "converged"
                    mc.part_n_iter[p] = steps
                    mc.part_messages[p] = None
                    mc.part += 1
                    continue
                # stalled, out of steps or interrupted: the pair's own run
                r = self._lean_run_of(mc, p, state, steps)
                mc.cur = r
                if ist[IS_DONE] != 0:
                    r._end_of_run()
                elif k == 0 and not halted and steps < limit:
                    r._mark_stalled()
                if halted:
                    mc.interrupted = True
                    return taken
                mc._close()
        mc.done = True
        if all(r == "converged" for r in mc.part_reasons):
            mc.converged = True
        return taken
