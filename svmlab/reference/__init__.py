"""Readable references: one short pure-NumPy module per algorithm.

Each module follows its paper's pseudo-code line by line on a dense kernel
matrix (or a dense data matrix, for the linear cutting plane), with the
paper's equation numbers in comments, and emits the same step records as
the fast solver.  The tests prove that the fast solvers and these references
take the same steps under a configuration where they must (no shrinking, a
cache holding every row, the same random generator); each module's
docstring says how ties are broken and where the two legitimately differ.

They ship in the package for students: read them next to the notebooks, and
see :mod:`svmlab.reference._source` for the "which lines ran" display that
the step explorers use.

Modules: ``smo`` (Platt's SMO, TR section 4), ``wss2`` (LIBSVM's WSS 2),
``dual`` (LIBSVM's generalised Solver and Solver_NU: SVR, one-class, nu forms),
``irwls`` (IRWLS-SVC, Table 1, inside the section 2.1 chunking),
``subproblem`` (the working-set sub-problem shared by IRWLS and the QP
engine of chunking and decomposition),
``chunking`` (Vapnik's chunking), ``decomposition`` (Osuna's
decomposition), ``cutting_plane`` (Joachims' Algorithm 1), ``ordinal``
(Algorithm 2 with its sorted sweep), ``random_pairs`` (SMO with random
pairs, the baseline for Platt's heuristics in notebook 02), ``blocked``
(the blocked decomposition of ``DecompositionClassifier(engine="smo")``),
and LIBLINEAR's solvers of :mod:`svmlab.linear`: ``dcd`` (dual coordinate
descent with shrinking), ``tron`` (trust-region Newton on the primal),
``cdn`` (coordinate descent Newton for the L1 penalty) and
``crammer_singer`` (the sequential dual method), each taking the compiled
solver's steps bit for bit.
"""


_MODULES = ("smo", "wss2", "dual", "irwls", "subproblem", "chunking", "decomposition", "cutting_plane",
            "ordinal", "random_pairs", "blocked", "dcd", "tron", "cdn", "crammer_singer")

__all__ = list(_MODULES)


def __getattr__(name):
    if name in _MODULES:
        from svmlab import _load  # one import lock for every lazy name (svmlab._load)

        return _load(f"svmlab.reference.{name}")
    raise AttributeError(f"module 'svmlab.reference' has no attribute {name!r}")


def __dir__():
    return __all__
