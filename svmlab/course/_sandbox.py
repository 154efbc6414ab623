"""The grader's sandbox, outside: one student's code in a contained process
tree that the parent talks to over a validated channel.

:class:`Sandbox` starts ``python -I _sandbox_child.py`` (a supervisor that
forks the evaluator; see :mod:`svmlab.course._sandbox_child`) and sends it
requests: run a notebook's definitions, call one of the student's functions
on given arguments.  The checkers and the scores never leave the parent:
the evaluator only returns plain values.  What the parent enforces, whatever
the student's code does:

* time: every request has a time limit on the parent's own monotonic clock,
  and the channel is read with ``select`` (non-blocking); a closed pipe, a
  silent child or lines the parent did not ask for change nothing: at the
  deadline the whole tree is killed.  Only a line with the request's id and
  the sandbox's nonce is a reply; any other line is ignored;
* the tree: killed as a whole, by its cgroup where there is one, its PID
  namespace (the evaluator is its init: when it dies, the kernel kills every
  process in it), and by walking the supervisor's descendants (the
  supervisor is a child subreaper when there is no namespace, so a double
  fork or ``setsid`` does not leave the tree);
* memory: a cgroup memory limit for the whole tree where the machine allows
  one (cgroup v2 ``memory.max`` or v1 ``memory.limit_in_bytes``); else a
  watchdog thread adds up the tree's resident memory every 0.1 s and kills
  the tree above the limit.  ``RLIMIT_AS`` per process stays as a backstop;
* isolation (when running as root): the evaluator runs as ``nobody`` in its
  own mount and PID namespaces, with the grader's files hidden, every mount
  read-only, and a private ``/tmp`` as its only writable folder.

``SVMLAB_SANDBOX=none`` in the environment turns the operating system's
isolation off (the fallback a machine without root gets; the tests use it to
check that fallback).
"""

from __future__ import annotations

import builtins
import json
import math
import os
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import _sandbox_child as child

CHILD = Path(child.__file__).resolve()
MAX_LINE = 64 * 2**20
ENV = "SVMLAB_SANDBOX"


class _Clock:
    """The student's time on one request: the parent's monotonic clock,
    advanced at most ``STEP_CAP`` seconds per look at the channel (the
    parent looks every 0.1 s), so that a pause of the parent itself (another
    thread's checker holding the GIL for a numba compilation) is not counted
    as the student's time; ``left()`` is what remains of ``limit``."""

    STEP_CAP = 0.25

    def __init__(self, limit, hard_deadline):
        self.limit, self.hard_deadline = limit, hard_deadline
        self.used, self.last = 0.0, time.monotonic()

    def left(self):
        now = time.monotonic()
        self.used += min(max(now - self.last, 0.0), self.STEP_CAP)
        self.last = now
        if now >= self.hard_deadline:
            raise TimeoutError("hard")
        return min(self.limit - self.used, self.hard_deadline - now)


class Stopped(BaseException):
    """The sandbox was stopped (``why``: ``timeout``, ``hard``, ``memory``,
    ``crash``); a BaseException so that no checker mistakes it for the
    student's error."""

    def __init__(self, why, detail=""):
        super().__init__(why, detail)
        self.why, self.detail = why, detail


def isolation_available() -> bool:
    """Namespaces, a separate user and read-only mounts: root, unless
    ``SVMLAB_SANDBOX=none``."""
    return os.geteuid() == 0 and os.environ.get(ENV, "").lower() != "none"


