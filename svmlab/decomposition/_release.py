"""Which violators the line-search mode of the active-set sub-problem frees
after a full step (rules c/d of Perez-Cruz et al.'s Table 1, with a cap).

``sum beta`` is fixed inside a sub-problem, so freed samples can only move
together with samples moving ``beta`` the other way; the rule therefore
balances the picks by the direction each violator must move (the sign of
its error ``e_i``):

* ``kmax = 0``: every violator (the paper's rule);
* ``kmax = 1`` (the ``"qp"`` rule, or after a zero step): the single worst
  violator; with S1 empty the worst of *each* sign (then b is the middle of
  the bounded samples' interval, the two extreme violators tie, and one of
  them alone cannot move: freeing, bounding and freeing it again cycled);
* ``kmax > 1``: up to ``kmax // 2`` of the worst of each sign, a sign with
  fewer leaving its share to the other (as the working-set selection
  :func:`svmlab.decomposition._working_set.irwls_select`).

Ties: the lower position first.  The readable twin is the stable sort of
``tests/test_irwls_round4.py`` (``_pick_by_sort``).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .._linalg import insert_sorted

__all__ = ["RELEASE_CAP", "release_pick"]

#: How many violators of (9)/(10) the line-search mode of the "irwls" rule
#: frees after a full step: at most RELEASE_CAP, the worst of each sign of
#: ``e`` (:func:`release_pick`); 0 frees every violator.  Freeing every
#: violator at once makes S1 large, and the active-set iterations that
#: bound most of them again one by one cost O(|S1|^2) each (see
#: docs/decisions/26d03-irwls-release-cap.md).
RELEASE_CAP = 10


@njit(cache=True, inline="always")
def _mark_best(vval, vpos, kp, kn, pool_all, chosen):
    """Mark in ``chosen`` the ``kp`` smallest ``(vval[q], q)`` among the
    positions with ``vpos[q]`` and the ``kn`` smallest among the others, or,
    with ``pool_all``, the ``kp`` smallest of all positions: one scan with
    two bounded sorted buffers (:func:`svmlab._linalg.insert_sorted`)."""
    ip = np.empty(kp, np.int64)
    vp = np.empty(kp)
    ineg = np.empty(kn, np.int64)
    vneg = np.empty(kn)
    cp = np.int64(0)  # (literal zeros would compile insert_sorted once more)
    cn = np.int64(0)
    for q in range(vval.shape[0]):
        v = vval[q]
        if pool_all or vpos[q]:
            if kp > 0 and (cp < kp or v < vp[kp - 1]):
                cp = insert_sorted(ip, vp, cp, q, v)
        elif kn > 0 and (cn < kn or v < vneg[kn - 1]):
            cn = insert_sorted(ineg, vneg, cn, q, v)
    for t in range(cp):
        chosen[ip[t]] = True
    for t in range(cn):
        chosen[ineg[t]] = True


@njit(cache=True)
def release_pick(vval, vpos, npos, kmax, nF):
    """Positions (ascending) into ``vval`` of the violators to free.

    Parameters
    ----------
    vval : float64 array (nv,)
        Minus the violation of each violator (``-y e`` on S2, ``y e`` on
        S3): the worst first in ascending order.
    vpos : bool array (nv,)
        Whether its error ``e_i`` is positive, i.e. ``beta_i`` must grow
        (S2 with ``y = +1``, S3 with ``y = -1``).
    npos : int
        ``vpos.sum()``.
    kmax : int
        0: all; 1: the single worst (one of each sign when S1 is empty);
        else at most ``kmax``, the worst of each sign (module docstring).
    nF : int
        |S1|.
    """
    nv = vval.shape[0]
    if kmax <= 0 or nv <= kmax and not (kmax == 1 and nF == 0):
        every = np.empty(nv, np.int64)
        for q in range(nv):
            every[q] = q
        return every
    nneg = nv - npos
    pool_all = kmax == 1 and nF > 0
    # (np.int64: literal counts would compile _mark_best once more for them)
    if pool_all:
        kp = np.int64(1)
        kn = np.int64(0)
    elif kmax == 1:
        kp = np.int64(1 if npos > 0 else 0)
        kn = np.int64(1 if nneg > 0 else 0)
    else:
        kp = np.int64(min(npos, max(kmax // 2, kmax - nneg)))
        kn = np.int64(min(nneg, kmax - kp))
    chosen = np.zeros(nv, np.bool_)
    _mark_best(vval, vpos, kp, kn, pool_all, chosen)
    out = np.empty(kp + kn, np.int64)
    a = 0
    for q in range(nv):
        if chosen[q]:
            out[a] = q
            a += 1
    return out
