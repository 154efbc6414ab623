"""The step-record contract that every svmlab solver follows.

A fit is an explicit state object, a :class:`SolverRun`, advanced by steps
(optax-style ``init``/``update``; here ``start`` builds the state and
``step`` updates it).  Every estimator offers three ways to drive it, all on
the same state and the same code:

``fit(X, y, callback=None)``
    Without a callback, the fast path (:meth:`SolverRun.run`) runs to the
    end in large compiled chunks and builds no records.  With a callback,
    the solver calls ``callback(record)`` once per step, in order; a callback
    that returns ``False`` stops training cleanly and the estimator holds a
    valid, feasible model of the state reached so far.

``iter_fit(X, y)``
    A generator of records, one per step.  When it is exhausted (or closed
    early, e.g. by ``break``), the estimator is fitted from the state reached.

``start(X, y)``
    Returns the :class:`SolverRun` itself.  ``run.step()`` advances one step
    and returns its record (``None`` once converged or out of iterations);
    ``run.finish()`` stores the fitted attributes on the estimator and returns
    it.  This is what a widget uses to step forward without re-running from
    the start.

A record is a small frozen dataclass; each solver documents its own fields.
All records have ``iteration`` (1-based step count).

``max_iter`` counts steps (SMO: successful joint steps; cutting plane:
cutting-plane iterations; ...).  Hitting it stops cleanly with a
:class:`~sklearn.exceptions.ConvergenceWarning` that says what to do.  Long
fits of the lab estimators show a tqdm progress bar (after 2 s;
``progress=False`` turns it off, and so does the environment variable
``SVMLAB_PROGRESS=0``); the drop-in classes of :mod:`svmlab.svm` are silent
unless ``verbose=True``, as scikit-learn's are
(``docs/decisions/27f01-svm-family-stops-and-silence.md``).

Honest stops.  A fit ends for exactly one reason, stored by the estimators
as ``stop_reason_`` (``converged_`` is True only for the first):

``"converged"``
    the solver's optimality conditions hold within its tolerance;
``"max_iter"``
    ``max_iter`` steps were taken (ConvergenceWarning);
``"iteration_cap"``
    ``max_iter=-1`` ("no limit") still has a safeguard, ten times upstream
    LIBSVM's: at most :func:`iteration_cap` ``(n) = max(100_000_000, 100 n)``
    steps, n the
    number of training samples (ConvergenceWarning naming the cap; an
    explicit ``max_iter`` overrides it);
``"stalled"``
    no step can make progress although the optimality conditions do not
    hold (a non-PSD kernel, duplicate points, a tolerance below what
    floating point resolves...); ConvergenceWarning saying what happened
    and what to try;
``"interrupted"``
    Ctrl-C (SIGINT) during ``fit``: the estimator is fitted from the state
    after the last completed step (the compiled chunk in flight when the
    signal arrives is *completed*, not abandoned: the signal is only noted,
    and the loop stops at the next chunk boundary), with a
    ConvergenceWarning, and ``fit`` returns normally.  A second Ctrl-C
    while that chunk runs interrupts at once, the usual way (the state
    is then whatever the solver's Python code had reached; the solvers
    keep their multipliers feasible at every statement that changes
    them, so the model is still feasible).  Only ``fit`` does this, and
    only in the main thread (signal handlers live there); ``iter_fit``
    leaves Ctrl-C to the caller's loop;
``"callback"``
    the callback returned ``False``, a scikit-learn callback asked to stop,
    or ``iter_fit`` was closed early (no warning: the caller asked for it).

And one that is not a stop but a refusal: ``"non_finite"``, when the
fitted numbers (multipliers, intercepts, decision values) are not finite;
the fit raises a ValueError (:meth:`SolverRun.finish`), ``converged_`` is
False.

scikit-learn's callbacks (``sklearn.callback``, scikit-learn >= 1.9).
Every estimator has ``set_callbacks(*callbacks)`` (from
:class:`sklearn.callback.CallbackSupportMixin`), so
``SMOClassifier().set_callbacks(ProgressBar())`` works, and callbacks set on
a ``Pipeline`` or ``GridSearchCV`` reach the svmlab estimator inside
(scikit-learn's auto-propagation).  The mapping, decided here:

* ``fit`` is the root task (``task_name="fit"``).  Its subtasks are
  *blocks* of consecutive steps: block ``j`` holds steps
  ``(j-1) B + 1 .. j B``, ``B = run.steps_per_task``, a class attribute of
  each solver's run: 1000 joint steps for SMO (``SMORun``: a step costs
  microseconds and fits take up to millions of them), 1 for the others (an
  IRWLS iteration, a chunking/decomposition outer step and a cutting-plane
  iteration each solve a linear system or a QP).  One callback "iteration"
  (``on_fit_task_begin`` / ``on_fit_task_end`` of a subtask) is one block.
* The blocks depend on the step count only, never on timing, so the same fit
  gives the same tasks on the fast path (the compiled chunks are cut at block
  boundaries) and on the stepped path (``fit(X, y, callback=f)``).  There
  are ``ceil(n_iter_ / B)`` blocks, or one more when the optimality
  conditions were found to hold at the start of a block (the last block is
  then the final check and holds no step; a block is otherwise cut short
  only by the end of the fit).
* The root task's ``max_subtasks`` is ``ceil(max_iter / B)`` when
  ``max_iter >= 0`` (the progress bar's total; a fit that converges earlier
  jumps to 100 % at the end), and ``None`` (unknown) for ``max_iter=-1``.
* ``on_fit_task_end`` of a block that returns True stops the fit at that
  block boundary: the model is the feasible state reached,
  ``stop_reason_ = "callback"``, no warning.  Every begun task is ended
  (Ctrl-C included).
* Hooks receive ``X`` and ``y`` as passed to ``fit`` and, when they ask for
  it, a ``fitted_estimator``: a copy of the estimator with the fitted
  attributes of the state at that block boundary (built only on request).
  ``metadata`` is None (no sample weights).
* With scikit-learn callbacks set, svmlab's own tqdm bar is not shown (one
  progress display is enough; the callbacks are what the user asked for);
  without them, nothing changes and the fast path pays nothing.
  ``SVMLAB_PROGRESS=0`` turns off svmlab's tqdm bar only, never a callback
  the user set.
* svmlab's own ``fit(X, y, callback=f)`` records work as before, together
  with scikit-learn callbacks.  ``iter_fit`` and ``start`` do not call
  scikit-learn callbacks (their loop belongs to the caller).
"""

