"""Synthetic data: Gauss-M, Breiman's twonorm and waveform, small 2-D toy sets,
and a sparse Zipf text generator."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ._parse import canonical_csr

__all__ = ["gauss_m", "toy_2d", "sparse_text", "twonorm", "waveform", "waveform_bases"]


def _rng(random_state):
    """numpy Generator from None/int/Generator/RandomState."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    return np.random.default_rng(random_state)


def gauss_m(n=4000, *, separation=1.0, random_state=0):
    """Two highly overlapping 2-D Gaussians ("Gauss-M", Perez-Cruz et al. 2000).

    Half the points (rounded) are drawn from N(mu, I) with label +1 and the rest
    from N(-mu, I) with label -1, where ``mu = separation/(2 sqrt 2) * (1, 1)``:
    the class means are ``separation`` apart.  With the default separation 1
    the Bayes error is Phi(-1/2) ~ 31%, so most points end up support vectors,
    which is what made Gauss-M a hard case for chunking/decomposition.  The
    IRWLS paper does not list its exact means; this parameterisation is ours.

    Returns dense ``X`` (n, 2) float64 and ``y`` float64 in {-1, +1}.
    """
    if n < 2:
        raise ValueError(f"gauss_m needs n >= 2, got {n}")
    rng = _rng(random_state)
    n_pos = (n + 1) // 2
    mu = np.full(2, separation / (2 * np.sqrt(2)))
    X = rng.standard_normal((n, 2))
    y = np.where(np.arange(n) < n_pos, 1.0, -1.0)
    X += y[:, None] * mu
    perm = rng.permutation(n)
    return X[perm], y[perm]


