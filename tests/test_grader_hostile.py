"""Hostile submissions: ``python -m svmlab.course grade`` is a sandbox that a
submission cannot fool (issue 33, items 1-9, and more).

One grade run (the command line, as an instructor runs it) grades a made-up
class of students on notebook 04 (three exercises): one right (the
instructor's solutions), and one per attack.  Every hostile student defines
the exercises wrongly or not at all, so any pass, any score above the wrong
answer's, or any trace left on the machine after ``grade`` returned, is a
hole.  The reference notebook is a tiny one written here (the three check
calls), so the test does not depend on the course's notebooks.

The same class is graded twice: with the operating system's isolation
(namespaces, the ``nobody`` user, cgroups; this machine and CI run as root)
and without it (``SVMLAB_SANDBOX=none``: what a machine without root gets);
the attacks on files only apply to the first (the README's Security section
says what each promises).
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from svmlab.course import _grade

ROOT = Path(__file__).resolve().parents[1]
NB = "04_ordinal_regression"
TIMEOUT = 10.0
HARD_TIMEOUT = 400.0
MEMORY_MB = 320
IDS = ["04.count_pairs", "04.ordinal_sweep", "04.ordinal_constraint"]
TOKEN = uuid.uuid4().hex[:12]      # names the files and processes the attacks leave


def _cell(src, tags=()):
    return {"cell_type": "code", "id": uuid.uuid4().hex[:8], "metadata": {"tags": list(tags)},
            "execution_count": None, "outputs": [], "source": src}


def _notebook(cells):
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [_cell(c) for c in cells]}


REFERENCE = _notebook([
    "import numpy as np\nfrom svmlab.exercises import (check_count_pairs, check_sweep,\n"
    "                              check_ordinal_constraint)",
    "def count_pairs(y):\n    raise NotImplementedError",
    "check_count_pairs(count_pairs)",
    "def ordinal_sweep(scores, y):\n    raise NotImplementedError",
    "check_sweep(ordinal_sweep)",
    "def ordinal_constraint(X, c_plus, c_minus, m):\n    raise NotImplementedError",
    "check_ordinal_constraint(ordinal_constraint)",
])

WRONG = ("import numpy as np\n\n"
         "def count_pairs(y):\n    return 0\n\n"
         "def ordinal_sweep(scores, y):\n    n = len(y)\n"
         "    return np.zeros(n, np.int64), np.zeros(n, np.int64)\n\n"
         "def ordinal_constraint(X, c_plus, c_minus, m):\n"
         "    return np.zeros(np.shape(X)[1]), 0.0\n")


def _solutions_file():
    """The instructor's solution of notebook 04 (where the grader says the
    solutions are; a grader without that constant: the checkout's folder)."""
    where = getattr(_grade, "SOLUTIONS_DIR", ROOT / "notebooks" / "solutions")
    path = next(iter(sorted(where.glob("solutions_04_*.py"))), None)
    assert path is not None, f"no solutions_04_*.py in {where}"
    return path