from __future__ import annotations

import _signal  # signal's C module: its calls without the enum conversions
import ctypes
import dataclasses
import math
import os
import signal
import threading
import time
import warnings
from abc import ABC, abstractmethod
from contextlib import contextmanager, nullcontext
from typing import Any, Optional

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning

try:  # scikit-learn >= 1.9
    from sklearn.callback import CallbackSupportMixin, with_callbacks

    HAVE_SKLEARN_CALLBACKS = True
except ImportError:  # pragma: no cover - older scikit-learn
    HAVE_SKLEARN_CALLBACKS = False

    class CallbackSupportMixin:
        """Stand-in for scikit-learn < 1.9, which has no ``sklearn.callback``."""

        def set_callbacks(self, *callbacks):
            raise ImportError(
                "set_callbacks needs scikit-learn >= 1.9 (the sklearn.callback "
                f"module); scikit-learn {sklearn.__version__} is installed. svmlab's "
                "own fit(X, y, callback=f) works with any version.")

    def with_callbacks(method):
        return method

__all__ = ["FitOptions", "SequentialRun", "SolverRun", "SteppedFitMixin", "blas_thread_limit", "iteration_cap", "MAX_ITER_CAP_MIN",
           "MAX_ITER_CAP_PER_SAMPLE", "HAVE_SKLEARN_CALLBACKS"]

#: The safeguard of ``max_iter=-1``: at most ``max(MAX_ITER_CAP_MIN,
#: MAX_ITER_CAP_PER_SAMPLE * n)`` steps per problem.  Ten times upstream
#: LIBSVM's ``max(10_000_000, 100 n)`` (svm.cpp, ``Solver::Solve``), because
#: scikit-learn's LIBSVM has no cap at all with ``max_iter=-1`` and finishes
#: fits that need more than 10 million steps, which the safeguard must not
#: stop: the gallery's poly SVR (40 rows, C=100) takes 11-17 million steps
#: on some of its random draws, a fold of ``plot_rbf_parameters``'s
#: ``C=1e10`` cell 17.5 million (decision 35c01).
MAX_ITER_CAP_MIN = 100_000_000
MAX_ITER_CAP_PER_SAMPLE = 100


def iteration_cap(n_samples):
    """The number of steps ``max_iter=-1`` allows:
    ``max(MAX_ITER_CAP_MIN, MAX_ITER_CAP_PER_SAMPLE * n_samples)``, i.e.
    ``max(100_000_000, 100 * n_samples)`` (ten times upstream LIBSVM's
    safeguard; scikit-learn's LIBSVM has none, decision 35c01).  (Read from the module constants
    at every call, so tests can lower it.)"""
    return max(int(MAX_ITER_CAP_MIN), int(MAX_ITER_CAP_PER_SAMPLE) * int(n_samples))

@dataclasses.dataclass(frozen=True)
class FitOptions:
    """What a solver run needs to know, converted once from an estimator's
    parameters (as scikit-learn's ``_base.py`` converts them before it
    calls libsvm) and handed to the run: runs read this, never the
    estimator's attributes, and write nothing back.

    ``C`` the box bound and ``Cv`` the per-example bounds ``C_i`` (None: C
    for every example); ``tol``; ``max_iter`` (-1: the safeguard
    :func:`iteration_cap`); ``cache_size`` (MB) and ``cache_dtype`` of the
    kernel rows; ``progress`` (a tqdm bar); the kernel (``kernel``,
    ``degree``, ``coef0``: for runs that build kernels of their own, the
    one-vs-one pairs); and the solvers' own options (``eps``, ``shrinking``,
    ``selection``, ``working_set_size``, ``engine``, ``random_state``), None where a
    solver has none.  The estimator stays what :meth:`SolverRun.finish`
    stores the fitted attributes on."""

    C: float = 1.0
    tol: float = 1e-3
    max_iter: int = -1
    cache_size: float = 200.0
    cache_dtype: str = "float64"
    progress: bool = False
    Cv: Optional[np.ndarray] = None
    kernel: Any = "rbf"
    degree: int = 3
    coef0: float = 0.0
    eps: Optional[float] = None
    shrinking: Optional[bool] = None
    selection: Optional[str] = None
    working_set_size: Optional[int] = None
    engine: Optional[str] = None
    random_state: Any = None

    __hash__ = None  # holds an array

    @classmethod
    def of(cls, estimator, **overrides):
        """The options of ``estimator``'s parameters (and ``cache_dtype_``,
        ``_fit_Cv`` when its ``start`` set them), with ``overrides``."""
        d = estimator.__dict__
        # the fields' (name, default) pairs, found once per class
        # (dataclasses.fields at every fit was a visible part of a small one)
        fields = cls.__dict__.get("_field_defaults")
        if fields is None:
            fields = tuple((f.name, f.default) for f in dataclasses.fields(cls))
            cls._field_defaults = fields
        vals = {}
        for name, default in fields:
            if name == "cache_dtype":
                v = d.get("cache_dtype_", "float64")
            elif name == "Cv":
                v = d.get("_fit_Cv")
            else:
                v = d.get(name, default)
            vals[name] = v
        vals["C"] = float(vals["C"])
        vals["tol"] = float(vals["tol"])
        vals["max_iter"] = int(vals["max_iter"])
        vals["cache_size"] = float(vals["cache_size"])
        vals["progress"] = bool(vals["progress"])
        vals.update(overrides)
        return cls(**vals)

    def with_bounds(self, Cv):
        """These options with the per-example bounds ``Cv`` (what
        ``dataclasses.replace(self, Cv=Cv)`` gives, without its call of
        ``__init__`` over every field: one per one-vs-one pair)."""
        return self.replaced(Cv=Cv)

    def replaced(self, **values):
        """These options with ``values`` for some fields: what
        ``dataclasses.replace`` gives, without its call of ``__init__``
        over every field and without ``copy.copy``'s reduce protocol (each
        several microseconds of a millisecond fit); FitOptions has no
        ``__post_init__`` and no derived field."""
        out = object.__new__(type(self))
        d = out.__dict__
        d.update(self.__dict__)
        d.update(values)
        return out

    def bounds(self, n):
        """The upper bounds a run works with: the scalar ``C`` when every
        example has it (the unweighted path, unchanged), else the (n,)
        array ``Cv``."""
        Cv = self.Cv
        if Cv is None or len(Cv) != n or np.all(Cv == self.C):
            return self.C
        return np.ascontiguousarray(Cv, dtype=np.float64)


