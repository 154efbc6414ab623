"""Where the course lives online: the one placeholder, and the links built from it.

``GITHUB_REPOSITORY`` below names the public repository of the course.  It
is a placeholder until the repository is published, and nothing is written
from a placeholder: ``build-student``, ``site`` and ``links`` take the
repository from ``--repository OWNER/NAME``, else from this variable once it
is set, else from the checkout's GitHub ``origin`` remote
(:func:`resolve_repository`), and refuse with a message that says so when
none is known.  ``python -m svmlab.course links --update --repository
OWNER/NAME`` rewrites the link block of README.md and every notebook's
``colab-setup`` cell; while no repository is named, README says there are no
links yet and the ``colab-setup`` cell stops in Colab with a message instead
of installing from nowhere (``tests/test_course.py`` checks that README and
those cells agree with this module).  Everything else derives from it: the
"open in Colab" and Binder links of README, of the course site and of the
student build, and the address the notebooks' ``colab-setup`` cell installs
svmlab from.

Link formats (neither service can be reached from the machines that built
this, so these follow the services' documented URL schemes):

* Colab opens a notebook stored on GitHub at
  ``https://colab.research.google.com/github/<owner>/<repo>/blob/<branch>/<path>``;
* Binder builds the repository (``binder/``) and opens JupyterLab on a file at
  ``https://mybinder.org/v2/gh/<owner>/<repo>/<branch>?labpath=<path>``.
"""

from __future__ import annotations

import re
from urllib.parse import quote

#: PLACEHOLDER -- the GitHub repository "owner/name" of the course.  Set it here, once.
GITHUB_REPOSITORY = "YOUR-GITHUB-ACCOUNT/svmlab"

#: the branch the links open
GITHUB_BRANCH = "main"

#: the folder of the notebooks inside the repository
NOTEBOOKS_DIR = "notebooks"


#: the form of a repository name
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")


class PlaceholderError(ValueError):
    """No real repository is known: a link or install command would point at
    the placeholder (the message says how to name one)."""


def is_placeholder(repository: str = None) -> bool:
    """True while ``repository`` (default ``GITHUB_REPOSITORY``) is the placeholder."""
    return (repository or GITHUB_REPOSITORY).startswith("YOUR-")


def origin_repository(root=None) -> str | None:
    """``owner/name`` of the checkout's ``origin`` remote when it is on
    GitHub (``https://github.com/owner/name(.git)`` or
    ``git@github.com:owner/name.git``), else None."""
    import subprocess
    from pathlib import Path

    root = Path(root) if root else Path(__file__).resolve().parents[2]
    try:
        r = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"github\.com[:/]+([^/\s]+/[^/\s]+?)(?:\.git)?/?$", r.stdout.strip())
    return m.group(1) if r.returncode == 0 and m and _REPO.match(m.group(1)) else None


def resolve_repository(repository: str | None = None, *, root=None) -> str:
    """The course's repository ``owner/name``: ``repository`` when given,
    else ``GITHUB_REPOSITORY`` once it is set, else the checkout's GitHub
    ``origin`` remote.  :class:`PlaceholderError` when none is known: every
    link and install command would otherwise point nowhere."""
    if repository:
        if not _REPO.match(repository) or is_placeholder(repository):
            raise PlaceholderError(f"--repository {repository!r} is not a GitHub repository "
                                   f"name OWNER/NAME")
        return repository
    if not is_placeholder():
        return GITHUB_REPOSITORY
    found = origin_repository(root)
    if found:
        return found
    raise PlaceholderError(
        "no GitHub repository is known for the course, so no run-online link or install "
        f"command can be written (GITHUB_REPOSITORY in svmlab/course/links.py is the "
        f"placeholder {GITHUB_REPOSITORY!r} and this checkout has no GitHub 'origin' remote): "
        "pass --repository OWNER/NAME, or set GITHUB_REPOSITORY")


def repository_url(repository: str | None = None) -> str:
    return f"https://github.com/{repository or GITHUB_REPOSITORY}"


def _path(notebook: str) -> str:
    return notebook if "/" in notebook else f"{NOTEBOOKS_DIR}/{notebook}"