def _attacks(tmp, port):
    """``{student: source}``: every student's notebook is one code cell
    (``port``: a TCP port the test listens on, on this machine)."""
    csv_path = tmp / "grades.csv"
    sol = _solutions_file()
    marks = {"pkg": ROOT / "svmlab" / "exercises" / f"STUDENT_WAS_HERE_{TOKEN}.txt",
             "tmp": Path("/tmp") / f"student_was_here_{TOKEN}",
             "near": tmp / f"student_was_here_{TOKEN}"}
    a = {}
    a["right"] = sol.read_text(encoding="utf-8")
    a["wrong"] = WRONG
    # 1: a class body (it runs with the definitions) replaces the checkers
    a["patch_checkers"] = WRONG + textwrap.dedent("""
        import svmlab.exercises as _ex
        class _Patch:
            for _n in ("check_count_pairs", "check_sweep", "check_ordinal_constraint"):
                setattr(_ex, _n, lambda fn, *a, **k: type("R", (), {
                    "passed": True, "status": "passed", "message": "ok", "score": 1.0})())
        import svmlab.exercises._core as _core
        class _Patch2:
            _core.run_cases = lambda *a, **k: None
        """)
    # 2: a forged result on every file descriptor (and in any task file)
    a["forge_result"] = textwrap.dedent("""
        import json, os, glob
        def _forge():
            line = ""
            for ex in ("04.count_pairs", "04.ordinal_sweep", "04.ordinal_constraint"):
                line += json.dumps({"ev": "result", "ex": ex, "status": "passed",
                                    "passed": True, "score": 50, "n_passed": 50,
                                    "n_total": 1, "message": "forged"}) + "\\n"
            main = __import__("sys").modules.get("__main__")
            nonce = getattr(main, "STATE", {}).get("nonce", "")
            for rid in range(1, 200):
                line += json.dumps({"id": rid, "nonce": nonce, "ok": True, "value": 0,
                                    "score": 50, "status": "passed"}) + "\\n"
            for fd in range(0, 64):
                try:
                    os.write(fd, line.encode())
                except OSError:
                    pass
            for p in glob.glob("task.json") + glob.glob("../task.json"):
                try:
                    open(p, "a").write(line)
                except OSError:
                    pass
        def count_pairs(y):
            _forge()
            return 0
        def ordinal_sweep(scores, y):
            _forge()
            return 0
        def ordinal_constraint(X, c_plus, c_minus, m):
            _forge()
            return 0
        """)
    # 3: the instructor's solutions, read and executed at call time
    a["read_solutions"] = textwrap.dedent(f"""
        import os, sys
        def _solution(name):
            paths = [{str(sol)!r}] + [os.path.join(p, "notebooks", "solutions",
                                                   "solutions_04_ordinal.py")
                                      for p in sys.path + os.environ.get("PYTHONPATH", "").split(":")]
            for p in paths:
                try:
                    src = open(p).read()
                except OSError:
                    continue
                ns = {{}}
                exec(src, ns)
                return ns[name]
            raise RuntimeError("no solutions")
        def count_pairs(y):
            return _solution("count_pairs")(y)
        def ordinal_sweep(scores, y):
            return _solution("ordinal_sweep")(scores, y)
        def ordinal_constraint(X, c_plus, c_minus, m):
            return _solution("ordinal_constraint")(X, c_plus, c_minus, m)
        """)
    # 4: the guard's profile hook switched off, svmlab's own reference called
    a["guard_off"] = textwrap.dedent("""
        import sys, importlib
        def _ref(name):
            sys.setprofile(None)
            mod = sys.modules.get("svm" + "lab.exercises.ordinal")
            if mod is None:
                mod = importlib.import_module("svm" + "lab.exercises.ordinal")
            return getattr(mod, name)
        def count_pairs(y):
            import numpy as np
            y = np.asarray(y)
            return int(np.sum(y[:, None] > y[None, :]))
        def ordinal_sweep(scores, y):
            return _ref("brute_force_counts")(scores, y)
        def ordinal_constraint(X, c_plus, c_minus, m):
            return _ref("reference_constraint")(X, c_plus, c_minus, m)
        """)
    # 5: a detached grandchild (double fork, setsid) that rewrites the grade sheet
    a["detach_rewrite"] = WRONG.replace("def count_pairs(y):\n    return 0\n", textwrap.dedent(f"""
        def count_pairs(y):
            import os, sys
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    code = ("import os, time\\n"
                            "p = {str(csv_path)!r}\\n"
                            "for _ in range(12000):\\n"     # until grade wrote the sheet
                            "    if os.path.exists(p):\\n"
                            "        break\\n"
                            "    time.sleep(0.05)\\n"
                            "for _ in range(200):\\n"
                            "    try:\\n"
                            "        open(p, 'w').write('student,score\\\\nx,999\\\\n')\\n"
                            "    except OSError:\\n"
                            "        pass\\n"
                            "    time.sleep(0.05)\\n"
                            "# {TOKEN}-detached\\n")
                    os.execv(sys.executable, [sys.executable, "-c", code])
                os._exit(0)
            return 0
        """))
    # 6: files written outside the student's folder
    writes = "\n".join(f"    _try({str(p)!r})" for p in marks.values())
    a["write_outside"] = WRONG + textwrap.dedent("""
        def _try(p):
            try:
                with open(p, "w") as f:
                    f.write("x")
            except OSError:
                pass
        class _Write:
        """) + writes + "\n"
    # 7: three forked children allocate memory: the tree, not each process, is limited
    a["fork_memory"] = WRONG.replace("def count_pairs(y):\n    return 0\n", textwrap.dedent(f"""
        def count_pairs(y):
            import os, time
            kids = []
            for _ in range(3):
                pid = os.fork()
                if pid == 0:
                    block = []
                    for _ in range({int(MEMORY_MB * 0.45) // 10}):
                        block.append(b"\\x01" * (10 * 2**20))   # written: resident
                    time.sleep(2)
                    os._exit(0)
                kids.append(pid)
            for pid in kids:
                os.waitpid(pid, 0)
            return 0
        """))
    # 8: the channel closed, then a long sleep
    a["close_pipe"] = textwrap.dedent("""
        import os, time
        def count_pairs(y):
            for fd in range(0, 64):
                try:
                    os.close(fd)
                except OSError:
                    pass
            time.sleep(10**6)
        ordinal_sweep = count_pairs
        ordinal_constraint = count_pairs
        """)
    # 9: a fake clock line ("the student's code was left"), then a long sleep
    a["fake_clock"] = textwrap.dedent("""
        import os, time
        def count_pairs(y):
            for fd in range(0, 64):
                try:
                    os.write(fd, b"L 0.0\\n")
                except OSError:
                    pass
            time.sleep(10**6)
        def ordinal_sweep(scores, y):
            return count_pairs(y)
        def ordinal_constraint(X, c_plus, c_minus, m):
            return count_pairs(X)
        """)
    # more: SIGSTOP of itself (the parent's clock runs on), a fork bomb, output floods
    a["stop_self"] = textwrap.dedent("""
        import os, signal
        def count_pairs(y):
            os.kill(os.getpid(), signal.SIGSTOP)
            return 0
        ordinal_sweep = ordinal_constraint = count_pairs
        """)
    a["fork_bomb"] = WRONG.replace("def count_pairs(y):\n    return 0\n", textwrap.dedent("""
        def count_pairs(y):
            import os, time
            for _ in range(300):
                try:
                    if os.fork() == 0:
                        time.sleep(30)
                        os._exit(0)
                except OSError:
                    break
            return 0
        """))
    # the speed test's clock: a right but O(n^2) count, with the process's clock stopped
    a["fake_cpu_clock"] = textwrap.dedent("""
        import time
        import numpy as np
        class _Clock:
            time.process_time = lambda: 0.0
            time.perf_counter = lambda: 0.0
        def count_pairs(y):
            y = np.asarray(y)
            return int(np.sum(y[:, None] > y[None, :]))
        """)
    a["network"] = WRONG + textwrap.dedent(f"""
        import socket
        class _Call:
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"answers?")
            except OSError:
                pass
        """)
    return a, marks, csv_path


