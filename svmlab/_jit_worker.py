"""The background compiler of :mod:`svmlab._jit`: one process per cache
folder compiles svmlab's kernels into numba's on-disk cache, one request at
a time, for every process that uses that folder, and exits when idle.

The queue (a folder, :func:`svmlab._jit.queue_dir`, beside numba's cache)
--------------------------------------------------------------
``NAME.req``
    a request, written atomically by a client: a pickled dict with ``kind``
    (``"compile"``: ``payload = (module, qualname, pickled_signature)``,
    numba's ``compile`` for those argument types, which loads from the cache
    when the code is there, else compiles and saves; ``"compile_args"``:
    the same with ``payload = (module, qualname, description)``, the
    argument types described without numba by a client that has not
    imported it (:func:`svmlab._jit.describe_args`); ``"warm"``: ``payload``
    is a family of :func:`svmlab._warm.warm`), ``what`` (words for messages)
    and ``tries``.  ``NAME`` is a hash of the request, so the same request
    from many processes is queued once.
``NAME.run``
    the request being worked on (renamed from ``.req``).
``NAME.done`` / ``NAME.fail``
    its result (``.fail`` holds the message).
``worker.lock``
    held (``flock``, exclusive) by the one live compiler for its lifetime;
    the kernel releases it when the process dies, however it dies.  A client
    that finds it free starts a compiler; a second compiler started at the
    same moment finds it taken and exits.
``status.json``
    what the compiler is doing now: the request, ``k`` kernels compiled of
    about ``n``, seconds so far and the estimate (:mod:`svmlab._jit` shows it
    to a process waiting for the compiler).

A request found as ``.run`` when a compiler starts was being compiled by one
that died: it is queued again once (``tries``), then failed, so a request
that kills the compiler cannot restart it forever.  With no request for
:data:`IDLE_SECONDS` (:envvar:`SVMLAB_JIT_IDLE`) the compiler exits.

Run as ``python -m svmlab._jit_worker QUEUE_DIR`` with
``SVMLAB_JIT_WORKER=1`` (:mod:`svmlab._jit` does).
"""

from __future__ import annotations

import glob
import os
import pickle
import sys
import time

#: seconds without a request after which the compiler exits
IDLE_SECONDS = float(os.environ.get("SVMLAB_JIT_IDLE", "20"))
#: a request is tried this many times by compilers that die on it, then failed
MAX_TRIES = 2

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no shared compiler
    fcntl = None

# The queue's helpers used by both sides (queue_dir, request_name,
# write_atomic, read_status, lock_is_held) live in svmlab._jit, which this
# module imports only after it holds the lock: a second compiler started at
# the same moment exits without importing numba.


# --------------------------------------------------------------------------
# The compiler

def _take_lock(qdir, patience=2.0):
    """The queue's lock, or None when another compiler holds it.  A client's
    probe holds a shared lock for microseconds: when the exclusive lock is
    refused but a shared one is granted, no compiler holds it, and it is
    tried again (for up to ``patience`` seconds)."""
    fd = os.open(os.path.join(qdir, "worker.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    end = time.monotonic() + patience
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            pass
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError:  # held exclusively: a live compiler
            os.close(fd)
            return None
        if time.monotonic() > end:
            os.close(fd)
            return None
        time.sleep(0.02)


def _recover(qdir):
    from svmlab._jit import write_atomic

    """Requests left ``.run`` by a compiler that died: queue again, or fail
    after :data:`MAX_TRIES`; results older than an hour are removed."""
    for run in glob.glob(os.path.join(qdir, "*.run")):
        stem = run[:-4]
        try:
            with open(run, "rb") as f:
                req = pickle.load(f)
            req["tries"] = req.get("tries", 0) + 1
            if req["tries"] >= MAX_TRIES:
                write_atomic(stem + ".fail", b"the background compiler died on this request")
            else:
                write_atomic(stem + ".req", pickle.dumps(req, protocol=4))
            os.unlink(run)
        except Exception:
            pass
    now = time.time()
    for old in glob.glob(os.path.join(qdir, "*.done")) + glob.glob(os.path.join(qdir, "*.fail")):
        try:
            if now - os.path.getmtime(old) > 3600:
                os.unlink(old)
        except OSError:
            pass


def _next(qdir):
    reqs = []
    for p in glob.glob(os.path.join(qdir, "*.req")):
        try:
            reqs.append((os.path.getmtime(p), p))
        except OSError:
            pass
    for _, p in sorted(reqs):
        run = p[:-4] + ".run"
        try:
            os.replace(p, run)
            with open(run, "rb") as f:
                return run[:-4], pickle.load(f)
        except Exception:
            continue
    return None, None


def _compile(module, qualname, sig_bytes):
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj.compile(pickle.loads(sig_bytes))


def _compile_args(module, qualname, desc):
    """``compile_args``: the argument types described without numba
    (:func:`svmlab._jit.describe_args`, sent before the client imported
    numba), typed here as numba types the call's arguments."""
    import importlib

    from svmlab._jit import skeleton_args

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj.compile(tuple(obj.typeof_pyval(a) for a in skeleton_args(desc)))


def _serve(qdir):
    from svmlab import _jit
    from svmlab._jit import write_atomic

    idle_since = time.monotonic()
    while True:
        stem, req = _next(qdir)
        if stem is None:
            if time.monotonic() - idle_since > IDLE_SECONDS:
                return
            time.sleep(0.2)
            continue
        kind, payload, what = req["kind"], req["payload"], req.get("what", "solver kernels")
        key = f"warm:{payload}" if kind == "warm" else f"kernel:{payload[0]}.{payload[1]}"
        try:
            with _jit.CompileCounter(what, key=key, status_file=os.path.join(qdir, "status.json"),
                                     request=os.path.basename(stem)):
                if kind == "compile":
                    _compile(*payload)
                elif kind == "compile_args":
                    _compile_args(*payload)
                elif kind == "warm":
                    from svmlab._warm import warm
                    warm(payload)
                else:
                    raise ValueError(f"unknown request {kind!r}")
            write_atomic(stem + ".done", b"")
        except BaseException as exc:  # report, and go on with the next request
            text = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:500]
            write_atomic(stem + ".fail", text.encode())
        for done in (stem + ".run", os.path.join(qdir, "status.json")):
            try:
                os.unlink(done)
            except OSError:
                pass
        idle_since = time.monotonic()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    os.environ["SVMLAB_JIT_WORKER"] = "1"
    qdir = argv[0]
    if fcntl is None:  # pragma: no cover
        return 0
    fd = _take_lock(qdir)
    if fd is None:  # another compiler serves this folder
        return 0
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
    except OSError:
        pass
    _recover(qdir)
    try:
        _serve(qdir)
    finally:
        try:
            os.unlink(os.path.join(qdir, "status.json"))
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
