"""The grader's sandbox, inside: run as ``python -I _sandbox_child.py`` by
:mod:`svmlab.course._sandbox`, never imported by the student's code.

This file is deliberately standalone (the standard library, and numpy for
the student): it is loaded before the sandbox hides the svmlab package, and
the student's process never imports svmlab.  Its two processes:

* the *supervisor* (the process the parent started): reads the
  configuration line from standard input, joins the cgroup the parent
  made, and, where the operating system allows (running as root), enters
  new mount, PID, network (no network at all) and IPC namespaces;
  otherwise it makes itself a child subreaper.  It forks the init and waits for it; then it kills
  whatever of the student's is left (in a PID namespace the kernel does
  this when the init exits) and exits with the evaluator's status
  (128 + the signal when it was killed);
* the *init* (PID 1 of the namespace): hides the grader's files (svmlab's
  package, its checkout, the solutions, the submissions) under empty
  read-only mounts, remounts everything else read-only, gives the tree a
  private ``/tmp`` and ``/proc``, forks the evaluator and waits for it
  (a namespace's PID 1 ignores the signals it sends itself, so the
  student's code never runs as PID 1);
* the *evaluator*: drops to the unprivileged user, sets its
  resource limits, and then serves the parent's requests: ``defs`` (run a
  notebook's definitions, compiled by the parent) and ``call`` (call one of
  the student's functions on arguments the parent sends and return the
  value).  Nothing here checks or scores anything: the parent compares the
  values with its references.

Values cross the channel as JSON lines; :func:`encode` and :func:`decode`
(shared with the parent, which imports this module) allow plain data only:
numbers, strings, ``None``, lists, tuples, dicts, sets and numeric numpy
arrays and scalars.
"""

from __future__ import annotations

import base64
import ctypes
import ctypes.util
import json
import os
import signal
import sys
import time

MAX_DEPTH = 32
NOBODY = 65534

#: the CPU clock, taken before any student code runs: a submission that
#: replaces ``time.process_time`` (or ``time.perf_counter``) changes the module
#: attribute, not this reference (the parent also clamps what this reports to
#: the kernel's own count, which has only clock-tick resolution)
_CPU_CLOCK = time.process_time

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC = 0x00020000, 0x20000000, 0x40000000, 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38


# ------------------------------------------------------------------ values
class Unsendable(TypeError):
    """A value that is not plain data."""