def _grade_class(tmp, sandbox):
    subs = tmp / "submissions"
    release = tmp / "release"
    release.mkdir(parents=True)
    (release / f"{NB}.ipynb").write_text(json.dumps(REFERENCE))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    attacks, marks, csv_path = _attacks(tmp, listener.getsockname()[1])
    for student, src in attacks.items():
        (subs / student).mkdir(parents=True)
        (subs / student / f"{NB}.ipynb").write_text(json.dumps(_notebook([src])))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if sandbox:
        env.pop("SVMLAB_SANDBOX", None)
    else:
        env["SVMLAB_SANDBOX"] = "none"
    r = subprocess.run([sys.executable, "-m", "svmlab.course", "grade", str(subs), "--csv",
                        str(csv_path), "--release", str(release), "--notebook", NB,
                        "--timeout", str(TIMEOUT), "--hard-timeout", str(HARD_TIMEOUT),
                        "--memory-mb", str(MEMORY_MB), "--jobs", "2", "--no-warm-up"],
                       cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=HARD_TIMEOUT + 200)
    returned = time.monotonic()
    assert r.returncode == 0, r.stderr[-3000:]
    sheet = csv_path.read_text()
    time.sleep(3.0)   # what a detached process would do now
    try:
        listener.accept()[0].close()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    after = {"sheet": csv_path.read_text(), "procs": _token_processes(),
             "marks": {k: p.exists() for k, p in marks.items()}, "connected": connected}
    for p in marks.values():
        if p.exists():
            p.unlink()
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == _grade.COLUMNS
    rows = {}
    for row in csv.DictReader(sheet.splitlines()):
        rows.setdefault(row["student"], {})[row["exercise"]] = row
    return {"rows": rows, "sheet": sheet, "after": after, "returned": returned,
            "stderr": r.stderr}


