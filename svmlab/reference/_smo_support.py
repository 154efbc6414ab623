"""Plumbing shared by the SMO references :mod:`svmlab.reference.smo` and
:mod:`svmlab.reference.wss2` (not part of the algorithms): the result type,
the loop that drives a reference's ``step()``, and the branch tags of
``PlattSMO.take_step`` that a recorded step took (for ``explain``)."""

from collections import namedtuple

import numpy as np

#: what ``smo``/``wss2`` return (``converged`` as the run's: the stopping rule holds)
SMOResult = namedtuple("SMOResult", "alpha b records n_iter converged")


def drive(run, max_iter=-1, callback=None, intercept=None):
    """Step ``run`` to the end, or ``max_iter`` steps, or a callback returning False."""
    records = []
    while max_iter < 0 or len(records) < max_iter:
        record = run.step()
        if record is None:
            break
        records.append(record)
        if callback is not None and callback(record) is False:
            break
    b = run.b if intercept is None else intercept()
    return SMOResult(run.alpha.copy(), float(b), records, run.n_iter, run.converged)


def per_example_bounds(C, n, tol=0.0, eps=0.0):
    """``(C as given, Cv)``: ``C`` is a number (every bound C) or n per-example
    bounds ``C_i = C * weight_i`` (LIBSVM's weights); ``Cv`` is the (n,) array.
    Raises ValueError unless every C_i > 0 is finite and tol, eps >= 0."""
    Cv = np.asarray(C, dtype=np.float64)
    if Cv.ndim != 0 and Cv.shape != (n,):
        raise ValueError(f"C must be a number or n = {n} per-example bounds, got shape "
                         f"{Cv.shape}")
    if not (np.all(np.isfinite(Cv)) and np.all(Cv > 0) and tol >= 0 and eps >= 0):
        raise ValueError(f"need C > 0 (every C_i), tol >= 0, eps >= 0; got C={C}, tol={tol}, "
                         f"eps={eps}")
    return (float(Cv) if Cv.ndim == 0 else Cv.copy()), np.broadcast_to(Cv, (n,)).copy()


def take_step_tags(record, C=None):
    """Tags of :meth:`PlattSMO.take_step` that a recorded step ran.  A step
    that folded ``w`` is known by its cache counts: it never read a row.
    The threshold rule (eqs. 20-21) is named from the record's ``C1, C2``
    (the pair's bounds), else from ``C``, else from the formulas."""
    r = record
    tags = {"eta", "a1", "threshold", "update", "L-H-differ" if r.y1 != r.y2 else "L-H-same",
            "update-w" if r.cache_misses == 0 else "update-f0"}
    if r.eta > 0:
        u = r.a2_unclipped
        tags |= {"eta-positive", "clip-L" if u < r.L else "clip-H" if u > r.H else "interior"}
    else:
        near_L = abs(r.a2_new - r.L) <= abs(r.a2_new - r.H)
        tags |= {"eta-nonpositive", "end-L" if near_L else "end-H"}
    C1 = getattr(r, "C1", np.nan)
    C2 = getattr(r, "C2", np.nan)
    if not (np.isfinite(C1) and np.isfinite(C2)) and C is not None:
        C1 = C2 = C  # a record without its pair's bounds
    if np.isfinite(C1) and np.isfinite(C2):
        tags.add("b1" if 0 < r.a1_new < C1 else "b2" if 0 < r.a2_new < C2 else "b-average")
    else:
        # without C: the first rule of eqs. 20-21 whose value is b_new
        d1, d2 = r.y1 * (r.a1_new - r.a1_old), r.y2 * (r.a2_new - r.a2_old)
        b1 = r.b_old - r.E1 - d1 * r.K11 - d2 * r.K12
        b2 = r.b_old - r.E2 - d1 * r.K12 - d2 * r.K22
        tags.add("b1" if r.b_new == b1 else "b2" if r.b_new == b2 else "b-average")
    return tags
