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
2. otherwise, when the call is *small* (:func:`is_small`: every array in
   its arguments, nested tuples included, has at most :data:`SMALL_ROWS`
   rows and :data:`SMALL_ELEMENTS` elements, none is float32), runs the
   interpreted tier now and asks a background process to compile this
   function for these argument types into numba's cache (one process per
   Python process, :class:`_Worker`; it keeps compiling after the caller
   exits, so the next session starts compiled).  Later calls with the same
   types run interpreted until that compilation is done, then load it: a
   long fit that started interpreted goes on compiled, from the same state,
   at its next call;
3. otherwise (a large call) compiles here, with a visible message
   (:func:`_on_compile`), or, when the background process is already
   compiling this very function, waits for it, also with a message.

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
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
import types as pytypes

import numpy as np
from numba import njit as _numba_njit

from . import _shipped

__all__ = ["njit", "set_mode", "get_mode", "interpreted", "is_small", "SMALL_ROWS",
           "SMALL_ELEMENTS"]

#: a call is small when no array in it has more rows than this ...
SMALL_ROWS = 5000
#: ... or more elements than this (a cache of 1000 full rows of 1000 values)
SMALL_ELEMENTS = 1_000_000

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
# The dispatcher

try:  # numba's CPU dispatcher, the class numba.njit returns
    from numba.core.registry import CPUDispatcher as _CPUDispatcher
except Exception:  # pragma: no cover - an unknown numba: plain numba.njit
    _CPUDispatcher = None


if _CPUDispatcher is not None:

    class TieredDispatcher(_CPUDispatcher):
        """numba's CPU dispatcher whose miss path (``_compile_for_args``,
        which numba's C dispatcher calls when no machine code matches the
        argument types) is decided by :func:`_choose`.  Hits never reach
        Python: compiled code runs at numba's full call speed."""

        def _compile_for_args(self, *args, **kws):
            return _choose(self, args, kws)

        def _numba_compile_for_args(self, *args, **kws):
            return _CPUDispatcher._compile_for_args(self, *args, **kws)
else:  # pragma: no cover
    TieredDispatcher = None


def njit(*args, **kwargs):
    """``numba.njit`` (same arguments), returning a dispatcher whose first
    call may run interpreted (module docstring).  Extra keywords:
    ``interpret=False`` marks a kernel that must never run interpreted;
    ``twin=f`` gives its interpreted tier (a Python function computing the
    same values, proven equal by a test)."""
    interpret_ok = kwargs.pop("interpret", True)
    twin = kwargs.pop("twin", None)
    if kwargs.get("parallel") or kwargs.get("fastmath"):
        interpret_ok = False

    def wrap(fn):
        disp = _numba_njit(**kwargs)(fn)
        _shipped.attach(disp)  # machine code shipped in a wheel (svmlab._shipped)
        if TieredDispatcher is not None and isinstance(disp, _CPUDispatcher):
            disp.__class__ = TieredDispatcher
            disp._svmlab_interpret_ok = interpret_ok
            disp._svmlab_twin = twin
        return disp

    if len(args) == 1 and callable(args[0]):
        return wrap(args[0])
    if args:  # explicit signatures: numba's eager compilation, no tiers
        return _numba_njit(*args, **kwargs)
    return wrap


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
            if (TieredDispatcher is not None and isinstance(value, TieredDispatcher)
                    and can_interpret(value)):
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
                                 if isinstance(c.cell_contents, TieredDispatcher)
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


def _unfaithful_ops(code):
    """The operations of ``code`` (nested code included) whose interpreted
    result may differ from the compiled one, as a set of names."""
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
    """Whether a call with these arguments may run interpreted: every array in
    them (nested tuples included) has at most :data:`SMALL_ROWS` rows and
    :data:`SMALL_ELEMENTS` elements, and none is a non-empty float32 array
    (empty ones are placeholders for unused modes)."""
    for a in _arrays(args):
        if a.dtype == np.float32 and a.size:
            return False
        if a.size > SMALL_ELEMENTS or (a.ndim > 1 and a.shape[0] > SMALL_ROWS):
            return False
    return True