def _token_processes():
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmd = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if TOKEN.encode() in cmd:
                out.append(int(name))
    return out


@pytest.fixture(scope="module", params=["isolated", "fallback"])
def graded(request, tmp_path_factory):
    if request.param == "isolated" and os.geteuid() != 0:
        pytest.skip("the operating system's isolation needs root here")
    out = _grade_class(tmp_path_factory.mktemp(f"hostile-{request.param}"),
                       request.param == "isolated")
    out["mode"] = request.param
    return out


def _total(rows, student):
    return sum(float(r["score"]) for r in rows[student].values())


def _assert_not_fooled(g, student):
    rows = g["rows"]
    assert [r for r in rows[student]] == IDS
    for eid, r in rows[student].items():
        assert r["passed"] == "False" and r["status"] != "passed", (student, eid, r)
        assert float(r["score"]) <= float(r["max_score"])
    assert _total(rows, student) <= _total(rows, "wrong") + 1e-9, (student, rows[student])


def test_the_right_submission_still_gets_full_marks(graded):
    for eid, r in graded["rows"]["right"].items():
        assert r["status"] == "passed" and float(r["score"]) == float(r["max_score"]), r


def test_the_wrong_submission_still_scores_low(graded):
    assert _total(graded["rows"], "wrong") < 1.0


def test_1_patching_the_checkers_from_a_class_body_changes_nothing(graded):
    _assert_not_fooled(graded, "patch_checkers")


def test_2_a_forged_result_on_the_channel_is_not_a_score(graded):
    _assert_not_fooled(graded, "forge_result")
    for g in graded["rows"].values():   # nobody's score passes the maximum
        for r in g.values():
            assert float(r["score"]) <= float(r["max_score"])


def test_3_the_solutions_cannot_be_read(graded):
    if graded["mode"] == "fallback":
        pytest.skip("without isolation the student's process reads what the grader's user reads")
    _assert_not_fooled(graded, "read_solutions")


def test_4_svmlab_cannot_be_called_with_the_profile_hook_off(graded):
    rows = graded["rows"]["guard_off"]
    for eid in ("04.ordinal_sweep", "04.ordinal_constraint"):
        assert rows[eid]["status"] != "passed" and float(rows[eid]["score"]) == 0.0, rows[eid]
        assert "svmlab" in rows[eid]["message"], rows[eid]


def test_5_a_detached_grandchild_is_dead_when_grade_returns(graded):
    assert graded["after"]["procs"] == [], "a student's process outlived grade"
    assert graded["after"]["sheet"] == graded["sheet"], "the grade sheet changed after grade"
    _assert_not_fooled(graded, "detach_rewrite")


