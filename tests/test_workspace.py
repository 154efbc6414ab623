"""README's first command: JupyterLab on the student's own copy of the notebooks.

``python -m svmlab.course lab`` copies the course notebooks to
``my-notebooks/`` (ignored by git) and starts JupyterLab there, so that
autosave never rewrites the tracked notebooks.  Checked here: the copy is
byte-identical and never overwrites the student's work, ``git status`` of
the checkout is the same before and after, ``--allow-root`` is added as root,
and the real JupyterLab server it starts serves the working copy.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from svmlab.course import _workspace

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "svmlab.course", *map(str, args)], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=timeout)


def test_readme_first_command_opens_the_working_copy():
    readme = (ROOT / "README.md").read_text()
    first = re.search(r"```bash\n(.*?)\n", readme).group(1)
    assert first.endswith(".venv/bin/python -m svmlab.course lab")
    assert "--allow-root" in readme
    assert f"/{_workspace.DEFAULT_DIR}/" in (ROOT / ".gitignore").read_text().split()


def test_the_copy_is_the_students_and_never_overwritten(tmp_path):
    ws = tmp_path / "ws"
    logs = []
    _workspace.make_workspace(ws, log=logs.append)
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert sorted(p.name for p in ws.glob("*.ipynb")) == names
    for n in names:
        assert (ws / n).read_bytes() == (NOTEBOOKS / n).read_bytes()
    mine = ws / names[0]
    mine.write_text('{"the student": "work"}')
    (ws / names[1]).unlink()
    _workspace.make_workspace(ws, log=logs.append)
    assert mine.read_text() == '{"the student": "work"}'           # kept
    assert (ws / names[1]).read_bytes() == (NOTEBOOKS / names[1]).read_bytes()  # fresh copy
    assert "1 notebooks copied" in logs[-1]
    with pytest.raises(ValueError, match="own notebooks folder"):
        _workspace.make_workspace(NOTEBOOKS)


def test_a_changed_course_notebook_is_named(tmp_path):
    src = tmp_path / "course"
    src.mkdir()
    (src / "01_a.ipynb").write_text(json.dumps({"cells": [], "v": 1}))
    ws = tmp_path / "ws"
    _workspace.make_workspace(ws, src, log=lambda s: None)
    (src / "01_a.ipynb").write_text(json.dumps({"cells": [], "v": 2}))
    logs = []
    _workspace.make_workspace(ws, src, log=logs.append)
    assert "course changed since you copied: 01_a.ipynb" in logs[-1]
    assert json.loads((ws / "01_a.ipynb").read_text())["v"] == 1


def test_allow_root_is_added_only_as_root(tmp_path):
    assert "--allow-root" in _workspace.lab_command(tmp_path, [], is_root=True)
    assert "--allow-root" not in _workspace.lab_command(tmp_path, [], is_root=False)
    cmd = _workspace.lab_command(tmp_path, ["--allow-root"], is_root=True)
    assert cmd.count("--allow-root") == 1


def _status():
    r = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip("not a git checkout")
    return r.stdout


def test_the_default_working_copy_leaves_git_status_unchanged():
    default = ROOT / _workspace.DEFAULT_DIR
    existed = default.exists()
    before = _status()
    try:
        r = _cli("lab", "--no-start")
        assert r.returncode == 0, r.stderr
        assert "working copy" in r.stderr
        assert sorted(p.name for p in default.glob("*.ipynb")) == sorted(
            p.name for p in NOTEBOOKS.glob("*.ipynb"))
        assert _status() == before
    finally:
        if not existed:
            import shutil

            shutil.rmtree(default, ignore_errors=True)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lab_starts_jupyterlab_on_the_working_copy(tmp_path):
    pytest.importorskip("jupyterlab")
    cfg = tmp_path / "jupyter"
    env = dict(ENV, JUPYTER_CONFIG_DIR=str(cfg / "c"), JUPYTER_RUNTIME_DIR=str(cfg / "r"),
               JUPYTERLAB_SETTINGS_DIR=str(cfg / "s"), JUPYTERLAB_WORKSPACES_DIR=str(cfg / "w"))
    port = _free_port()
    ws = tmp_path / "ws"
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "svmlab.course", "lab", str(ws), "--", "--no-browser",
         "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
         "--ServerApp.token=", "--ServerApp.password="],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        listing = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents", timeout=5) as r:
                    listing = json.loads(r.read())
                break
            except OSError:
                time.sleep(0.5)
        text = (tmp_path / "lab.log").read_text()
        assert listing is not None, text[-3000:]
        served = sorted(c["name"] for c in listing["content"] if c["name"].endswith(".ipynb"))
        assert served == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
        if os.geteuid() == 0:
            assert "starting JupyterLab with --allow-root" in text
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