def toy_2d(kind="blobs", n=40, *, random_state=0, noise=None):
    """Small 2-D sets for the notebooks; returns dense X (n, 2), y in {-1, +1}.

    kind:
      ``"blobs"``  two separable Gaussian blobs (a hard-margin SVM exists);
      ``"moons"``  two interleaved half circles (needs an RBF kernel);
      ``"xor"``    four clusters in an XOR pattern (no linear separator);
      ``"duplicates"``  overlapping blobs with some points repeated, some
                    with both labels (tests degenerate steps, eta = 0).
    """
    rng = _rng(random_state)
    if n < 4:
        raise ValueError(f"toy_2d needs n >= 4, got {n}")
    if kind == "blobs":
        s = 0.6 if noise is None else noise
        y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        X = rng.normal(scale=s, size=(n, 2)) + y[:, None] * np.array([1.5, 1.0])
    elif kind == "moons":
        from sklearn.datasets import make_moons

        X, y01 = make_moons(n_samples=n, noise=0.15 if noise is None else noise,
                            random_state=check_random_state(int(rng.integers(2**31 - 1))))
        y = np.where(y01 == 1, 1.0, -1.0)
    elif kind == "xor":
        s = 0.35 if noise is None else noise
        centers = np.array([[1, 1], [-1, -1], [1, -1], [-1, 1]], float)
        lab = np.array([1.0, 1.0, -1.0, -1.0])
        k = np.arange(n) % 4
        X = centers[k] + rng.normal(scale=s, size=(n, 2))
        y = lab[k]
    elif kind == "duplicates":
        s = 1.0 if noise is None else noise
        m = max(2, n - n // 4)
        y0 = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
        X0 = rng.normal(scale=s, size=(m, 2)) + y0[:, None] * 0.5
        idx = rng.integers(0, m, size=n - m)
        Xd = X0[idx]
        yd = y0[idx].copy()
        yd[::2] *= -1  # every other repeat carries the opposite label
        X = np.vstack([X0, Xd])
        y = np.concatenate([y0, yd])
    else:
        raise ValueError(f"unknown toy_2d kind {kind!r}; use 'blobs', 'moons', 'xor' or 'duplicates'")
    perm = rng.permutation(len(y))
    return np.ascontiguousarray(X[perm], dtype=np.float64), y[perm].astype(np.float64)


def sparse_text(n=100_000, d=50_000, nnz_per_row=50, *, zipf_a=1.1, label_noise=0.05,
                random_state=0, chunk=200_000):
    """Sparse text-like binary classification data for scaling studies.

    Feature (word) ids follow a Zipf law (``P(word k) ~ 1/k**zipf_a``) over
    ``d`` features; each row gets a Poisson(``nnz_per_row``) number of word
    draws (at least one), values are tf-idf-like ``log1p(count) * idf`` and the
    row is scaled to unit L2 norm (as in RCV1).  Labels come from a hidden
    sparse linear model ``sign(X w* - median)`` with a fraction ``label_noise``
    of them flipped.  Built in chunks, so millions of rows fit in memory as
    long as the CSR does (~12 bytes per non-zero).

    Returns CSR ``X`` (float64, int32 indices, sorted) and ``y`` in {-1, +1}.
    """
    if n < 2 or d < 2 or nnz_per_row <= 0:
        raise ValueError("sparse_text needs n >= 2, d >= 2 and nnz_per_row > 0")
    rng = _rng(random_state)
    ranks = np.arange(1, d + 1, dtype=np.float64)
    p = ranks ** (-zipf_a)
    p /= p.sum()
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    perm_feat = rng.permutation(d)  # so frequent words are not simply the first columns
    idf = np.log(1.0 / (p * min(nnz_per_row, d)) + 1.0)[np.argsort(perm_feat)]
    w = rng.standard_normal(d) * (rng.random(d) < 0.2)
    blocks = []
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        k = np.maximum(rng.poisson(nnz_per_row, m), 1)
        indptr = np.zeros(m + 1, np.int64)
        np.cumsum(k, out=indptr[1:])
        cols = perm_feat[np.searchsorted(cdf, rng.random(int(indptr[-1])), side="right")]
        B = sp.csr_matrix((np.ones(len(cols)), cols.astype(np.int32), indptr), shape=(m, d))
        B.sum_duplicates()  # counts
        B.data = np.log1p(B.data) * idf[B.indices]
        norms = np.sqrt(np.add.reduceat(B.data ** 2, B.indptr[:-1])) if B.nnz else np.ones(m)
        B.data /= np.repeat(norms, np.diff(B.indptr))
        blocks.append(B)
    X = canonical_csr(sp.vstack(blocks, format="csr") if len(blocks) > 1 else blocks[0])
    score = X @ w
    y = np.where(score > np.median(score), 1.0, -1.0)
    flip = rng.random(n) < label_noise
    y[flip] *= -1
    return X, y


def twonorm(n=7400, *, d=20, random_state=0):
    """Breiman's *twonorm*: two Gaussians in ``d`` dimensions (default 20).

    Definition (Breiman 1996, "Bias, variance, and arcing classifiers",
    Tech. Rep. 460, Statistics Dept., UC Berkeley): class 1 is drawn from
    N(a, I) and class 2 from N(-a, I), where ``a`` has every coordinate
    equal to ``2 / sqrt(20)``.  The class means are 4 apart, so the Bayes
    error is Phi(-2) ~ 2.3%; the optimal rule is linear.  For ``d != 20``
    the coordinate stays ``2 / sqrt(d)`` (same separation).  Ratsch's
    benchmark repository and LIBSVM users quote it with 7400 rows (400
    training + 7000 test points), the default here.

    Exactly ``ceil(n/2)`` rows are class +1 (mean +a), the rest -1 (mean
    -a), shuffled; the same ``random_state`` gives the same data.

    Returns dense ``X`` (n, d) float64 and ``y`` float64 in {-1, +1}.
    """
    if n < 2 or d < 1:
        raise ValueError(f"twonorm needs n >= 2 and d >= 1, got n={n}, d={d}")
    rng = _rng(random_state)
    n_pos = (n + 1) // 2
    y = np.where(np.arange(n) < n_pos, 1.0, -1.0)
    X = rng.standard_normal((n, d)) + y[:, None] * (2.0 / np.sqrt(d))
    perm = rng.permutation(n)
    return np.ascontiguousarray(X[perm]), y[perm]


def waveform_bases():
    """The three base waves of Breiman's *waveform* data, shape (3, 21):
    ``h1(m) = max(6 - |m - 11|, 0)`` for ``m = 1..21``, ``h2(m) = h1(m - 4)``
    and ``h3(m) = h1(m + 4)`` (triangles of height 6 peaking at m = 11, 15
    and 7)."""
    m = np.arange(1, 22, dtype=np.float64)
    h1 = np.maximum(6.0 - np.abs(m - 11.0), 0.0)
    h2 = np.maximum(6.0 - np.abs(m - 4.0 - 11.0), 0.0)
    h3 = np.maximum(6.0 - np.abs(m + 4.0 - 11.0), 0.0)
    return np.vstack([h1, h2, h3])


#: which two base waves (indices into :func:`waveform_bases`) each class mixes
WAVEFORM_PAIRS = ((0, 1), (0, 2), (1, 2))


def waveform(n=5000, *, binary=True, random_state=0):
    """Breiman's *waveform* data, the 21-attribute version.

    Definition (Breiman, Friedman, Olshen & Stone 1984, *Classification and
    Regression Trees*, section 2.6.2; UCI "Waveform Database Generator
    (Version 1)"): with the base waves of :func:`waveform_bases`, a point of
    class 1 is ``u h1 + (1 - u) h2 + e``, class 2 ``u h1 + (1 - u) h3 + e``
    and class 3 ``u h2 + (1 - u) h3 + e``, where ``u ~ U(0, 1)`` is drawn
    per point and ``e ~ N(0, I_21)``.  So the class-c mean is
    ``(h_i + h_j) / 2`` and its covariance ``(h_i - h_j)(h_i - h_j)' / 12 +
    I``.  The Bayes error is about 14%.

    The classes get ``n // 3`` points each (the first ``n % 3`` classes one
    more), shuffled; the same ``random_state`` gives the same data.  With
    ``binary=True`` (default) the labels are +1 for class 1 and -1 for
    classes 2 and 3: the two-class version of Ratsch's benchmark
    repository, which has 5000 rows (400 training + 4600 test; about a third
    positive) -- which class Ratsch kept as positive is not documented
    there, class 1 is our choice.  ``binary=False`` returns the classes as
    0, 1, 2.

    Returns dense ``X`` (n, 21) float64 and ``y`` float64.
    """
    if n < 3:
        raise ValueError(f"waveform needs n >= 3, got {n}")
    rng = _rng(random_state)
    H = waveform_bases()
    cls = np.arange(n) % 3
    cls.sort()  # classes in blocks, balanced to within one point
    pairs = np.asarray(WAVEFORM_PAIRS)
    u = rng.random(n)[:, None]
    X = u * H[pairs[cls, 0]] + (1.0 - u) * H[pairs[cls, 1]] + rng.standard_normal((n, 21))
    perm = rng.permutation(n)
    y = cls[perm].astype(np.float64)
    if binary:
        y = np.where(y == 0, 1.0, -1.0)
    return np.ascontiguousarray(X[perm]), y
