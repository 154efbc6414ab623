"""Compiled or interpreted: the one place that decides which code a call runs.

Every compiled function of svmlab is declared with :func:`njit` from this
module (same arguments as ``numba.njit``).  It returns numba's dispatcher,
with one difference: what happens when a call from Python finds no machine
code for its argument types.

The problem
-----------
numba compiles on first use.  In a fresh environment (a new install, every
Binder or Colab session, every CI run) the first fit of a solver compiles for
tens of seconds, and nothing useful happens meanwhile.  numba's on-disk cache
(``cache=True``, :envvar:`NUMBA_CACHE_DIR`) makes every later process start
at once, so the cost is paid once per installation, but it is paid by the
first user, on the first problem, which is usually tiny.

The contract: two tiers of one code
-----------------------------------
Every ``@njit`` body in svmlab is also valid Python (the
``NUMBA_DISABLE_JIT`` contract the tests already check).  So a call can run in
one of two tiers, with the same results:

* **compiled**: numba's machine code, loaded from numba's cache or compiled;
* **interpreted**: the function's own Python body, in which every call to
  another svmlab kernel goes to that kernel's Python body too (the function
  is rebuilt over a copy of its module's globals: :func:`interpreted`).  A
  few kernels have an *interpreted twin* instead (``njit(twin=f)``, declared
  beside the kernel): the same arithmetic written with NumPy's element-wise
  operations (an element-wise loop has no order to change, so the values
  are the same bit for bit), or a Python equivalent of an LLVM intrinsic.
  ``np.dot`` in an interpreted kernel is numba's own BLAS call
  (:func:`svmlab._twins.dot`).  Tests prove each twin equal to its kernel.

A call from Python that finds no machine code for its argument types, in
the default mode ``SVMLAB_JIT=auto``:

1. loads the machine code from numba's on-disk cache when it is there (as
   numba always does);
2. otherwise, when the call is *small* (:func:`is_small`: no axis of an
   array in its arguments, nested tuples included, is longer than
   :data:`SMALL_ROWS`, none is float32), runs the interpreted tier now and
   asks the background compiler to compile this function for these
   argument types into numba's cache (one compiler per cache folder, shared
   by every process using it, :mod:`svmlab._jit_worker`; it keeps compiling
   after the caller exits, so the next session starts compiled, and exits
   when idle).  Later calls with the same
   types run interpreted until that compilation is done, then load it: a
   long fit that started interpreted goes on compiled, from the same state,
   at its next call;
3. otherwise (a large call) compiles here, or, when the background
   compiler is already compiling this very function, waits for it; either
   way with a display that moves (:class:`_Progress`): what compiles, k of
   about n kernels and the time left, estimated from the measured compile
   mass (:func:`_mass_table`).

A cache folder that cannot be written (full disk, read-only) never fails a
call: one :class:`CacheWriteWarning`, and the code stays in memory.

Why float32 arrays are never small: float32 arithmetic is rounded
differently by NumPy's scalars (which promote to float64 in mixed
expressions) and by compiled code, so the two tiers could differ in the
last bit; float32 rows are only chosen for problems too large to interpret.
Why "small" is judged from the arrays of the call, not from the estimator:
every path into compiled code (fits, stepping, predictions, kernels used on
their own) goes through this one rule, and the rows of the arrays a kernel
loops over bound the work of one call.  A kernel whose body cannot run as
Python (it uses ``parallel=True``, fastmath flags, or an intrinsic without
a registered twin) is never interpreted.

Modes (:envvar:`SVMLAB_JIT`, or :func:`set_mode`):

``auto`` (default)
    as above.
``eager``
    numba's own behaviour: compile in this process on first use (with the
    message).  The background process runs in this mode.
``interpret``
    every call that can run interpreted does, and nothing is compiled: for
    tests and for stepping through a kernel in a debugger.

With ``NUMBA_DISABLE_JIT=1`` numba returns plain functions and this module
changes nothing.

numba itself is imported on first compiled need: in modes ``auto`` and
``interpret`` :func:`njit` returns a :class:`LazyKernel`, whose calls run
the interpreted tier while the process's interpreted CPU stays under
:data:`LAZY_BUDGET` (about half what ``import numba`` costs), and which hands
over to numba's dispatcher (:func:`handover`) at the first call that should
not run interpreted (docs/decisions/36g01-lazy-numba.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
import threading
import time
import types as pytypes

import numpy as np

__all__ = ["njit", "set_mode", "get_mode", "interpreted", "is_small", "SMALL_ROWS",
           "SMALL_ELEMENTS"]

#: a call is small when no axis of any array in it is longer than this
SMALL_ROWS = 5000
#: the element bound that follows (a square array of SMALL_ROWS on each side)
SMALL_ELEMENTS = SMALL_ROWS * SMALL_ROWS

_MODES = ("auto", "eager", "interpret")
_mode = os.environ.get("SVMLAB_JIT", "auto").strip().lower() or "auto"
if _mode not in _MODES:  # pragma: no cover - a typo in the environment
    _mode = "auto"
#: True in the background compiling process
_IN_WORKER = os.environ.get("SVMLAB_JIT_WORKER") == "1"


def set_mode(mode):
    """Set the tier policy for this process: ``"auto"``, ``"eager"`` or
    ``"interpret"`` (see the module docstring); returns the previous mode."""
    global _mode
    mode = str(mode).lower()
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
    old, _mode = _mode, mode
    return old


def get_mode():
    """The current tier policy (``"auto"``, ``"eager"`` or ``"interpret"``)."""
    return _mode


# --------------------------------------------------------------------------
# numba on first compiled need (docs/decisions/36g01-lazy-numba.md)
#
# ``import numba`` costs 0.13-0.22 s of CPU in a gallery-like process, plus
# its ~29,000 objects scanned by every later full garbage collection: more
# than a tiny fit's interpreted tier.  So, in the modes that may interpret
# (``auto``, ``interpret``), :func:`njit` returns a :class:`LazyKernel` (no
# numba), and numba is imported at the *hand-over* (:func:`handover`): the
# first call that the interpreted tier should not run (a kernel without an
# interpreted tier, a large call, keywords, mode ``eager``, or the process's
# interpreted CPU past :data:`LAZY_BUDGET`), or the first look at a
# dispatcher attribute.  The hand-over makes every kernel's numba
# dispatcher, runs the modules' numba-side definitions (:func:`at_numba_import`:
# overloads, intrinsics, ``prange``), and puts the dispatchers in place of
# the lazy objects in svmlab's module globals and the kernels' closures, so
# that later calls from Python reach numba's C dispatcher with no Python
# layer in between, and numba types the kernels' calls to each other as it
# always did.  numba is imported at once (no lazy objects) in the
# background compiler, in mode ``eager``, when numba is already imported,
# when :envvar:`NUMBA_DISABLE_JIT` is set or a ``.numba_config.yaml`` is in
# the working folder (numba's configuration decides then), and with
# :envvar:`SVMLAB_LAZY_NUMBA` ``=0``.

#: interpreted CPU seconds (all threads' lazy calls together) after which
#: the process hands over to numba.  A rent-or-buy bound: ``import numba``
#: and the first loads cost 0.15-0.25 s; a process whose work outgrows the
#: interpreted tier pays this much on top of that, one that stays under it
#: saves the import.  The gallery's small scripts interpret 0-0.09 s;
#: 0.12 s halves what the others lose against 0.25 s (36g01).
LAZY_BUDGET = float(os.environ.get("SVMLAB_LAZY_BUDGET", "0.12"))
#: before the hand-over, a call runs interpreted only when no array in it
#: holds more elements than this, no 2-D or wider array has more rows than
#: :data:`LAZY_ROWS`, and none is float32 (see :func:`_lazy_small`)
LAZY_ELEMENTS = 250_000
LAZY_ROWS = 1000


def _env_disables_jit():
    """Whether numba's configuration may differ from its defaults in a way
    that decides what njit returns (``NUMBA_DISABLE_JIT``, a config file)."""
    v = os.environ.get("NUMBA_DISABLE_JIT", "").strip()
    if v:
        try:
            if int(v) != 0:
                return True
        except ValueError:
            return True
    return os.path.exists(".numba_config.yaml")


#: whether this process may defer numba (fixed at import)
_LAZY_OK = (not _IN_WORKER and _mode != "eager" and "numba" not in sys.modules
            and os.environ.get("SVMLAB_LAZY_NUMBA", "1").strip() != "0"
            and not _env_disables_jit())

_numba_ready = False
_handed_over = False
_at_numba: list = []
_lazies: list = []
_spent = 0.0
_lazy_depth = threading.local()
_lock = threading.RLock()

# numba's side, set by _numba_setup
_CPUDispatcher = None
TieredDispatcher = None
_numba_njit = None
_shipped = None


def numba_imported():
    """Whether this process has imported numba through svmlab (the
    hand-over happened, or numba was never deferred)."""
    return _numba_ready


def handed_over():
    """Whether svmlab's kernels are numba dispatchers now (always true when
    numba was not deferred)."""
    return _handed_over


def jit_disabled():
    """numba's ``config.DISABLE_JIT``, without importing numba when it is
    deferred (deferred only when the environment does not disable it)."""
    if not _numba_ready:
        return False
    from numba.core import config

    return bool(config.DISABLE_JIT)


def at_numba_import(fn):
    """Decorator: run ``fn()`` (a module's numba-side definitions: an
    ``overload``, an ``intrinsic``, ``prange``) when numba is imported, i.e.
    now when it already is, else at the hand-over, before any kernel
    compiles.  Returns ``fn``."""
    with _lock:
        if not _numba_ready:
            _at_numba.append(fn)
            return fn
    fn()
    return fn


class LazyKernel:
    """What :func:`njit` returns while numba is deferred: the kernel's
    Python function (``py_func``) and what makes its numba dispatcher.

    A call runs the interpreted tier (:func:`interpreted`, the same values
    bit for bit) while the process's budget lasts, else hands over
    (:func:`handover`) and calls the dispatcher.  Any other attribute (a
    dispatcher's ``overloads``, ``signatures``...) hands over and is read
    from the dispatcher.  After the hand-over, svmlab's module globals hold
    the dispatcher itself; a lazy object kept elsewhere forwards to it."""

    def __init__(self, fn, make, interpret_ok, twin):
        self.py_func = fn
        self._svmlab_make = make
        self._svmlab_interpret_ok = interpret_ok
        self._svmlab_twin = twin
        self._svmlab_real = None
        self._svmlab_caching = False
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn  # as numba's dispatcher: inspect finds the source

    def __call__(self, *args, **kws):
        real = self._svmlab_real
        if real is not None:
            return real(*args, **kws)
        return _lazy_call(self, args, kws)

    def __getattr__(self, name):
        # only reached for what the object lacks; dunder and svmlab's own
        # names never hand over (inspect, copy, hasattr probes)
        if name.startswith("_svmlab_") or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return getattr(_real_of(self), name)

    def __repr__(self):
        state = "numba dispatcher" if self._svmlab_real is not None else "numba deferred"
        return f"<svmlab kernel {self.__module__}.{self.__qualname__} ({state})>"

    def __reduce__(self):
        return (_kernel_by_name, (self.__module__, self.__qualname__))


def _kernel_by_name(module, qualname):
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _real_of(lk):
    if lk._svmlab_real is None:
        handover()
    return lk._svmlab_real


def _lazy_small(args):
    """Whether a call may run interpreted before the hand-over: no array
    holds more than :data:`LAZY_ELEMENTS` values, none of two or more axes
    has more than :data:`LAZY_ROWS` rows, none is a non-empty float32 array.

    Why not :func:`is_small`'s rule: it bounds every axis by
    :data:`SMALL_ROWS`, which a one-vs-one fit's preallocated 1-D buffers
    exceed (10,000 values for iris), so every multiclass fit would hand
    over at once; and it lets through 5000-row blocks of a prediction on a
    plot's grid, which take seconds interpreted (34g01).  The rows of a 2-D
    array bound a call's loops; the process's budget bounds the rest."""
    for a in _arrays(args):
        if a.size > LAZY_ELEMENTS or (a.dtype == np.float32 and a.size):
            return False
        if a.ndim >= 2 and a.shape[0] > LAZY_ROWS:
            return False
    return True


def _lazy_call(lk, args, kws):
    """A call of a lazy kernel before the hand-over (:class:`LazyKernel`)."""
    global _spent
    mode = _mode
    if (not kws and not _handed_over and mode != "eager" and can_interpret(lk)
            and (mode == "interpret" or (_spent < LAZY_BUDGET and _lazy_small(args)))):
        fn = interpreted(lk)
        if getattr(_lazy_depth, "n", 0):  # inside an interpreted call: its time counts
            return fn(*args)
        if mode == "auto" and lk._svmlab_caching and _cache_writes_ok:
            _lazy_submit(lk, args)
        _lazy_depth.n = 1
        t0 = time.thread_time()
        try:
            return fn(*args)
        finally:
            _lazy_depth.n = 0
            _spent += time.thread_time() - t0
    handover()
    return lk._svmlab_real(*args, **kws)


#: (lazy kernel, argument description) already looked at in this process
_lazy_seen: set = set()


def describe_args(args):
    """A numba-free description of the argument types of a call (nested
    tuples of strings and ints; the background compiler's request and the
    pending table's key before the hand-over), or None when an argument
    is of a kind it does not describe.  :func:`skeleton_args` makes
    arguments of the same numba types from it."""
    out = []
    for a in args:
        d = _describe(a)
        if d is None:
            return None
        out.append(d)
    return tuple(out)


def _describe(a, depth=0):
    if isinstance(a, np.ndarray):
        if a.dtype.fields is not None or a.dtype.hasobject:
            return None
        f = a.flags
        layout = "C" if f.c_contiguous else ("F" if f.f_contiguous else "A")
        return ("a", a.dtype.str, a.ndim, layout, bool(f.writeable))
    if a is None:
        return ("n",)
    if isinstance(a, bool):
        return ("b",)
    if isinstance(a, int):
        return ("i",) if -(1 << 63) <= a < (1 << 63) else None
    if isinstance(a, float):
        return ("f",)
    if isinstance(a, complex):
        return ("c",)
    if isinstance(a, np.generic):
        return ("s", a.dtype.str) if a.dtype.fields is None else None
    if isinstance(a, tuple) and depth < 4:
        parts = tuple(_describe(x, depth + 1) for x in a)
        if any(p is None for p in parts):
            return None
        if type(a) is tuple:
            return ("t", parts)
        cls = type(a)
        if hasattr(cls, "_fields"):
            return ("nt", cls.__module__, cls.__qualname__, parts)
    return None


def skeleton_args(desc):
    """Arguments whose numba types are those described by ``desc``
    (:func:`describe_args`): empty-valued arrays of the same dtype, number of
    axes, layout and writability, zero scalars, the same named tuples."""
    return tuple(_skeleton(d) for d in desc)


def _skeleton(d):
    k = d[0]
    if k == "a":
        _, dt, nd, layout, writeable = d
        dt = np.dtype(dt)
        if nd == 0 or layout == "C":
            a = np.zeros((1,) * nd, dt)
        elif layout == "F":
            a = np.zeros((2,) * nd, dt, order="F")
        else:  # neither C nor F contiguous
            a = np.zeros((2,) * (nd - 1) + (4,), dt)[..., ::2]
        if not writeable:
            a.setflags(write=False)
        return a
    if k == "n":
        return None
    if k == "b":
        return False
    if k == "i":
        return 0
    if k == "f":
        return 0.0
    if k == "c":
        return 0j
    if k == "s":
        return np.dtype(d[1]).type(0)
    if k == "t":
        return tuple(_skeleton(x) for x in d[1])
    if k == "nt":
        import importlib

        cls = importlib.import_module(d[1])
        for part in d[2].split("."):
            cls = getattr(cls, part)
        return cls(*(_skeleton(x) for x in d[3]))
    raise ValueError(f"unknown argument description {d!r}")


def _lazy_submit(lk, args):
    """Before the hand-over: ask the background compiler for this kernel
    and these argument types (described without numba), once per process,
    unless the compiler of this cache folder answered that request before
    (its ``.done`` or ``.fail`` file is there: the code is in the cache, or
    cannot be made; after a hand-over :func:`_choose` judges again)."""
    desc = describe_args(args)
    if desc is None:
        return
    key = (lk, desc)
    if key in _lazy_seen:
        return
    _lazy_seen.add(key)
    try:
        w = _worker()
        if not w.ok:
            return
        py = lk.py_func
        payload = (py.__module__, py.__qualname__, desc)
        stem = os.path.join(w.dir, request_name("compile_args", payload))
        if os.path.exists(stem + ".done") or os.path.exists(stem + ".fail"):
            return
        w.submit("compile_args", key, payload, what=_family_of(lk))
    except Exception:  # pragma: no cover - the background compiler never fails a call
        pass


def _rekey_pending():
    """At the hand-over: the requests sent with numba-free keys get the
    keys :func:`_choose` looks up (dispatcher, numba signature)."""
    w = _the_worker
    if w is None:
        return
    with w.cond:
        for key in [k for k in w.ids if type(k[0]) is LazyKernel]:
            lk, desc = key
            name = w.ids.pop(key)
            real = lk._svmlab_real
            try:
                sig = tuple(real.typeof_pyval(a) for a in skeleton_args(desc))
            except Exception:  # pragma: no cover
                continue
            w.ids[(real, sig)] = name
            with _lock:
                _pending[(real, sig)] = "pending"


def interpreted_seconds():
    """CPU seconds spent in interpreted calls before the hand-over."""
    return _spent


def handover():
    """Import numba, make every kernel's dispatcher and put it in place of
    the lazy object (svmlab's module globals, the kernels' closures); run
    the modules' :func:`at_numba_import` definitions first.  Idempotent,
    thread-safe; nothing to do when numba was never deferred."""
    global _handed_over
    if _handed_over:
        return
    with _lock:
        if _handed_over:
            return
        _numba_setup()
        for lk in _lazies:
            if lk._svmlab_real is None:
                lk._svmlab_real = lk._svmlab_make(lk.py_func)
        _swap_lazies()
        _rekey_pending()
        _handed_over = True


def _swapped(v, depth=0):
    """``v`` with its lazy objects replaced by their dispatchers (tuples and
    named tuples rebuilt, dicts and lists changed in place, two levels
    deep: the tables of kernels modules keep, as ``_wss2.RULES``), or None
    when it holds none."""
    if type(v) is LazyKernel:
        return v._svmlab_real
    if depth >= 2:
        return None
    if isinstance(v, tuple):
        items = [_swapped(x, depth + 1) for x in v]
        if all(x is None for x in items):
            return None
        items = [x if n is None else n for x, n in zip(v, items)]
        return type(v)(*items) if hasattr(type(v), "_fields") else type(v)(items)
    if isinstance(v, dict):
        for k, x in list(v.items()):
            n = _swapped(x, depth + 1)
            if n is not None:
                v[k] = n
    elif isinstance(v, list):
        for i, x in enumerate(v):
            n = _swapped(x, depth + 1)
            if n is not None:
                v[i] = n
    return None


def _swap_lazies():
    """Every lazy object in svmlab's module globals (and the tables they
    hold: :func:`_swapped`) and in the kernels' closure cells replaced by
    its dispatcher."""
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "svmlab" or name.startswith("svmlab.")):
            continue
        d = getattr(mod, "__dict__", None)
        if not isinstance(d, dict):
            continue
        for k, v in list(d.items()):
            if type(v) is LazyKernel or isinstance(v, (tuple, dict, list)):
                if v is _lazies:
                    continue
                n = _swapped(v)
                if n is not None:
                    d[k] = n
    for lk in _lazies:
        for cell in lk.py_func.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if type(v) is LazyKernel and v._svmlab_real is not None:
                cell.cell_contents = v._svmlab_real


def _numba_setup():
    """Import numba and set up svmlab's side of it: the tiered dispatcher
    class, the compile listener, numba's type of a :class:`LazyKernel`, the
    modules' :func:`at_numba_import` definitions.  Idempotent."""
    global _numba_ready, _CPUDispatcher, TieredDispatcher, _numba_njit, _shipped
    with _lock:
        if _numba_ready:
            return
        from numba import njit as numba_njit

        from . import _shipped as shipped

        _numba_njit = numba_njit
        _shipped = shipped
        try:  # numba's CPU dispatcher, the class numba.njit returns
            from numba.core.registry import CPUDispatcher
        except Exception:  # pragma: no cover - an unknown numba: plain numba.njit
            CPUDispatcher = None
        _CPUDispatcher = CPUDispatcher
        if CPUDispatcher is not None:
            TieredDispatcher = _make_tiered_class(CPUDispatcher)
        _register_compile_listener()
        try:
            from numba.extending import typeof_impl  # public API

            @typeof_impl.register(LazyKernel)
            def _typeof_lazy(val, c):
                # a lazy object numba meets in compiled code's globals
                # (one kept outside svmlab's modules): its dispatcher's type
                return typeof_impl(_real_of(val), c)
        except Exception:  # pragma: no cover - numba without typeof_impl
            pass
        _numba_ready = True
        hooks = list(_at_numba)
        _at_numba.clear()
    for fn in hooks:
        fn()


def _make_tiered_class(CPUDispatcher):
    class TieredDispatcher(CPUDispatcher):
        """numba's CPU dispatcher whose miss path (``_compile_for_args``,
        which numba's C dispatcher calls when no machine code matches the
        argument types) is decided by :func:`_choose`.  Hits never reach
        Python: compiled code runs at numba's full call speed."""

        def _compile_for_args(self, *args, **kws):
            return _choose(self, args, kws)

        def _numba_compile_for_args(self, *args, **kws):
            return CPUDispatcher._compile_for_args(self, *args, **kws)

        @property
        def _cache(self):
            """numba's on-disk cache of this dispatcher, made on first use.

            Why lazily: making it (numba's ``enable_caching``: a cache
            locator, the cache folder made and probed with a temporary file)
            cost about 0.13 ms per dispatcher, and importing the modules a
            first fit touches makes about 200 dispatchers, most of which that
            fit never calls (docs/decisions/34g01-first-fit-imports.md).
            Every reader (numba's compile and save, :func:`_load_cached`, the
            background compiler, the shipped build) gets the same object it
            would have got at decoration."""
            d = self.__dict__
            if d.get("_svmlab_cache_pending"):
                with _lock:
                    if d.pop("_svmlab_cache_pending", False):
                        _enable_cache(self)
            return d["_cache"]

        @_cache.setter
        def _cache(self, value):
            self.__dict__["_cache"] = value

    # pickled by reference as svmlab._jit.TieredDispatcher
    TieredDispatcher.__module__ = __name__
    TieredDispatcher.__qualname__ = "TieredDispatcher"
    return TieredDispatcher


def _is_kernel(value):
    """A tiered kernel: a lazy object or a tiered numba dispatcher."""
    return type(value) is LazyKernel or (
        TieredDispatcher is not None and isinstance(value, TieredDispatcher))


def njit(*args, **kwargs):
    """``numba.njit`` (same arguments; ``nogil`` defaults to True),
    returning a dispatcher whose first call may run interpreted (module
    docstring), or, while numba is deferred, a :class:`LazyKernel` that
    becomes one at the hand-over.  Extra keywords:
    ``interpret=False`` marks a kernel that must never run interpreted;
    ``twin=f`` gives its interpreted tier (a Python function computing the
    same values, proven equal by a test)."""
    interpret_ok = kwargs.pop("interpret", True)
    twin = kwargs.pop("twin", None)
    # nogil by default: the one-vs-one pairs of a multiclass fit run in
    # threads (n_jobs), and a kernel holding the GIL would serialise them
    # (docs/decisions/28j01-parallel-pairs.md)
    kwargs.setdefault("nogil", True)
    if kwargs.get("parallel") or kwargs.get("fastmath"):
        interpret_ok = False

    def wrap(fn):
        if TieredDispatcher is not None and kwargs.get("cache"):
            # numba's on-disk cache made on first use (TieredDispatcher._cache)
            disp = _numba_njit(**{k: v for k, v in kwargs.items() if k != "cache"})(fn)
            if type(disp) is _CPUDispatcher:
                disp.__class__ = TieredDispatcher
                disp._svmlab_interpret_ok = interpret_ok
                disp._svmlab_twin = twin
                disp._svmlab_cache_pending = True
                return disp
            if hasattr(disp, "enable_caching"):  # pragma: no cover - another dispatcher class
                disp.enable_caching()
            # else NUMBA_DISABLE_JIT=1: numba returned the plain function
        else:
            disp = _numba_njit(**kwargs)(fn)
        _shipped.attach(disp)  # machine code shipped in a wheel (svmlab._shipped)
        if TieredDispatcher is not None and isinstance(disp, _CPUDispatcher):
            disp.__class__ = TieredDispatcher
            disp._svmlab_interpret_ok = interpret_ok
            disp._svmlab_twin = twin
        return disp

    def guarded(fn):
        try:
            disp = wrap(fn)
        except RuntimeError as exc:
            # numba found no writable cache folder (read-only NUMBA_CACHE_DIR,
            # install and home): go on without its on-disk cache
            if not kwargs.get("cache") or "no locator available" not in str(exc):
                raise
            _warn_cache(exc)
            kwargs["cache"] = False
            disp = wrap(fn)
        if "_svmlab_cache_pending" in vars(disp):
            return disp  # guarded when its cache is made (_enable_cache)
        return _guard_cache_writes(disp)

    def decorate(fn):
        with _lock:
            if _LAZY_OK and not _handed_over and _mode != "eager":
                lk = LazyKernel(fn, guarded, interpret_ok, twin)
                lk._svmlab_caching = bool(kwargs.get("cache"))
                _lazies.append(lk)
                return lk
        handover()  # mode eager now: every kernel a dispatcher (no-op when done)
        return guarded(fn)

    if len(args) == 1 and callable(args[0]):
        return decorate(args[0])
    if args:  # explicit signatures: numba's eager compilation, no tiers
        _numba_setup()
        return _numba_njit(*args, **kwargs)
    return decorate


def _enable_cache(disp):
    """Give the tiered dispatcher ``disp`` numba's on-disk cache (what
    ``numba.njit(cache=True)`` does at decoration), the shipped folder in
    front of it, and the guard on its writes; without a writable cache
    folder, one :class:`CacheWriteWarning` and no cache."""
    try:
        disp.enable_caching()
    except RuntimeError as exc:
        if "no locator available" not in str(exc):
            raise
        _warn_cache(exc)
        return
    _shipped.attach(disp)  # machine code shipped in a wheel (svmlab._shipped)
    _guard_cache_writes(disp)


# --------------------------------------------------------------------------
# The interpreted tier

_interp_memo: dict = {}
_shadow_memo: dict = {}


def interpreted_as(twin):
    """Decorator for a plain Python helper that compiled code reaches through
    a numba ``overload``: in interpreted kernels the helper is replaced by
    ``twin`` (which computes what the overload computes)."""
    def mark(fn):
        fn.__svmlab_twin__ = twin
        return fn
    return mark


def _qualname(disp):
    py = disp.py_func
    return f"{py.__module__}.{py.__qualname__}"


def _shadow_globals(g):
    """A copy of the module globals ``g`` in which every tiered kernel is
    replaced by its interpreted tier (memoised per module, filled after it is
    memoised so that kernels of one module can call each other)."""
    key = id(g)
    sh = _shadow_memo.get(key)
    if sh is None:
        sh = dict(g)
        _shadow_memo[key] = sh
        for name, value in g.items():
            if _is_kernel(value) and can_interpret(value):
                sh[name] = interpreted(value)
            elif value is np:  # numba's np.dot computes with scipy's BLAS
                from ._twins import numba_numpy
                sh[name] = numba_numpy
            elif getattr(value, "__svmlab_twin__", None) is not None:
                sh[name] = value.__svmlab_twin__  # a Python helper with a numba overload
    return sh


def interpreted(disp):
    """The interpreted tier of the tiered kernel ``disp``: its registered
    twin, or its Python body over shadow globals (every svmlab kernel it
    calls is itself interpreted).  Raises TypeError when ``disp`` cannot
    run interpreted."""
    fn = _interp_memo.get(disp)
    if fn is not None:
        return fn
    fn = getattr(disp, "_svmlab_twin", None)
    if fn is None:
        if not getattr(disp, "_svmlab_interpret_ok", False):
            raise TypeError(f"{_qualname(disp)} has no interpreted tier")
        py = disp.py_func
        closure = py.__closure__
        if closure:
            closure = tuple(
                pytypes.CellType(interpreted(c.cell_contents)
                                 if _is_kernel(c.cell_contents)
                                 else c.cell_contents) for c in closure)
        # the module's shadow globals may build this very function while they
        # fill (they are memoised first, so the recursion ends); keep one
        g = _shadow_globals(py.__globals__)
        if disp in _interp_memo:
            return _interp_memo[disp]
        fn = pytypes.FunctionType(py.__code__, g, py.__name__, py.__defaults__, closure)
        fn.__kwdefaults__ = py.__kwdefaults__
        fn.__doc__ = py.__doc__
    _interp_memo[disp] = fn
    return fn


def can_interpret(disp):
    """Whether ``disp`` has an interpreted tier: a registered twin, or a body
    that can run as Python with the compiled results (no ``parallel`` or
    fastmath flags, and none of :data:`_UNFAITHFUL`)."""
    if getattr(disp, "_svmlab_twin", None) is not None:
        return True
    ok = getattr(disp, "_svmlab_interpret_ok", False)
    if ok and not hasattr(disp, "_svmlab_faithful"):
        disp._svmlab_faithful = not _unfaithful_ops(disp.py_func.__code__)
    return bool(ok and disp._svmlab_faithful)


#: attributes whose NumPy implementation computes differently from numba's:
#: reductions (NumPy sums pairwise, numba in order), linear algebra (NumPy's
#: own LAPACK/BLAS build, numba scipy's), array methods and ``@`` (which no
#: stand-in can intercept); ``np.dot`` is the exception, replaced by
#: :func:`svmlab._twins.dot`, numba's own BLAS call.
_UNFAITHFUL = frozenset({"sum", "mean", "prod", "std", "var", "linalg", "matmul", "inner",
                         "outer", "vdot", "einsum", "trace", "norm", "dot", "cumprod",
                         "nansum", "nanmean", "average"})


_MATMUL = None


def _matmul_units():
    """The (opcode, oparg) units of ``@`` and ``@=`` in this Python's
    bytecode (oparg None: an opcode of its own, before Python 3.11)."""
    global _MATMUL
    if _MATMUL is None:
        import dis

        found = set()
        for src in ("a @ b", "a @= b"):
            for ins in dis.get_instructions(compile(src, "<matmul>", "exec")):
                if ins.opname == "BINARY_OP":
                    found.add((ins.opcode, ins.arg))
                elif "MATRIX_MULTIPLY" in ins.opname:
                    found.add((ins.opcode, None))
        _MATMUL = frozenset(found)
    return _MATMUL


def _maybe_unfaithful(code):
    """False when ``code`` (nested code included) certainly has none of
    :func:`_unfaithful_ops`' operations: no name of :data:`_UNFAITHFUL` among
    its names and no ``@``.  A filter in front of the ``dis`` walk, which
    cost about 0.04 s over the ~100 kernels a first interpreted fit's
    modules hold (36g01); it never clears code the walk would flag."""
    if _UNFAITHFUL.intersection(code.co_names):
        return True
    units = _matmul_units()
    ops = {op for op, _ in units}
    co = code.co_code
    for i in range(0, len(co) - 1, 2):
        op = co[i]
        if op in ops and ((op, co[i + 1]) in units or (op, None) in units):
            return True
    return any(isinstance(c, pytypes.CodeType) and _maybe_unfaithful(c)
               for c in code.co_consts)


def _unfaithful_ops(code):
    """The operations of ``code`` (nested code included) whose interpreted
    result may differ from the compiled one, as a set of names."""
    if not _maybe_unfaithful(code):
        return set()
    import dis

    found = set()
    prev = None
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in _UNFAITHFUL:
            on_np = prev is not None and prev.opname == "LOAD_GLOBAL" and prev.argval == "np"
            if not (on_np and ins.argval == "dot"):
                found.add(ins.argval)
        elif ins.opname == "BINARY_OP" and "@" in ins.argrepr:
            found.add("@")
        prev = ins
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            found |= _unfaithful_ops(c)
    return found


def _arrays(obj, depth=0):
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, tuple) and depth < 4:
        for o in obj:
            yield from _arrays(o, depth + 1)


