"""The instructor's toolkit: ``python -m svmlab.course build-student`` and ``grade``.

The student build is checked by reading its JSON back (no solutions, no
outputs, no widget state, no answer line anywhere, nbgrader metadata on
every exercise).  The grader runs on made-up submissions derived from that
build: one right (the instructor's solutions, with the check cells deleted,
a wrong first definition, and top-level cells that print a lot and loop
forever), one wrong, one that crashes its process, one that loops forever.

Time limits: the grader counts only the time spent inside the student's
own functions.  The instructor's solutions spend well under 0.3 s there per
exercise (the sweep's speed test is the largest), so the limit of
``TIMEOUT`` s leaves a margin of more than 25 times on a slow machine, and
a loop that never returns is a timeout whatever the machine's speed.  The
checkers' own work (replaying recorded solver steps, compiling them on a
fresh machine) is not counted; ``HARD_TIMEOUT`` only guards against a
grader that hangs.
"""

from __future__ import annotations

import csv
import importlib.util
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from svmlab.course import _grade, _nb, _student, links

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SOLUTIONS = ROOT / _nb.SOLUTIONS_DIR
TIMEOUT = 8.0
#: the repository the tests build for (the real one is not named yet)
REPO = "example-org/svmlab"
HARD_TIMEOUT = 1500.0


def _run_cli(*args, timeout=900):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "svmlab.course", *map(str, args)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout)