def encode(v, depth=0):
    """``v`` as JSON data (raises :class:`Unsendable` for anything else)."""
    if depth > MAX_DEPTH:
        raise Unsendable("the value is nested too deeply")
    np = sys.modules.get("numpy")
    if np is not None and isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        if a.dtype.kind not in "biufc":
            raise Unsendable(f"a numpy value of dtype {a.dtype} is not a number")
        return {"a" if isinstance(v, np.ndarray) else "n": a.dtype.str,
                "shape": list(a.shape), "b": base64.b64encode(a.tobytes(order="C")).decode("ascii")}
    if v is None or isinstance(v, (bool, str)):
        return str(v) if isinstance(v, str) else v
    if isinstance(v, int):
        v = int(v)
        return {"i": str(v)} if abs(v) > 2**53 else v
    if isinstance(v, float):
        return {"f": float.__repr__(float(v))}
    if isinstance(v, complex):
        return {"c": [float.__repr__(v.real), float.__repr__(v.imag)]}
    if isinstance(v, list):
        return [encode(x, depth + 1) for x in v]
    if isinstance(v, tuple):
        return {"t": [encode(x, depth + 1) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {"s": [encode(x, depth + 1) for x in v]}
    if isinstance(v, dict):
        return {"d": [[encode(k, depth + 1), encode(x, depth + 1)] for k, x in v.items()]}
    raise Unsendable(f"a value of type {type(v).__name__} cannot be returned to the grader "
                     f"(return numbers, tuples, lists or numpy arrays)")


def decode(v, depth=0):
    """The value :func:`encode` wrote; ``ValueError`` for anything malformed."""
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply")
    if v is None or isinstance(v, (bool, str, int)):
        return v
    if isinstance(v, float):
        return v
    if isinstance(v, list):
        return [decode(x, depth + 1) for x in v]
    if not isinstance(v, dict) or not v:
        raise ValueError(f"unexpected {type(v).__name__}")
    if "i" in v:
        return int(v["i"])
    if "f" in v:
        return float(v["f"])
    if "c" in v:
        return complex(float(v["c"][0]), float(v["c"][1]))
    if "t" in v:
        return tuple(decode(x, depth + 1) for x in _list(v["t"]))
    if "s" in v:
        return set(decode(x, depth + 1) for x in _list(v["s"]))
    if "d" in v:
        return {decode(k, depth + 1): decode(x, depth + 1) for k, x in _list(v["d"])}
    if "a" in v or "n" in v:
        import numpy as np

        dt = np.dtype(str(v.get("a") or v.get("n")))
        if dt.kind not in "biufc" or dt.hasobject or dt.itemsize > 32:
            raise ValueError(f"dtype {dt} is not numeric")
        shape = tuple(int(s) for s in _list(v["shape"]))
        if len(shape) > 32 or any(s < 0 for s in shape):
            raise ValueError("bad shape")
        raw = base64.b64decode(str(v["b"]), validate=True)
        size = 1
        for s in shape:
            size *= s
        if size * dt.itemsize != len(raw):
            raise ValueError("the array's bytes do not match its shape")
        a = np.frombuffer(raw, dtype=dt).reshape(shape).copy()
        return a if "a" in v else a[()]
    raise ValueError("unknown value")


def _list(x):
    if not isinstance(x, list):
        raise ValueError("expected a list")
    return x


# ------------------------------------------------------------------ svmlab stubs
class _Stub:
    """What ``import svmlab...`` gives the student's code in the sandbox:
    any attribute is another stub, and a call records the name (the
    checkers' guard) and raises."""

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _Stub(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        STATE["guard"] = STATE["guard"] or self._name
        raise RuntimeError(f"{self._name}: svmlab is not available while grading; "
                           f"write the computation yourself")

    def __repr__(self):
        return f"<svmlab stub {self._name}>"


class _StubFinder:
    """A meta path finder that serves every ``svmlab`` module as stubs."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == "svmlab" or name.startswith("svmlab."):
            import importlib.machinery

            return importlib.machinery.ModuleSpec(name, cls, is_package=True)
        return None

    @staticmethod
    def create_module(spec):
        import types

        class StubModule(types.ModuleType):
            def __getattr__(self, attr):
                if attr.startswith("__") and attr.endswith("__"):
                    raise AttributeError(attr)
                return _Stub(f"{self.__name__}.{attr}")

        m = StubModule(spec.name)
        m.__path__ = []
        return m

    @staticmethod
    def exec_module(module):
        pass


STATE = {"guard": None}


# ------------------------------------------------------------------ OS plumbing
_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source, target, fstype, flags, data=None):
    _check(libc().mount(source and source.encode(), target.encode(),
                        fstype and fstype.encode(), ctypes.c_ulong(flags),
                        data and data.encode()), f"mount {target}")


def prctl(option, value):
    _check(libc().prctl(option, ctypes.c_ulong(value), 0, 0, 0), "prctl")


def descendants(root):
    """Every process below ``root`` (from ``/proc``; pids, deepest last)."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        try:
            fields = stat[stat.rindex(b")") + 2:].split()
            state, ppid = fields[0], int(fields[1])
        except (ValueError, IndexError):
            continue
        if state in (b"Z", b"X"):  # dead, waiting to be collected
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


def kill_tree(root, reap=True):
    """Stop, then kill, every process below ``root`` until none is left
    (``reap``: also collect this process's own dead children)."""
    for _ in range(100):
        pids = descendants(root)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for p in pids:
                try:
                    os.kill(p, sig)
                except OSError:
                    pass
        while reap:  # collect what is ours (a subreaper's orphans)
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


def _mountpoints():
    out = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 5:
                out.append((parts[4].replace("\\040", " "), parts[5].split(",")))
    return out


def _needed_paths():
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__),
             os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    np = sys.modules.get("numpy")
    if np is not None:
        paths.add(os.path.dirname(os.path.dirname(np.__file__)))
    return {os.path.realpath(p) for p in paths}


def _hide(path, needed, hidden, depth=0):
    """An empty read-only mount over ``path`` (a folder) or /dev/null over a
    file; a folder that holds something the evaluator needs (the Python
    installation) is hidden piece by piece instead."""
    path = os.path.realpath(path)
    if path in hidden or not os.path.exists(path) or path == "/" or depth > 4:
        return
    if os.path.isdir(path):
        inside = [n for n in needed if n == path or n.startswith(path + os.sep)]
        if inside:
            if any(n == path for n in needed):
                return
            for name in os.listdir(path):
                _hide(os.path.join(path, name), needed, hidden, depth + 1)
            return
        mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
              "size=4k,mode=0")
    elif os.path.isfile(path):
        mount("/dev/null", path, None, MS_BIND)
    hidden.add(path)


def _svmlab_locations():
    """The package folders ``import svmlab`` would load, and their checkouts."""
    import importlib.util

    out = []
    try:
        spec = importlib.util.find_spec("svmlab")
    except (ImportError, ValueError):
        spec = None
    for loc in (list(spec.submodule_search_locations or []) if spec else []):
        out.append(loc)
        parent = os.path.dirname(os.path.realpath(loc))
        if any(os.path.exists(os.path.join(parent, m)) for m in ("pyproject.toml", ".git")):
            out.append(parent)
    return out


def _expose(needed, hold):
    """Make the Python installation reachable for the unprivileged user when
    it lies below a folder only root may enter (``/root/.pyenv``): an empty
    read-only folder over that ancestor, with the installation bound back
    at its own path (the rest of the ancestor stays out of sight)."""
    tops = sorted(p for p in needed if not any(p != q and p.startswith(q + os.sep)
                                               for q in needed))
    blocked = {}
    for p in tops:
        parts = p.split(os.sep)
        for k in range(2, len(parts)):
            a = os.sep.join(parts[:k])
            if not os.stat(a).st_mode & 0o001:
                blocked.setdefault(a, []).append(p)
                break
    for k, (a, paths) in enumerate(blocked.items()):
        held = []
        for j, p in enumerate(paths):
            h = os.path.join(hold, f"{k}-{j}")
            os.makedirs(h)
            mount(p, h, None, MS_BIND | MS_REC)
            held.append((p, h))
        mount("tmpfs", a, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        for p, h in held:
            os.makedirs(p, 0o755, exist_ok=True)
            mount(h, p, None, MS_BIND | MS_REC)
            libc().umount2(h.encode(), 2)


def isolate(cfg):
    """In the new mount namespace (root): hide, remount read-only, private
    /tmp and /proc; returns the working folder."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    needed = _needed_paths()
    own = set()
    for target, size in (("/tmp", cfg["tmp_bytes"]), ("/var/tmp", 4096), ("/dev/shm", 4096)):
        if os.path.isdir(target):
            mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(size)},mode=1777")
            own.add(target)
    _expose(needed, "/tmp/.hold")
    hidden = set()
    for p in list(cfg.get("hide", [])) + _svmlab_locations():
        try:
            _hide(p, needed, hidden)
        except OSError:
            pass
    try:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        pass
    flags = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}
    for target, opts in _mountpoints():
        if target in own or target.startswith("/proc") or os.path.realpath(target) in hidden:
            continue
        extra = sum(flags.get(o, 0) for o in opts)
        try:
            mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | extra)
        except OSError:
            pass
    work = "/tmp/work"
    os.mkdir(work, 0o700)
    return work


def drop_privileges(work, uid=NOBODY, gid=NOBODY):
    os.chown(work, uid, gid)
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


def set_limits(cfg, as_nobody):
    import resource

    limits = [(resource.RLIMIT_AS, cfg.get("memory_bytes")),
              (resource.RLIMIT_FSIZE, cfg.get("file_bytes")), (resource.RLIMIT_CORE, 0)]
    if as_nobody:
        limits.append((resource.RLIMIT_NPROC, cfg.get("max_processes", 256)))
    for limit, value in limits:
        if value is None:
            continue
        soft, hard = resource.getrlimit(limit)
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        try:
            resource.setrlimit(limit, (value, value if as_nobody else hard))
        except (ValueError, OSError):
            pass


# ------------------------------------------------------------------ the evaluator
class _Lines:
    def __init__(self, fd):
        self.fd, self.buf = fd, b""

    def next(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line


def _reply(fd, msg):
    data = (json.dumps(msg, allow_nan=False) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def _exc_reply(exc, fname):
    import traceback

    tb = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in tb if f.filename.startswith("<") and "cell" in f.filename]
    line = frames[-1].lineno if frames else None
    where = frames[-1].name if frames else fname
    try:
        msg = str(exc)[:2000]
    except Exception:  # noqa: BLE001 - a student's exception with a broken __str__
        msg = ""
    return {"ok": False, "exc": type(exc).__name__[:100], "msg": msg, "line": line,
            "where": where[:100], "not_implemented": isinstance(exc, NotImplementedError),
            "exit": not isinstance(exc, Exception)}


def serve(chan_in, chan_out, nonce):
    """Answer the parent's requests until it closes the channel."""
    import builtins
    import marshal

    namespaces = {}
    lines = _Lines(chan_in)
    while True:
        line = lines.next()
        if line is None:
            return
        req = json.loads(line)
        out = {"id": req["id"], "nonce": nonce}
        STATE["guard"] = None
        if req["op"] == "defs":
            ns = namespaces.setdefault(req["nb"], {"__name__": "__main__",
                                                   "__builtins__": builtins})
            errors = []
            for index, blob in req["cells"]:
                try:
                    exec(marshal.loads(base64.b64decode(blob)), ns)  # noqa: S102 - sandboxed
                except BaseException as exc:  # noqa: BLE001 - reported, never re-raised
                    errors.append(f"cell {index}: {type(exc).__name__}: {exc}"[:500])
            kinds = {}
            for name in req["want"]:
                fn = ns.get(name)
                kinds[name] = ("missing" if fn is None else "function" if callable(fn)
                               else type(fn).__name__[:60])
            out.update(ok=True, errors=errors, kinds=kinds)
        elif req["op"] == "call":
            fname = req["fn"]
            fn = namespaces.get(req["nb"], {}).get(fname)
            try:
                args = [decode(a) for a in req["args"]]
                t0 = _CPU_CLOCK()
                try:
                    value = fn(*args)
                finally:
                    out["cpu"] = _CPU_CLOCK() - t0
                out.update(ok=True, value=encode(value))
            except Unsendable as exc:
                out.update(ok=False, exc="TypeError", msg=str(exc), line=None, where=fname,
                           not_implemented=False, exit=False)
            except BaseException as exc:  # noqa: BLE001 - the student's, reported
                out.update(_exc_reply(exc, fname))
        out["guard"] = STATE["guard"]
        try:
            _reply(chan_out, out)
        except ValueError:  # an unsendable float somewhere: report it plainly
            _reply(chan_out, {"id": req["id"], "nonce": nonce, "ok": False,
                              "exc": "TypeError", "msg": "the answer could not be sent",
                              "line": None, "where": "", "not_implemented": False,
                              "exit": False, "guard": STATE["guard"]})


def _status(status):
    """An exit code for a wait status (128 + the signal of a killed process)."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def init(cfg, isolated):
    """The tree's init (PID 1 of the namespace when there is one): sets up
    the file system, forks the evaluator, waits for it and exits with its
    status (in a PID namespace every process left dies with it)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    work = isolate(cfg) if isolated else cfg["workdir"]
    pid = os.fork()
    if pid == 0:
        _run(evaluator, cfg, isolated, work)
    os.close(0)
    os.close(1)
    _, status = os.waitpid(pid, 0)
    os._exit(_status(status))


def _run(fn, *args):
    try:
        fn(*args)
        code = 0
    except BaseException as exc:  # noqa: BLE001 - set-up failures, reported in the log
        import traceback

        try:
            os.write(2, traceback.format_exc().encode())
        except OSError:
            pass
        code = 70 if not isinstance(exc, SystemExit) else 71
    os._exit(code)


def evaluator(cfg, isolated, work):
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    as_nobody = isolated and os.geteuid() == 0
    if as_nobody:
        drop_privileges(work)
    try:
        prctl(PR_SET_NO_NEW_PRIVS, 1)
    except OSError:
        pass
    os.chdir(work)
    os.environ.clear()
    os.environ.update(cfg.get("env", {}), HOME=work, TMPDIR=work)
    set_limits(cfg, as_nobody)
    sys.meta_path.insert(0, _StubFinder)
    for name in [m for m in sys.modules if m == "svmlab" or m.startswith("svmlab.")]:
        del sys.modules[name]
    chan_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")
    serve(0, chan_out, cfg["nonce"])


def _first_line(fd):
    """One line read byte by byte (what follows it belongs to the evaluator)."""
    out = bytearray()
    while True:
        b = os.read(fd, 1)
        if not b or b == b"\n":
            return bytes(out)
        out += b


def main():
    cfg = json.loads(_first_line(0))
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass
    import numpy  # noqa: F401 - loaded before anything is hidden

    if cfg.get("cgroup_procs"):
        try:
            with open(cfg["cgroup_procs"], "w") as f:
                f.write(str(os.getpid()))
        except OSError as exc:
            print(f"sandbox: could not join the cgroup: {exc}", file=sys.stderr)
    isolated = False
    if cfg.get("namespaces"):
        try:
            _check(libc().unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC),
                   "unshare")
            isolated = True
        except OSError as exc:
            print(f"sandbox: no namespaces ({exc})", file=sys.stderr)
    if not isolated:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
    me = os.getpid()
    print(f"sandbox: isolated={isolated}", file=sys.stderr, flush=True)
    pid = os.fork()
    if pid == 0:
        _run(init, cfg, isolated)

    def stop(signum, frame):
        kill_tree(me)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    os.close(0)
    os.close(1)
    _, status = os.waitpid(pid, 0)
    kill_tree(me)
    os._exit(_status(status))


if __name__ == "__main__":
    main()