#: set while a Ctrl-C noted by SolverRun.deferred_interrupt is pending (the
#: main thread's handler; read by the parts of a SequentialRun, whose own
#: flags the handler does not know)
_PENDING_INTERRUPT = [False]

#: the step limit of a run whose parts enforce their own (SequentialRun)
_NO_LIMIT = 1 << 62

#: target duration of one fast-path chunk (seconds), see SolverRun.run
CHUNK_SECONDS = 0.25

#: what to try when a solver stalls, shared by the solvers' messages
STALL_ADVICE = (
    "Try: loosen tol; scale the features (e.g. StandardScaler); remove "
    "duplicate points with different labels; use a positive semi-definite "
    "kernel (the sigmoid kernel is not PSD for most gamma/coef0)"
)


def _jit_mode():
    """svmlab's tier policy (:func:`svmlab._jit.get_mode`)."""
    from ._jit import get_mode

    return get_mode()


def next_chunk_size(size, steps, seconds, cap, growth, probe=False):
    """The fast path's next chunk (in steps), from the one just taken:
    ``steps`` steps in ``seconds``, asked as ``size``; at most ``cap``.

    The rule of every driver of a run's chunks (:meth:`SolverRun.run`, the
    parallel pairs' workers in :mod:`svmlab._multiclass`): a chunk lasts
    about ``CHUNK_SECONDS``, so Ctrl-C and the progress bar are served
    within a fraction of a second.  ``probe``: the chunk was the one probe
    step taken where kernels may run interpreted; the size is then cut to
    what the measured step cost allows, never grown.  Otherwise a chunk of
    more than twice the target halves, one under 1/16 of it grows by
    ``growth`` when that is above 2 (a chunk costs a Python round trip: a
    small fit then takes a few chunks, not log2(cap / 64) of them), one
    under half of it doubles.  Chunk boundaries never change the iterates,
    so this rule moves only the time between two looks at Ctrl-C."""
    target = CHUNK_SECONDS
    if probe:
        if steps and seconds / steps * size > 2.0 * target:
            return max(1, int(target * steps / seconds))
        return size
    if seconds > 2.0 * target:
        return max(1, size // 2)
    if seconds < target / 16 and growth > 2:
        return min(int(cap), int(growth) * size)
    if seconds < 0.5 * target:
        return min(int(cap), 2 * size)
    return size


def _progress_off():
    """``SVMLAB_PROGRESS=0`` turns every progress bar off, whatever the
    estimators' ``progress`` parameter says (the test configuration sets it, so
    that notebooks checked by nbval never print a timing-dependent bar)."""
    return os.environ.get("SVMLAB_PROGRESS", "").strip().lower() in ("0", "false", "no", "off")


_BLAS_CONTROLLER = None


def blas_thread_limit(threads):
    """Context manager limiting BLAS/LAPACK to ``threads`` threads
    (``threadpoolctl``); ``None`` changes nothing.

    This is how :class:`SolverRun` applies its :attr:`SolverRun.blas_threads`
    around every step and every fast-path chunk.  Solvers that factorise and
    multiply small blocks (tens to hundreds of rows) thousands of times, the
    IRWLS and decomposition engines, set it to 1: a multi-threaded OpenBLAS
    spends more time waking threads than computing on them (a 200 x 200
    Cholesky took 90 ms with 2 threads on a busy 2-core machine against
    0.4 ms with one)."""
    if threads is None:
        return nullcontext()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"blas_threads must be None or an integer >= 1, got {threads!r}.")
    active = _blas_active()
    if active and active[-1] == threads:
        # already inside this very limit (a step inside a run, a block inside
        # a step): setting it again would cost ~15 us per SMO step
        return nullcontext()
    return _blas_limit(threads)


def run_worker_threads(work, n_workers, blas, failed, errors):
    """Run ``work(w)`` for ``w < n_workers`` in daemon threads named
    ``svmlab-pair-<w>`` (one-vs-one pairs in parallel), the process-wide
    BLAS count limited to ``blas`` meanwhile, and wait for them.

    Contract: ``work`` records an exception it meets in the list ``errors``
    and sets the event ``failed`` (which every worker polls); the first
    recorded error is raised here once all threads are done.  The main
    thread waits in short joins, so Ctrl-C reaches it: it then sets
    ``failed``, waits for the workers to stop at their next check, and
    re-raises.  Why the process-wide count and not a per-thread one: an
    OpenBLAS call in a worker does not always follow the thread-local count
    (float32 blocks of Fashion-MNIST 10000 came out different under a
    process-wide 2, docs/decisions/28j01-parallel-pairs.md)."""
    threads = [threading.Thread(target=work, args=(w,), daemon=True,
                                name=f"svmlab-pair-{w}") for w in range(n_workers)]
    with blas_thread_limit(int(blas)):
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.05)
        except BaseException:
            failed.set()
            for t in threads:
                t.join()
            raise
    if errors:
        raise errors[0]


