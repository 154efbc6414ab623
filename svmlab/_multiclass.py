"""Native one-vs-one multiclass for the kernel classifiers (LIBSVM's scheme).

With k > 2 classes, :class:`svmlab._base.BaseKernelSVC` trains one binary
problem per pair of classes ``(a, b)``, ``a < b`` in ``classes_`` order
(``(0, 1), (0, 2), ..., (0, k-1), (1, 2), ...``: LIBSVM's and
:class:`sklearn.svm.SVC`'s order), each the dual of the module docstring of
:mod:`svmlab._base` over the rows of classes a and b::

    max_alpha  sum_i alpha_i - 1/2 sum_ij y_i y_j K(x_i, x_j) alpha_i alpha_j
    s.t.       0 <= alpha_i <= C_i,   sum_i y_i alpha_i = 0,
    y_i = +1 for class a (the FIRST of the pair), -1 for class b,

LIBSVM's sign: the pair's decision value ``f_ab(x) = sum_i alpha_i y_i
K(x_i, x) + intercept_[p]`` is positive for class a (SVC's ``"ovo"``
decision values).  ``C_i = C * class_weight[y_i] * sample_weight_i`` with
the weights of the whole training set (``"balanced"``: ``n / (k
count(label))``), LIBSVM's weighted C per pair.

Decisions (the details SVC leaves to LIBSVM):

* A pair's rows are those of class a, then those of class b, each in the
  order of X (LIBSVM groups the training set by class the same way); the
  solvers' indices (``i1``, ``i2``, ``working_set``...) in a record are
  positions in that list: ``run.pair_rows(p)`` maps them to rows of X
  (after the removal of zero-weight rows, ``run.kept``).
* Each pair is fitted by the estimator's own binary run (``_make_run``,
  given the estimator's options converted once, a
  :class:`svmlab._stepping.FitOptions`, with the pair's bounds), with
  ``max_iter`` (per pair, as SVC); one :class:`MulticlassRun` drives them,
  so ``fit``, ``iter_fit``, ``start``, callbacks, Ctrl-C, the progress bar
  and scikit-learn callbacks work on the concatenation of the pairs' steps
  (``n_iter`` counts them all).  With ``n_jobs`` > 1 the fast path
  (``fit`` without callbacks) runs that many pairs at once in threads
  (:class:`ParallelParts`); every other path takes them one after the
  other, and the model is the same bit for bit for any ``n_jobs``
  (docs/decisions/28j01-parallel-pairs.md).  SVC's pairs (SMO with WSS 2,
  made by :func:`svmlab.smo._estimator.smo_run`) on that fast path with one
  worker run without their run objects, with the same steps and model
  (:class:`svmlab.smo._ovo.FastPairs`, which the run maker carries as
  ``make_run.ovo_fast_path``): dense float64 rows (float64 or float32
  row caches) several pairs per compiled call
  (:func:`svmlab.smo._ovo.ovo_pairs`), other rows pair by pair on the
  arrays their runs would hold; a pair that does not converge is handed to
  its run (docs/decisions/32o01, 33n01).  With several workers, those dense
  pairs run in batches through the same compiled driver in each worker
  (``FastPairs.advance_parallel``,
  :meth:`MulticlassRun._parallel_driver_ok`; docs/decisions/32p01, 33n01):
  worker 0 is the calling thread, the others helper threads
  (:func:`run_pair_workers`, docs/decisions/35n01).
* One kernel cache for all pairs: a :class:`~svmlab.kernels.cache.SharedRowStore`
  of *class blocks* ``K(x_g, X_c)`` over the training set ordered by class;
  each pair's row cache serves its misses from it (pair (a, b)'s row of g
  is the blocks of a and b; the block of g's own class serves all k-1
  pairs of that class).  So sharing never computes more kernel values than
  separate binary fits, and up to half as many.  Memory: the store and the
  one live pair cache share ``cache_size`` (the store 3/4, the pair cache
  1/4); with pairs in w threads, each thread has its own store of ``3/(4w)``
  and its pair cache keeps ``1/4`` (:meth:`MulticlassRun._new_store`).
  Solvers that compute kernel values outside their row cache (the blocked
  decomposition's row store, SMO's parked phases, kernel blocks of the QP
  engines) compute those directly.  ``kernel_evaluations_`` is the
  sum over the pairs.
* ``converged_`` is True only when every pair converged; ``stop_reason_``
  is then ``"converged"``, else the reason of the worst pair (stalled, then
  the iteration cap, then max_iter), or ``"interrupted"`` / ``"callback"``
  when the whole fit was stopped; ``n_iter_`` is the (k(k-1)/2,) array of
  steps per pair, as SVC's.

Fitted attributes in SVC's layout: ``support_`` grouped by class (class
order, then row order), ``n_support_`` (k,), ``dual_coef_`` (k-1, n_SV) with
the coefficient ``alpha y`` of a support vector of class a in pair (a, b) in
row ``b - 1`` and one of class b in row ``a``, ``intercept_`` (k(k-1)/2,),
``coef_`` (k(k-1)/2, d) for the linear kernel; plus ``alpha_`` (k(k-1)/2, n),
each pair's multipliers over the rows of X (0 outside the pair).
"""

