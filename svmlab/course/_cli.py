"""The command line of :mod:`svmlab.course`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def _grade(args):
    from . import _grade as g

    limits = g.Limits(timeout=args.timeout, memory_mb=args.memory_mb,
                      hard_timeout=args.hard_timeout)
    t0 = time.monotonic()
    rows = g.grade(args.submissions, args.release, notebooks=args.notebook or None,
                   limits=limits, jobs=args.jobs, warm_up=not args.no_warm_up,
                   progress=lambda s: print(s, file=sys.stderr, flush=True))
    g.write_csv(rows, args.csv)
    students = len({r.student for r in rows})
    print(f"{len(rows)} rows ({students} students) written to {args.csv} "
          f"in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return 0


def _build_student(args):
    from ._student import build_student

    points = {}
    for item in args.points or []:
        key, _, value = item.partition("=")
        points[key] = float(value)
    manifest = build_student(args.out, args.notebooks, solutions=args.solutions, points=points,
                             overwrite=args.force, repository=args.repository,
                             log=lambda s: print(s, file=sys.stderr))
    print(f"{len(manifest['notebooks'])} notebooks, {len(manifest['exercises'])} exercises "
          f"written to {args.out} (outputs cleared, reveal locks on, no solutions; installs "
          f"and links from github.com/{manifest['repository']})", file=sys.stderr)
    return 0


def _site(args):
    from ._site import build_site

    build_site(args.out, keep_staging=args.keep_staging, verbose=args.verbose,
               repository=args.repository, strict=args.strict,
               log=lambda s: print(s, file=sys.stderr, flush=True))
    return 0


def _links(args):
    from . import _nb, links

    repository = links.resolve_repository(args.repository)
    root = _nb.checkout_root()
    nbdir = root / links.NOTEBOOKS_DIR if root else None
    names = sorted(p.name for p in nbdir.glob("*.ipynb")) if nbdir else []
    table = links.readme_table(names, repository)
    if not args.update:
        print(table)
        return 0
    if nbdir is None:
        print("error: --update rewrites README.md and notebooks/ of a checkout; none found",
              file=sys.stderr)
        return 2
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    if links.README_BEGIN not in text or links.README_END not in text:
        print(f"error: {readme} has no run-online block to replace", file=sys.stderr)
        return 2
    head, rest = text.split(links.README_BEGIN, 1)
    _, tail = rest.split(links.README_END, 1)
    readme.write_text(head + table + tail, encoding="utf-8")
    changed = links.update_colab_cells(nbdir, repository)
    print(f"rewrote the run-online links of {readme} and the colab-setup cell of "
          f"{len(changed)} notebooks for {repository}", file=sys.stderr)
    return 0


def _lab(args):
    from . import _workspace

    return _workspace.main(args)


_REPO_HELP = ("the course's GitHub repository OWNER/NAME for install commands and run-online "
              "links (default: GITHUB_REPOSITORY in svmlab/course/links.py once set, else the "
              "checkout's GitHub 'origin' remote; with neither, the command refuses)")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m svmlab.course",
                                description="The instructor's toolkit of the svmlab course.")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="run the checkers on the students' notebooks")
    g.add_argument("submissions", type=Path, help="folder with one sub-folder per student")
    g.add_argument("--csv", type=Path, required=True, help="grade sheet to write")
    g.add_argument("--release", type=Path, default=None,
                   help="the reference notebooks (the student version handed out); "
                        "default: notebooks/ of this checkout")
    g.add_argument("--notebook", action="append", metavar="STEM",
                   help="grade only this notebook (repeatable); default: every graded "
                        "notebook that a student submitted")
    g.add_argument("--timeout", type=float, default=30.0,
                   help="seconds the student's code may run per exercise (default 30)")
    g.add_argument("--memory-mb", type=int, default=4096,
                   help="memory limit of each student's process tree in MiB (default 4096)")
    g.add_argument("--hard-timeout", type=float, default=1800.0,
                   help="seconds one student's sandbox may live, checkers included (default 1800)")
    g.add_argument("--jobs", type=int, default=1, help="students graded at once (default 1)")
    g.add_argument("--no-warm-up", action="store_true",
                   help="do not compile the solvers before grading (svmlab.warm_up())")
    g.set_defaults(run=_grade)

    b = sub.add_parser("build-student", help="write the student version of the notebooks")
    b.add_argument("out", type=Path, help="folder to write (must be new or empty)")
    b.add_argument("--notebooks", type=Path, default=None,
                   help="the instructor's notebooks (default: notebooks/ of this checkout)")
    b.add_argument("--solutions", type=Path, default=None,
                   help="solution modules whose lines must not appear "
                        "(default: instructor/solutions of this checkout)")
    b.add_argument("--points", action="append", metavar="ID=POINTS",
                   help="points of an exercise, e.g. 01.take_step=2 (default 1 each)")
    b.add_argument("--force", action="store_true", help="replace OUT if it exists")
    b.add_argument("--repository", metavar="OWNER/NAME", help=_REPO_HELP)
    b.set_defaults(run=_build_student)

    s = sub.add_parser("site", help="build the course site (Sphinx, offline)")
    s.add_argument("out", type=Path, help="folder for the HTML site")
    s.add_argument("--keep-staging", action="store_true",
                   help="keep the staged Sphinx sources (for debugging)")
    s.add_argument("--verbose", action="store_true", help="print Sphinx's warnings")
    s.add_argument("--repository", metavar="OWNER/NAME", help=_REPO_HELP)
    s.add_argument("--strict", action="store_true",
                   help="fail when Sphinx prints any warning (CI's setting)")
    s.set_defaults(run=_site)

    lk = sub.add_parser("links", help="print README's run-online links (--update: rewrite "
                                      "them and the notebooks' colab-setup cells)")
    lk.add_argument("--update", "--readme", action="store_true", dest="update",
                    help="rewrite README's table and the colab-setup cells for the repository")
    lk.add_argument("--repository", metavar="OWNER/NAME", help=_REPO_HELP)
    lk.set_defaults(run=_links)

    w = sub.add_parser("lab", help="copy the notebooks to your own folder (once) and open "
                                   "JupyterLab there: the checkout stays clean")
    w.add_argument("dir", type=Path, nargs="?", default=None,
                   help="your working folder (default: my-notebooks/ in the checkout, "
                        "ignored by git)")
    w.add_argument("--notebooks", type=Path, default=None,
                   help="the course notebooks (default: notebooks/ of this checkout)")
    w.add_argument("--no-start", action="store_true", help="copy only; do not start JupyterLab")
    w.add_argument("jupyter_args", nargs=argparse.REMAINDER,
                   help="after --: arguments for jupyter lab (e.g. -- --port 8890)")
    w.set_defaults(run=_lab)

    args = p.parse_args(argv)
    if getattr(args, "jupyter_args", None) and args.jupyter_args[0] == "--":
        args.jupyter_args = args.jupyter_args[1:]
    try:
        code = args.run(args)
        sys.stdout.flush()   # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        # the reader closed the pipe (`links | head`): stop quietly, and keep
        # Python from reporting the flush of stdout at exit
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (FileNotFoundError, FileExistsError, ValueError, RuntimeError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