#: per thread, the limits :func:`blas_thread_limit` has in force there,
#: innermost last
_BLAS_ACTIVE = threading.local()


def _blas_active():
    stack = getattr(_BLAS_ACTIVE, "stack", None)
    if stack is None:
        stack = _BLAS_ACTIVE.stack = []
    return stack


def _blas_libraries():
    """threadpoolctl's controllers of the loaded BLAS libraries (numpy's and
    scipy's OpenBLAS; numba's ``np.dot`` calls scipy's, loaded first here),
    found once."""
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        import scipy.linalg.cython_blas  # noqa: F401  (numba's BLAS)
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER = [lc for lc in ThreadpoolController().lib_controllers
                            if lc.user_api == "blas"]
    return _BLAS_CONTROLLER


def _thread_local_setter(lc):
    """OpenBLAS's ``openblas_set_num_threads_local`` (sets the count for the
    calling thread, returns the previous one), or None.  Outside the main
    thread OpenBLAS (0.3.30 here) ignores ``openblas_set_num_threads``, so
    a limit set there would silently not hold, and the results of a fit
    would depend on the thread it runs in."""
    if lc.internal_api != "openblas":
        return None
    f = getattr(lc.dynlib, "openblas_set_num_threads_local", None)
    if f is not None:
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_int]
    return f


@contextmanager
def _blas_limit(threads):
    """Set every BLAS library to ``threads`` threads, and back on exit.
    Calls the libraries' own get/set functions directly (a few
    microseconds) rather than ``ThreadpoolController.limit`` (about 15 us,
    paid at every step of a stepped SMO fit); outside the main thread
    OpenBLAS's thread-local setter (:func:`_thread_local_setter`)."""
    libs = _blas_libraries()
    main = threading.current_thread() is threading.main_thread()
    restore = []
    for lc in libs:
        local = None if main else _thread_local_setter(lc)
        if local is not None:
            restore.append((local, local(threads)))
        else:
            o = lc.get_num_threads()
            if o != threads:
                lc.set_num_threads(threads)
                restore.append((lc.set_num_threads, o))
    active = _blas_active()
    active.append(threads)
    try:
        yield
    finally:
        active.pop()
        for setter, o in restore:
            setter(o)


def effective_n_jobs(n_jobs):
    """The number of BLAS threads an estimator's ``n_jobs`` asks for, with
    scikit-learn's conventions (``joblib.effective_n_jobs``): ``None`` is 1
    unless inside a ``joblib.parallel_config(n_jobs=...)`` context, -1 is
    every core, ``-k`` all but ``k - 1`` cores, and 0 is an error."""
    import joblib

    if n_jobs is not None and (isinstance(n_jobs, bool) or int(n_jobs) != n_jobs):
        raise ValueError(f"n_jobs must be None or a nonzero integer, got {n_jobs!r}.")
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None, a positive count or -1.")
    return max(1, int(joblib.effective_n_jobs(n_jobs)))


#: multiply-adds (rows x columns x features) from which a kernel block is
#: computed with ``SolverRun.n_jobs`` BLAS threads; below it one thread is
#: faster (waking a thread costs tens of microseconds, and 2**22
#: multiply-adds take about 100 us on one core)
BLOCK_THREADS_MIN_WORK = 1 << 22