# ------------------------------------------------------------------ cgroups
class _Cgroup:
    """A memory cgroup for one sandbox's tree (v2, else v1), or None."""

    def __init__(self, path, version):
        self.path, self.version = path, version
        self.procs = os.path.join(path, "cgroup.procs")

    @classmethod
    def create(cls, limit_bytes):
        if os.geteuid() != 0 or os.environ.get(ENV, "").lower() == "none":
            return None
        name = f"svmlab-grade-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            with open("/proc/self/cgroup", encoding="utf-8") as f:
                lines = [ln.strip().split(":", 2) for ln in f if ln.count(":") >= 2]
        except OSError:
            return None
        for hid, ctrl, path in lines:
            if hid == "0" and ctrl == "" and "memory" in _read("/sys/fs/cgroup/cgroup.controllers"):
                cg = cls._make(f"/sys/fs/cgroup{path.rstrip('/')}/{name}", 2,
                               {"memory.max": limit_bytes, "memory.swap.max": 0})
                if cg:
                    return cg
        for hid, ctrl, path in lines:
            if "memory" in ctrl.split(",") and os.path.isdir("/sys/fs/cgroup/memory"):
                cg = cls._make(f"/sys/fs/cgroup/memory{path.rstrip('/')}/{name}", 1,
                               {"memory.limit_in_bytes": limit_bytes,
                                "memory.memsw.limit_in_bytes": limit_bytes})
                if cg:
                    return cg
        return None

    @classmethod
    def _make(cls, path, version, settings):
        try:
            os.mkdir(path)
        except OSError:
            return None
        first = next(iter(settings))
        for key, value in settings.items():
            try:
                with open(os.path.join(path, key), "w") as f:
                    f.write(str(value))
            except OSError:
                if key == first:
                    try:
                        os.rmdir(path)
                    except OSError:
                        pass
                    return None
        return cls(path, version)

    def oom_kills(self) -> int:
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for line in _read(os.path.join(self.path, name)).splitlines():
            k, _, v = line.partition(" ")
            if k == "oom_kill":
                return int(v)
        return 0   # no count: an OOM kill still ends the evaluator (a crash)

    def kill(self):
        if self.version == 2:
            try:
                with open(os.path.join(self.path, "cgroup.kill"), "w") as f:
                    f.write("1")
            except OSError:
                pass
        for _ in range(100):
            pids = [int(p) for p in _read(self.procs).split()]
            if not pids:
                return
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)

    def remove(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill()
                time.sleep(0.05)


def _read(path) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def _stat(pid):
    """The fields of ``/proc/PID/stat`` after the command name (state first)."""
    raw = _read(f"/proc/{pid}/stat")
    return raw[raw.rfind(")") + 2:].split() if raw else None


def tree_rss(root) -> int:
    """Resident bytes of ``root`` and every process below it."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in [root] + child.descendants(root):
        try:
            total += int(_read(f"/proc/{pid}/statm").split()[1]) * page
        except (IndexError, ValueError):
            pass
    return total


# ------------------------------------------------------------------ the sandbox
class Sandbox:
    """One student's evaluator.  ``memory_bytes``: the whole tree's limit;
    ``hard_deadline``: monotonic time at which the tree is killed whatever
    it does; ``hide``: folders and files the student must not read."""

    def __init__(self, *, workdir, memory_bytes, file_bytes, hard_deadline, hide=(), env=None):
        self.memory_bytes = int(memory_bytes)
        self.hard_deadline = hard_deadline
        self.nonce = secrets.token_hex(16)
        self.killed = None            # why the tree was killed
        self.detail = ""
        self._ids = 0
        self._buf = b""
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self.isolated = isolation_available()
        self.cgroup = _Cgroup.create(self.memory_bytes)
        self._oom0 = self.cgroup.oom_kills() if self.cgroup else 0
        cfg = {"nonce": self.nonce, "namespaces": self.isolated,
               "cgroup_procs": self.cgroup.procs if self.cgroup else None,
               "memory_bytes": self.memory_bytes, "file_bytes": int(file_bytes),
               "tmp_bytes": int(file_bytes), "workdir": str(workdir),
               "hide": [str(p) for p in hide], "env": env or {}}
        self.log_path = Path(workdir) / f"sandbox-{self.nonce[:8]}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", str(CHILD)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, cwd=workdir, start_new_session=True,
                env=env)
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        try:
            self._write((json.dumps(cfg) + "\n").encode(),
                        _Clock(self.hard_deadline - time.monotonic(), self.hard_deadline))
        except (TimeoutError, Stopped):
            self.kill(self.killed or "crash", "the sandbox did not start")
        self._watch = threading.Thread(target=self._watchdog, daemon=True)
        self._watch.start()

    # -- killing
    def kill(self, why, detail=""):
        """Kill every process of the tree (idempotent); ``why`` is kept."""
        with self._lock:
            if self.killed is None:
                self.killed, self.detail = why, detail
        self._kill_all()

    def _kill_all(self):
        if self.cgroup:
            self.cgroup.kill()
        child.kill_tree(self.proc.pid, reap=False)
        try:
            self.proc.kill()
        except OSError:
            pass

    def _watchdog(self):
        while not self._closed.wait(0.1):
            if time.monotonic() > self.hard_deadline:
                self.kill("hard")
                return
            if self.cgroup is None:
                used = tree_rss(self.proc.pid)
                if used > self.memory_bytes:
                    self.kill("memory", f"{used / 2**20:.0f} MiB")
                    return

    def _check_memory(self):
        if self.cgroup and self.cgroup.oom_kills() > self._oom0:
            self.kill("memory")

    def _stopped(self):
        self._check_memory()
        if self.killed is None and self.proc.poll() is not None:
            self.killed = "crash"
        if self.killed is not None:
            self.kill(self.killed)
            raise Stopped(self.killed, self.detail)

    # -- the channel
    def _write(self, data, clock):
        view = memoryview(data)
        while view:
            left = clock.left()
            if left <= 0:
                raise TimeoutError
            try:
                _, ready, _ = select.select([], [self._in], [], min(left, 0.1))
            except ValueError:
                raise Stopped("crash") from None
            if self.killed is not None:
                self._stopped()
            if ready:
                try:
                    n = os.write(self._in, view)
                except BlockingIOError:
                    continue
                except (BrokenPipeError, OSError):
                    self._stopped()
                    raise Stopped("crash") from None
                view = view[n:]

    def _readline(self, clock):
        while b"\n" not in self._buf:
            left = clock.left()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self._out], [], [], min(left, 0.1))
            if self.killed is not None:
                self._stopped()
            if not ready:
                if self.proc.poll() is not None:
                    self._stopped()
                continue
            try:
                chunk = os.read(self._out, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:   # every copy of the channel closed: nothing more will come
                try:            # the evaluator died (its status says how), or closed it
                    self.proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    self.kill(self.killed or "crash", "the student's process closed its "
                                                      "channel to the grader")
                self._stopped()
            self._buf += chunk
            if len(self._buf) > MAX_LINE and b"\n" not in self._buf:
                self.kill("crash", "a line on the grader's channel longer than 64 MiB")
                self._stopped()
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def request(self, op, limit, **fields):
        """``(reply, seconds)``: send one request and wait for its reply for
        at most ``limit`` seconds of the student's time (:class:`_Clock`);
        then the tree is killed and :class:`Stopped` ``("timeout")`` raised
        (``"hard"`` past the hard deadline)."""
        self._ids += 1
        rid = self._ids
        clock = _Clock(limit, self.hard_deadline)
        try:
            self._write((json.dumps(dict(fields, op=op, id=rid), allow_nan=True) + "\n").encode(),
                        clock)
            while True:
                line = self._readline(clock)
                try:
                    reply = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if (isinstance(reply, dict) and reply.get("id") == rid
                        and reply.get("nonce") == self.nonce):
                    break
        except TimeoutError:
            self.kill("hard" if time.monotonic() >= self.hard_deadline else "timeout")
            raise Stopped(self.killed, self.detail) from None
        clock.left()
        elapsed = clock.used
        self._check_memory()
        if self.killed is not None:
            raise Stopped(self.killed, self.detail)
        return reply, elapsed

    def evaluator_cpu(self):
        """CPU seconds of the evaluator process (and its collected children),
        as the kernel counts them (in clock ticks), or None."""
        if getattr(self, "_evaluator", None) is None:
            kids = {}
            for p in child.descendants(self.proc.pid):
                st = _stat(p)
                if st:
                    kids.setdefault(int(st[1]), []).append((int(st[19]), p))
            inits = kids.get(self.proc.pid, [])
            below = kids.get(min(inits)[1], []) if inits else []
            self._evaluator = min(below)[1] if below else None
        if self._evaluator is None:
            return None
        st = _stat(self._evaluator)
        if not st:
            return None
        return sum(int(x) for x in st[11:15]) / os.sysconf("SC_CLK_TCK")

    def close(self):
        """End the evaluator and make sure nothing of the tree is left."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            pass
        self._closed.set()
        self._kill_all()
        self.proc.wait()
        self.proc.stdout.close()
        if self.cgroup:
            self.cgroup.remove()

    def log_tail(self, n=600) -> str:
        return _read(self.log_path).strip()[-n:]


# ------------------------------------------------------------------ the student's functions
_RAISERS: dict = {}


def _raise_at(exc, name, line):
    """Raise ``exc`` from a frame named like the student's function, at the
    student's line (the checkers name the line of a student's exception)."""
    if not (isinstance(name, str) and name.isidentifier()) or not isinstance(line, int):
        name, line = "call_in_sandbox", 1
    line = min(max(line, 1), 100000)
    key = (name, line)
    if key not in _RAISERS:
        ns = {}
        exec(compile("\n" * (line - 1) + f"def {name}(e): raise e", "<student>", "exec"), ns)  # noqa: S102
        _RAISERS[key] = ns[name]
    _RAISERS[key](exc)


def _exception(reply):
    name = str(reply.get("exc", "Exception"))
    msg = str(reply.get("msg", ""))
    if reply.get("not_implemented"):
        return NotImplementedError(msg)
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        cls = type(name if name.isidentifier() else "Exception", (Exception,), {})
    try:
        return cls(msg)
    except Exception:  # noqa: BLE001 - an exception class that wants other arguments
        return type(name if name.isidentifier() else "Exception", (Exception,), {})(msg)


class Budget:
    """The time the student's code has used on one exercise (the parent's clock)."""

    def __init__(self, limit):
        self.limit, self.used = limit, 0.0

    def left(self):
        return max(self.limit - self.used, 0.0)


def remote_function(box, notebook, name, budget, guard_hit):
    """The student's function ``name`` as the checkers see it: a call sends
    the arguments to the sandbox and returns the value it sent back (decoded:
    plain data only).  The student's exceptions are raised again here;
    a call into svmlab's code raises :class:`svmlab.exercises._core.GuardHit`."""

    tick = 1.0 / os.sysconf("SC_CLK_TCK")
    cpu = [0.0]

    def call(*args, **kwargs):
        if kwargs:
            raise TypeError(f"{name}() is called with positional arguments only")
        try:
            enc = [child.encode(a) for a in args]
        except child.Unsendable as exc:
            raise TypeError(str(exc)) from None
        k0 = box.evaluator_cpu()
        reply, seconds = box.request("call", budget.left(), nb=notebook, fn=name, args=enc)
        k1 = box.evaluator_cpu()
        budget.used += seconds
        # CPU time: the evaluator's own precise count, trusted only within two
        # clock ticks of what the kernel counted (a student cannot shrink it)
        claimed = reply.get("cpu")
        claimed = float(claimed) if isinstance(claimed, (int, float)) else seconds
        claimed = claimed if math.isfinite(claimed) else seconds
        if k0 is not None and k1 is not None:
            claimed = min(max(claimed, k1 - k0 - 2 * tick), k1 - k0 + 2 * tick)
        cpu[0] += max(claimed, 0.0)
        if reply.get("guard"):
            raise guard_hit(str(reply["guard"])[:200])
        if reply.get("exit"):
            raise Stopped("exit", str(reply.get("exc", "SystemExit"))[:100]
                          + (f": {str(reply.get('msg'))[:200]}" if reply.get("msg") else ""))
        if not reply.get("ok"):
            _raise_at(_exception(reply), reply.get("where"), reply.get("line"))
        try:
            return child.decode(reply.get("value"))
        except (ValueError, TypeError, KeyError, RecursionError, OverflowError) as exc:
            raise TypeError(f"{name} returned a value the grader could not read ({exc})") from None

    call.__name__ = call.__qualname__ = name
    call.svmlab_guarded_elsewhere = True    # the guard ran in the sandbox
    call.svmlab_clock = lambda: cpu[0]      # speed tests: the CPU time the kernel vouches for
    return call