def is_small(args):
    """Whether a call with these arguments may run interpreted: no axis of any
    array in them (nested tuples included) is longer than :data:`SMALL_ROWS`,
    and none is a non-empty float32 array (empty ones are placeholders for
    unused modes).

    Why axes and not elements: the work of a kernel call grows with the
    examples and features it loops over, which are axes of its arrays.  A
    count of elements also counted the kernel-row cache that a fit
    preallocates (``cache_size``, 40 MB by default: 1500 x 1500 values for
    1500 examples), so a default fit of a little over 1000 examples was
    judged large by its cache alone: it ran its small kernels interpreted,
    then compiled the solver here anyway, competing with the background
    compiler (issue 29: 420 s against 241 s compiling everything here)."""
    for a in _arrays(args):
        if a.dtype == np.float32 and a.size:
            return False
        if any(d > SMALL_ROWS for d in a.shape):
            return False
    return True


# --------------------------------------------------------------------------
# The policy

#: (dispatcher, signature) -> "pending" (queued in the background process)
_pending: dict = {}


def _sig_of(disp, args):
    return tuple(disp.typeof_pyval(a) for a in args)


def _load_cached(disp, sig):
    """Machine code for ``sig`` from numba's on-disk cache, added to the
    dispatcher (what numba's ``compile`` does first); None when absent."""
    from numba.core.compiler_lock import global_compiler_lock
    with global_compiler_lock:
        existing = disp.overloads.get(tuple(sig))
        if existing is not None:
            return existing.entry_point
        # numba's load_overload less its registry refresh (_shipped.load_cached)
        cres = _shipped.load_cached(disp._cache, sig, disp.targetctx)
        if cres is None:
            return None
        disp._cache_hits[sig] += 1
        if not cres.objectmode:
            disp.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
        disp.add_overload(cres)
        return cres.entry_point