class SolverRun(ABC):
    """Explicit solver state plus the step that updates it.

    Subclasses implement :meth:`_step` (one step, returns a record, or
    ``None`` if the optimality conditions already hold) and may override
    :meth:`_advance` (many steps, no records: the fast path).  The base class
    keeps the bookkeeping: ``n_iter``, ``converged``, ``stopped``,
    ``stalled``, ``interrupted``, ``max_iter`` (with the safeguard
    :func:`iteration_cap` for ``-1``) and progress display.

    A subclass that sees that no progress is possible sets ``stalled`` (and
    ``stall_reason``, a sentence for the warning) and returns ``None``.  A
    step that returns ``None`` without setting ``converged`` or ``stopped``
    counts as a stall too, as does a fast-path chunk that takes no step:
    neither is ever reported as convergence.  Subclasses set ``n_samples``
    (used by the safeguard cap; 0 if unknown).
    """

    #: name of the unit ``max_iter`` counts, used in messages
    step_name = "step"
    #: name of the estimator parameter that sets the stopping tolerance
    tol_name = "tol"
    #: steps per scikit-learn callback task (a "block", see the module
    #: docstring); solvers with very cheap steps raise it
    steps_per_task = 1
    #: BLAS/LAPACK threads while the solver works (:meth:`step` and each
    #: chunk of :meth:`run` apply it with :func:`blas_thread_limit`); None
    #: leaves the BLAS as configured.  The IRWLS and decomposition solvers
    #: set 1 (their blocks are too small for threads to pay off).
    blas_threads = None
    #: BLAS threads for large kernel blocks (the estimator's ``n_jobs``
    #: through :func:`effective_n_jobs`; :meth:`svmlab._base.BaseKernelSVC.start`
    #: sets it, and sets :attr:`blas_threads` to it too when the solver left
    #: that at None, i.e. when the run is made of kernel rows and blocks
    #: throughout, as SMO).  Solvers that keep ``blas_threads = 1`` for
    #: their small factorisations wrap their large kernel blocks in
    #: :meth:`block_threads`.
    n_jobs = 1
    #: steps of the first fast-path chunk of :meth:`run` (the chunks then
    #: adapt to about ``CHUNK_SECONDS``); solvers with cheap steps raise it
    #: so that a small fit is one chunk (SMO: about 2**20 / n steps)
    first_chunk = 64
    #: factor by which a fast-path chunk far below ``CHUNK_SECONDS / 16``
    #: grows (2 otherwise, and for solvers whose step cost varies widely)
    chunk_growth = 2

    def block_threads(self, work):
        """Context manager for computing a kernel block of ``work``
        multiply-adds (rows x columns x features): BLAS gets
        :attr:`n_jobs` threads when ``n_jobs > 1`` and the block is large
        (``work >= BLOCK_THREADS_MIN_WORK``), otherwise nothing changes (the
        run's own :attr:`blas_threads` limit stays)."""
        if self.n_jobs > 1 and work >= BLOCK_THREADS_MIN_WORK:
            return blas_thread_limit(int(self.n_jobs))
        return nullcontext()

    def __init__(self, estimator, max_iter=-1, progress=False, name=None):
        self.estimator = estimator
        #: the class name the run's messages and progress bar give: the
        #: estimator's, or ``name`` for a run made without one (the family's
        #: compiled C-SVC runs, built from a frozen problem)
        self.name = type(estimator).__name__ if name is None else name
        self.max_iter = int(max_iter)
        self.progress = bool(progress)
        self.n_iter = 0
        self.converged = False
        self.stopped = False
        self.stalled = False
        self.stall_reason = ""
        self.interrupted = False
        self._interrupt_requested = False
        self.elapsed = 0.0
        if not hasattr(self, "n_samples"):
            self.n_samples = 0

    # -- to implement -------------------------------------------------------
    @abstractmethod
    def _step(self):
        """Advance one step; return its record, or None when converged (and
        set ``self.converged``)."""

    def _advance(self, max_steps):
        """Advance up to ``max_steps`` steps without building records; return
        the number of steps taken.  Must stop early (and set ``converged``)
        when optimal.  The default loops over :meth:`_step`; solvers with a
        compiled fast path override it with the same update."""
        k = 0
        while k < max_steps:
            if self._step() is None:
                break
            k += 1
        return k

    @abstractmethod
    def result(self):
        """Fitted attributes of the current state, as a dict."""

    # -- driven by the estimator ----------------------------------------------
    @property
    def step_limit(self):
        """``max_iter``, or the safeguard :func:`iteration_cap` for -1."""
        if self.max_iter < 0:
            return iteration_cap(self.n_samples)
        return self.max_iter

    @property
    def budget(self):
        """Steps still allowed by ``max_iter`` (or by the safeguard cap)."""
        return max(self.step_limit - self.n_iter, 0)

    @property
    def finished(self):
        return (self.converged or self.stopped or self.stalled or self.interrupted
                or self.budget == 0)

    @property
    def stop_reason(self):
        """Why the run ended (or ``"running"``): see the module docstring."""
        if self.converged:
            return "converged"
        if self.interrupted:
            return "interrupted"
        if self.stalled:
            return "stalled"
        if self.stopped:
            return "callback"
        if self.budget == 0:
            return "max_iter" if self.max_iter >= 0 else "iteration_cap"
        return "running"

    def _mark_stalled(self, reason=""):
        self.stalled = True
        if reason and not self.stall_reason:
            self.stall_reason = reason

    def step(self):
        """One step, with its record; None when finished."""
        if self.finished:
            return None
        t0 = time.perf_counter()
        with blas_thread_limit(self.blas_threads):
            rec = self._step()
        self.elapsed += time.perf_counter() - t0
        if rec is not None:
            self.n_iter += 1
        elif not (self.converged or self.stopped or self.stalled):
            # no step and not optimal: never reported as convergence
            self._mark_stalled()
        return rec

    def __iter__(self):
        while True:
            rec = self.step()
            if rec is None:
                return
            yield rec

    def stop(self):
        """Stop here (the callback asked to); the state stays feasible."""
        self.stopped = True

    @contextmanager
    def deferred_interrupt(self):
        """Within this block a Ctrl-C (SIGINT) only sets
        ``_interrupt_requested``; the loops check it between steps/chunks, so
        the work in flight completes and the state stays at a step boundary.
        The previous handler is back after the first SIGINT (a second one
        interrupts at once) and when the block ends.  Outside the main
        thread, or when SIGINT does not raise KeyboardInterrupt (a custom
        handler, SIG_IGN), nothing is installed."""
        installed = False
        previous = None
        if threading.current_thread() is threading.main_thread():
            try:
                previous = _signal.getsignal(signal.SIGINT)
            except (ValueError, OSError):  # pragma: no cover - exotic platforms
                previous = None
            if previous is signal.default_int_handler:

                def _note(signum, frame):
                    self._interrupt_requested = True
                    _PENDING_INTERRUPT[0] = True  # seen by the parts' runs too
                    signal.signal(signal.SIGINT, previous)

                _signal.signal(signal.SIGINT, _note)
                installed = True
        try:
            yield
        finally:
            if installed:
                _signal.signal(signal.SIGINT, previous)
                _PENDING_INTERRUPT[0] = False

    def _chunk_should_end(self, t0):
        """For solvers whose fast path loops over steps in Python (the
        IRWLS and decomposition runs, whose one step can take tenths of a
        second): end the chunk begun at ``t0`` (``time.perf_counter()``)
        after the step in flight when Ctrl-C was noted (by this run or by
        the run it is a part of) or when the chunk has lasted twice
        ``CHUNK_SECONDS``.  So a Ctrl-C is served within one step, not one
        chunk of up to 64 steps (5.2 s on 60,000 rows, issue 33 item 21),
        and is not lost to a chunk that then runs to convergence.  Chunk
        ends do not change the iterates."""
        if self._interrupt_requested or _PENDING_INTERRUPT[0]:
            return True
        return time.perf_counter() - t0 > 2.0 * CHUNK_SECONDS

    def _check_interrupt(self):
        if self._interrupt_requested and not self.converged:
            self.interrupted = True
        return self.interrupted

    def run(self, chunk=1000, tasks=None):
        """Fast path: advance to the end in chunks of at most ``chunk``
        steps (fewer while a chunk takes longer than about 0.25 s), with a
        progress bar.

        ``tasks`` (a :class:`_CallbackTasks`, made by ``fit`` when
        scikit-learn callbacks are set) cuts the chunks at block boundaries
        and calls the callbacks' hooks per block; the tqdm bar is then off.

        Ctrl-C completes the chunk in flight and stops (see
        :meth:`deferred_interrupt`); a KeyboardInterrupt that still reaches
        this loop (a second Ctrl-C) stops it too.  Either way the run is
        marked ``interrupted`` and :meth:`finish` warns.

        The bar is ``tqdm.auto``'s: a widget in Jupyter, text in a terminal.
        (The text bar, closed with ``leave=False`` in a notebook, left an
        empty stderr box under the cell.)"""
        if not self.progress or _progress_off():
            # progress off: no tqdm object at all (building a disabled one
            # still costs tens of microseconds per fit)
            bar_cm = _NoBar()
        else:
            from tqdm.auto import tqdm

            # with scikit-learn callbacks set, a disabled bar (their own
            # display replaces it)
            bar_cm = tqdm(
                total=self.max_iter if self.max_iter >= 0 else None,
                unit=self.step_name,
                desc=self.name,
                delay=2.0,
                disable=tasks is not None,
                leave=False,
            )
        with bar_cm as bar, self.deferred_interrupt():
            # the chunk adapts so that one lasts about CHUNK_SECONDS (never
            # more steps than ``chunk``): Ctrl-C and the progress bar are
            # then served within a fraction of a second.  Chunk boundaries do
            # not change the iterates (the fast path and the stepped path
            # visit the same steps).
            size = max(1, min(int(chunk), int(self.first_chunk)))
            # where kernels may run as Python (SVMLAB_JIT auto/interpret), a
            # first chunk sized for compiled code lasts tens of seconds; one
            # probe step measures the step's cost and sizes the chunk from it
            probe = _jit_mode() != "eager"
            try:
                while not self.finished:
                    want = min(1 if probe else size, self.budget)
                    if tasks is not None:
                        tasks.begin_block()
                        want = min(want, tasks.room())
                    t0 = time.perf_counter()
                    with blas_thread_limit(self.blas_threads):
                        k = self._advance(want)
                    dt = time.perf_counter() - t0
                    self.elapsed += dt
                    self.n_iter += k
                    bar.update(k)
                    size = next_chunk_size(size, k, dt, chunk, self.chunk_growth, probe)
                    probe = False
                    if k == 0 and not (self.converged or self.stopped or self.stalled):
                        # nothing moved and not optimal: a stall, not
                        # convergence (spinning would never end)
                        self._mark_stalled()
                    interrupted = self._check_interrupt()
                    if tasks is not None:
                        tasks.end_block_if_due()
                    if interrupted:
                        break
            except KeyboardInterrupt:
                self.interrupted = True
            if tasks is not None:
                tasks.end_open_block()
        return self

    def warning_message(self):
        """The ConvergenceWarning text for how this run ended, or None."""
        name = self.name
        reason = self.stop_reason
        if reason == "max_iter":
            return (
                f"{name} stopped after max_iter={self.max_iter} {self.step_name}s "
                f"before the optimality conditions held within {self.tol_name}. "
                "The model is feasible but not optimal: increase max_iter (or -1 "
                f"for the safeguard cap), or loosen {self.tol_name}.")
        if reason == "iteration_cap":
            return (
                f"{name} stopped after {self.n_iter} {self.step_name}s: max_iter=-1 "
                f"still stops at the safeguard cap max({MAX_ITER_CAP_MIN:_}, "
                f"{MAX_ITER_CAP_PER_SAMPLE} * n_samples) = "
                f"{self.step_limit}, before the optimality conditions "
                f"held within {self.tol_name}. The model is feasible but not "
                "optimal. Pass an explicit max_iter to override the cap; a fit "
                f"this long usually means a hard problem: loosen {self.tol_name}, "
                "scale the features, or lower C.")
        if reason == "stalled":
            what = self.stall_reason or (
                f"no {self.step_name} could make progress")
            return (
                f"{name} stalled after {self.n_iter} {self.step_name}s, with the "
                f"optimality conditions not holding within {self.tol_name}: {what}. "
                "converged_ is False; the model is feasible but not optimal. "
                f"{STALL_ADVICE}.")
        if reason == "interrupted":
            return (
                f"{name} was interrupted (Ctrl-C) after {self.n_iter} "
                f"{self.step_name}s. The model is the feasible state after the last "
                "completed step, not optimal (converged_ is False); fit again to "
                "train to the end.")
        return None

    def finish(self):
        """Store the fitted attributes on the estimator and return it.

        The end-of-fit guard: a fit never reports convergence with
        non-finite numbers.  When the multipliers, the intercepts,
        ``coef_`` or the decision values on the training data are not finite
        (:func:`non_finite_fit`), the fitted attributes stay for inspection
        with ``converged_ = False`` and ``stop_reason_ = "non_finite"``, and a
        ValueError says to scale the data."""
        msg = self.warning_message()
        if msg is not None:
            warnings.warn(msg, ConvergenceWarning, stacklevel=3)
        self.estimator._store_run(self)
        bad = non_finite_fit(self.estimator)
        if bad is not None:
            self.estimator.converged_ = False
            self.estimator.stop_reason_ = "non_finite"
            raise ValueError(
                f"{type(self.estimator).__name__}'s fit produced non-finite numbers ({bad}); "
                "the model is unusable (converged_ is False, stop_reason_ is 'non_finite'). "
                "The input data may contain values too large or too small for float64 "
                "arithmetic: scale the features (e.g. sklearn.preprocessing.StandardScaler), "
                "or lower C, gamma or degree.")
        return self.estimator


