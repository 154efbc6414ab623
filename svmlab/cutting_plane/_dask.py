"""The cutting-plane O(sn) passes on Dask (data past one machine).

Joachims' Algorithms 1 and 2 touch the training data only in the
most-violated-constraint pass; everything else (the working set and the OP3
QP) is small and stays on the client.  Here the pass runs as blockwise work
on the row blocks of a dask array plus a tree reduction:

* classification: every block returns ``(sum_i c_i v_i y_i [x_i, B], sum c_i,
  sum c_i v_i (1 - y_i w.x_i), sum c_i v_i)`` for its rows (the same numba
  pass as in memory; ``v_i`` the example weights, None without weights);
  the partial sums are added up in a tree.  With weights, rows of weight 0
  stay in the blocks (they add exact zeros) and ``n`` in ``1/n`` counts the
  rows of positive weight, as the in-memory fit that removes them; only
  the record's ``constraint_size`` (the number of rows with ``c_i = 1``) may
  count zero-weight rows here;
* OCAS (``method="ocas"``): every block returns the margins of ``w_t``
  for its rows; the client gathers them (O(n) memory, as for Algorithm 2),
  runs the exact line search, and sends each block its piece of the
  cutting point's margins for the blockwise cut (reduced as above);
* ordinal regression: every block returns its scores ``w.x_i``; the client
  runs the O(n log n + R n) sweep on the n scores (a global sort is
  inherent to Algorithm 2; it needs O(n) client memory, not O(sn)), then the
  blocks compute ``sum_i (c+_i - c-_i) x_i`` for their rows, again reduced in
  a tree.

``w`` is broadcast to the workers once per iteration: it is one graph node
that every block task depends on, so it travels once to each worker in the
same round trip as the pass (a separate ``Client.scatter(broadcast=True)``
would cost an extra round trip per iteration).  X is persisted once, so every pass reads worker memory.

Dask is an optional dependency (``pip install "dask[array]" distributed``);
it is imported only when a dask array is passed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._ocas import cut_csr, cut_dense, margins_csr, margins_dense
from ._oracle import NO_MASK as _NO_MASK
from ._oracle import check_ranks, n_pairs, uidx as _uidx
from ._passes import (
    cls_pass_csr,
    cls_pass_dense,
    ordinal_counts,
    scores_csr,
    scores_dense,
    wsum_csr,
    wsum_dense,
)

__all__ = ["DaskClassifierOracle", "DaskOrdinalOracle"]

def _require_dask():
    try:
        import dask
        import dask.array  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "Fitting on a dask array needs dask: install the optional extra, "
            "e.g. `pip install \"dask[array]\" distributed`.") from exc
    return dask


def _client():
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


# -------------------------------------------------------------- block work
def _canon(b):
    """A block as float64 C-contiguous dense or canonical int32 CSR."""
    if sp.issparse(b):
        from .._validation import to_csr32

        return to_csr32(b)
    if hasattr(b, "todense") and not isinstance(b, np.ndarray):  # e.g. pydata sparse
        b = b.todense()
    return np.ascontiguousarray(b, dtype=np.float64)


def _check_block(b):
    b = _canon(b)
    vals = b.data if sp.issparse(b) else b
    return (b.shape[0], b.shape[1], bool(np.all(np.isfinite(vals))))


def _cls_block(b, y, w, B, v=None):
    b = _canon(b)
    g = np.zeros(w.shape[0])
    if sp.issparse(b):
        cnt, loss, off = cls_pass_csr(b.data, *_uidx(b), y, w, B, g, _NO_MASK, v)
    else:
        cnt, loss, off = cls_pass_dense(b, y, w, B, g, _NO_MASK, v)
    return g, int(cnt), float(loss), float(off)


def _margins_block(b, y, w, B):
    b = _canon(b)
    out = np.empty(b.shape[0])
    if sp.issparse(b):
        margins_csr(b.data, *_uidx(b), y, w, B, out)
    else:
        margins_dense(b, y, w, B, out)
    return out


def _cut_block(b, y, marg, B, dim, v=None):
    b = _canon(b)
    g = np.zeros(dim)
    if sp.issparse(b):
        cnt, loss, off = cut_csr(b.data, *_uidx(b), y, marg, B, g, _NO_MASK, v)
    else:
        cnt, loss, off = cut_dense(b, y, marg, B, g, _NO_MASK, v)
    return g, int(cnt), float(loss), float(off)


def _add_cls(*parts):
    g = parts[0][0].copy()
    cnt = parts[0][1]
    loss = parts[0][2]
    off = parts[0][3]
    for p in parts[1:]:
        g += p[0]
        cnt += p[1]
        loss += p[2]
        off += p[3]
    return g, cnt, loss, off


def _scores_block(b, w):
    b = _canon(b)
    out = np.empty(b.shape[0])
    if sp.issparse(b):
        scores_csr(b.data, *_uidx(b), w, out)
    else:
        scores_dense(b, w, out)
    return out


def _wsum_block(b, coef, dim):
    b = _canon(b)
    g = np.zeros(dim)
    if sp.issparse(b):
        wsum_csr(b.data, *_uidx(b), coef, g)
    else:
        wsum_dense(b, coef, g)
    return g


def _add_vec(*parts):
    g = parts[0].copy()
    for p in parts[1:]:
        g += p
    return g


def _tree(dask, parts, combine, fan_in=8):
    """Tree reduction of delayed parts (fan-in ``fan_in``)."""
    while len(parts) > 1:
        parts = [dask.delayed(combine, pure=True)(*parts[i:i + fan_in])
                 for i in range(0, len(parts), fan_in)]
    return parts[0]


# ------------------------------------------------------------------ oracles
class _DaskBase:
    def _setup(self, X):
        dask = _require_dask()
        self.dask = dask
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array for X, got ndim={X.ndim}.")
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        self.client = _client()
        X = X.persist()
        self.X = X  # keeps the persisted blocks alive on the cluster
        self.blocks = list(X.to_delayed().ravel())
        # validation pass (before any solver work): sizes and finiteness
        info = dask.compute(*[dask.delayed(_check_block)(b) for b in self.blocks])
        rows = [r for r, _, _ in info]
        cols = {c for _, c, _ in info}
        if len(cols) != 1:
            raise ValueError(f"Blocks of X disagree on the number of features: {sorted(cols)}.")
        if not all(ok for _, _, ok in info):
            raise ValueError("Input X contains NaN or infinity.")
        self.rows = rows
        self.n = int(sum(rows))
        self.n_features = cols.pop()
        if self.n < 2:
            raise ValueError(f"Found {self.n} sample(s); at least 2 are required.")
        self.dim = self.n_features + 1
        self.bounds = np.concatenate([[0], np.cumsum(rows)])

    def _labels(self, y):
        if y is None:
            raise ValueError("y is required.")
        if hasattr(y, "compute"):
            y = y.compute()
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1 or y.shape[0] != self.n:
            raise ValueError(
                f"y must be 1-D with one label per row of X ({self.n}); got shape {y.shape}.")
        return y

    def _split(self, v):
        """Per-block pieces of an n-vector, as delayed objects on the cluster."""
        pieces = [np.ascontiguousarray(v[self.bounds[k]:self.bounds[k + 1]])
                  for k in range(len(self.rows))]
        if self.client is not None:
            return self.client.scatter(pieces)
        return [self.dask.delayed(p) for p in pieces]

    def _broadcast(self, w):
        # one graph node holding w: every block task depends on it, so the
        # scheduler ships it once to each worker that runs blocks (a
        # broadcast), in the same round trip as the pass itself
        return self.dask.delayed(w, pure=True)


class DaskClassifierOracle(_DaskBase):
    """Algorithm 1's pass on Dask."""

    @classmethod
    def build(cls, X, y, B, sample_weight=None, class_weight=None):
        """The oracle, the classes and the number of features.  With
        ``sample_weight`` (numpy or dask, (n,)) or ``class_weight``, the
        example weights ``v`` (:func:`svmlab._validation.check_weights`,
        checked on the client before any pass) travel to the blocks as
        per-block pieces, like y; ``n_loss`` (the ``n`` of ``1/n``) is then
        the number of rows of positive weight."""
        from sklearn.utils.multiclass import check_classification_targets

        from .._validation import check_weights

        self = cls()
        self._setup(X)
        y = self._labels(y)
        check_classification_targets(y)
        classes, idx = np.unique(y, return_inverse=True)
        if len(classes) != 2:
            raise ValueError(
                f"CuttingPlaneClassifier needs exactly two classes; y has {len(classes)}.")
        y_pm = np.where(idx == 1, 1.0, -1.0)
        if hasattr(sample_weight, "compute"):
            sample_weight = sample_weight.compute()
        v, self.class_weight_, keep = check_weights(y_pm, classes, sample_weight,
                                                    class_weight)
        self.B = float(B)
        self.y_parts = self._split(y_pm)
        self.n_loss = self.n
        if sample_weight is None and class_weight is None:
            self.v = None
            self.v_parts = [None] * len(self.rows)
        else:
            self.v = np.ascontiguousarray(v, dtype=np.float64)
            self.v_parts = self._split(self.v)
            if keep is not None:
                self.n_loss = int(len(keep))
        return self, classes, self.n_features

    def __call__(self, w, want_detail):
        dask = self.dask
        wd = self._broadcast(np.ascontiguousarray(w))
        parts = [dask.delayed(_cls_block, pure=True)(b, yb, wd, self.B, vb)
                 for b, yb, vb in zip(self.blocks, self.y_parts, self.v_parts)]
        g, cnt, loss, off = dask.compute(_tree(dask, parts, _add_cls))[0]
        inv = 1.0 / self.n_loss
        return g * inv, off * inv, loss * inv, int(cnt), {}

    # -- OCAS (svmlab.cutting_plane._ocas): margins gathered on the client (O(n) memory,
    # as Algorithm 2's sweep), the line search there, the cut blockwise
    def margins(self, w):
        dask = self.dask
        wd = self._broadcast(np.ascontiguousarray(w))
        parts = [dask.delayed(_margins_block, pure=True)(b, yb, wd, self.B)
                 for b, yb in zip(self.blocks, self.y_parts)]
        return np.concatenate(dask.compute(*parts))

    def cut(self, marg, want_detail):
        dask = self.dask
        mparts = self._split(np.asarray(marg, dtype=np.float64))
        parts = [dask.delayed(_cut_block, pure=True)(b, yb, mb, self.B, self.dim, vb)
                 for b, yb, mb, vb in zip(self.blocks, self.y_parts, mparts, self.v_parts)]
        g, cnt, loss, off = dask.compute(_tree(dask, parts, _add_cls))[0]
        inv = 1.0 / self.n_loss
        return g * inv, off * inv, loss * inv, int(cnt), {}


