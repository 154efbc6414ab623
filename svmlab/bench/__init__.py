"""svmlab.bench: the benchmark harness (``python -m svmlab.bench``).

Suites (each in its own module, imported lazily by the runner):
``smoke`` (every paper suite at a tiny size, < 3 min, run in CI), ``platt``
(Platt 1998 Table 2), ``irwls`` (Perez-Cruz et al. 2000 Tables 2-3),
``joachims`` (Joachims 2006 Table 1 and figures), ``peers`` (every svmlab
solver against LIBSVM and LIBLINEAR at matched settings), ``gallery``
(scikit-learn's example gallery run as shipped and with svmlab swapped in).

Writing a suite::

    from svmlab.bench import suite, Result, timed

    @suite("mysuite", "what it reproduces")
    def mysuite(ctx):
        model, secs = timed(lambda: Estimator(...).fit(X, y))
        ctx.emit(Result(case="a9a rbf", solver="svmlab ...", time_s=secs, ...))
"""

from ._harness import SUITES, Context, Result, suite, timed


def main(argv=None):
    """Entry point of ``svmlab-bench`` (see :mod:`svmlab.bench.__main__`)."""
    from .__main__ import main as _main

    return _main(argv)


__all__ = ["suite", "Result", "Context", "timed", "SUITES", "main"]
