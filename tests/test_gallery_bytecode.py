"""The gallery runner measures svmlab with its bytecode written, as an
installed wheel has it (31f01): byte_compile_svmlab writes a .pyc for every
module of the package, also under PYTHONDONTWRITEBYTECODE."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import svmlab
from svmlab.bench.gallery import byte_compile_svmlab


def test_byte_compile_writes_a_current_pyc_for_every_module(tmp_path):
    folder = os.path.dirname(os.path.abspath(svmlab.__file__))
    probe = os.path.join(folder, "objectives.py")
    pyc = importlib.util.cache_from_source(probe)
    if os.path.exists(pyc):
        os.unlink(pyc)  # the runner must write it again
    lines = []
    assert byte_compile_svmlab(log=lines.append) is True
    assert lines and folder in lines[0]
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "_machine_code")]
        for f in filenames:
            if f.endswith(".py"):
                src = os.path.join(dirpath, f)
                c = importlib.util.cache_from_source(src)
                assert os.path.exists(c), c
    # the .pyc is current: a fresh process with PYTHONDONTWRITEBYTECODE
    # loads it instead of compiling the source
    code = ("import importlib._bootstrap_external as be, sys\n"
            "seen = []\n"
            "orig = be.SourceLoader.source_to_code\n"
            "def s2c(self, data, path, *a, **k):\n"
            "    seen.append(path); return orig(self, data, path, *a, **k)\n"
            "be.SourceLoader.source_to_code = s2c\n"
            "import svmlab.objectives\n"
            "print([p for p in seen if 'svmlab' in p])\n")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", out.stdout
