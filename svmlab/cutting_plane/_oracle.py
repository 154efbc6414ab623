"""The cutting-plane oracle: the leaf that both the in-memory solver and the
Dask oracle build on.

Joachims' Algorithm 1 (KDD 2006) and its ordinal variant, Algorithm 2, ask
one question of the data per iteration: *which constraint of the 1-slack
problem (OP2, resp. OP5) is most violated at the current w?*  An **oracle**
answers it.  Every oracle, in memory (this module) or on a Dask cluster
(:mod:`svmlab.cutting_plane._dask`), keeps this protocol:

``oracle(w, want_detail) -> (g, d, R, count, detail)``
    ``g``: the cut's gradient (the averaged, possibly weighted sum of
    ``y_i x_i`` over the violated examples, Algorithm 1 line 6, or of
    ``c_i x_i`` over the ordered pairs, Algorithm 2);
    ``d``: the cut's offset (its constant term);
    ``R``: the empirical risk (average hinge loss) at w;
    ``count``: how many examples (pairs) enter the cut;
    ``detail``: a dict with the per-example indicators when ``want_detail``
    (for the records and the widgets), else empty.

The classifier oracles also offer the two passes of OCAS
(:mod:`svmlab.cutting_plane._ocas`): ``margins(w)`` and ``cut(margins, want_detail)``.
Attributes used by the solver: ``n`` (rows), ``dim`` (features + 1 for the
bias) and, for the ordinal oracle, ``m`` (the number of ordered pairs).

This module also holds the dense/CSR dispatch of the compiled passes and the
validation of ordinal targets (:func:`check_ranks`), which the in-memory and
the Dask estimators share.  It imports no other cutting-plane module, so
:mod:`svmlab.cutting_plane.estimators` and :mod:`svmlab.cutting_plane._dask` both depend on it and
not on each other.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._passes import (
    cls_pass_csr,
    cls_pass_dense,
    ordinal_counts,
    scores_csr,
    scores_dense,
    wsum_csr,
    wsum_dense,
)
from ._ocas import (
    cut_update_csr,
    cut_update_dense,
    margins_csr,
    margins_csr_parallel,
    margins_dense,
    margins_dense_parallel,
    permute_csr_rows,
    row_grouping,
    use_parallel,
)

__all__ = ["ClassifierOracle", "OrdinalOracle", "check_ranks", "n_pairs",
           "scores", "uidx", "wsum", "NO_MASK"]

#: an empty mask: the compiled passes then record no per-example detail
NO_MASK = np.zeros(0, dtype=np.uint8)


# --------------------------------------------------------------------------
# dense / CSR dispatch of the compiled passes
# --------------------------------------------------------------------------
def uidx(X):
    """CSR index arrays as unsigned views (no copy): numba then skips the
    negative-index wraparound test on every ``w[indices[p]]``, which makes
    the sparse passes about twice as fast."""
    return X.indices.view(np.uint32), X.indptr.view(np.uint32)


def scores(X, w, out):
    """``out[i] = w . [x_i, 1]`` for dense or CSR ``X`` (Algorithm 2's scores)."""
    if sp.issparse(X):
        scores_csr(X.data, *uidx(X), w, out)
    else:
        scores_dense(X, w, out)


def wsum(X, coef, g):
    """``g += sum_i coef_i [x_i, 1]`` for dense or CSR ``X``."""
    if sp.issparse(X):
        wsum_csr(X.data, *uidx(X), coef, g)
    else:
        wsum_dense(X, coef, g)


def n_pairs(rank, R):
    """Number of ordered pairs ``(i, j)`` with ``rank_i > rank_j`` (the m of
    OP5), from the rank sizes: ``sum_r size_r * (examples of lower rank)``."""
    size = np.bincount(rank, minlength=R).astype(np.int64)
    below = np.concatenate([[0], np.cumsum(size)[:-1]])
    return int(np.sum(size * below))


# --------------------------------------------------------------------------
# ordinal targets
# --------------------------------------------------------------------------
def check_ranks(y, n=None):
    """Validate ordinal targets: finite integer values with >= 2 distinct.

    Returns ``(rank_index int64 in [0, R), ranks)`` where ``ranks`` are the
    distinct values (sorted) and ``R = len(ranks)``.
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one rank per sample), got shape {y.shape}.")
    if n is not None and y.shape[0] != n:
        raise ValueError(f"X has {n} samples but y has {y.shape[0]}.")
    if y.dtype.kind == "O":
        # an object array of numbers is accepted as those numbers (as
        # scikit-learn does); anything else is an unknown label type
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                "Unknown label type: ordinal ranks must be integers, got an object "
                "array that is not numeric. Encode the ordered categories as "
                "integers 1..R (larger = higher rank).") from None
    if y.dtype.kind not in "iufb":
        raise ValueError(
            f"Unknown label type: ordinal ranks must be integers, got dtype {y.dtype}. "
            "Encode the ordered categories as integers 1..R (larger = higher rank).")
    yf = y.astype(np.float64)
    if not np.all(np.isfinite(yf)):
        raise ValueError("Ordinal ranks contain NaN or infinity.")
    if np.any(yf != np.round(yf)):
        raise ValueError(
            "Ordinal ranks must be integers (1, 2, ..., R); got non-integer "
            "values. For real-valued targets use a regression model.")
    ranks, idx = np.unique(yf, return_inverse=True)
    if len(ranks) < 2:
        raise ValueError(
            f"y contains a single rank ({ranks[0]:g}); ordinal regression needs "
            "at least two distinct ranks (there are no ordered pairs).")
    return idx.astype(np.int64), ranks.astype(np.int64)


# --------------------------------------------------------------------------
# the in-memory oracles
# --------------------------------------------------------------------------
class ClassifierOracle:
    """In-memory pass of Algorithm 1 over dense or CSR rows.

    ``v``: the (n,) example weights of the weighted 1-slack constraints
    (``class_weight[y_i] * sample_weight_i``), or None for the unweighted
    passes (the same compiled code as before weights existed)."""

    def __init__(self, X, y, B, v=None, group_rows=False):
        self.B = float(B)
        self.n = X.shape[0]
        self.dim = X.shape[1] + 1
        v = None if v is None else np.ascontiguousarray(v, dtype=np.float64)
        # group_rows (True for OCAS; "binary" for Algorithm 1: only a binary
        # CSR matrix, whose margins pass gains, w8a 0.66 -> 0.23 ms, while
        # ijcnn1's fused pass lost 15%, decision 28c01): a CSR matrix's
        # short rows of varying length are stored grouped by length
        # (_ocas.row_grouping); every per-row array of this oracle (y, v,
        # margins, masks) is then in that order, and ``perm`` maps it back
        # (row i here is row perm[i] of the caller's X).  The masks given
        # out in ``detail`` are in the caller's order.
        self.perm = None
        # CSR values as the compiled passes read them: None for a binary
        # matrix (every stored value 1: a9a, w8a), so that the passes read
        # only the column indices (the same sums, exactly: x * w = w for x = 1)
        binary = False
        if sp.issparse(X):
            binary = X.data.size > 0 and X.data.min() == 1.0 and X.data.max() == 1.0
        if group_rows == "binary":
            group_rows = binary
        if group_rows and sp.issparse(X):
            perm = row_grouping(X.indptr)
            if perm is not None:
                # a binary matrix's stored ones are not moved: the grouped
                # matrix shares them (same count, all 1)
                data = X.data if binary else np.empty_like(X.data)
                indices = np.empty_like(X.indices)
                indptr = np.empty_like(X.indptr)
                permute_csr_rows(None if binary else X.data, X.indices, X.indptr, perm,
                                 None if binary else data, indices, indptr)
                X = sp.csr_matrix((data, indices, indptr), shape=X.shape, copy=False)
                y = y[perm]
                v = None if v is None else v[perm]
                self.perm = perm
        self.X = X
        self.y = y
        self.v = v
        self.data = None
        if sp.issparse(X) and not binary:
            self.data = X.data

    def __call__(self, w, want_detail):
        """Algorithm 1's most violated constraint at ``w``.

        A binary CSR matrix (a9a, w8a: the passes read only the column
        indices; its rows grouped by length) takes two passes, the margins
        and then the cut at those margins (:meth:`cut`, updated from the
        previous iteration's cut): on a9a 0.35 ms per iteration against
        0.63 ms for the fused pass, the same sums bit for bit (integer
        partial sums); on w8a level with it.  Other data keep the fused
        pass (:func:`~._passes.cls_pass_csr`), which reads each violated
        row again while it is still in cache: on ijcnn1 (real
        values) the two passes were 10-20% slower, on MNIST as CSR equal
        (decision 28c01)."""
        X = self.X
        if self.data is None and sp.issparse(X):
            return self.cut(self.margins(w), want_detail)
        g = np.zeros(self.dim)
        mask = np.zeros(self.n, dtype=np.uint8) if want_detail else NO_MASK
        if sp.issparse(X):
            cnt, loss, off = cls_pass_csr(self.data, *uidx(X), self.y, w, self.B, g, mask,
                                          self.v)
        else:
            cnt, loss, off = cls_pass_dense(X, self.y, w, self.B, g, mask, self.v)
        inv = 1.0 / self.n
        g *= inv
        detail = {"constraint": self._caller_order(mask)} if want_detail else {}
        return g, off * inv, loss * inv, int(cnt), detail

    # -- the two passes of OCAS (svmlab.cutting_plane._ocas) --------------------------------
    def margins(self, w):
        """``y_i (w.[x_i, B])`` for every row, in this oracle's row order (see
        ``perm``); rows in parallel above ``PARALLEL_MIN_WORK``."""
        out = np.empty(self.n)
        X = self.X
        if sp.issparse(X):
            f = margins_csr_parallel if use_parallel(X.nnz) else margins_csr
            f(self.data, *uidx(X), self.y, w, self.B, out)
        else:
            f = margins_dense_parallel if use_parallel(X.size) else margins_dense
            f(X, self.y, w, self.B, out)
        return out

    #: the incremental cut is summed afresh every this many cuts (bounds the
    #: rounding that the +/- updates accumulate; see cut_update_csr)
    CUT_REFRESH = 32

    def cut(self, marg, want_detail):
        """The cut of R at the point whose margins are ``marg``:
        ``(g, d, R, sum c, detail)`` as :meth:`__call__`.

        Consecutive OCAS cutting points are close, so the cut is updated
        from the previous one (only the rows whose indicator changed are
        added or removed: :func:`~._ocas.cut_update_csr`), and summed
        afresh every :attr:`CUT_REFRESH` cuts."""
        if getattr(self, "_cut_mask", None) is None or self._cut_calls % self.CUT_REFRESH == 0:
            self._cut_mask = np.zeros(self.n, dtype=np.uint8)
            self._cut_g = np.zeros(self.dim)
            self._cut_calls = 0
        self._cut_calls += 1
        g = self._cut_g
        mask = self._cut_mask
        X = self.X
        if sp.issparse(X):
            cnt, loss, off, _ = cut_update_csr(self.data, *uidx(X), self.y, marg, self.B, g,
                                               mask, self.v)
        else:
            cnt, loss, off, _ = cut_update_dense(X, self.y, marg, self.B, g, mask, self.v)
        inv = 1.0 / self.n
        detail = {"constraint": self._caller_order(mask)} if want_detail else {}
        return g * inv, off * inv, loss * inv, int(cnt), detail

    def _caller_order(self, mask):
        """A per-row uint8 mask of this oracle as booleans in the caller's row
        order."""
        if self.perm is None:
            return mask.astype(bool)
        out = np.empty(self.n, dtype=bool)
        out[self.perm] = mask
        return out


class OrdinalOracle:
    """In-memory pass of Algorithm 2: scores, condensed sweep, weighted sum."""

    def __init__(self, X, rank, R):
        self.X = X
        self.rank = rank
        self.R = int(R)
        self.n = X.shape[0]
        self.dim = X.shape[1] + 1
        self.m = n_pairs(rank, R)

    def __call__(self, w, want_detail):
        s = np.empty(self.n)
        scores(self.X, w, s)
        cp = np.zeros(self.n, dtype=np.int64)
        cm = np.zeros(self.n, dtype=np.int64)
        npairs, loss = ordinal_counts(s, self.rank, self.R, cp, cm)
        g = np.zeros(self.dim)
        wsum(self.X, (cp - cm).astype(np.float64), g)
        inv = 1.0 / self.m
        g *= inv
        detail = {"c_plus": cp, "c_minus": cm} if want_detail else {}
        return g, npairs * inv, loss * inv, int(npairs), detail