# --------------------------------------------------------------------------
# The policy

_lock = threading.RLock()
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
        cres = disp._cache.load_overload(sig, disp.targetctx)
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
    small = is_small(args) and can_interpret(disp)
    with _lock:
        state = _pending.get(key)
    if state is None:
        if _caching(disp):
            entry = _load_cached(disp, sig)
            if entry is not None:
                return entry
        if small and _caching(disp) and _worker().submit_compile(key):
            with _lock:
                _pending[key] = "pending"
            return interpreted(disp)
        return disp._numba_compile_for_args(*args)
    # queued in the background process
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
# The background process

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


class _Worker:
    """One background Python process that compiles into numba's cache.

    Requests go down its stdin as length-prefixed pickles; it answers one
    line per request on stdout (``done ID`` or ``fail ID message``), read by
    a daemon thread here.  It inherits this process's environment (so the
    same :envvar:`NUMBA_CACHE_DIR`) and imports svmlab from the same
    directory.  When this process exits, its stdin closes; it finishes the
    requests already sent, then exits."""

    def __init__(self):
        self.proc = None
        self.ok = True
        self.next_id = 0
        self.ids = {}
        self.done = {}
        self.cond = threading.Condition()

    def _start(self):
        if self.proc is not None:
            return self.proc.poll() is None
        if not self.ok:
            return False
        env = dict(os.environ)
        env["SVMLAB_JIT_WORKER"] = "1"
        env["SVMLAB_JIT"] = "eager"
        env["SVMLAB_PROGRESS"] = "0"
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"]
                                    if env.get("PYTHONPATH") else "")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "svmlab._jit_worker"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=root)
        except OSError:
            self.ok = False
            return False
        threading.Thread(target=self._read, daemon=True, name="svmlab-jit-reader").start()
        return True

    def _read(self):
        for line in self.proc.stdout:
            parts = line.decode(errors="replace").rstrip("\n").split(" ", 2)
            if len(parts) >= 2 and parts[1].isdigit():
                with self.cond:
                    self.done[int(parts[1])] = parts[0]
                    self.cond.notify_all()
        with self.cond:  # the process ended: nothing more will be done
            self.ok = False
            self.cond.notify_all()

    def _send(self, msg):
        data = pickle.dumps(msg, protocol=4)
        try:
            self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
            self.proc.stdin.flush()
            return True
        except (OSError, ValueError):
            self.ok = False
            return False

    def submit(self, kind, key, payload):
        with self.cond:
            if key in self.ids:
                return True
            if not self._start():
                return False
            rid = self.next_id
            self.next_id += 1
            if not self._send((kind, rid, payload)):
                return False
            self.ids[key] = rid
            return True

    def submit_compile(self, key):
        disp, sig = key
        py = disp.py_func
        try:
            payload = (py.__module__, py.__qualname__, pickle.dumps(sig, protocol=4))
        except Exception:
            return False
        return self.submit("compile", key, payload)

    def is_done(self, key):
        with self.cond:
            rid = self.ids.get(key)
            return rid is None or rid in self.done or not self.ok or self.proc.poll() is not None

    def wait(self, key, what, timeout=None):
        """Block until request ``key`` is done, showing a message."""
        if self.is_done(key):
            return
        with _Message(f"waiting for the background compilation of svmlab's {what}"):
            deadline = None if timeout is None else time.monotonic() + timeout
            with self.cond:
                while not self.is_done(key):
                    if deadline is not None and time.monotonic() > deadline:
                        break
                    self.cond.wait(0.5)

    def busy(self):
        with self.cond:
            return (self.proc is not None and self.ok and self.proc.poll() is None
                    and any(r not in self.done for r in self.ids.values()))

    def close(self):
        if self.proc is not None and self.proc.stdin:
            try:
                self.proc.stdin.close()
            except OSError:
                pass


