"""``python -m svmlab.course lab [DIR]``: JupyterLab on the student's own copy of the notebooks.

JupyterLab saves a notebook as it is worked on (autosave every two minutes,
and every run of a cell changes its outputs).  Opened on ``notebooks/`` of
the checkout, it rewrites the tracked files, and the student's first
``git pull`` then conflicts with their own exercises.  So README's first
command opens a **working copy** instead:

* ``DIR`` (default ``my-notebooks/`` at the checkout's root, which
  ``.gitignore`` lists, so ``git status`` stays clean) receives a copy of
  every course notebook it does not have yet; a notebook already there is
  the student's and is never overwritten (delete it to get a fresh copy;
  after a ``git pull`` the new notebooks of the course arrive the same way,
  and a line names those whose course version changed since the copy);
* then JupyterLab starts there (``python -m jupyterlab``, the arguments
  after ``--`` passed on).  As root (a container, many cloud machines)
  JupyterLab refuses to start unless told ``--allow-root``: the command adds
  it and says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import _nb

#: the working copy's folder, relative to the checkout's root (in .gitignore)
DEFAULT_DIR = "my-notebooks"
#: what the copy remembers of the course notebooks it was made from
_STAMP = ".svmlab-copied.json"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_workspace(dest=None, source=None, log=print) -> Path:
    """Copy the course notebooks that ``dest`` lacks into it; the folder.

    ``source``: the course notebooks (default ``notebooks/`` of this
    checkout).  Never overwrites a file in ``dest``."""
    root = _nb.checkout_root()
    src = Path(source) if source else (root / "notebooks" if root else None)
    if src is None or not src.is_dir():
        raise FileNotFoundError("no course notebooks found: run this from a checkout of "
                                "svmlab (pip install -e .), or pass --notebooks DIR")
    dest = Path(dest) if dest else (root / DEFAULT_DIR if root else Path(DEFAULT_DIR))
    if dest.resolve() == src.resolve():
        raise ValueError(f"{dest} is the course's own notebooks folder: choose another folder "
                         f"(a working copy keeps the checkout clean)")
    dest.mkdir(parents=True, exist_ok=True)
    stamp_path = dest / _STAMP
    try:
        stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamp = {}
    copied, kept, changed = [], [], []
    for path in sorted(src.glob("*.ipynb")):
        target = dest / path.name
        if target.exists():
            kept.append(path.name)
            if stamp.get(path.name) not in (None, _digest(path)):
                changed.append(path.name)
            continue
        shutil.copy2(path, target)
        stamp[path.name] = _digest(path)
        copied.append(path.name)
    stamp_path.write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")
    log(f"working copy {dest}: {len(copied)} notebooks copied, {len(kept)} of yours kept "
        f"(delete one to get a fresh copy)")
    if changed:
        log("the course changed since you copied: " + ", ".join(changed)
            + f" (the new versions are in {src})")
    return dest


def lab_command(dest: Path, extra=(), is_root=None) -> list[str]:
    """The JupyterLab command line for ``dest`` (``--allow-root`` added as root)."""
    if is_root is None:
        is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={dest}", *extra]
    if is_root and "--allow-root" not in extra:
        cmd.append("--allow-root")
    return cmd


def main(args) -> int:
    dest = make_workspace(args.dir, args.notebooks,
                          log=lambda s: print(s, file=sys.stderr, flush=True))
    if args.no_start:
        return 0
    cmd = lab_command(dest, args.jupyter_args)
    if "--allow-root" in cmd and "--allow-root" not in args.jupyter_args:
        print("running as root: starting JupyterLab with --allow-root", file=sys.stderr)
    try:
        return subprocess.call(cmd, cwd=dest)
    except KeyboardInterrupt:
        return 0