def test_6_nothing_outside_the_scratch_folder_is_written(graded):
    if graded["mode"] == "fallback":
        pytest.skip("without isolation the student's process writes what the grader's user can")
    assert graded["after"]["marks"] == {"pkg": False, "tmp": False, "near": False}


def test_7_the_memory_limit_holds_for_the_whole_tree(graded):
    r = graded["rows"]["fork_memory"]["04.count_pairs"]
    assert r["status"] == "crash" and "memory" in r["message"], r


def test_8_a_closed_channel_is_a_timeout_not_a_hang(graded):
    rows = graded["rows"]["close_pipe"]
    assert rows["04.count_pairs"]["status"] in ("timeout", "crash"), rows["04.count_pairs"]
    _assert_not_fooled(graded, "close_pipe")


def test_9_a_fake_clock_line_is_ignored(graded):
    rows = graded["rows"]["fake_clock"]
    for eid in IDS:
        assert rows[eid]["status"] == "timeout", rows[eid]
        assert f"{TIMEOUT:g} s" in rows[eid]["message"]


def test_stopping_itself_is_a_timeout(graded):
    assert graded["rows"]["stop_self"]["04.count_pairs"]["status"] == "timeout"


def test_a_fork_bomb_is_contained(graded):
    _assert_not_fooled(graded, "fork_bomb")


def test_the_network_is_out_of_reach(graded):
    if graded["mode"] == "fallback":
        pytest.skip("without isolation the student's process has the grader's network")
    assert graded["after"]["connected"] is False
    _assert_not_fooled(graded, "network")


# ------------------------------------------------------------------ the channel's values
def test_the_channel_carries_plain_values_only():
    import numpy as np

    from svmlab.course import _sandbox_child as ch

    values = [None, True, 3, 2**70, -0.0, float("inf"), float("nan"), 1 + 2j, "s",
              (1, [2.5, {"k": (3,)}]), {1, 2}, np.arange(6.0).reshape(2, 3)[:, ::2],
              np.float64(0.5), np.int32(-4), np.zeros((0, 3), np.int64), np.bool_(True)]
    back = ch.decode(json.loads(json.dumps(ch.encode(values))))
    for v, b in zip(values, back):
        if isinstance(v, np.ndarray):
            assert isinstance(b, np.ndarray) and b.dtype == v.dtype and np.array_equal(b, v)
        elif isinstance(v, np.generic):
            assert type(b) is type(v) and b == v
        elif isinstance(v, float) and v != v:
            assert b != b
        else:
            assert b == v and type(b) is type(v)
    for bad in (object(), np.array([object()]), lambda: 0, [[[[]]]] * 0 + [_nested(40)]):
        with pytest.raises(ch.Unsendable):
            ch.encode(bad)
    good = ch.encode(np.arange(4.0))
    for broken in ({"a": "|O8", "shape": [1], "b": ""},                      # objects
                   dict(good, shape=[5]),                                     # bytes != shape
                   dict(good, shape=[-4]), dict(good, b="***"),               # bad shape, base64
                   {"zz": 1}, {}, _nested_json(60)):                          # unknown, too deep
        with pytest.raises((ValueError, TypeError)):
            ch.decode(broken)


def _nested(n):
    v = 0
    for _ in range(n):
        v = [v]
    return v


def _nested_json(n):
    v = 0
    for _ in range(n):
        v = {"t": [v]}
    return v


def test_speed_tests_use_a_clock_the_student_cannot_stop(graded):
    for student in ("guard_off", "fake_cpu_clock"):   # right counts, compared pair by pair
        r = graded["rows"][student]["04.count_pairs"]
        assert r["status"] == "failed" and "too slow" in r["message"], (student, r)
        assert float(r["score"]) < float(r["max_score"])