def non_finite_fit(estimator):
    """What of a fitted estimator is not finite, or None (the end-of-fit
    guard of :meth:`SolverRun.finish`).  An estimator whose ``_store_run``
    left ``_non_finite_reason`` (the kernel classifiers, which check their
    decision values on the training rows, :mod:`svmlab._base`) is taken at
    its word; otherwise ``alpha_``, ``dual_coef_``, ``coef_`` and
    ``intercept_`` must be finite, and ``|coef_|^2`` too: with the inputs
    validated (:data:`svmlab._validation.MAX_SUM_OF_SQUARES`) that bounds
    every decision value ``|w.x| <= |w| |x|`` below float64's largest."""
    d = estimator.__dict__
    if "_non_finite_reason" in d:
        return d.pop("_non_finite_reason")
    for name in ("alpha_", "dual_coef_", "coef_", "intercept_"):
        parts = d.get(name)
        if parts is None:
            continue
        if not isinstance(parts, (list, tuple)):   # one array, or one per class
            parts = [parts]
        for v in parts:
            v = v.data if hasattr(v, "tocsr") else np.asarray(v)
            if v.dtype.kind not in "fc":
                continue
            if not np.all(np.isfinite(v)):
                return name
            if name == "coef_":
                with np.errstate(over="ignore"):
                    if not np.isfinite(np.vdot(v, v).real):
                        return "coef_ (its squared norm overflows)"
    return None