class DaskOrdinalOracle(_DaskBase):
    """Algorithm 2's passes on Dask (the sweep itself runs on the client)."""

    @classmethod
    def build(cls, X, y):
        self = cls()
        self._setup(X)
        y = self._labels(y)
        rank, ranks = check_ranks(y, self.n)
        self.rank = rank
        self.R = len(ranks)
        self.m = n_pairs(rank, self.R)
        return self, ranks, self.n_features

    def __call__(self, w, want_detail):
        dask = self.dask
        wd = self._broadcast(np.ascontiguousarray(w))
        sparts = [dask.delayed(_scores_block, pure=True)(b, wd) for b in self.blocks]
        s = np.concatenate(dask.compute(*sparts))
        cp = np.zeros(self.n, dtype=np.int64)
        cm = np.zeros(self.n, dtype=np.int64)
        npairs, loss = ordinal_counts(s, self.rank, self.R, cp, cm)
        coef_parts = self._split((cp - cm).astype(np.float64))
        gparts = [dask.delayed(_wsum_block, pure=True)(b, cb, self.dim)
                  for b, cb in zip(self.blocks, coef_parts)]
        g = dask.compute(_tree(dask, gparts, _add_vec))[0]
        inv = 1.0 / self.m
        return g * inv, npairs * inv, loss * inv, int(npairs), {}