def _caching(disp):
    cache = getattr(disp, "_cache", None)
    return cache is not None and type(cache).__name__ != "NullCache"


_DEBUG = os.environ.get("SVMLAB_JIT_DEBUG") == "1"


def _choose(disp, args, kws):
    if _DEBUG:
        sys.stderr.write(f"svmlab._jit: miss {_qualname(disp)} mode={_mode} "
                         f"small={is_small(args)} interp={can_interpret(disp)}\n")
    mode = _mode
    if _IN_WORKER or mode == "eager" or kws:
        return disp._numba_compile_for_args(*args, **kws)
    if mode == "interpret":
        if can_interpret(disp):
            return interpreted(disp)
        return disp._numba_compile_for_args(*args)
    try:
        sig = _sig_of(disp, args)
    except Exception:
        return disp._numba_compile_for_args(*args)
    key = (disp, sig)
    with _lock:
        state = _pending.get(key)
    if state is None and _caching(disp):
        entry = _load_cached(disp, sig)
        if entry is not None:
            return entry
    # judged after the cache: can_interpret reads the body's bytecode once
    # (7 ms for the dual loop), which a call that loads cached code never needs
    small = is_small(args) and can_interpret(disp)
    if state is None:
        if small and _caching(disp) and _cache_writes_ok and _worker().submit_compile(key):
            with _lock:
                _pending[key] = "pending"
            return interpreted(disp)
        return disp._numba_compile_for_args(*args)
    # queued in the background compiler
    w = _worker()
    if not w.is_done(key):
        if small:
            return interpreted(disp)
        w.wait(key, _family_of(disp))
    with _lock:
        _pending.pop(key, None)
    entry = _load_cached(disp, sig)
    if entry is not None:
        return entry
    return disp._numba_compile_for_args(*args)