def _solution_module(notebook_stem):
    """The instructor's solution module of a notebook (``solutions_01_*.py``)."""
    prefix = notebook_stem.split("_", 1)[0]
    path = next(SOLUTIONS.glob(f"solutions_{prefix}_*.py"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path.read_text(encoding="utf-8")


# ------------------------------------------------------------------ parsing
def test_definitions_keep_what_a_function_needs_and_drop_the_rest():
    src = ("%matplotlib inline\n"
           "import numpy as np\n"
           "TOL = 1e-12\n"
           "SIGNS = (1, -1)\n"
           "X = np.zeros(3)\n"                 # a call: dropped
           "f = lambda v: np.abs(v)\n"          # a lambda: its body does not run now
           "def take_step(a):\n    return a\n"
           "class Helper:\n    pass\n"
           "while True:\n    pass\n"             # a loop at top level: dropped
           "print('x' * 10**6)\n"
           "check_take_step(take_step)\n")
    tree, err = _nb.definitions(src)
    assert err is None
    kept = [type(s).__name__ for s in tree.body]
    assert kept == ["Import", "Assign", "Assign", "Assign", "FunctionDef", "ClassDef"]
    ns = {}
    exec(compile(tree, "<cell>", "exec"), ns)
    assert ns["take_step"](3) == 3 and ns["TOL"] == 1e-12 and "X" not in ns
    assert _nb.definitions("def f(:\n")[0] is None   # a syntax error is reported, not raised


def test_exercises_found_in_the_notebooks_match_the_solutions():
    exercises = _grade.release_exercises(NOTEBOOKS)
    assert exercises, "no notebook calls a checker"
    ids = [ex.id for exs in exercises.values() for ex in exs]
    assert len(ids) == len(set(ids))
    for stem, exs in exercises.items():
        mod, _ = _solution_module(stem)
        for ex in exs:
            assert callable(getattr(mod, ex.function, None)), f"no solution for {ex.id}"
            assert ex.def_cell is not None, f"{ex.id}: no starter cell defines {ex.function}"
    # the ids the grader writes are the checkers' own stable ids
    from svmlab.exercises import EXERCISES

    assert set(ids) <= set(EXERCISES), f"ids unknown to svmlab.exercises: {set(ids) - set(EXERCISES)}"
    for exs in exercises.values():
        for ex in exs:
            assert (EXERCISES[ex.id].function, EXERCISES[ex.id].checker) == (ex.function, ex.checker)


def test_submitted_file_names_are_matched_like_an_instructor_would():
    exercises = _grade.release_exercises(NOTEBOOKS)
    stem = next(iter(exercises))
    for name in (f"{stem}.ipynb", f"Copy of {stem}.ipynb", f"{stem} (2).ipynb",
                 f"alice_{stem}.ipynb"):
        assert _grade.match_notebook(Path(name), exercises) == stem


# ------------------------------------------------------------------ build-student
@pytest.fixture(scope="module")
def student_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("handout") / "course"
    r = _run_cli("build-student", out, "--repository", REPO)
    assert r.returncode == 0, r.stderr
    return out


def test_student_build_has_no_solutions_outputs_or_widget_state(student_build):
    out = student_build
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert not [f for f in files if "solution" in f.lower()]
    assert sorted(f for f in files if f.endswith(".ipynb")) == sorted(
        p.name for p in NOTEBOOKS.glob("*.ipynb"))
    answers = _student.solution_lines(SOLUTIONS)
    assert len(answers) > 20     # the scan below looks for something
    hidden = _student.hidden_reference_lines()
    for name in files:
        raw = (out / name).read_text(encoding="utf-8")
        text = raw
        if name.endswith((".json", ".ipynb")):
            text = "\n".join(_student._strings(json.loads(raw)))
        flat = _student._norm(text)
        for line in answers:
            assert line not in flat, f"{name} shows the solution line {line!r}"
        if not name.endswith(".ipynb"):
            continue
        nb = json.loads(raw)
        assert "widgets" not in nb["metadata"]
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, (name, i)
        assert _student.find_leaks(nb, answers | hidden)[0] == []


def test_student_build_marks_every_exercise_the_nbgrader_way(student_build):
    manifest = json.loads((student_build / "course.json").read_text())
    expected = {ex.id: ex for exs in _grade.release_exercises(NOTEBOOKS).values() for ex in exs}
    assert {e["id"] for e in manifest["exercises"]} == set(expected)
    for path in sorted(student_build.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        meta = [c["metadata"].get("nbgrader") for c in nb["cells"]]
        grade_ids = [m["grade_id"] for m in meta if m]
        assert len(grade_ids) == len(set(grade_ids)), f"{path.name}: duplicate grade ids"
        for ex in _nb.find_exercises(nb, path.stem):
            answer = nb["cells"][ex.def_cell]
            check = nb["cells"][ex.cell]
            assert ex.def_cell != ex.cell, f"{ex.id}: answer and check share a cell"
            am, cm = answer["metadata"]["nbgrader"], check["metadata"]["nbgrader"]
            assert am == {"grade": False, "grade_id": ex.id, "locked": False,
                          "schema_version": 3, "solution": True, "task": False}
            assert cm["grade"] and cm["locked"] and not cm["solution"]
            assert cm["grade_id"] == f"check-{ex.id}" and cm["points"] == 1.0
            assert check["metadata"]["editable"] is False
            assert "raise NotImplementedError" in _nb.cell_source(answer)
            assert f"{ex.checker}({ex.function}" in _nb.cell_source(check)
            assert f"def {ex.function}(" not in _nb.cell_source(check)
    readme = (student_build / "README.md").read_text()
    assert "solutions" not in readme.lower()
    assert links.colab_url(sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))[0], REPO) in readme
    assert f'pip install "svmlab[notebooks] @ git+https://github.com/{REPO}.git@main"' in readme
    # the handout's Colab cells install from the repository, and nothing names the placeholder
    for path in student_build.glob("*.ipynb"):
        nb = json.loads(path.read_text())
        setup = [c for c in nb["cells"] if "colab-setup" in c["metadata"].get("tags", [])]
        assert [_nb.cell_source(c) for c in setup] == [links.colab_cell_source(REPO)]
    for path in student_build.rglob("*"):
        if path.is_file():
            assert "YOUR-" not in path.read_text(), path.name


def _tiny_course(tmp_path, code, outputs=()):
    d = tmp_path / "nbs"
    d.mkdir()
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "execution_count": 1,
                     "source": code, "outputs": list(outputs)}]}
    (d / "01_tiny.ipynb").write_text(json.dumps(nb))
    (d / "solutions").mkdir()
    (d / "solutions" / "solutions_01_tiny.py").write_text(
        "def take_step(a):\n    eta_value = a * 2.0 + 17.0 - 3.5\n    return eta_value\n")
    return d


def test_the_leak_check_finds_an_answer_in_an_output(tmp_path):
    line = "eta_value = a * 2.0 + 17.0 - 3.5"
    printed = {"output_type": "stream", "name": "stdout", "text": [line + "\n"]}
    panel = {"output_type": "display_data", "metadata": {}, "data": {
        "text/html": "<pre><span class='n'>eta_value</span> <span>=</span> a * 2.0 + 17.0 &#45; 3.5</pre>"}}
    src = _tiny_course(tmp_path, "print(1)", [printed, panel])
    answers = _student.solution_lines(src / "solutions")
    assert line in answers
    nb = json.loads((src / "01_tiny.ipynb").read_text())
    assert _student.find_leaks(nb, answers)[0] == [("cell 0 output 0", line),
                                                   ("cell 0 output 1", line)]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "01_tiny.ipynb").write_text(json.dumps(nb))
    with pytest.raises(_student.LeakError, match="stored outputs"):
        _student.verify_student_build(bad, answers)
    # the build clears outputs, so the same notebook comes out clean
    _student.build_student(tmp_path / "out", src, repository=REPO, log=lambda s: None)
    nb = json.loads((tmp_path / "out" / "01_tiny.ipynb").read_text())
    assert nb["cells"][0]["outputs"] == []