class _NoBar:
    """What :meth:`SolverRun.run` uses instead of a tqdm bar when progress
    is off (``progress=False`` or ``SVMLAB_PROGRESS=0``): a context manager
    whose ``update`` does nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass


class SequentialRun(SolverRun):
    """A run made of binary runs taken one after the other: the pairs of a
    one-vs-one fit (:class:`svmlab._multiclass.MulticlassRun`) or the
    classes of a one-vs-rest fit
    (:class:`svmlab.cutting_plane._ovr.OneVsRestRun`).

    Part ``i``'s run is made by :meth:`_open_part` when its turn comes (only
    one part's data and caches are alive at a time) and closed when it
    finishes: its result, stop reason, steps and warning are kept
    (``part_results``, ``part_reasons``, ``part_n_iter``,
    ``part_messages``).  A part that ends early (``max_iter``, a stall)
    does not stop the others.  ``step`` returns :meth:`_part_record` of the
    part's record; the fast path advances the current part in chunks.  The
    whole run is ``converged`` when every part converged; otherwise, once
    every part is done, ``stop_reason`` is the worst part's (stalled, then
    the iteration cap, then max_iter), and a callback or Ctrl-C stops the
    whole run.  Subclasses give ``_open_part``, ``_part_record``,
    ``result`` and ``warning_message``.
    """

    def __init__(self, estimator, n_parts, n_samples, progress, name=None):
        self.n_samples = int(n_samples)
        super().__init__(estimator, max_iter=-1, progress=progress, name=name)
        self.n_parts = int(n_parts)
        self.part = 0          # the part running now (n_parts when all are done)
        self.cur = None        # its run, once opened
        self.done = False
        self.part_results = [None] * self.n_parts
        self.part_reasons = ["pending"] * self.n_parts
        self.part_n_iter = [0] * self.n_parts
        self.part_messages = [None] * self.n_parts

    @abstractmethod
    def _open_part(self, i):
        """The (not yet started) run of part i."""

    @abstractmethod
    def _part_record(self, i, rec):
        """The record of the whole run for part i's record ``rec``."""

    def _current(self):
        if self.cur is None:
            self.cur = self._open_part(self.part)
        return self.cur

    def _close(self):
        run, i = self.cur, self.part
        self.part_results[i] = run.result()
        self.part_reasons[i] = run.stop_reason
        self.part_n_iter[i] = run.n_iter
        self.part_messages[i] = run.warning_message()
        self.cur = None  # its data and caches go with it
        self.part += 1
        if self.part >= self.n_parts:
            self.done = True
            if all(r == "converged" for r in self.part_reasons):
                self.converged = True

    def part_result(self, i):
        """Part i's result in the state reached: its final one, the running
        part's current one, or None for a part not begun."""
        if self.part_results[i] is not None:
            return self.part_results[i]
        if i == self.part and self.cur is not None:
            return self.cur.result()
        return None

    def part_steps(self):
        """Steps of each part so far (the running part's included)."""
        n = list(self.part_n_iter)
        if self.cur is not None:
            n[self.part] = self.cur.n_iter
        return n

    @property
    def step_limit(self):
        """No limit of its own: each part's run enforces its ``max_iter``
        (or the safeguard cap) on its own steps, and ends.  (A limit here
        on the sum of the parts' steps once made a one-vs-one fit whose
        first pairs used it up ask for zero more steps forever.)
        Subclasses that know the parts' limits give their sum."""
        return _NO_LIMIT

    @property
    def finished(self):
        # a stall or a spent budget of the whole run ends it too: the loops
        # of run() and iter never spin on a run that cannot advance
        return (self.converged or self.stopped or self.interrupted or self.done
                or self.stalled or self.budget == 0)

    @property
    def stop_reason(self):
        if self.converged:
            return "converged"
        if self.interrupted:
            return "interrupted"
        if self.done:
            for r in ("stalled", "iteration_cap", "max_iter", "callback"):
                if r in self.part_reasons:
                    return r
        if self.stopped:
            return "callback"
        if self.stalled:
            return "stalled"
        if self.budget == 0:
            return "max_iter" if self.max_iter >= 0 else "iteration_cap"
        return "running"

    def _step(self):
        while not self.done:
            rec = self._current().step()
            if rec is not None:
                out = self._part_record(self.part, rec)
                if self.cur.finished:  # its max_iter spent: on to the next part
                    self._close()
                return out
            self._close()
        return None

    def _advance(self, max_steps):
        taken = 0
        while taken < max_steps and not self.done:
            r = self._current()
            if r.finished:
                r = None  # the closed part's memory free before the next opens
                self._close()
                continue
            want = min(max_steps - taken, r.budget)
            t0 = time.perf_counter()
            with blas_thread_limit(r.blas_threads):
                k = r._advance(want)
            r.elapsed += time.perf_counter() - t0
            r.n_iter += k
            taken += k
            if k == 0 and not (r.converged or r.stopped or r.stalled):
                r._mark_stalled()
            if r.finished:
                # dropped before the next part opens: its caches' and rows'
                # memory then serves that part (svmlab.kernels._pool)
                r = None
                self._close()
            if self._interrupt_requested:
                break
        return taken