# --------------------------------------------------------------------------
# The background compiler (one per cache folder: svmlab._jit_worker)

def _family_of(disp):
    mod = disp.py_func.__module__
    for prefix, name in _FAMILY_NAMES:
        if mod.startswith(prefix):
            return name
    return "solver kernels"


_FAMILY_NAMES = (
    ("svmlab.smo", "SMO solver"),
    ("svmlab.decomposition", "decomposition solvers (IRWLS, chunking, decomposition)"),
    ("svmlab.cutting_plane", "cutting-plane solver"),
    ("svmlab.svm", "SVM family solvers"),
    ("svmlab.kernels", "kernel functions"),
)


try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no shared compiler
    fcntl = None


def queue_dir():
    """The queue folder for this process's numba cache: in
    :envvar:`NUMBA_CACHE_DIR` when set, else beside svmlab's in-tree cache
    (``svmlab/__pycache__``, numba's default for a writable install), else in
    the user's cache folder; the first of these that is writable.  None when
    none is (then nothing is compiled in the background)."""
    bases = []
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    if cache_dir:
        bases.append(cache_dir)
    bases.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__"))
    bases.append(os.path.join(os.path.expanduser("~"), ".cache", "svmlab"))
    for base in bases:
        d = os.path.join(base, "svmlab-jit")
        try:
            os.makedirs(d, exist_ok=True)
            probe = os.path.join(d, f".probe.{os.getpid()}")
            with open(probe, "w"):
                pass
            os.unlink(probe)
            return d
        except OSError:
            continue
    return None


