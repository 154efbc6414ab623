"""Resource bounds for the tests of untrusted input (model and dataset files).

The bounds are generous (tens to hundreds of times what the code needs) and
enforced by the operating system, never by comparing a measured time with a
threshold, so they cannot make CI flaky: they only catch a parser that hangs
or allocates gigabytes.

* :func:`run_limited` runs Python code in a subprocess under ``RLIMIT_CPU``
  (CPU seconds, not wall-clock: a busy machine does not count) and an
  address-space limit of what the imports took plus ``extra_mb``.  Used for
  reproducers that hang or allocate tens of GiB on unfixed code, so that
  such code fails the test instead of hurting the machine.
* :func:`memory_headroom` lowers this process's own address-space limit to
  what is mapped now plus ``extra_mb`` for the duration of a block (the
  fuzz tests), and puts it back.

Linux only (``/proc/self/statm``, ``resource``); elsewhere the limits are
not applied and the tests still check the outcomes.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mapped_bytes():
    """The address space this process maps now (Linux), or None."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[0])
    except OSError:
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


_PRELUDE = """
import json, os, resource, sys, traceback
{imports}
def _limit(extra_mb):
    with open("/proc/self/statm") as f:
        now = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    soft = now + extra_mb * 2**20
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
_limit({extra_mb})
try:
    result = None
{body}
    out = {{"outcome": "ok", "result": result}}
except MemoryError:
    out = {{"outcome": "MemoryError", "message": traceback.format_exc()[-2000:]}}
except Exception as exc:
    out = {{"outcome": type(exc).__name__, "message": str(exc)[:4000],
           "mro": [c.__name__ for c in type(exc).__mro__]}}
print("@@RESULT@@" + json.dumps(out, default=repr))
"""


def run_limited(body, *, imports="", cpu_s=60, extra_mb=1024, env=None):
    """Run ``body`` (statements that may set ``result``, JSON-able) in a
    fresh interpreter after ``imports``, with at most ``cpu_s`` CPU seconds
    and ``extra_mb`` MiB of address space beyond what the imports mapped.

    Returns a dict: ``outcome`` ("ok", an exception's class name,
    "MemoryError", or "killed" when the CPU limit or a signal ended the
    process), ``result`` / ``message`` / ``mro``, and ``stderr``.
    """
    if resource is None or not os.path.exists("/proc/self/statm"):  # pragma: no cover
        extra_mb = 1 << 30
    code = _PRELUDE.format(imports=textwrap.dedent(imports),
                           body=textwrap.indent(textwrap.dedent(body), "    "),
                           extra_mb=int(extra_mb))

    def limits():
        if resource is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_s), int(cpu_s) + 5))

    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "case.py")
        with open(script, "w") as f:
            f.write(code)
        proc = subprocess.run([sys.executable, script], capture_output=True, text=True,
                              cwd=ROOT, env=full_env, preexec_fn=limits,
                              timeout=max(600, 10 * cpu_s))
    for line in proc.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            out = json.loads(line[len("@@RESULT@@"):])
            out["stderr"] = proc.stderr[-4000:]
            return out
    return {"outcome": "killed", "returncode": proc.returncode,
            "stderr": proc.stderr[-4000:], "stdout": proc.stdout[-2000:]}


@contextlib.contextmanager
def memory_headroom(extra_mb):
    """Within the block, this process may map at most ``extra_mb`` MiB more
    than it maps at entry (``RLIMIT_AS``); an allocation beyond that raises
    MemoryError instead of exhausting the machine."""
    now = mapped_bytes()
    if resource is None or now is None:  # pragma: no cover
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = now + int(extra_mb) * 2**20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY:
        want = min(want, soft)
    resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