class _CallbackTasks:
    """scikit-learn callback tasks of one ``fit``: the root task ``"fit"``
    and one subtask per block of ``run.steps_per_task`` steps (see the module
    docstring for the mapping).

    The solver loops call :meth:`begin_block` before advancing, cut their
    chunks to :meth:`room`, and call :meth:`end_block_if_due` after each
    chunk or step; :meth:`end_open_block` ends a block left open (Ctrl-C).
    A block's ``on_fit_task_end`` returning True stops the run (unless it
    has already ended for another reason).
    """

    def __init__(self, estimator, run, X, y):
        self.estimator = estimator
        self.run = run
        self.X = X
        self.y = y
        self.block = max(1, int(run.steps_per_task))
        self.block_name = run.step_name + ("s" if self.block > 1 else "")
        if run.max_iter >= 0:
            max_subtasks = math.ceil(run.max_iter / self.block)
        else:
            max_subtasks = None  # max_iter=-1: the number of steps is not known
        self.root = estimator._init_callback_context(task_name="fit",
                                                     max_subtasks=max_subtasks)
        self.root.call_on_fit_task_begin(estimator=estimator, X=X, y=y)
        self.ctx = None
        #: number of blocks begun (equal to the number ended once fit returns)
        self.n_blocks = 0

    @classmethod
    def for_fit(cls, estimator, run, X, y):
        """The tasks of this fit, or None when no scikit-learn callback is set
        (then nothing is called and the fast path is unchanged)."""
        if not getattr(estimator, "_skl_callbacks", None):
            return None
        return cls(estimator, run, X, y)

    def _attributes(self):
        # built only if a hook asks for ``fitted_estimator``
        return self.estimator._fitted_attributes(self.run)

    def room(self):
        """Steps left in the open block."""
        return self.block - self.run.n_iter % self.block

    def begin_block(self):
        if self.ctx is not None:
            return
        self.ctx = self.root.subcontext(task_name=self.block_name)
        self.n_blocks += 1
        self.ctx.call_on_fit_task_begin(estimator=self.estimator, X=self.X, y=self.y,
                                        reconstruction_attributes=self._attributes)

    def end_block_if_due(self):
        """End the open block if it is full or the run has ended."""
        if self.ctx is None:
            return
        if self.run.n_iter % self.block == 0 or self.run.finished:
            self.end_open_block()

    def end_open_block(self):
        if self.ctx is None:
            return
        ctx, self.ctx = self.ctx, None
        stop = ctx.call_on_fit_task_end(estimator=self.estimator, X=self.X, y=self.y,
                                        reconstruction_attributes=self._attributes)
        if stop and not self.run.finished:
            self.run.stop()

    def close(self):
        """End the root task (after ``run.finish()``: the estimator is fitted)."""
        self.end_open_block()
        self.root.call_on_fit_task_end(estimator=self.estimator, X=self.X, y=self.y,
                                       reconstruction_attributes={})


class SteppedFitMixin(CallbackSupportMixin):
    """``fit`` / ``iter_fit`` / ``start`` on top of a :class:`SolverRun`.

    Subclasses implement ``start(X, y) -> SolverRun`` (validating everything
    before any work), ``_fitted_attributes(run) -> dict`` (the fitted
    attributes of a state, also what a scikit-learn callback's
    ``fitted_estimator`` gets) and ``_store_run(run)``.

    ``set_callbacks(*callbacks)`` comes from scikit-learn's
    :class:`~sklearn.callback.CallbackSupportMixin` (scikit-learn >= 1.9);
    see the module docstring for how steps map to callback tasks.
    """

    @with_callbacks
    def fit(self, X, y, callback=None):
        """Train.  ``callback(record)`` is called after every step; returning
        ``False`` from it stops training with the model reached so far.

        scikit-learn callbacks set with ``set_callbacks`` are called per
        block of steps (see :mod:`svmlab._stepping`), with or without
        ``callback``."""
        return self._fit_run(self.start(X, y), X, y, callback)

    def _fit_run(self, run, X, y, callback=None):
        """The body of :meth:`fit` on a started state ``run`` (the kernel
        classifiers' ``fit`` adds ``sample_weight`` to ``start`` and calls
        this, see :class:`svmlab._base.BaseKernelSVC`)."""
        tasks = _CallbackTasks.for_fit(self, run, X, y)
        if callback is None:
            run.run(tasks=tasks)
        else:
            # Ctrl-C: the step (and the callback) in flight completes, then
            # the loop stops (SolverRun.deferred_interrupt)
            with run.deferred_interrupt():
                try:
                    while not run.finished:
                        if tasks is not None:
                            tasks.begin_block()
                        rec = run.step()
                        if rec is not None:
                            if callback(rec) is False:
                                run.stop()
                            else:
                                run._check_interrupt()
                        if tasks is not None:
                            tasks.end_block_if_due()
                        if rec is None or run.stopped or run.interrupted:
                            break
                except KeyboardInterrupt:
                    run.interrupted = True
                if tasks is not None:
                    tasks.end_open_block()
        run.finish()
        if tasks is not None:
            tasks.close()
        return self

    def iter_fit(self, X, y):
        """Generator of step records; the estimator is fitted when the
        generator is exhausted or closed."""
        yield from self._iter_run(self.start(X, y))

    def _iter_run(self, run):
        """The body of :meth:`iter_fit` on a started state ``run``."""
        try:
            yield from run
        finally:
            if not (run.converged or run.stalled) and run.budget > 0:
                run.stop()
            run.finish()
