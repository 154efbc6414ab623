"""The grader's worker: one process per student, run as
``python -m svmlab.course._worker TASK.json``.

It executes the *definitions* of each of the student's notebooks (imports,
functions, classes, call-free constants; :func:`svmlab.course._nb.definitions`)
in a fresh namespace per notebook, then calls each exercise's checker on the
student's function.  It talks to the parent over the pipe whose descriptor
the task names, one line per event:

* ``E <t>`` / ``L <t>``: the student's code was entered / left at monotonic
  time ``t`` (the parent adds these up per exercise and kills this process
  when the student's code has run longer than the time limit: only the
  student's own time counts, never the checker's or a numba compilation);
* JSON objects: ``{"ev": "start", "ex": id}``, ``{"ev": "defs", ...}``,
  ``{"ev": "result", ...}`` and ``{"ev": "done"}``.

The student's output (``print`` in a loop) goes to ``/dev/null``; the
process's own file descriptors 1 and 2 are the parent's choice
(``/dev/null`` and a small log file).
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import json
import os
import sys
import time

from ._nb import definitions

class _Clock:
    """Reports each entry into and exit from the student's code to the parent."""

    def __init__(self, pipe):
        self.pipe = pipe
        self.depth = 0

    def enter(self):
        if self.depth == 0:
            self.pipe.write(f"E {time.monotonic():.6f}\n")
        self.depth += 1

    def leave(self):
        self.depth -= 1
        if self.depth == 0:
            self.pipe.write(f"L {time.monotonic():.6f}\n")


def _send(pipe, **event):
    pipe.write(json.dumps(event, default=str) + "\n")


def _result_fields(res) -> dict:
    """Every field of an ``ExerciseResult`` (whatever fields it has) as JSON data."""
    if dataclasses.is_dataclass(res):
        out = {f.name: getattr(res, f.name) for f in dataclasses.fields(res)}
    else:  # pragma: no cover - a checker returning something else
        out = {"status": "failed" if not res else "passed", "message": str(res)}
    for name in ("passed", "score", "cases_passed", "n_cases_total", "exercise_id",
                 "guard_fired", "used_reference"):
        if name not in out and hasattr(res, name):
            out[name] = getattr(res, name)
    return {k: (v if isinstance(v, (str, int, float, bool, type(None))) else str(v))
            for k, v in out.items()}


# The wrapper that reports the student's time is compiled here from source,
# outside the package's files and with nothing of svmlab in its closure: the
# checkers' guard (a profile hook and a scan of the function's code for
# svmlab objects) must see the student's function, not the grader.
_WRAPPER = """
def make(fn, write, monotonic, depth):
    def student_code(*args, **kwargs):
        if depth[0] == 0:
            write("E %.6f\\n" % monotonic())
        depth[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                write("L %.6f\\n" % monotonic())
    return student_code
"""


def _timed(fn, clock):
    ns = {"__name__": "__grader__"}
    exec(compile(_WRAPPER, "<grader>", "exec"), ns)  # noqa: S102 - our own fixed source
    depth = [0]
    wrapper = ns["make"](fn, clock.pipe.write, time.monotonic, depth)
    return functools.wraps(fn)(wrapper)


def run(task, pipe):
    import svmlab.exercises as exercises  # imported before any student code runs

    clock = _Clock(pipe)
    # the student's print() goes nowhere: a C-level file on /dev/null (buffered,
    # so printing in a loop costs little), not Python code of this package,
    # which the checkers' guard would take for a call into svmlab
    sink = open(os.devnull, "w", encoding="utf-8")
    for nb in task["notebooks"]:
        _send(pipe, ev="notebook", nb=nb["name"])
        ns = {"__name__": "__main__", "__builtins__": builtins}
        errors = []
        sys.stdout = sys.stderr = sink
        try:
            for index, src in nb["cells"]:
                tree, err = definitions(src)
                if tree is None:
                    errors.append(f"cell {index} was skipped: syntax error, {err}")
                    continue
                if not tree.body:
                    continue
                code = compile(tree, f"<{nb['name']} cell {index}>", "exec")
                clock.enter()
                try:
                    exec(code, ns)  # noqa: S102 - the student's definitions, in this sandboxed worker
                except BaseException as exc:  # noqa: BLE001 - reported, never re-raised
                    errors.append(f"cell {index}: {type(exc).__name__}: {exc}")
                finally:
                    clock.leave()
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        _send(pipe, ev="defs", nb=nb["name"], errors=errors)
        for ex in nb["exercises"]:
            _send(pipe, ev="start", ex=ex["id"])
            fn = ns.get(ex["function"])
            if fn is None or not callable(fn):
                why = ("is not defined" if fn is None
                       else f"is a {type(fn).__name__}, not a function")
                _send(pipe, ev="result", ex=ex["id"], status="missing",
                      message=f"{ex['function']} {why} in the notebook"
                              + (f" ({'; '.join(errors)})" if errors else "") + ".")
                continue
            checker = getattr(exercises, ex["checker"])
            sys.stdout = sys.stderr = sink
            try:
                res = checker(_timed(fn, clock))
            except BaseException as exc:  # noqa: BLE001 - sys.exit() and the like in student code
                clock.depth = 0
                sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
                _send(pipe, ev="result", ex=ex["id"], status="crash",
                      message=f"the checker was stopped by {type(exc).__name__}"
                              f"{': ' + str(exc) if str(exc) else ''} raised in "
                              f"{ex['function']} (a function must return, not exit).")
                continue
            finally:
                sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            _send(pipe, ev="result", ex=ex["id"], **_result_fields(res))
    _send(pipe, ev="done")


def _limit_resources(memory_bytes, file_bytes):
    """Address space and file size limits for this process and its children
    (set here rather than in a ``preexec_fn``, which is unsafe in the
    parent's threads)."""
    import resource

    for limit, value in ((resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_FSIZE, file_bytes)):
        if value:
            soft, hard = resource.getrlimit(limit)
            value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
            resource.setrlimit(limit, (value, hard))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], encoding="utf-8") as f:
        task = json.load(f)
    _limit_resources(task.get("memory_bytes"), task.get("file_bytes"))
    pipe = os.fdopen(task["fd"], "w", buffering=1, encoding="utf-8")
    run(task, pipe)
    pipe.close()


if __name__ == "__main__":
    main()
