"""Compile ahead: :func:`warm_up`, svmlab's answer to "the first fit is slow".

numba compiles a kernel the first time it is called with new argument types
and keeps the machine code in its on-disk cache, so the cost is paid once
per installation (per :envvar:`NUMBA_CACHE_DIR`).  :func:`warm_up` pays it
at a moment of the user's choosing, with a visible message, by running
small representative fits of each solver family: every kernel that a
default fit of an estimator of the family runs, on dense, CSR and
bit-packed binary input, 2 and 3 classes, with the fast and the stepped
path and predictions, and the options large problems choose by themselves
(float32 kernel rows, a cache of fewer rows than examples).  A fit with
other options may still meet a kernel for new argument types; it is then
compiled as :mod:`svmlab._jit` says.

Families: ``"smo"`` (:class:`~svmlab.SMOClassifier`), ``"decomposition"``
(IRWLS, chunking, Osuna and blocked decomposition), ``"cutting_plane"``
(Algorithm 1, OCAS, the ordinal regressor).  Another family registers
itself by adding a function to :data:`FAMILIES`.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

__all__ = ["warm_up", "warm", "FAMILIES"]


def _problems():
    """Small problems of every input kind: dense, CSR, binary CSR (bit-packed)
    and dense with three classes."""
    import scipy.sparse as sp

    rng = np.random.RandomState(0)
    X = rng.randn(40, 5)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.6, X, 0.0))
    Xb = sp.csr_matrix((X > 0.3).astype(np.float64))
    y3 = np.digitize(X[:, 0], [-0.4, 0.4])
    return [(X, y), (Xs, y), (Xb, y), (X, y3)]


def _exercise(est, X, y, stepped=True):
    """Fit, predict, and (for a 2-class problem) a few stepped steps."""
    est.fit(X, y)
    est.decision_function(X[:3])
    est.predict(X[:3])
    if stepped and len(np.unique(y)) == 2 and hasattr(est, "start"):
        run = est.start(X, y)
        for _ in range(3):
            if run.finished:
                break
            run.step()


#: what large problems choose and small ones do not: float32 kernel rows
#: (``cache_dtype="auto"`` takes them when the float64 kernel matrix does not
#: fit ``cache_size``) and a cache of far fewer rows than examples (shrinking,
#: Platt's parked phases, prefetched blocks); forced here on small problems
_LARGE_PROBLEM_OPTIONS = ({"cache_dtype": "float32"},
                          {"cache_dtype": "float32", "cache_size": 0.001},
                          {"cache_dtype": "float64", "cache_size": 0.001})


def _smo():
    from .smo import SMOClassifier

    problems = _problems()
    for X, y in problems:
        for sel in ("platt", "wss2"):
            for kernel in ("rbf", "linear"):
                _exercise(SMOClassifier(selection=sel, kernel=kernel, progress=False), X, y)
    for X, y in problems[:3]:
        for opts in _LARGE_PROBLEM_OPTIONS:
            for sel in ("platt", "wss2"):
                _exercise(SMOClassifier(selection=sel, progress=False, **opts), X, y,
                          stepped=False)
            # Platt's linear kernel folds w (a runtime flag of the one
            # compiled loop, svmlab.smo._platt): its paths (no full rows,
            # parked phases without gradients) on every cache kind
            _exercise(SMOClassifier(kernel="linear", progress=False, **opts), X, y,
                      stepped=False)


def _decomposition():
    from .decomposition import ChunkingClassifier, DecompositionClassifier, IRWLSClassifier

    problems = _problems()
    for X, y in problems:
        _exercise(IRWLSClassifier(progress=False), X, y)
        _exercise(ChunkingClassifier(progress=False), X, y)
        for engine in ("qp", "irwls", "smo"):
            _exercise(DecompositionClassifier(engine=engine, progress=False), X, y)
    for X, y in problems[:3]:
        for opts in _LARGE_PROBLEM_OPTIONS:
            _exercise(IRWLSClassifier(progress=False, **opts), X, y, stepped=False)
            _exercise(DecompositionClassifier(engine="smo", progress=False, **opts), X, y,
                      stepped=False)


def _cutting_plane():
    from .cutting_plane import CuttingPlaneClassifier, CuttingPlaneOrdinalRegressor

    for X, y in _problems():
        for method in ("joachims", "ocas"):
            _exercise(CuttingPlaneClassifier(C=10.0, method=method, progress=False), X, y)
        CuttingPlaneOrdinalRegressor(C=10.0, progress=False).fit(X, y)


#: family name -> (what it is called in messages, the function that warms it)
FAMILIES = {
    "smo": ("SMO solver", _smo),
    "decomposition": ("decomposition solvers (IRWLS, chunking, decomposition)", _decomposition),
    "cutting_plane": ("cutting-plane solvers", _cutting_plane),
}


def warm(family):
    """Run the representative fits of ``family`` in this process (whatever the
    tier policy says; :func:`warm_up` makes them compile)."""
    try:
        what, fn = FAMILIES[family]
    except KeyError:
        raise ValueError(f"unknown family {family!r}; known: {sorted(FAMILIES)}") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()


def warm_up(*families, background=False):
    """Compile svmlab's solvers ahead of the first fit.

    Parameters
    ----------
    *families : str
        ``"smo"``, ``"decomposition"``, ``"cutting_plane"`` (default: all).
    background : bool, default False
        False: return when the compiled code is ready, showing a line per
        family that moves while it compiles ("svmlab: compiling the SMO
        solver: K of about N kernels compiled, T s so far, about R s left",
        N and R from the measured compile mass, see :mod:`svmlab._jit`;
        nothing when it is already in numba's cache, or when
        :envvar:`SVMLAB_PROGRESS` is ``0``).  True: return at once; a
        background process compiles them (small fits meanwhile run the same
        code interpreted, see :mod:`svmlab._jit`) and a later blocking call
        waits for it instead of compiling twice.  Under ``SVMLAB_JIT=eager``
        or ``interpret`` (see :mod:`svmlab._jit`) ``background=True`` does
        nothing: kernels then compile where they are first used, or never.

    Returns
    -------
    dict
        ``{family: seconds}`` spent in this call per family (0 for
        ``background=True``).

    Why a separate process for ``background=True``: numba's compiler holds
    Python's global interpreter lock most of the time, so a compiling thread
    would slow the notebook's own work; a process runs on another core.
    """
    from . import _jit

    names = list(families) or list(FAMILIES)
    for f in names:
        if f not in FAMILIES:
            raise ValueError(f"unknown family {f!r}; known: {sorted(FAMILIES)}")
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return {f: 0.0 for f in names}
    if background and _jit.get_mode() != "auto":
        # eager: numba's own behaviour, compile where used; interpret: never compile
        return {f: 0.0 for f in names}
    w = _jit._worker()
    if background:
        for f in names:
            w.submit("warm", ("warm", f), f, what=FAMILIES[f][0])
        return {f: 0.0 for f in names}
    spent = {}
    for f in names:
        t0 = time.perf_counter()
        key = ("warm", f)
        with w.cond:
            queued = key in w.ids
        if queued:
            w.wait(key, FAMILIES[f][0])
        old = _jit.set_mode("eager")
        try:
            with _jit.announce(FAMILIES[f][0], key=f"warm:{f}"):
                warm(f)  # compiles what is missing (one message), loads the rest
        finally:
            _jit.set_mode(old)
        spent[f] = time.perf_counter() - t0
    return spent
