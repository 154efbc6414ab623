"""The instructor's toolkit: a student version, grading, the course site, running online.

Run from a checkout of svmlab (the notebooks and ``docs/`` are not part of
the installed package)::

    python -m svmlab.course build-student OUT/             # the students' notebooks
    python -m svmlab.course grade SUBMISSIONS/ --csv grades.csv [--release OUT/]
    python -m svmlab.course site OUT/                      # the course site (docs extra)
    python -m svmlab.course links [--readme]               # the run-online links

``build-student`` (:mod:`._student`)
    The notebooks (the solutions stay in ``instructor/solutions/``), outputs and saved widget
    state cleared, reveal locks on, nbgrader cell metadata on every
    exercise, read back for leaks before it finishes.
``grade`` (:mod:`._grade`, :mod:`._worker`)
    One fresh process per student with a memory limit and a time limit on
    the student's own code; one CSV row per student and exercise.
``site`` (:mod:`._site`, sources in ``docs/``)
    Sphinx + myst-nb + the PyData theme on the stored outputs, offline.
``links`` (:mod:`.links`)
    Colab and Binder links from the one placeholder ``GITHUB_REPOSITORY``.

Conventions: nbgrader's, not otter-grader's
-------------------------------------------
Both packages install from PyPI (nbgrader 0.9.6, otter-grader 7.0.0), but
neither is a dependency: the course needs their *conventions*, not their
servers and databases.  nbgrader's fit: its unit is a notebook cell with
metadata (``nbgrader: {grade_id, points, solution, grade, locked,
schema_version: 3}``), and the course already has exactly an answer cell
(the starter function) and a check cell (``check_x(fn)``) per exercise, so
the student build marks them that way and an instructor can open the
result in nbgrader's tools.  otter-grader's unit is a question with its
tests written in otter's own format (``# BEGIN QUESTION`` cells, OK-style
test files) beside the notebook: the course would have to restate every
checker as otter tests.  The grader here is then nbgrader's autograder idea
(reference notebooks define exercises and points, a submission's metadata
is never trusted for points, one row per student and test cell) with a
different execution model, made for untrusted code: only the definitions
of a notebook run, in a separate process per student, and the grader calls
the checkers itself (:mod:`._grade`).
"""

__all__ = ["build_student", "grade", "write_csv", "build_site", "links"]


def __getattr__(name):
    if name == "build_student":
        from ._student import build_student
        return build_student
    if name in ("grade", "write_csv"):
        from . import _grade
        return getattr(_grade, name)
    if name == "build_site":
        from ._site import build_site
        return build_site
    if name == "links":
        import importlib

        return importlib.import_module(f"{__name__}.links")
    raise AttributeError(f"module 'svmlab.course' has no attribute {name!r}")