from __future__ import annotations

import _thread
import copy
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _stepping
from ._stepping import FitOptions, SequentialRun, SolverRun, blas_thread_limit, iteration_cap
from ._validation import class_and_sample_weights
from .kernels._rows import Kernel
from .kernels.cache import SharedRowStore

__all__ = ["MulticlassRun", "PairStep", "ParallelParts", "class_pairs", "multiclass_weights",
           "ovo_layout", "ovo_votes", "pair_workers", "run_pair_workers", "worker_label"]


def class_pairs(k):
    """The pairs ``(a, b)``, ``a < b``, of k classes in LIBSVM's order."""
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


class _PairPositions:
    """``pos[p]``: the positions of pair p's rows in the class-ordered set
    (class a's, then class b's), made when asked (the fast path copies a
    pair's rows as two slices and never needs them); ``sizes[p]`` their
    number."""

    def __init__(self, coff, pairs):
        self.coff, self.pairs = coff, pairs
        c = np.asarray(coff).tolist()  # Python ints: no NumPy scalar per pair
        self.sizes = [c[a + 1] - c[a] + c[b + 1] - c[b] for a, b in pairs]

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, p):
        a, b = self.pairs[p]
        c = self.coff
        return np.concatenate([np.arange(c[a], c[a + 1]), np.arange(c[b], c[b + 1])])


def multiclass_weights(y_idx, classes, sample_weight=None, class_weight=None):
    """Per-example weights of a k-class problem, as
    :func:`svmlab._validation.check_weights` for two: returns ``(weight,
    class_weight_ (k,), keep)``.  Every class must keep an example with a
    positive weight (a pair with an empty class has no problem to solve;
    decision: a ValueError, before any work)."""
    n = y_idx.shape[0]
    if sample_weight is None and class_weight is None:
        # no weights: compute_class_weight(None) is all ones (skipped)
        return np.ones(n), np.ones(len(classes)), None
    cw, sw = class_and_sample_weights(y_idx, classes, sample_weight, class_weight)
    w = cw[y_idx] if sw is None else cw[y_idx] * sw
    keep = None
    if np.any(w <= 0):
        keep = np.flatnonzero(w > 0)
        left = np.unique(y_idx[keep])
        if len(left) < len(classes):
            gone = [str(classes[c]) for c in range(len(classes)) if c not in set(left.tolist())]
            raise ValueError(
                f"sample_weight and class_weight give zero weight to every example of "
                f"class(es) {', '.join(gone)}; one-vs-one multiclass needs every class with a "
                "positive weight (drop the class from the training labels instead).")
    return w, cw, keep


@dataclass(frozen=True)
class PairStep:
    """The record of one step of a one-vs-one fit.

    ``iteration``: 1-based over the whole fit (all pairs); ``pair_index``: p,
    the column of ``decision_function`` with the "ovo" shape; ``pair``: the
    class labels ``(classes_[a], classes_[b])`` (+1 is the first);
    ``classes``: their indices ``(a, b)``; ``record``: the binary solver's own
    record (its ``iteration`` counts this pair's steps; its example indices
    are positions in the pair's rows, ``run.pair_rows(pair_index)``).
    Other attributes are read from ``record``."""

    iteration: int
    pair_index: int
    pair: tuple
    classes: tuple
    record: Any

    def __getattr__(self, name):
        if name == "record" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.record, name)