def colab_url(notebook: str, repository: str | None = None) -> str:
    """The "open in Colab" link of a notebook (``"01_smo_geometry.ipynb"``)."""
    return (f"https://colab.research.google.com/github/{repository or GITHUB_REPOSITORY}/blob/"
            f"{GITHUB_BRANCH}/{_path(notebook)}")


def binder_url(notebook: str | None = None, repository: str | None = None) -> str:
    """The Binder link: JupyterLab on ``notebook``, or on the repository."""
    base = f"https://mybinder.org/v2/gh/{repository or GITHUB_REPOSITORY}/{GITHUB_BRANCH}"
    return base if notebook is None else f"{base}?labpath={quote(_path(notebook), safe='')}"


def source_url(notebook: str, repository: str | None = None) -> str:
    """The notebook's page on GitHub."""
    return f"{repository_url(repository)}/blob/{GITHUB_BRANCH}/{_path(notebook)}"


def install_spec(extras: str = "", repository: str | None = None) -> str:
    """What ``pip install`` takes to install svmlab from the repository
    (the ``colab-setup`` cell's argument); ``extras`` e.g. ``"notebooks"``."""
    name = f"svmlab[{extras}]" if extras else "svmlab"
    return f"{name} @ git+{repository_url(repository)}.git@{GITHUB_BRANCH}"


README_BEGIN = "<!-- run-online links: generated by `python -m svmlab.course links --update` -->"
README_END = "<!-- end of run-online links -->"


def readme_table(notebooks, repository: str | None = None) -> str:
    """The Markdown block of run-online links that README.md carries; with
    no ``repository`` (the placeholder), a note that there are none yet."""
    rows = [README_BEGIN, ""]
    if repository is None:
        rows += ["No run-online links yet: the course's public repository is not named "
                 "(`GITHUB_REPOSITORY` in `svmlab/course/links.py` is a placeholder). "
                 "`python -m svmlab.course links --update --repository OWNER/NAME` writes "
                 "them here."]
    else:
        rows += ["| notebook | Colab | Binder |", "|---|---|---|"]
        rows += [f"| `{n}` | [open in Colab]({colab_url(n, repository)}) | "
                 f"[open in Binder]({binder_url(n, repository)}) |" for n in notebooks]
    rows += ["", README_END]
    return "\n".join(rows)


COLAB_HEAD = ("# Google Colab only: install svmlab there (this cell does nothing anywhere else)\n"
              "import sys\n\nif \"google.colab\" in sys.modules:\n")


def colab_cell_source(repository: str | None = None) -> str:
    """The source of a notebook's ``colab-setup`` cell: in Colab it installs
    svmlab from ``repository``; with none (the placeholder) it stops with a
    message that says what to install, instead of installing from nowhere."""
    if repository is None:
        return COLAB_HEAD + (
            "    raise RuntimeError(\"this copy of the course does not name its GitHub repository "
            "yet: install svmlab from the address your instructor gives, e.g. "
            "%pip install 'svmlab @ git+https://github.com/OWNER/NAME.git@main'\")")
    return COLAB_HEAD + f"    %pip install --quiet \"{install_spec('', repository)}\""


def set_colab_cells(nb: dict, repository: str | None = None) -> bool:
    """Write :func:`colab_cell_source` into ``nb``'s ``colab-setup`` cells;
    True when one changed."""
    want = colab_cell_source(repository)
    hit = False
    for cell in nb["cells"]:
        if "colab-setup" not in cell.get("metadata", {}).get("tags", []):
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if src != want:
            cell["source"] = want.splitlines(keepends=True) if isinstance(cell["source"], list) \
                else want
            hit = True
    return hit


def update_colab_cells(notebooks_dir, repository: str | None = None) -> list[str]:
    """Rewrite every notebook's ``colab-setup`` cell for ``repository``
    (:func:`colab_cell_source`); the names of the notebooks changed.  Only
    that cell's source changes; the file is written the way Jupyter writes it
    (one-space indent), so the diff is that cell."""
    import json
    from pathlib import Path

    changed = []
    for path in sorted(Path(notebooks_dir).glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        if set_colab_cells(nb, repository):
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            changed.append(path.name)
    return changed
