"""Plumbing shared by the SMO references :mod:`svmlab.reference.smo` and
:mod:`svmlab.reference.wss2` (not part of the algorithms): the result type,
the loop that drives a reference's ``step()``, and the branch tags of
``PlattSMO.take_step`` that a recorded step took (for ``explain``)."""

from collections import namedtuple

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


def take_step_tags(record, C=None):
    """Tags of :meth:`PlattSMO.take_step` that a recorded step ran.  A step
    that folded ``w`` is known by its cache counts: it never read a row."""
    r = record
    tags = {"eta", "a1", "threshold", "update", "L-H-differ" if r.y1 != r.y2 else "L-H-same",
            "update-w" if r.cache_misses == 0 else "update-f0"}
    if r.eta > 0:
        u = r.a2_unclipped
        tags |= {"eta-positive", "clip-L" if u < r.L else "clip-H" if u > r.H else "interior"}
    else:
        near_L = abs(r.a2_new - r.L) <= abs(r.a2_new - r.H)
        tags |= {"eta-nonpositive", "end-L" if near_L else "end-H"}
    if C is not None:
        tags.add("b1" if 0 < r.a1_new < C else "b2" if 0 < r.a2_new < C else "b-average")
    else:
        # without C: the first rule of eqs. 20-21 whose value is b_new
        d1, d2 = r.y1 * (r.a1_new - r.a1_old), r.y2 * (r.a2_new - r.a2_old)
        b1 = r.b_old - r.E1 - d1 * r.K11 - d2 * r.K12
        b2 = r.b_old - r.E2 - d1 * r.K12 - d2 * r.K22
        tags.add("b1" if r.b_new == b1 else "b2" if r.b_new == b2 else "b-average")
    return tags