def pair_workers(threads, n_parts):
    """``(workers, per_part)``: how many pairs run at once for ``threads``
    cores (the estimator's ``n_jobs`` through
    :func:`svmlab._stepping.effective_n_jobs`) and ``n_parts`` pairs, and
    the BLAS threads each pair's run gets (the cores left over, at least 1).
    Both depend on ``threads`` and ``n_parts`` only, never on timing, and
    the stepped path uses the same ``per_part``: so for ``n_parts >=
    threads`` every pair runs with one BLAS thread whatever ``n_jobs`` is,
    and the models are the same bit for bit."""
    threads, n_parts = max(1, int(threads)), max(1, int(n_parts))
    workers = min(threads, n_parts)
    return workers, max(1, threads // workers)


#: rows of X per block of the transpose's fill (:meth:`MulticlassRun._prepare_workers`)
TRANSPOSE_BLOCK_ROWS = 256


class _Task:
    """One worker's share of a parallel phase, handed to a helper thread
    (:func:`run_pair_workers`): ``fn(w)``, run at most once.  ``state``: 0
    pending, 1 running, 2 cancelled (the caller finished every batch before
    a helper took the task up: it then never runs)."""

    __slots__ = ("fn", "w", "state", "done", "error")

    def __init__(self, fn, w):
        self.fn, self.w, self.state, self.error = fn, w, 0, None
        self.done = threading.Event()

    def claim(self):
        """Helper side: pending -> running; False when cancelled."""
        with _TASK_LOCK:
            if self.state != 0:
                return False
            self.state = 1
            return True

    def cancel(self):
        """Caller side: pending -> cancelled; False when already running
        (the caller then waits for :attr:`done`)."""
        with _TASK_LOCK:
            if self.state != 0:
                return self.state == 2
            self.state = 2
            return True


#: the pair worker's name of a helper thread (:func:`worker_label`)
_LABEL = threading.local()


def worker_label():
    """The calling thread's name as a pair worker: ``svmlab-pair-<w>`` in a
    helper of :func:`run_pair_workers` (a thread that the ``threading``
    module does not know, :func:`_hand_to_helper`), else its
    ``threading`` name."""
    name = getattr(_LABEL, "name", None)
    return name if name is not None else threading.current_thread().name


def _run_task(task):
    """A helper thread's body: ``task.fn(task.w)`` unless the caller
    cancelled it first, under the worker's label; then ``task.done``."""
    try:
        _LABEL.name = f"svmlab-pair-{task.w}"
        if task.claim():
            try:
                task.fn(task.w)
            except BaseException as exc:  # raised by the caller
                task.error = exc
    finally:
        task.done.set()


#: the lock of the tasks' states
_TASK_LOCK = threading.Lock()


def _hand_to_helper(fn, w):
    """``fn(w)`` as a :class:`_Task` run by a new thread (labelled
    ``svmlab-pair-<w>``, :func:`worker_label`); returns the task at once.

    The thread is started with :func:`_thread.start_new_thread`, which does
    not wait for it: ``threading.Thread.start`` waits until the new thread
    runs, and on the shared 2-core machine (load 4-5) that wait was 6.6 ms
    of a NuSVC digits fit and 12 ms of an SVC one (medians; decision
    36n01), time the caller, worker 0, now spends on pairs.  Such a thread
    is a daemon (it does not hold up the interpreter's exit; the caller
    waits for a task it did not cancel) and is not in
    ``threading.enumerate()``.  (Helpers kept from fit to fit were tried
    and dropped: with them, later ``n_jobs=1`` MNIST fits in the same
    process got transparent huge pages for their store and 80-240 ms more
    system time per fit, decision 35n01.)"""
    task = _Task(fn, w)
    _thread.start_new_thread(_run_task, (task,))
    return task


def run_pair_workers(work, n_workers, blas, failed, errors):
    """Run ``work(w)`` for ``w < n_workers``: ``work(0)`` in the calling
    thread, the others in helper threads (labelled ``svmlab-pair-<w>``,
    :func:`worker_label`), the
    process-wide BLAS count limited to ``blas`` meanwhile; returns when all
    are done, raising the first error recorded in ``errors``.

    Why (docs/decisions/35n01): :func:`svmlab._stepping.run_worker_threads`
    starts ``n_workers`` new threads per phase and waits for each to
    start, while the calling thread only waits: on the shared 2-core
    machine a digits fit's thread starts cost 5-7 ms of its 20 ms.  Here
    the caller starts one thread fewer, does not wait for it to run
    (:func:`_hand_to_helper`, 36n01) and works from the first moment,
    and a helper that has not taken its task up when the caller runs out
    of work is cancelled rather than waited for: ``work`` must hand out
    its batches as the workers ask (no batch kept for a worker that never
    comes).

    Same contract as ``run_worker_threads`` otherwise: ``work`` records an
    exception in ``errors`` and sets ``failed`` (which every worker polls);
    a KeyboardInterrupt reaching the caller sets ``failed``, waits for the
    helpers to stop at their next check, and is re-raised."""
    with blas_thread_limit(int(blas)):
        tasks = [_hand_to_helper(work, w) for w in range(1, n_workers)]
        try:
            work(0)
            for t in tasks:
                if not t.cancel():
                    while not t.done.wait(0.05):
                        pass
        except BaseException:
            failed.set()
            for t in tasks:
                if not t.cancel():
                    t.done.wait()
            raise
    if errors:
        raise errors[0]
    for t in tasks:
        if t.error is not None:
            raise t.error


class ParallelParts:
    """The fast path of a :class:`svmlab._stepping.SequentialRun` whose parts
    are independent (one-vs-one pairs): with ``workers > 1`` the parts run
    in that many threads at once, each to its own end.

    Contract (docs/decisions/28j01-parallel-pairs.md):

    * Only the fast path (``run()`` without scikit-learn callback tasks,
      which sets ``parallel_ok``) goes parallel; ``step()``, ``iter_fit``,
      ``fit(callback=...)`` and callback blocks take the parts one after the
      other, as before.  Each part's run is the one the sequential path
      would make (same options, same cache size, same BLAS threads,
      :func:`pair_workers`), driven in chunks, and chunk boundaries never
      change the iterates: the parts end in the same state either way.
    * Threads, not processes: the compiled loops release the GIL
      (``svmlab._jit.njit`` makes every kernel ``nogil``).  Nothing mutable
      is shared between two threads: each worker gets its own resources
      (:meth:`_open_part_in`; the one-vs-one store of class blocks and its
      kernel scratch vectors), the parts' runs read their frozen
      :class:`svmlab._stepping.FitOptions`, never the estimator.  Every
      module a part needs is imported by the main thread first (the first
      part is opened there), since threads importing svmlab submodules at
      once can deadlock in scikit-learn's import.
    * One ``_advance`` call runs every remaining part to its end, whatever
      ``max_steps`` says, and returns the steps taken (the step counts and
      each part's own ``max_iter`` are honoured; the progress bar moves
      once).  Ctrl-C: the workers stop at their next chunk boundary (about
      0.25 s), every unfinished part keeps the feasible state reached
      (``part_result``), and the run is ``interrupted``.
    """

    #: threads running parts at once (1: the sequential path)
    workers = 1
    #: set by ``run`` when no scikit-learn callback tasks cut the chunks
    parallel_ok = False
    #: BLAS threads of each part's run (:func:`pair_workers`)
    part_blas = 1

    def _open_part_in(self, i, w):
        """Part i's run for worker w (default: :meth:`_open_part`)."""
        return self._open_part(i)

    def _prepare_workers(self, n):
        """Make the resources of workers ``1..n-1`` (main thread)."""

    def part_result(self, i):
        open_runs = getattr(self, "_open_runs", None)
        if open_runs and i in open_runs:
            return open_runs[i].result()
        return super().part_result(i)

    def part_steps(self):
        n = super().part_steps()
        for i, r in (getattr(self, "_open_runs", None) or {}).items():
            n[i] = r.n_iter
        return n

    def _advance(self, max_steps):
        if not (self.workers > 1 and self.parallel_ok and not self.done
                and self.n_parts - self.part > 1):
            return super()._advance(max_steps)
        return self._advance_parallel()

    def _stop_requested(self):
        return self._interrupt_requested or _stepping._PENDING_INTERRUPT[0]

    def _drive(self, r, halt):
        """Advance part run ``r`` to its end in chunks (those of
        :meth:`svmlab._stepping.SolverRun.run`: a probe step where kernels
        may run interpreted, then about ``CHUNK_SECONDS`` each); returns the
        steps taken.  ``halt()`` is checked between chunks."""
        cap = 20000 if r.steps_per_task > 1 else 1000
        size = max(1, min(cap, int(r.first_chunk)))
        probe = _stepping._jit_mode() != "eager"
        taken = 0
        with blas_thread_limit(r.blas_threads):
            while not r.finished and not halt():
                want = min(1 if probe else size, r.budget)
                t0 = time.perf_counter()
                k = r._advance(want)
                dt = time.perf_counter() - t0
                r.elapsed += dt
                r.n_iter += k
                taken += k
                if k == 0 and not (r.converged or r.stopped or r.stalled):
                    r._mark_stalled()
                size = _stepping.next_chunk_size(size, k, dt, cap, r.chunk_growth, probe)
                probe = False
        return taken

    def _advance_parallel(self, todo=None):
        """Every part of ``todo`` (default: the running part and the pending
        ones after it) to its end in ``workers`` threads; returns the steps."""
        first, start = self.cur, self.part
        if todo is None:
            todo = [i for i in range(start + (first is not None), self.n_parts)
                    if self.part_reasons[i] == "pending"]
        n_workers = min(int(self.workers), len(todo) + (first is not None))
        self._prepare_workers(n_workers)
        lock = threading.Lock()
        queue = iter(todo)
        runs, closed, taken, errors = {}, {}, [0] * n_workers, []
        failed = threading.Event()

        def halt():
            return failed.is_set() or self._stop_requested()

        def finish(i):
            # a finished part is closed in its worker and its run dropped
            # before the worker opens the next: its caches' memory then
            # serves the next part (svmlab.kernels._pool, decision 32j01)
            r = runs[i]
            if r.finished:
                closed[i] = (r.result(), r.stop_reason, r.n_iter, r.warning_message())
                del runs[i]

        def work(w):
            try:
                if w == 0 and first is not None:
                    runs[start] = first
                    taken[w] += self._drive(first, halt)
                    finish(start)
                while not halt():
                    with lock:
                        i = next(queue, None)
                    if i is None:
                        return
                    runs[i] = self._open_part_in(i, w)
                    taken[w] += self._drive(runs[i], halt)
                    finish(i)
            except BaseException as exc:  # re-raised by the main thread
                errors.append(exc)
                failed.set()

        # the process-wide BLAS count at the parts' own while they run
        _stepping.run_worker_threads(work, n_workers, self.part_blas, failed, errors)
        self.cur = None
        self._open_runs = {}
        for i in sorted(closed):
            (self.part_results[i], self.part_reasons[i], self.part_n_iter[i],
             self.part_messages[i]) = closed[i]
        for i in sorted(runs):
            r = runs[i]
            if r.finished:
                self.part_results[i] = r.result()
                self.part_reasons[i] = r.stop_reason
                self.part_n_iter[i] = r.n_iter
                self.part_messages[i] = r.warning_message()
            else:
                self._open_runs[i] = r
        left = [i for i in range(self.n_parts) if self.part_reasons[i] == "pending"]
        if not left:
            self.part = self.n_parts
            self.done = True
            self.converged = all(r == "converged" for r in self.part_reasons)
        else:
            # stopped by Ctrl-C: the unfinished parts keep their state
            self.part = left[0]
            self.interrupted = True
        return int(sum(taken))


class MulticlassRun(ParallelParts, SequentialRun):
    """The pairs' binary runs one after the other (:class:`svmlab._stepping.SequentialRun`;
    see the module docstring).

    Parameters
    ----------
    estimator : BaseKernelSVC
        Its ``_make_run(X, y_pm, kernel, opts)`` makes each pair's run (unless ``make_run`` is given).
    kernel : Kernel
        Over the training rows (kept rows only) ordered by class.
    perm : (N,) int
        ``perm[q]`` the kept row at position q of that order.
    class_offsets : (k+1,) int
        Class c is at positions ``class_offsets[c]:class_offsets[c+1]``.
    classes : the labels; Cv : (N,) per-example bounds in class order;
    threads : the cores the fit may use (``n_jobs`` through
        :func:`svmlab._stepping.effective_n_jobs`): the fast path runs up
        to that many pairs at once (:class:`ParallelParts`,
        :func:`pair_workers`).
    """

    def __init__(self, estimator, kernel, perm, class_offsets, classes, Cv, threads,
                 opts=None, make_run=None, name=None):
        # the estimator's parameters, converted once (FitOptions); each
        # pair's run gets them with the pair's bounds, and is made by
        # ``make_run(X, y, kernel, opts)`` (the estimator's ``_make_run``):
        # no run reads or writes the estimator's attributes
        if opts is None:
            opts = FitOptions.of(estimator)
        if make_run is None:
            make_run = estimator._make_run
        self.opts = opts
        self._make_run = make_run
        pairs = class_pairs(len(classes))
        super().__init__(estimator, len(pairs), kernel.n_samples, opts.progress, name=name)
        self.kernel = kernel
        self.perm = np.asarray(perm, dtype=np.int64)
        self.coff = np.asarray(class_offsets, dtype=np.int64)
        self.classes, self.Cv = classes, Cv
        self.threads = threads
        self.pairs = pairs
        P = len(self.pairs)
        # pairs at once, and each pair's BLAS threads (the same on the
        # stepped path, so that any n_jobs gives the same model)
        self.workers, self.pair_threads = pair_workers(threads, P)
        self.part_blas = self.pair_threads
        self._pos = _PairPositions(self.coff, pairs)
        self.store = self._new_store(kernel)
        self._stores = [self.store]
        mi = int(opts.max_iter)
        self._limits = [mi if mi >= 0 else iteration_cap(n) for n in self._pos.sizes]
        self.max_iter = P * mi if mi >= 0 else -1
        # the fast path of the pairs' solver, when it has one: the run maker
        # carries it (``make_run.ovo_fast_path``, e.g. svmlab.smo._ovo.FastPairs
        # for SMO with WSS 2); the first pair's run is then made only when a
        # path needs it (step(), a callback, n_jobs > 1)
        fast = getattr(make_run, "ovo_fast_path", None)
        self._fast = fast if fast is not None and fast.accepts(opts) else None
        self._lean_pairs = self._fast is not None
        if self._lean_pairs:
            self.step_name = self._fast.step_name
            self.tol_name = self._fast.tol_name
            self.steps_per_task = self._fast.steps_per_task
            return
        self._current()  # validates the first pair's run (and gives step_name etc.)
        self.step_name = self.cur.step_name
        self.tol_name = self.cur.tol_name
        self.steps_per_task = self.cur.steps_per_task

    # -- pairs ------------------------------------------------------------------
    def pair_rows(self, p):
        """The kept training rows of pair p, in the pair's order (class a's,
        then class b's): maps a record's example indices to rows."""
        return self.perm[self._pos[p]]

    def _new_store(self, kernel):
        """A store of class blocks over ``kernel``.  Memory (decision): each
        pair's own cache keeps the sequential fit's share, ``cache_size / 4``
        (its size decides which rows a solver recomputes, so it stays the
        same for any ``n_jobs``), and the store's ``3/4`` is split between
        the workers, one store each (the compiled LRU is not thread-safe):
        at most ``(3 + workers) / 4 * cache_size`` MB in all."""
        o = self.opts
        w = max(1, int(self.workers))
        store = SharedRowStore(kernel, self.coff, float(o.cache_size) / w, o.cache_dtype)
        store.pair_cache_mb = float(o.cache_size) * SharedRowStore.pair_fraction
        return store

    def _prepare_workers(self, n, lazy=False):
        """The resources of workers ``1..n-1``: each its own store of class
        blocks over a kernel sharing the fit's rows and their transpose
        (filled here, once).  ``lazy``: the stores are left to
        :meth:`_worker_store`, which each worker calls in its own thread
        (their set-up then overlaps the other workers' compiled calls)."""
        if len(self._stores) >= n and all(s is not None for s in self._stores[:n]):
            return
        main = self.kernel.data
        if main.denseT.shape == main.dense.shape[::-1] and main.denseT.size > 0 \
                and main.tstate[0] == 0 and self.opts.cache_dtype == "float64":
            # the transpose the float64 class blocks read (feature-major
            # products of data with many zeros) filled once here, as the
            # first block of a one-worker fit fills it
            # (svmlab.kernels._rows.transposed_ready: the same copies, made
            # by NumPy here, so no kernel runs interpreted for it), and
            # shared below.  In blocks of rows: one strided copy of the
            # whole set (MNIST 5000 x 784) took 21-27 ms of the fit's
            # serial part, 256 rows at a time 5-6 ms (decision 35n01)
            X, XT = main.dense, main.denseT
            for i0 in range(0, X.shape[0], TRANSPOSE_BLOCK_ROWS):
                i1 = i0 + TRANSPOSE_BLOCK_ROWS
                np.copyto(XT[:, i0:i1], X[i0:i1].T)
            main.tstate[0] = 1
        while len(self._stores) < n:
            self._stores.append(None)
        if not lazy:
            for w in range(1, n):
                self._worker_store(w)

    def _worker_store(self, w):
        """Worker w's store (made on the first call): over a copy of the
        fit's kernel whose data is shared read-only, its transpose included
        (copy.copy leaves a copy an unfilled one of its own: each worker
        filled another d x n array, and the workers' products then streamed
        two of them through the shared L3 cache); its scratch vectors (the
        scattered sparse row, the bit-packed counts) its own.  Safe in
        worker w's thread: it reads the fit's kernel and writes slot w."""
        store = self._stores[w]
        if store is None:
            kern = copy.copy(self.kernel)
            d = kern.data
            main = self.kernel.data
            kern.data = d._replace(work=np.zeros_like(d.work), bwork=np.zeros_like(d.bwork),
                                   denseT=main.denseT, tstate=main.tstate)
            store = self._stores[w] = self._new_store(kern)
        return store

    def _open_part_in(self, p, w):
        return self._open_part(p, self._worker_store(w))

    # -- the lean fast path ------------------------------------------------------
    def _lean_ok(self):
        """Whether :meth:`_advance` may take the pairs' fast path
        (``self._fast.advance``): the pairs' run maker has one, ``run()``
        without scikit-learn callback tasks (``parallel_ok``), pairs one
        after the other (``workers == 1``), and the running pair not yet
        stepped."""
        if not (self.parallel_ok and self.workers <= 1 and self._lean_pairs):
            return False
        cur = self.cur
        return cur is None or cur.n_iter == 0

    def _pair_kernel(self, p, store=None):
        """Pair p's ``(Xp, yp, Cvp, kernel)``: its rows (class a's, then
        class b's), signs (+1 for class a), bounds, and its
        :class:`~svmlab.kernels.Kernel` attached to ``store`` (default: the
        fit's), with its float32 rows for a float32 cache.  One set-up for
        the pair's run (:meth:`_open_part`) and for the arrays the pairs'
        fast path holds without the run (``FastPairs._lean_state``)."""
        o = self.opts
        a, b = self.pairs[p]
        k = self.kernel
        Xs = k.X
        a0, a1 = int(self.coff[a]), int(self.coff[a + 1])
        b0, b1 = int(self.coff[b]), int(self.coff[b + 1])
        store = self.store if store is None else store
        # the pair's rows are two runs of the class-ordered set: copied as
        # two slices (dense X, into memory the store's earlier pairs used:
        # decision 32j01; a CSR matrix by its row index)
        if isinstance(Xs, np.ndarray) and Xs.dtype == np.float64 and Xs.ndim == 2 \
                and Xs.flags.c_contiguous and o.kernel != "precomputed":
            Xp = store.pair_rows(Xs, a, b)
        else:
            Xp = (np.concatenate((Xs[a0:a1], Xs[b0:b1])) if isinstance(Xs, np.ndarray)
                  else Xs[self._pos[p]])
        na = a1 - a0
        yp = np.ones(na + b1 - b0)
        yp[na:] = -1.0
        Cvp = np.concatenate((self.Cv[a0:a1], self.Cv[b0:b1]))
        kp = Kernel(Xp, o.kernel, k.gamma_, o.degree, o.coef0, binary=bool(k.binary),
                    qfloat=k.qfloat)
        if o.cache_dtype == "float32":
            store.pair_float32(kp)  # kp.ensure_float32() in the store's memory
        store.attach(kp, a, b)
        return Xp, yp, Cvp, kp

    def _open_part(self, p, store=None):
        o = self.opts
        Xp, yp, Cvp, kp = self._pair_kernel(p, store)
        with blas_thread_limit(self.pair_threads):
            run = self._make_run(Xp, yp, kp, o.with_bounds(Cvp))
        run.progress = False
        run.n_jobs = self.pair_threads
        if run.blas_threads is None:
            run.blas_threads = self.pair_threads
        if run.estimator is None:
            run.name = self.name  # no estimator: the pairs' messages name the fit's
        return run

    def _part_record(self, p, rec):
        a, b = self.pairs[p]
        return PairStep(iteration=self.n_iter + 1, pair_index=p,
                        pair=(self.classes[a], self.classes[b]), classes=(a, b), record=rec)

    # -- SolverRun ---------------------------------------------------------------
    def _advance(self, max_steps):
        if self._lean_ok() and not self.done:
            return self._fast.advance(self)
        if self._parallel_driver_ok() and not self.done:
            return self._fast.advance_parallel(self)
        return super()._advance(max_steps)

    def _parallel_driver_ok(self):
        """Whether :meth:`_advance` may run the pending pairs in ``workers``
        threads, each several pairs per compiled call
        (``self._fast.advance_parallel``, docs/decisions/32p01): ``run()``
        without scikit-learn callback tasks, several workers and pending
        pairs, no pair's run open (none stepped, none kept by a Ctrl-C of
        :meth:`_advance_parallel`), and the pairs' fast path has a driver
        for these rows."""
        if not (self.parallel_ok and self.workers > 1 and self._lean_pairs
                and self.cur is None and not getattr(self, "_open_runs", None)
                and hasattr(self._fast, "advance_parallel")):
            return False
        pending = sum(r == "pending" for r in self.part_reasons[self.part:])
        return pending > 1 and self._fast._driver_ok(self)

    @property
    def step_limit(self):
        return int(sum(self._limits))

    @property
    def first_chunk(self):
        """The fast path's first chunk: the running pair's own (WSS 2: about
        ``2**22 / n`` steps, so the pairs of a small fit run in one chunk
        and each pair in one call of its compiled loop; Platt's: 64).  A
        chunk counted from 64 steps ends inside a pair several times per
        fit, and each end costs a second call (tens of microseconds of
        argument dispatch) and a round of the driver's Python."""
        cur = self.cur
        if cur is not None:
            return int(cur.first_chunk)
        if self._lean_pairs and self.part < self.n_parts:
            # the running pair's, before its run is made
            return int(self._fast.first_chunk(self._pos.sizes[self.part]))
        return SolverRun.first_chunk

    @property
    def chunk_growth(self):
        """The running pair's growth of a short chunk (see :attr:`first_chunk`)."""
        cur = self.cur
        if cur is not None:
            return cur.chunk_growth
        return self._fast.chunk_growth if self._lean_pairs else SolverRun.chunk_growth

    def warning_message(self):
        reason = self.stop_reason
        if reason in ("stalled", "iteration_cap", "max_iter"):
            bad = [p for p, r in enumerate(self.part_reasons) if r == reason]
            p = bad[0]
            a, b = (self.classes[c] for c in self.pairs[p])
            return (f"One-vs-one: {len(bad)} of {len(self.pairs)} pairs ended with "
                    f"'{reason}'; pair ({a}, {b}): {self.part_messages[p]}")
        return super().warning_message()

    def run(self, chunk=None, tasks=None):
        if chunk is None:
            chunk = 20000 if self.steps_per_task > 1 else 1000
        self.parallel_ok = tasks is None
        return super().run(chunk=chunk, tasks=tasks)

    def result(self):
        """Per pair: ``alphas`` (list of the pairs' multipliers, on their
        rows), ``intercepts`` (P,), ``n_iter`` (P,), and the sums of the
        pairs' numeric extras (``kernel_evaluations``...).  Pairs not begun
        count as all-zero multipliers and intercept 0."""
        P = len(self.pairs)
        alphas, b = [], np.zeros(P)
        extras = {}
        n_iter = np.asarray(self.part_steps(), dtype=np.int32)
        for p in range(P):
            res = self.part_result(p)
            if res is None:
                alphas.append(np.zeros(self._pos.sizes[p]))
                continue
            alphas.append(np.asarray(res["alpha"], dtype=np.float64))
            b[p] = float(res["intercept"])
            for key, v in res.items():
                if key in ("alpha", "intercept"):
                    continue
                if isinstance(v, (int, float, np.integer, np.floating)) \
                        and not isinstance(v, bool):
                    extras[key] = extras.get(key, 0) + v
        out = {"alphas": alphas, "intercepts": b, "n_iter": n_iter}
        out.update(extras)
        return out


def ovo_layout(y_orig_idx, pair_rows_orig, alphas, k):
    """SVC's fitted layout from the pairs' multipliers.

    ``y_orig_idx`` (n,) class index of each row of X; ``pair_rows_orig[p]``
    the rows of X of pair p, ``alphas[p]`` their multipliers.  Returns
    ``(alpha (P, n), support (n_SV,), n_support (k,), dual_coef (k-1, n_SV),
    pair_coef (P, n_SV))`` -- ``pair_coef[p]`` pair p's ``alpha y`` on the
    support vectors (0 for those outside the pair), which prediction uses."""
    n = y_orig_idx.shape[0]
    pairs = class_pairs(k)
    P = len(pairs)
    A = np.zeros((P, n))  # alpha y per pair
    alpha = np.zeros((P, n))
    for p, (a, b) in enumerate(pairs):
        rows = pair_rows_orig[p]
        al = alphas[p]
        alpha[p, rows] = al
        A[p, rows] = np.where(y_orig_idx[rows] == a, al, -al)
    is_sv = (alpha > 0).any(axis=0)
    support = np.concatenate([np.flatnonzero(is_sv & (y_orig_idx == c)) for c in range(k)])
    support = support.astype(np.int32)
    n_support = np.array([np.sum(is_sv & (y_orig_idx == c)) for c in range(k)], dtype=np.int32)
    pair_coef = A[:, support]
    dual_coef = np.zeros((max(k - 1, 1), len(support)))
    cls = y_orig_idx[support]
    for p, (a, b) in enumerate(pairs):
        ia = np.flatnonzero(cls == a)
        ib = np.flatnonzero(cls == b)
        dual_coef[b - 1, ia] = pair_coef[p, ia]
        dual_coef[a, ib] = pair_coef[p, ib]
    return alpha, support, n_support, dual_coef, pair_coef


def ovo_votes(dec, k):
    """LIBSVM's one-vs-one vote: pair (a, b) votes a when its decision value
    is positive, else b; the class with the most votes wins, ties going to
    the first class (LIBSVM's ``svm_predict_values``)."""
    votes = np.zeros((dec.shape[0], k), dtype=np.int64)
    for p, (a, b) in enumerate(class_pairs(k)):
        pos = dec[:, p] > 0
        votes[pos, a] += 1
        votes[~pos, b] += 1
    return np.argmax(votes, axis=1)