def test_build_refuses_notebooks_that_turn_the_reveal_locks_off(tmp_path):
    src = _tiny_course(tmp_path, "from svmlab.exercises import set_locks\nset_locks(False)")
    with pytest.raises(_student.LeakError, match="reveal locks"):
        _student.build_student(tmp_path / "out", src, repository=REPO, log=lambda s: None)
    assert not (tmp_path / "out").exists()


def test_build_student_refuses_to_overwrite(student_build):
    r = _run_cli("build-student", student_build, "--repository", REPO)
    assert r.returncode == 2 and "not empty" in r.stderr


# ------------------------------------------------------------------ grade
def _answer_cells(nb):
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"]
            if c["metadata"].get("nbgrader", {}).get("solution")}


def _submit(build, root, student, notebooks, answers, mutate=None):
    """Write ``student``'s copies of ``notebooks`` with ``answers[id]`` (a
    function's source) in the answer cells; ``mutate(nb)`` edits further."""
    d = root / student
    d.mkdir(parents=True)
    for stem in notebooks:
        nb = json.loads((build / f"{stem}.ipynb").read_text())
        for eid, cell in _answer_cells(nb).items():
            if eid in answers:
                cell["source"] = answers[eid]
        if mutate:
            mutate(nb)
        (d / f"{stem}.ipynb").write_text(json.dumps(nb))


@pytest.fixture(scope="module")
def graded(student_build, tmp_path_factory):
    root = tmp_path_factory.mktemp("submissions")
    build = student_build
    manifest = json.loads((build / "course.json").read_text())
    graded_nbs = sorted({e["notebook"] for e in manifest["exercises"]})
    first = graded_nbs[0]                       # 01_smo_geometry
    right = {}
    for stem in graded_nbs:
        mod, source = _solution_module(stem)
        for e in manifest["exercises"]:
            if e["notebook"] == stem:
                right[e["id"]] = "import numpy as np\n" + source
    # the right student: prints on every call, deleted check cells, a wrong
    # first definition, and top-level cells that print a lot or never end
    chatty = {eid: src.replace('"""One analytic SMO step',
                               'print("x" * 200)\n    """One analytic SMO step')
              for eid, src in right.items()}

    def messy(nb):
        nb["cells"] = [c for c in nb["cells"] if not c["metadata"].get("nbgrader", {}).get("grade")]
        extra = [{"cell_type": "code", "id": f"x{k}", "metadata": {}, "execution_count": None,
                  "outputs": [], "source": s} for k, s in enumerate([
                      "def take_step(*args):\n    return 0.0, 0.0\n",
                      "for i in range(10**7):\n    print(i)\n",
                      "while True:\n    pass\n"])]
        nb["cells"] = extra + nb["cells"]

    _submit(build, root, "right", graded_nbs, chatty, messy)
    mod01, _ = _solution_module(first)
    threshold = inspect.getsource(mod01.threshold)
    _submit(build, root, "wrong", [first], {
        "01.take_step": "def take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):\n"
                        "    return a1, a2\n",
        "01.threshold": "def threshold(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12,"
                        " K22, C):\n    return b\n"})
    _submit(build, root, "crash", [first], {
        "01.take_step": "import os\n\ndef take_step(*args):\n    os.abort()\n",
        "01.threshold": threshold})
    _submit(build, root, "cheat", [first], {
        "01.take_step": "from svmlab.smo._pairstep import pair_step\n\n"
                        "def take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):\n"
                        "    out = pair_step(y1, y2, a1, a2, E1, E2, 0.0, K11, K12, K22, C, 1e-12)\n"
                        "    return out[1], out[2]\n",
        "01.threshold": threshold})
    _submit(build, root, "loop", [first], {
        "01.take_step": "def take_step(*args):\n    while True:\n        pass\n",
        "01.threshold": "import time\n\ndef threshold(*args):\n    time.sleep(10**6)\n"})
    csv_path = root.parent / "grades.csv"
    r = _run_cli("grade", root, "--csv", csv_path, "--release", build, "--timeout", TIMEOUT,
                 "--hard-timeout", HARD_TIMEOUT, "--jobs", 2, timeout=3 * HARD_TIMEOUT)
    assert r.returncode == 0, r.stderr
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == _grade.COLUMNS
        rows = list(reader)
    return manifest, rows, r.stderr