_the_worker = None


def _worker():
    global _the_worker
    if _the_worker is None:
        _the_worker = _Worker()
        atexit.register(_the_worker.close)
    return _the_worker


def background_busy():
    """Whether the background process is still compiling something."""
    return _the_worker is not None and _the_worker.busy()


def wait_background(timeout=None):
    """Block until every request sent to the background process is done."""
    w = _the_worker
    if w is None:
        return
    with w.cond:
        keys = list(w.ids)
    for key in keys:
        w.wait(key, "solvers", timeout)


# --------------------------------------------------------------------------
# Visible compilation

def _progress_enabled():
    return os.environ.get("SVMLAB_PROGRESS", "1") != "0" and not _IN_WORKER


class _Message:
    """A one-line note while something slow happens: "svmlab: <what> ..."
    then "... done (N s)", on stderr (a notebook shows it under the cell).
    Nothing for what ends within ``delay`` seconds (a short compilation is
    not worth a line); the first line is printed by a timer thread."""

    def __init__(self, what, delay=1.0):
        self.what = what
        self.delay = delay
        self.shown = False
        self.timer = None
        self.lock = threading.Lock()

    def _show(self):
        with self.lock:
            if self.timer is not None and not self.shown:
                self.shown = True
                sys.stderr.write(f"svmlab: {self.what} ...\n")
                sys.stderr.flush()

    def __enter__(self):
        self.t0 = time.perf_counter()
        if _progress_enabled():
            if self.delay <= 0:
                self.timer = True
                self._show()
            else:
                self.timer = threading.Timer(self.delay, self._show)
                self.timer.daemon = True
                self.timer.start()
        return self

    def __exit__(self, *exc):
        with self.lock:
            if isinstance(self.timer, threading.Timer):
                self.timer.cancel()
            self.timer = None
            if self.shown:
                sys.stderr.write(f"svmlab: {self.what}: done "
                                 f"({time.perf_counter() - self.t0:.1f} s)\n")
                sys.stderr.flush()
        return False


_compile_depth = threading.local()


class announce:
    """Within this context, compilations on this thread are announced once,
    as "compiling the <what>" (at the first compilation, if any) and "done"
    at the end of the context, instead of one line per compiled kernel.
    ``compiled`` tells afterwards whether anything was compiled."""

    def __init__(self, what):
        self.what = what
        self.compiled = False
        self.msg = None

    def __enter__(self):
        self.outer = getattr(_compile_depth, "announce", None)
        _compile_depth.announce = self
        return self

    def start(self):
        self.compiled = True
        if self.msg is None:
            self.msg = _Message(f"compiling the {self.what} "
                                "(once per installation; later sessions load it from numba's cache)")
            self.msg.__enter__()

    def __exit__(self, *exc):
        _compile_depth.announce = self.outer
        if self.msg is not None:
            self.msg.__exit__(*exc)
        return False


def _on_compile_start(disp):
    d = getattr(_compile_depth, "n", 0)
    _compile_depth.n = d + 1
    if d == 0 and disp.py_func.__module__.startswith("svmlab."):
        ann = getattr(_compile_depth, "announce", None)
        if ann is not None:
            ann.start()
            return
        msg = _Message(f"compiling the {_family_of(disp)} for this input "
                       "(once per installation; later sessions load it from numba's cache)")
        _compile_depth.msg = msg
        msg.__enter__()


def _on_compile_end():
    d = getattr(_compile_depth, "n", 1) - 1
    _compile_depth.n = d
    if d == 0:
        msg = getattr(_compile_depth, "msg", None)
        _compile_depth.msg = None
        if msg is not None:
            msg.__exit__(None, None, None)


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
                _on_compile_end()
            except Exception:  # pragma: no cover
                pass

    if not _IN_WORKER:
        _ev.register("numba:compile", _CompileListener())
except Exception:  # pragma: no cover - numba without the event API
    pass
