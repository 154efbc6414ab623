"""The one-vs-one pairs of a NuSVC fit, several in one compiled call.

Problem.  A NuSVC fit of k classes solves k(k-1)/2 binary nu-SVC duals,
each until now by its own :class:`svmlab.smo.DualRun` (``Solver_NU``, made
by :class:`svmlab.svm._solve._DualSolving`): per pair a
:class:`svmlab.kernels.Kernel` over the pair's rows, a
:class:`svmlab.kernels.KernelCache`, a :class:`svmlab.smo._dual.DualState`
whose feasible start fills its kernel rows (one DGEMM) and LIBSVM's initial
gradient, the stepping layer's chunks, then the intercepts in NumPy.  On
digits (45 pairs of about 360 rows) that Python is about as long as the
compiled work, and with ``n_jobs=2`` the two threads mostly queue for the
GIL: ``n_jobs=2`` was slower than ``n_jobs=1`` (issue 31, third run of
record).

Contract.  :func:`nu_pairs` makes, in compiled code, for each pair of its
list exactly the arrays that pair's ``DualRun`` holds -- the pair's rows
copied as two slices of the class-ordered set (class a's, then class
b's: the pair's ``rows``), their squared norms and kernel diagonal as
slices of the whole set's (row-wise values: the same numbers), the pair's
transpose space when :class:`~svmlab.kernels.Kernel` would keep one, a
float64 row cache of :func:`~svmlab.kernels.cache.new_cache`'s slot
count, LIBSVM's nu start (:func:`svmlab.reference.dual.nu_svc`: each class
filled in order to ``nu sum(U) / 2``, the half computed by the caller with
NumPy's sum) -- fills the start's rows as one DGEMM
(:func:`svmlab.kernels.cache.fill_block_gemm`), takes the initial gradient
(:func:`svmlab.smo._dual_core.dual_init`), runs the same loop
(:func:`svmlab.smo._dual_core.dual_run`, ``nu=True``) and returns the
multipliers and ``f0`` (``dual_gradient`` when something is shrunk, else
``G``).  The caller (:class:`NuPairs`) takes ``rho``, ``r`` and the
objective from them with the NumPy code ``DualState.intercepts`` and
``DualState.objective`` use, so every step, multiplier and intercept is
the per-pair path's, bit for bit.  A pair that does not converge within
its allowance (its ``max_iter`` or safeguard cap, cut to 8 of ``DualRun``'s
first chunks) or stalls is handed back: it then runs through its own
``DualRun`` from the start (the same steps), which gives its stop reason
and message.

Memory: the arrays that scale with a pair (its rows' copy, its transpose,
its row cache) live in scratch made once per fit and worker
(:meth:`NuPairs._scratch`), reused from pair to pair (decision 33n01).

Only the fast path of a fit takes it (``run()`` without scikit-learn
callback tasks), for NuSVC with three or more classes on the compiled
generalised dual (``solver="wss2"``, no warm start), dense float64 rows
with a named kernel, no pair bit-packed (no pair of all-0/1 rows), and
every pair's cache float64 (its whole kernel matrix fits ``cache_size``).
Anything else keeps the per-pair runs.  With ``n_jobs > 1`` the pairs are
handed to the workers by SVC's rule (:meth:`svmlab.smo._ovo.FastPairs._batches`),
as the workers ask, and run by SVC's workers
(:func:`svmlab._multiclass.run_pair_workers`: the calling thread is worker
0, a helper thread not begun when the work is gone is cancelled).
docs/decisions/34n01-nusvc-pairs-in-compiled-calls.md, 36n01.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import _multiclass
from .._jit import njit
from .._kkt import intercept_np
from .._stepping import blas_thread_limit, iteration_cap
from ..kernels._rows import TRANSPOSE_MAX_BYTES, Kernel, KernelData, keeps_transpose
from ..kernels.cache import CacheData, fill_block_gemm, n_slots_for, no_shared_rows
from ._core import ACTIVE, FS_SIZE, IS_DONE, IS_N_ACTIVE, IS_NB, IS_SHRINK_COUNTER, IS_SIZE
from ._dual_core import (DualIterate, DualOptions, DualProblem, DualRows, dual_gradient,
                         dual_init, dual_run)
from ._ovo import FastPairs
from ._records import DUAL_BUFFER

__all__ = ["NuPairs", "nu_pairs", "nu_pairs_fast"]


@njit(cache=True)
def nu_pairs(kd, noshare, coff, pa, pb, kdiag_all, Uall, halves, tol, eps, shrinking,
             limits, slots, keeps, offsets, alpha_out, f0_out, a0_out, n_iter, done, counts,
             xbuf, tbuf, cbuf):
    """Run the pairs ``0..len(pa)-1`` (module docstring).

    ``kd``: the class-ordered rows' :class:`KernelData` (dense float64, not
    bit-packed); ``noshare``: a cache's placeholder ``SharedRows``;
    ``coff`` the class offsets; ``pa, pb`` each pair's classes;
    ``kdiag_all`` and ``Uall`` (N,) the kernel diagonal and the bounds in
    class order; ``halves[p]`` LIBSVM's per-class sum ``nu sum(U_p) / 2``;
    ``tol``, ``eps``, ``shrinking`` the loop's options; ``limits[p]`` the
    most steps of pair p; ``slots[p]`` its cache rows; ``keeps[p]`` whether
    its kernel keeps a transpose.  Out, pair p at
    ``offsets[p]:offsets[p+1]``: ``alpha_out``, ``f0_out``, ``a0_out`` (the
    start); ``n_iter[p]``; ``done[p]`` the loop's ``ist[IS_DONE]`` (1
    converged); ``counts[p]`` cache hits and misses.  ``xbuf``, ``tbuf``,
    ``cbuf``: the caller's scratch for the rows, their transpose and the
    row cache (at least the largest pair's)."""
    P = pa.shape[0]
    d = kd.dense.shape[1]
    for p in range(P):
        a = pa[p]
        b = pb[p]
        a0 = coff[a]
        a1 = coff[a + 1]
        b0 = coff[b]
        b1 = coff[b + 1]
        na = a1 - a0
        n = na + b1 - b0
        Xp = xbuf[:n * d].reshape((n, d))
        Xp[:na] = kd.dense[a0:a1]
        Xp[na:] = kd.dense[b0:b1]
        sq = np.empty(n)
        sq[:na] = kd.sqnorm[a0:a1]
        sq[na:] = kd.sqnorm[b0:b1]
        if keeps[p]:
            XT = tbuf[:d * n].reshape((d, n))
        else:
            XT = np.zeros((0, 0))
        kdp = KernelData(kd.sparse, Xp, kd.indptr, kd.indices, kd.data, sq, kd.ktype,
                         kd.gamma, kd.coef0, kd.degree, kd.work, kd.binary, kd.bits,
                         kd.brows, kd.bcount, kd.table, kd.bwork, kd.dense32, kd.cols,
                         XT, np.zeros(1, np.int64), kd.qround)
        m = slots[p]
        meta = np.zeros(5, np.int64)
        meta[0] = -1
        meta[1] = -1
        cd = CacheData(cbuf[:m * n].reshape((m, n)), np.full(n, -1, np.int64),
                       np.full(m, -1, np.int64), np.full(m, -1, np.int64),
                       np.full(m, -1, np.int64), meta, noshare)
        # nu_svc: y = +1 for class a, -1 for class b; p = 0, v = -y p
        y = np.ones(n)
        for t in range(na, n):
            y[t] = -1.0
        yp = np.empty(n)
        for t in range(n):
            yp[t] = -y[t] * 0.0
        U = np.empty(n)
        U[:na] = Uall[a0:a1]
        U[na:] = Uall[b0:b1]
        # LIBSVM's start: each class filled in order to the half
        alpha = np.zeros(n)
        for lo, hi in ((0, na), (na, n)):
            left = halves[p]
            for t in range(lo, hi):
                if left <= 0:
                    break
                alpha[t] = min(U[t], left)
                left -= alpha[t]
        o = offsets[p]
        a0_out[o:o + n] = alpha
        kdiag = np.empty(n)
        kdiag[:na] = kdiag_all[a0:a1]
        kdiag[na:] = kdiag_all[b0:b1]
        idx = np.arange(n)
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
        nb = 0
        for t in range(n):
            if alpha[t] > 0 and alpha[t] < U[t]:
                nb += 1
        ist[IS_NB] = nb
        fst = np.zeros(FS_SIZE)
        rec = np.zeros(DUAL_BUFFER)
        rows = DualRows(kdp, cd, full, rowfull, rb)
        prob = DualProblem(y, yp, U, kdiag, idx, tol, eps)
        it = DualIterate(alpha, G, Gbar, fst, ist, active, act)
        opt = DualOptions(shrinking, min(n, 1000), False)
        # the start's rows as one block, then LIBSVM's initial gradient
        nz = np.flatnonzero(alpha)
        fill_block_gemm(kdp, cd, nz, nz.shape[0])
        dual_init(rows, prob, it)
        k = dual_run(rows, prob, it, rec, opt, limits[p], True, None, None)
        n_iter[p] = k
        counts[p, 0] = meta[3]
        counts[p, 1] = meta[4]
        done[p] = ist[IS_DONE]
        if ist[IS_DONE] != 1:
            continue
        shrunk = False
        for t in range(n):
            if active[t] != ACTIVE:
                shrunk = True
                break
        if shrunk:
            f0 = dual_gradient(rows, prob, it, None, None)
        else:
            f0 = G.copy()
        alpha_out[o:o + n] = alpha
        f0_out[o:o + n] = f0


def nu_pairs_fast(run):
    """The :class:`NuPairs` path of the :class:`svmlab.svm._run.FamilyRun`
    ``run`` when its fit may take it (module docstring), else None."""
    pb = getattr(run, "fit_problem", None)
    solving = getattr(run, "solving", None)
    # the generalised dual's solving (svmlab.svm._solve._DualSolving: its
    # problems' DualProblem list ``probs`` and warm start ``last``), read by
    # its attributes: this solver room imports no estimator module
    if pb is None or not (hasattr(solving, "probs") and hasattr(solving, "last")):
        return None
    ok = getattr(run, "_nu_fast", None)
    if ok is None:
        ok = NuPairs.accepts(run, pb, solving)
        run._nu_fast = ok
    return NuPairs if ok else None


class NuPairs:
    """The fast path of a NuSVC :class:`svmlab.svm._run.FamilyRun`
    (module docstring): :meth:`advance` is the run's ``_advance`` on
    ``run()`` without callback tasks."""

    @staticmethod
    def accepts(run, pb, solving):
        if not (pb.impl == "nu_svc" and pb.solver == "wss2" and pb.pairs is not None
                and len(pb.pairs) > 1 and solving.last is None and pb.kern.named
                and int(run.part_blas) == 1):
            # (one BLAS thread per pair, as the per-pair runs' start block
            # and loop take it: the same DGEMM)
            return False
        Xt = pb.Xt
        if not (isinstance(Xt, np.ndarray) and Xt.dtype == np.float64 and Xt.ndim == 2
                and Xt.shape[1] > 0):
            return False
        o = solving.opts
        sizes = [len(r) for r in pb.rows]
        # every pair's cache float64 (compiled_dual_run's rule)
        if any(n_slots_for(n, float(o.cache_size), 8) < n for n in sizes):
            return False
        return True

    @staticmethod
    def _args(run):
        """The arrays :func:`nu_pairs` reads (made once per fit)."""
        pb, o = run.fit_problem, run.solving.opts
        k = pb.k
        yk = pb.y_idx[pb.keep]
        order = np.concatenate([pb.keep[np.flatnonzero(yk == c)] for c in range(k)])
        counts = np.bincount(yk, minlength=k)
        coff = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(counts, out=coff[1:])
        Xc = np.ascontiguousarray(pb.Xt[order], dtype=np.float64)
        # no pair bit-packed: a pair of all-0/1 rows would be (Kernel's
        # "auto"), so such a fit keeps the per-pair runs
        row01 = np.all((Xc == 0.0) | (Xc == 1.0), axis=1)
        cls01 = np.logical_and.reduceat(row01, coff[:-1]) if len(row01) else row01
        P = len(pb.pairs)
        pa, pbb = np.ascontiguousarray(np.array(pb.pairs, dtype=np.int64).T)
        if any(cls01[a] and cls01[b] for a, b in pb.pairs):
            return None
        kern = Kernel(Xc, pb.kern.name, pb.gamma, pb.degree, pb.coef0, binary=False,
                      qfloat=True)  # LIBSVM's Qfloat, as base_kernel (svm/_solve.py)
        kd = kern.data
        sizes = np.array([len(r) for r in pb.rows], dtype=np.int64)
        d = Xc.shape[1]
        nnz_c = np.add.reduceat(np.count_nonzero(Xc, axis=1), coff[:-1]).astype(np.int64)
        keeps = np.array([0 < 8 * n * d <= TRANSPOSE_MAX_BYTES
                          and keeps_transpose(int(n), d, int(nnz_c[a] + nnz_c[b]))
                          for n, (a, b) in zip(sizes, pb.pairs)], dtype=np.bool_)
        slots = np.array([min(n_slots_for(int(n), float(o.cache_size), 8), max(int(n), 1))
                          for n in sizes], dtype=np.int64)
        mi = int(o.max_iter)
        caps = np.array([mi if mi >= 0 else iteration_cap(int(n)) for n in sizes],
                        dtype=np.int64)
        allow = 8 * np.maximum(64, (1 << 22) // np.maximum(sizes, 1))
        nu = float(pb.nu)
        halves = np.array([0.5 * nu * u.sum() for u in pb.bounds])
        Uall = np.ascontiguousarray(np.asarray(pb.U, dtype=np.float64)[order])
        return dict(kd=kd, coff=coff, pa=pa, pb=pbb, sizes=sizes,
                    kdiag_all=np.ascontiguousarray(kern.diag(), dtype=np.float64),
                    Uall=Uall, halves=halves, tol=float(o.tol), eps=1e-12,
                    shrinking=bool(o.shrinking), limits=np.minimum(caps, allow), slots=slots,
                    keeps=keeps, P=P, xlen=int(sizes.max()) * d,
                    tlen=int(sizes[keeps].max(initial=0)) * d,
                    clen=int(np.max(slots * sizes)))

    @staticmethod
    def _scratch(a):
        """One caller's memory for :func:`nu_pairs` (rows, transpose, row
        cache), made once per fit and worker."""
        return np.empty(a["xlen"]), np.empty(a["tlen"]), np.empty(a["clen"])

    @staticmethod
    def _call(a, S, bufs):
        """:func:`nu_pairs` on the pairs ``S`` (int64 indices); returns the
        outputs ``(offsets, alpha, f0, a0, n_iter, done, counts)``."""
        m = len(S)
        off = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(a["sizes"][S], out=off[1:])
        L = int(off[-1])
        alpha, f0, a0 = np.zeros(L), np.zeros(L), np.zeros(L)
        n_iter = np.zeros(m, dtype=np.int64)
        done = np.zeros(m, dtype=np.int64)
        counts = np.zeros((m, 2), dtype=np.int64)
        nu_pairs(a["kd"], no_shared_rows(np.float64), a["coff"], a["pa"][S], a["pb"][S],
                 a["kdiag_all"], a["Uall"], a["halves"][S], a["tol"], a["eps"],
                 a["shrinking"], a["limits"][S], a["slots"][S], a["keeps"][S], off, alpha, f0,
                 a0, n_iter, done, counts, *bufs)
        return off, alpha, f0, a0, n_iter, done, counts

    @staticmethod
    def _result(run, p, alpha, f0, a0, n_iter, counts, problem_cls):
        """Pair p's result as its ``DualRun.result()`` gives it (``Gbar``
        left out: nothing of a fit reads it), its problem (a
        ``problem_cls``, svmlab.reference.dual.DualProblem, as
        ``nu_svc`` makes it) recorded for ``_DualSolving._convert``."""
        RefProblem = problem_cls
        pb = run.fit_problem
        y = pb.signs[p]
        U = pb.bounds[p]
        n = len(y)
        pz = np.zeros(n)
        run.solving.probs[p] = RefProblem(None, np.arange(n), y, pz, U, a0, True, "nu_svc")
        # DualState.intercepts / objective, the same NumPy calls
        yv = np.ascontiguousarray(y, dtype=np.float64)
        Uv = np.array(U, dtype=np.float64)
        v = -yv * pz - f0
        pos = yv > 0
        neg = ~pos
        r1 = -intercept_np(v[pos], yv[pos], alpha[pos], Uv[pos]) if pos.any() else 0.0
        r2 = intercept_np(v[neg], yv[neg], alpha[neg], Uv[neg]) if neg.any() else 0.0
        rho, r = 0.5 * (r1 - r2), 0.5 * (r1 + r2)
        return {
            "alpha": alpha, "G": yv * f0 + pz, "Gbar": None, "rho": rho, "r": r,
            "intercept": -rho, "objective": float(np.dot(alpha, 0.5 * yv * f0 + pz)),
            "n_iter": int(n_iter), "converged": True, "stop_reason": "converged",
            "cache_hits": int(counts[0]), "cache_misses": int(counts[1]),
            "kernel_evaluations": int(counts[1]) * n,
        }

    @classmethod
    def advance(cls, run, problem_cls):
        """Every pending pair to its end (module docstring); returns the
        steps taken (``problem_cls``: the reference's ``DualProblem``, which
        this solver room does not import), or None when the fit cannot take this path after all
        (the caller then takes the per-pair runs)."""
        cur = run.cur
        if cur is not None and cur.n_iter:
            return None
        a = getattr(run, "_nu_args", None)
        if a is None:
            a = run._nu_args = cls._args(run)
        if a is None:
            run._nu_fast = False
            return None
        if cur is not None:
            run.cur = None  # the opened, unstepped first pair: run here instead
        todo = [p for p in range(run.part, run.n_parts) if run.part_reasons[p] == "pending"]
        out, handed, errors = {}, [], []
        workers = min(int(run.workers), len(todo)) if run.parallel_ok else 1
        if workers <= 1:
            bufs = cls._scratch(a)
            with blas_thread_limit(run.part_blas):
                for S in cls._chunks(todo, a):
                    got, gave = cls._collect(run, S, cls._call(a, S, bufs), problem_cls)
                    out.update(got)
                    handed.extend(gave)
                    if run._stop_requested():
                        break
        else:
            # SVC's scheme (docs/decisions/35n01, 36n01): the caller is
            # worker 0, a helper thread not begun when the work is gone is
            # cancelled, the batches are handed out as the workers ask
            cost = a["sizes"].astype(np.float64) ** 2
            grab = FastPairs._batches(todo, cost, workers)
            failed = threading.Event()
            lock = threading.Lock()

            def work(w):
                try:
                    # each worker's scratch made in its own thread
                    bufs = cls._scratch(a)
                    while not (failed.is_set() or run._stop_requested()):
                        S = grab(w)
                        if S is None:
                            return
                        S = np.asarray(S, dtype=np.int64)
                        got, gave = cls._collect(run, S, cls._call(a, S, bufs), problem_cls)
                        with lock:
                            out.update(got)
                            handed.extend(gave)
                except BaseException as exc:  # re-raised by the calling thread
                    errors.append(exc)
                    failed.set()

            _multiclass.run_pair_workers(work, workers, run.part_blas, failed, errors)
        taken = 0
        for p in sorted(out):
            result, n_iter = out[p]
            run.part_results[p] = result
            run.part_reasons[p] = "converged"
            run.part_n_iter[p] = int(n_iter)
            run.part_messages[p] = None
            taken += int(n_iter)
        left = [p for p in range(run.n_parts) if run.part_reasons[p] == "pending"]
        if left and run._stop_requested():
            run.part = left[0]
            run.interrupted = True
            return taken
        if handed:
            # not converged within the allowance, or stalled: their own runs
            run.part = min(handed)
            return taken + run._advance_parallel(sorted(handed))
        run.part = run.n_parts
        run.done = True
        run.converged = all(r == "converged" for r in run.part_reasons)
        return taken

    @staticmethod
    def _chunks(todo, a):
        """The pending pairs in LIBSVM's order, in batches of about a
        quarter of the work (Ctrl-C is seen between them)."""
        cost = a["sizes"].astype(np.float64) ** 2
        want = float(sum(cost[p] for p in todo)) / 4.0
        S, c = [], 0.0
        for p in todo:
            S.append(p)
            c += cost[p]
            if c >= want:
                yield np.asarray(S, dtype=np.int64)
                S, c = [], 0.0
        if S:
            yield np.asarray(S, dtype=np.int64)

    @classmethod
    def _collect(cls, run, S, res, problem_cls):
        """The results of one :meth:`_call` on the pairs ``S``: ``(done,
        handed)``, ``done`` the converged pairs' ``{p: (result, steps)}``
        (:meth:`_result`, made by the worker that ran them: its NumPy work
        overlaps the other workers' compiled calls), ``handed`` the others."""
        off, alpha, f0, a0, n_iter, done, counts = res
        out, handed = {}, []
        for q, p in enumerate(S):
            p = int(p)
            if done[q] == 1:
                sl = slice(off[q], off[q + 1])
                out[p] = (cls._result(run, p, alpha[sl].copy(), f0[sl], a0[sl].copy(),
                                      n_iter[q], counts[q], problem_cls), int(n_iter[q]))
            else:
                handed.append(p)
        return out, handed