def test_every_student_gets_one_row_per_exercise(graded):
    manifest, rows, _ = graded
    ids = [e["id"] for e in manifest["exercises"]]
    students = sorted({r["student"] for r in rows})
    assert students == ["cheat", "crash", "loop", "right", "wrong"]
    for s in students:
        assert [r["exercise"] for r in rows if r["student"] == s] == ids


def test_the_right_submission_gets_full_marks(graded):
    _, rows, _ = graded
    for r in (r for r in rows if r["student"] == "right"):
        assert r["status"] == "passed", (r["exercise"], r["status"], r["message"])
        assert r["passed"] == "True" and float(r["score"]) == float(r["max_score"]) == 1.0
        assert int(r["cases_passed"]) == int(r["cases_total"]) > 0


def test_the_wrong_submission_fails_with_the_checkers_message(graded):
    _, rows, _ = graded
    mine = {r["exercise"]: r for r in rows if r["student"] == "wrong"}
    for eid in ("01.take_step", "01.threshold"):
        r = mine[eid]
        assert r["status"] == "failed" and r["passed"] == "False"
        assert float(r["score"]) < float(r["max_score"])
        assert "case" in r["message"] and "expected" in r["message"]
    # the notebooks it did not hand in
    assert {r["status"] for e, r in mine.items() if not e.startswith("01.")} == {"missing"}


def test_calling_svmlabs_own_answer_fails_and_says_so(graded):
    _, rows, _ = graded
    mine = {r["exercise"]: r for r in rows if r["student"] == "cheat"}
    r = mine["01.take_step"]
    assert r["status"] == "failed" and r["guard_fired"] == "True" and float(r["score"]) == 0.0
    assert "svmlab" in r["message"]
    # the grader's own wrapper around the function is not mistaken for svmlab
    assert mine["01.threshold"]["status"] == "passed"
    assert mine["01.threshold"]["guard_fired"] == "False"


def test_a_crash_costs_only_the_exercise_that_crashed(graded):
    _, rows, _ = graded
    mine = {r["exercise"]: r for r in rows if r["student"] == "crash"}
    assert mine["01.take_step"]["status"] == "crash"
    assert "SIGABRT" in mine["01.take_step"]["message"]
    assert mine["01.threshold"]["status"] == "passed"


def test_a_loop_that_never_returns_is_a_timeout(graded):
    _, rows, _ = graded
    mine = {r["exercise"]: r for r in rows if r["student"] == "loop"}
    for eid in ("01.take_step", "01.threshold"):      # a Python loop, and a sleep in C
        assert mine[eid]["status"] == "timeout", mine[eid]
        assert f"{TIMEOUT:g} s" in mine[eid]["message"]


def test_grade_reports_a_bad_folder_plainly(tmp_path):
    r = _run_cli("grade", tmp_path / "nowhere", "--csv", tmp_path / "g.csv")
    assert r.returncode == 2 and "does not exist" in r.stderr


# ------------------------------------------------------------------ links
def _named():
    """The repository README and the notebooks are written for: None while
    ``GITHUB_REPOSITORY`` is the placeholder."""
    return None if links.is_placeholder() else links.GITHUB_REPOSITORY


def test_readme_links_follow_the_one_variable():
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    readme = (ROOT / "README.md").read_text()
    assert links.readme_table(names, _named()) in readme, (
        "README's run-online links are out of date: python -m svmlab.course links --update")
    assert "YOUR-" not in readme, "README shows the placeholder address"
    assert links.colab_url("01_smo_geometry.ipynb", REPO) == (
        f"https://colab.research.google.com/github/{REPO}/blob/"
        f"{links.GITHUB_BRANCH}/notebooks/01_smo_geometry.ipynb")
    assert links.binder_url("01_smo_geometry.ipynb", REPO).endswith(
        "?labpath=notebooks%2F01_smo_geometry.ipynb")
    assert "| `01_smo_geometry.ipynb` |" in links.readme_table(names, REPO)


def test_colab_setup_cells_follow_the_one_variable():
    """Every notebook has one ``colab-setup`` cell, which runs only in Colab;
    while no repository is named it stops there with a message instead of
    installing from the placeholder."""
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        setup = [c for c in nb["cells"] if "colab-setup" in c.get("metadata", {}).get("tags", [])]
        assert len(setup) == 1, f"{path.name}: {len(setup)} colab-setup cells"
        src = _nb.cell_source(setup[0])
        assert src == links.colab_cell_source(_named()), f"{path.name}: run links --update"
        assert "google.colab" in src and "YOUR-" not in src
    assert "raise RuntimeError" in links.colab_cell_source(None)
    assert f"git+https://github.com/{REPO}.git@main" in links.colab_cell_source(REPO)