def request_name(kind, payload):
    """The file name stem of a request (the same for the same request)."""
    text = repr((kind, payload)).encode()
    return hashlib.sha1(text).hexdigest()[:24]


def write_atomic(path, data):
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def read_status(qdir):
    try:
        with open(os.path.join(qdir, "status.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def lock_is_held(qdir):
    """Whether a live compiler holds the queue's lock (a non-blocking shared
    lock, taken and released at once, fails)."""
    if fcntl is None:
        return False
    try:
        fd = os.open(os.path.join(qdir, "worker.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False



class _Worker:
    """This process's side of the background compiler of its cache folder
    (:mod:`svmlab._jit_worker`, which describes the queue).

    A request is a file in the queue folder; the compiler is started when no
    live one holds the folder's lock, so every process using one cache
    folder shares one compiler (issue 33: one per process piled up, 19 at
    once).  While a request of this process is not done, each look at it
    (:meth:`is_done`, at most once a second) checks that a compiler is alive
    and starts one when it is not: a compiler that died, or one that exited
    idle just as a request arrived, is replaced, and a small call goes on
    interpreted meanwhile instead of compiling here."""

    #: seconds between two looks at the lock while a request is pending
    PROBE_EVERY = 1.0
    #: compilers this process starts for one request before it gives up on it
    MAX_STARTS = 4

    def __init__(self):
        self.q = sys.modules[__name__]  # the queue's helpers, beside this class
        self.dir = queue_dir() if fcntl is not None else None
        self.ok = self.dir is not None
        self.proc = None  # the compiler this process started last (may serve others)
        self.ids = {}  # key -> request name
        self.starts = {}  # request name -> compilers started for it
        self.last_probe = 0.0
        self.cond = threading.Condition()

    def _path(self, name, ext):
        return os.path.join(self.dir, name + ext)

    def _spawn(self):
        env = dict(os.environ)
        env["SVMLAB_JIT_WORKER"] = "1"
        env["SVMLAB_JIT"] = "eager"
        env["SVMLAB_PROGRESS"] = "0"
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"]
                                    if env.get("PYTHONPATH") else "")
        if self.proc is not None:
            self.proc.poll()  # reap the last one
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "svmlab._jit_worker", self.dir],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env, cwd=root, start_new_session=True)
        except OSError:
            self.ok = False
            return False
        return True

    def _ensure_alive(self, force=False):
        """Start a compiler when none holds the folder's lock."""
        now = time.monotonic()
        if not force and now - self.last_probe < self.PROBE_EVERY:
            return True
        self.last_probe = now
        if self.q.lock_is_held(self.dir):
            return True
        if self.proc is not None and self.proc.poll() is None:
            return True  # started a moment ago, not yet holding the lock
        return self._spawn()

    def submit(self, kind, key, payload, what="solver kernels"):
        """Queue a request (once per folder) and make sure a compiler runs;
        False when there is no background compiler here."""
        with self.cond:
            if not self.ok:
                return False
            if key in self.ids:
                return True
            name = self.q.request_name(kind, payload)
            try:
                # a result left from before is stale: the caller found no code
                for ext in (".done", ".fail"):
                    if os.path.exists(self._path(name, ext)):
                        os.unlink(self._path(name, ext))
                if not (os.path.exists(self._path(name, ".req"))
                        or os.path.exists(self._path(name, ".run"))):
                    req = dict(kind=kind, payload=payload, what=what, tries=0)
                    self.q.write_atomic(self._path(name, ".req"), pickle.dumps(req, protocol=4))
            except OSError:
                self.ok = False
                return False
            self.ids[key] = name
            return self._ensure_alive(force=True)

    def submit_compile(self, key):
        disp, sig = key
        py = disp.py_func
        try:
            payload = (py.__module__, py.__qualname__, pickle.dumps(sig, protocol=4))
        except Exception:
            return False
        return self.submit("compile", key, payload, what=_family_of(disp))

    def result(self, key):
        """``"done"``, ``"fail"``, or None while pending (None also when
        ``key`` was never sent)."""
        name = self.ids.get(key)
        if name is None:
            return None
        if os.path.exists(self._path(name, ".done")):
            return "done"
        if os.path.exists(self._path(name, ".fail")):
            return "fail"
        return None

    def is_done(self, key):
        """Whether request ``key`` has an answer (or never will: this process
        has given up on it).  A pending request gets a live compiler."""
        with self.cond:
            name = self.ids.get(key)
            if name is None or not self.ok or self.result(key) is not None:
                return True
            if not (os.path.exists(self._path(name, ".req"))
                    or os.path.exists(self._path(name, ".run"))):
                return True  # removed by someone else: nothing will answer
            if time.monotonic() - self.last_probe >= self.PROBE_EVERY:
                if not self.q.lock_is_held(self.dir) and not (
                        self.proc is not None and self.proc.poll() is None):
                    n = self.starts.get(name, 0)
                    if n >= self.MAX_STARTS:
                        return True
                    self.starts[name] = n + 1
                    self._ensure_alive(force=True)
                self.last_probe = time.monotonic()
            return False

    def wait(self, key, what, timeout=None):
        """Block until request ``key`` is done, showing what the compiler is
        doing (:class:`_Progress`)."""
        if self.is_done(key):
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        with _Progress(lambda: self._describe(what),
                       final=lambda: f"waiting for the background compiler ({what})"):
            while not self.is_done(key):
                if deadline is not None and time.monotonic() > deadline:
                    break
                time.sleep(0.2)

    def _describe(self, what):
        st = self.q.read_status(self.dir) if self.dir else None
        if not st:
            return f"waiting for the background compiler ({what}): starting"
        elapsed = max(time.time() - float(st.get("started", time.time())), 0.0)
        return "waiting for the background compiler: " + _describe_counts(
            st.get("what", what), st.get("k", 0), st.get("n"), elapsed, st.get("estimate"))

    def busy(self):
        with self.cond:
            return self.ok and any(self.result(k) is None and not self.is_done(k)
                                   for k in list(self.ids))

    def close(self):
        """Nothing to close: the compiler finishes the queue and exits idle."""


_the_worker = None


def _worker():
    global _the_worker
    with _lock:
        if _the_worker is None:
            _the_worker = _Worker()
        return _the_worker


def background_busy():
    """Whether the background compiler still has a request of this process."""
    return _the_worker is not None and _the_worker.busy()


def wait_background(timeout=None):
    """Block until every request this process sent to the background compiler
    is done."""
    w = _the_worker
    if w is None:
        return
    with w.cond:
        keys = list(w.ids)
    for key in keys:
        w.wait(key, "solvers", timeout)


# --------------------------------------------------------------------------
# A cache folder that cannot be written

class CacheWriteWarning(UserWarning):
    """numba's cache folder cannot be written (full disk, read-only folder):
    compiled code is kept in memory for this process only."""


_cache_warned = False
_cache_writes_ok = True


def _warn_cache(exc):
    global _cache_warned, _cache_writes_ok
    _cache_writes_ok = False
    with _lock:
        if _cache_warned:
            return
        _cache_warned = True
    import warnings

    warnings.warn(f"svmlab: numba's cache cannot be written ({exc}); compiled code is kept "
                  "in memory for this process only, and a new process compiles again. "
                  "Free disk space or point NUMBA_CACHE_DIR at a writable folder.",
                  CacheWriteWarning, stacklevel=3)


def _guard_cache_writes(disp):
    """Make a failing cache write of ``disp`` (numba's ``save_overload``) a
    warning: the fit goes on with the code in memory (issue 33 item 17)."""
    cache = getattr(disp, "_cache", None)
    if cache is None or type(cache).__name__ == "NullCache":
        return disp

    def save_overload(sig, data):
        if not _cache_writes_ok:
            return None
        try:
            return type(cache).save_overload(cache, sig, data)
        except OSError as exc:
            _warn_cache(exc)
            return None

    cache.save_overload = save_overload
    return disp


# --------------------------------------------------------------------------
# Visible compilation: what compiles, k of about n, and an estimate

def _progress_enabled():
    return os.environ.get("SVMLAB_PROGRESS", "1") != "0" and not _IN_WORKER


def _describe_counts(what, k, n, elapsed, estimate):
    """"the SMO solver: 12 of about 44 kernels, 20 s so far, about 35 s left"."""
    if n:
        n = max(int(n), k)
        text = f"{what}: {k} of about {n} kernels compiled, {elapsed:.0f} s so far"
        # the measured rate once enough kernels are done, else the table's
        # CPU-seconds for the kernels still to come
        if k >= max(5, n // 10) and elapsed > 0:
            left = elapsed / k * (n - k)
        elif estimate:
            left = float(estimate) * (n - k) / n
        elif k >= 2:
            left = elapsed / k * (n - k)
        else:
            left = None
        if left is not None and k < n:
            text += f", about {left:.0f} s left"
        return text
    return (f"{what}: {k} kernel{'' if k == 1 else 's'} compiled, {elapsed:.0f} s so far "
            "(no estimate yet)")


_MASS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_compile_mass.json")


def _mass_table():
    """The compile mass: ``{key: {"n": kernels, "s": wall seconds, "cpu":
    CPU-seconds of the compiling thread}}``, measured
    (svmlab/_compile_mass.json, measured when the package was released, then
    what this cache folder measured itself, which wins)."""
    table = {}
    paths = [_MASS_FILE]
    try:
        qd = queue_dir()
        if qd:
            paths.append(os.path.join(qd, "mass.json"))
    except Exception:  # pragma: no cover
        pass
    import json

    for path in paths:
        try:
            with open(path) as f:
                table.update(json.load(f))
        except (OSError, ValueError):
            pass
    return table


def _record_mass(key, n, seconds, cpu):
    """Remember in the cache folder what compiling ``key`` took here."""
    import json

    try:
        qd = queue_dir()
        if not qd:
            return
        path = os.path.join(qd, "mass.json")
        try:
            with open(path) as f:
                table = json.load(f)
        except (OSError, ValueError):
            table = {}
        table[key] = {"n": int(n), "s": round(float(seconds), 2), "cpu": round(float(cpu), 2)}
        write_atomic(path, json.dumps(table, indent=1, sort_keys=True).encode())
    except Exception:  # pragma: no cover - a measurement never breaks a compilation
        pass


_counters: list = []


class CompileCounter:
    """Counts the kernels compiled on this thread inside the context (numba's
    compile events) and knows, from the measured compile mass
    (:func:`_mass_table`), about how many there will be and how long they
    take.  ``key`` names the unit in the table (``"warm:smo"``,
    ``"kernel:svmlab.smo._platt.platt_run"``); ``status_file`` (the
    background compiler) gets the counts written at every kernel; the
    measured count and time are recorded when anything was compiled."""

    def __init__(self, what, key=None, status_file=None, request=None):
        self.what = what
        self.key = key or f"what:{what}"
        self.status_file = status_file
        self.request = request
        self.k = 0
        row = _mass_table().get(self.key) or {}
        self.n = row.get("n")
        # CPU-seconds: the wall time of a compilation on a core of its own
        self.estimate = row.get("cpu", row.get("s"))

    def __enter__(self):
        self.t0 = time.perf_counter()
        self.cpu0 = time.thread_time()
        self.thread = threading.get_ident()
        _counters.append(self)
        self._status()
        return self

    def elapsed(self):
        return time.perf_counter() - self.t0

    def describe(self):
        return _describe_counts(self.what, self.k, self.n, self.elapsed(), self.estimate)

    def compiled(self, disp):
        self.k += 1
        self._status()

    def _status(self):
        if self.status_file is None:
            return
        import json

        st = dict(pid=os.getpid(), request=self.request, what=self.what, k=self.k, n=self.n,
                  started=time.time() - self.elapsed(), estimate=self.estimate)
        try:
            write_atomic(self.status_file, json.dumps(st).encode())
        except OSError:
            pass

    def __exit__(self, exc_type, *exc):
        if self in _counters:
            _counters.remove(self)
        if self.k and exc_type is None:
            _record_mass(self.key, self.k, self.elapsed(), time.thread_time() - self.cpu0)
        return False


class _Progress:
    """A display that moves while something slow happens: a line
    "svmlab: <text>" refreshed every half second where the line can be
    rewritten (a terminal, a notebook's output area), a new line every 15 s
    elsewhere (a log file), then "... done (N s)".  ``text()`` gives the
    line.  Nothing for what ends within ``delay`` seconds, nothing when
    :envvar:`SVMLAB_PROGRESS` is ``0``."""

    def __init__(self, text, delay=1.0, final=None):
        self.text = text
        self.final = final or text
        self.delay = delay
        self.thread = None
        self.stop = threading.Event()
        self.shown = False
        stream = sys.stderr
        isatty = getattr(stream, "isatty", lambda: False)
        try:
            tty = bool(isatty())
        except Exception:
            tty = False
        self.rewrite = tty or "ipykernel" in sys.modules
        self.every = 0.5 if self.rewrite else 15.0

    def _line(self):
        try:
            return f"svmlab: {self.text()}"
        except Exception:  # pragma: no cover
            return "svmlab: compiling"

    def _run(self):
        if self.stop.wait(self.delay):
            return
        width = 0
        while True:
            line = self._line()
            if self.rewrite:
                sys.stderr.write("\r" + line.ljust(width))
                width = len(line)
            else:
                sys.stderr.write(line + "\n")
            sys.stderr.flush()
            self.shown = True
            if self.stop.wait(self.every):
                return

    def __enter__(self):
        self.t0 = time.perf_counter()
        if _progress_enabled():
            self.thread = threading.Thread(target=self._run, daemon=True,
                                           name="svmlab-progress")
            self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.thread is not None:
            self.stop.set()
            self.thread.join()
            if self.shown:
                try:
                    what = self.final()
                except Exception:  # pragma: no cover
                    what = "compiling"
                end = f"svmlab: {what}: done ({time.perf_counter() - self.t0:.1f} s)"
                sys.stderr.write(("\r" if self.rewrite else "") + end + "\n")
                sys.stderr.flush()
        return False


_compile_depth = threading.local()
_ONCE = "once per installation; later sessions load it from numba's cache"


class announce:
    """Within this context, compilations on this thread are shown as one
    moving display for ``what`` (started at the first compilation, if any;
    ``key`` names it in the compile-mass table) instead of one per compiled
    kernel.  ``compiled`` tells afterwards whether anything was compiled."""

    def __init__(self, what, key=None):
        self.what = what
        self.key = key
        self.compiled = False
        self.counter = None
        self.progress = None

    def __enter__(self):
        self.outer = getattr(_compile_depth, "announce", None)
        _compile_depth.announce = self
        return self

    def start(self):
        self.compiled = True
        if self.counter is None:
            self.counter = CompileCounter(f"compiling the {self.what}", key=self.key)
            self.counter.__enter__()
            c = self.counter
            self.progress = _Progress(
                lambda: f"{c.describe()} ({_ONCE})",
                final=lambda: f"{c.what}: {c.k} kernel{'' if c.k == 1 else 's'} compiled")
            self.progress.__enter__()

    def __exit__(self, *exc):
        _compile_depth.announce = self.outer
        if self.progress is not None:
            self.progress.__exit__(*exc)
        if self.counter is not None:
            self.counter.__exit__(*exc)
        return False


def _on_compile_start(disp):
    d = getattr(_compile_depth, "n", 0)
    _compile_depth.n = d + 1
    if d == 0 and not _IN_WORKER:
        ann = getattr(_compile_depth, "announce", None)
        if ann is not None:
            ann.start()
            return
        if not disp.py_func.__module__.startswith("svmlab."):
            return
        ann = announce(f"{_family_of(disp)} for this input", key=f"kernel:{_qualname(disp)}")
        ann.__enter__()
        ann.start()
        _compile_depth.own = ann


def _on_compile_end(disp):
    me = threading.get_ident()
    for c in list(_counters):
        if c.thread == me:
            c.compiled(disp)
    d = getattr(_compile_depth, "n", 1) - 1
    _compile_depth.n = d
    if d == 0:
        ann = getattr(_compile_depth, "own", None)
        _compile_depth.own = None
        if ann is not None:
            ann.__exit__(None, None, None)


def _register_compile_listener():
    """numba's compile events reach :func:`_on_compile_start` and
    :func:`_on_compile_end` (registered when numba is imported)."""
    try:
        from numba.core import event as _ev

        class _CompileListener(_ev.Listener):
            def on_start(self, event):
                try:
                    _on_compile_start(event.data["dispatcher"])
                except Exception:  # pragma: no cover - never break a compilation
                    pass

            def on_end(self, event):
                try:
                    _on_compile_end(event.data["dispatcher"])
                except Exception:  # pragma: no cover
                    pass

        _ev.register("numba:compile", _CompileListener())
    except Exception:  # pragma: no cover - numba without the event API
        pass


if not _LAZY_OK:
    _numba_setup()
    _handed_over = True