def test_links_update_rewrites_only_the_colab_setup_cell(tmp_path):
    cell = {"cell_type": "code", "id": "c", "execution_count": None, "outputs": [],
            "metadata": {"tags": ["colab-setup"]},
            "source": ["import sys\n", "if \"google.colab\" in sys.modules:\n",
                       "    %pip install \"svmlab @ git+https://github.com/someone/old.git@dev\"\n"]}
    other = {"cell_type": "code", "id": "d", "execution_count": None, "outputs": [],
             "metadata": {}, "source": ["x = 'git+https://github.com/someone/old.git@dev'"]}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell, other]}
    raw = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    (tmp_path / "01_a.ipynb").write_text(raw)
    (tmp_path / "02_b.ipynb").write_text(raw.replace("colab-setup", "other"))
    assert links.update_colab_cells(tmp_path, "someone/new") == ["01_a.ipynb"]
    new = json.loads((tmp_path / "01_a.ipynb").read_text())
    assert links.install_spec("", "someone/new") in "".join(new["cells"][0]["source"])
    assert new["cells"][1] == other                      # only the colab-setup cell changes
    assert (tmp_path / "02_b.ipynb").read_text() == raw.replace("colab-setup", "other")
    assert links.update_colab_cells(tmp_path, "someone/new") == []   # nothing left to change


def test_no_link_or_install_command_from_the_placeholder(tmp_path, monkeypatch):
    """``build-student``, ``site`` and ``links`` refuse a placeholder: they
    take ``--repository``, the variable once set, or a GitHub ``origin``."""
    monkeypatch.setattr(links, "GITHUB_REPOSITORY", "YOUR-GITHUB-ACCOUNT/svmlab")
    monkeypatch.setattr(links, "origin_repository", lambda root=None: None)
    with pytest.raises(links.PlaceholderError, match="--repository OWNER/NAME"):
        links.resolve_repository()
    with pytest.raises(links.PlaceholderError, match="--repository"):
        _student.build_student(tmp_path / "out", log=lambda s: None)
    assert not (tmp_path / "out").exists()
    from svmlab.course import _site

    with pytest.raises(links.PlaceholderError, match="--repository"):
        _site.site_notebook(json.loads((NOTEBOOKS / "01_smo_geometry.ipynb").read_text()),
                            "01_smo_geometry.ipynb")
    for bad in ("YOUR-GITHUB-ACCOUNT/svmlab", "no-slash", "a/b/c"):
        with pytest.raises(links.PlaceholderError):
            links.resolve_repository(bad)
    assert links.resolve_repository(REPO) == REPO
    monkeypatch.setattr(links, "GITHUB_REPOSITORY", "the-course/svmlab")
    assert links.resolve_repository() == "the-course/svmlab"


def test_the_cli_says_why_it_refuses_and_the_origin_remote_is_read(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if links.is_placeholder() and links.origin_repository() is None:
        for cmd in (["links"], ["build-student", str(tmp_path / "h")], ["site", str(tmp_path / "s")]):
            r = _run_cli(*cmd, timeout=300)
            assert r.returncode == 2 and "pass --repository OWNER/NAME" in r.stderr, (cmd, r.stderr)
            assert "YOUR-" not in r.stdout
    for url in ("https://github.com/owner-1/svm.lab.git", "git@github.com:owner-1/svm.lab.git",
                "https://github.com/owner-1/svm.lab"):
        repo = tmp_path / url.replace("/", "_").replace(":", "_")
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", url], check=True)
        assert links.origin_repository(repo) == "owner-1/svm.lab", url
    assert links.origin_repository(tmp_path) is None


def test_links_closes_quietly_when_the_reader_goes():
    """``python -m svmlab.course links | head``: no BrokenPipeError traceback."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "svmlab.course", "links", "--repository", REPO],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()                      # the reader is gone before anything is written
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0 and err == "", err


def test_the_package_names_resolve_lazily():
    # in a fresh process, where no submodule is imported yet
    code = ("import svmlab.course as c; print(c.links.GITHUB_REPOSITORY, "
            "callable(c.build_student), callable(c.grade), callable(c.build_site))")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [links.GITHUB_REPOSITORY, "True", "True", "True"]
