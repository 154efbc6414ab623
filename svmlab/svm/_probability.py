"""Probability estimates for SVC and NuSVC (``probability=True``), as LIBSVM
computes them.

Problem.  An SVM's decision value ``f`` is not a probability.  Platt (1999)
fits a sigmoid ``P(y = +1 | f) = 1 / (1 + exp(A f + B))`` to decision values
that the model did not see in training: LIBSVM takes them from an internal
5-fold cross-validation of the same binary problem.  With k > 2 classes each
one-vs-one pair (a, b) gets its own sigmoid, giving pairwise estimates
``r_ab ~ P(a | a or b, x)``, and the class probabilities are the solution
``p`` of Wu, Lin and Weng's second coupling method (JMLR 2004, "method 2"):

    min_p  sum_a sum_{b != a} (r_ba p_a - r_ab p_b)^2   s.t.  sum p = 1, p >= 0

Contract and decisions:

* :func:`sigmoid_fit` is Lin, Lin and Weng's numerically safe Newton method
  (Machine Learning 68, 2007, Algorithm 1): targets ``t = (N+ + 1) / (N+ +
  2)`` for positives and ``1 / (N- + 2)`` for negatives (Platt's prior
  correction), start ``A = 0``, ``B = log((N- + 1) / (N+ + 1))``, Newton
  directions on the Hessian plus ``1e-12 I``, a backtracking line search
  with the sufficient-decrease constant ``1e-4``, stop when both gradient
  components are below ``1e-5`` (at most 100 iterations, steps down to
  ``1e-10``).  Every ``log(1 + exp(.))`` and ``1 / (1 + exp(.))`` is
  written so that ``exp`` never overflows (the point of that paper).
* :func:`sigmoid_predict` evaluates the sigmoid the same safe way.
* :func:`couple` runs the fixed-point iteration that LIBSVM uses for
  method 2 (stop when ``max_t |(Qp)_t - p'Qp| < 0.005 / k``, at most
  ``max(100, k)`` sweeps), vectorised over the rows: the same numbers
  LIBSVM's loop gives, so ``predict_proba`` agrees with SVC's, not only
  with the exact minimiser.  Pairwise estimates are clipped to
  ``[1e-7, 1 - 1e-7]`` first, as LIBSVM does.
* :func:`libsvm_permutation` reproduces the fold assignment of SVC (the
  Mersenne Twister of scikit-learn's LIBSVM, ``std::mt19937`` seeded with
  the integer SVC draws from ``random_state``, and its Lemire bounded draw),
  so that with the same integer ``random_state`` svmlab and SVC
  cross-validate on the same folds.  LIBSVM re-seeds its generator when it
  trains a fold's model, so every pair's shuffle starts from the seed: the
  permutation of a pair depends only on the seed and the pair's size.
* Folds: fold ``f`` of ``l`` rows holds positions ``perm[f l // 5 : (f+1) l
  // 5]``; a fold whose training part has one class only gets decision value
  +1 (only positives), -1 (only negatives) or 0 (none), as LIBSVM does.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sigmoid_fit", "sigmoid_predict", "couple", "libsvm_permutation", "fold_bounds",
           "N_FOLDS", "MIN_PROB"]

N_FOLDS = 5
MIN_PROB = 1e-7


def _log1p_exp(x):
    """``log(1 + exp(x))`` without overflow."""
    return np.where(x >= 0, x + np.log1p(np.exp(-np.abs(x))), np.log1p(np.exp(-np.abs(x))))


def sigmoid_fit(dec, labels, *, max_iter=100, min_step=1e-10, sigma=1e-12, eps=1e-5):
    """``(A, B, n_iter)`` of Platt's sigmoid fitted to decision values
    ``dec`` with labels ``labels`` (> 0 positive), minimising the
    cross-entropy with Platt's regularised targets (module docstring)."""
    f = np.asarray(dec, dtype=np.float64)
    pos = np.asarray(labels) > 0
    n_pos, n_neg = float(pos.sum()), float((~pos).sum())
    t = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def loss(A, B):
        # cross-entropy of 1/(1+exp(z)), z = A f + B: t z + log(1 + exp(-z))
        z = f * A + B
        return float(np.sum(t * z + _log1p_exp(-z)))

    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = loss(A, B)
    it = 0
    for it in range(max_iter):
        z = f * A + B
        # p = 1 / (1 + exp(z)) and q = 1 - p, each from the side where exp <= 1
        e = np.exp(-np.abs(z))
        p = np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))
        q = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        w = p * q
        h11 = sigma + np.dot(f * f, w)
        h22 = sigma + w.sum()
        h21 = np.dot(f, w)
        r = t - p
        g1, g2 = float(np.dot(f, r)), float(r.sum())
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        slope = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            new = loss(A + step * dA, B + step * dB)
            if new < value + 1e-4 * step * slope:
                A, B, value = A + step * dA, B + step * dB, new
                break
            step *= 0.5
        if step < min_step:
            break
    return A, B, it


def sigmoid_predict(dec, A, B):
    """``1 / (1 + exp(A f + B))`` without overflow."""
    z = np.asarray(dec, dtype=np.float64) * A + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def couple(R):
    """Class probabilities (m, k) from pairwise estimates ``R`` (m, k, k),
    ``R[:, a, b] ~ P(a | a or b)`` (the diagonal is ignored): Wu, Lin and
    Weng's method 2 by LIBSVM's fixed-point iteration (module docstring)."""
    m, k, _ = R.shape
    # Q_tt = sum_{s != t} r_st^2,  Q_ts = -r_st r_ts
    Q = -R.transpose(0, 2, 1) * R
    off = ~np.eye(k, dtype=bool)
    diag = np.einsum("mst,st->mt", R ** 2, off.astype(float))
    Q[:, ~off] = 0.0
    Q[:, np.arange(k), np.arange(k)] = diag
    p = np.full((m, k), 1.0 / k)
    eps = 0.005 / k
    active = np.ones(m, dtype=bool)
    for _ in range(max(100, k)):
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        Qa, pa = Q[idx], p[idx]
        Qp = np.einsum("mts,ms->mt", Qa, pa)
        pQp = np.einsum("mt,mt->m", pa, Qp)
        done = np.max(np.abs(Qp - pQp[:, None]), axis=1) < eps
        active[idx[done]] = False
        idx, Qa, pa, Qp, pQp = idx[~done], Qa[~done], pa[~done], Qp[~done], pQp[~done]
        for t in range(k):
            # move p_t to zero the t-th component of the gradient, renormalise
            diff = (pQp - Qp[:, t]) / Qa[:, t, t]
            pa[:, t] += diff
            pQp = (pQp + diff * (diff * Qa[:, t, t] + 2.0 * Qp[:, t])) / (1.0 + diff) ** 2
            Qp = (Qp + diff[:, None] * Qa[:, t, :]) / (1.0 + diff)[:, None]
            pa /= (1.0 + diff)[:, None]
        p[idx] = pa
    return p


def pairwise_matrix(probs, k, pairs):
    """(m, k, k) matrix of pairwise estimates from the per-pair sigmoid
    outputs ``probs`` (m, P) (probability of the pair's first class),
    clipped to ``[MIN_PROB, 1 - MIN_PROB]``."""
    m = probs.shape[0]
    R = np.zeros((m, k, k))
    r = np.clip(probs, MIN_PROB, 1.0 - MIN_PROB)
    for p, (a, b) in enumerate(pairs):
        R[:, a, b] = r[:, p]
        R[:, b, a] = 1.0 - r[:, p]
    return R


# ------------------------------------------------------------------ the folds

def _mt_stream(seed):
    """Raw 32-bit outputs of ``std::mt19937(seed)``: numpy's legacy
    ``RandomState`` seeds its Mersenne Twister the same way for an integer
    seed (``init_genrand``), and full-range ``uint32`` draws are its raw
    outputs."""
    rs = np.random.RandomState(int(seed) & 0xFFFFFFFF)
    while True:
        for v in rs.randint(0, 2**32, size=4096, dtype=np.uint64):
            yield int(v)


def _bounded(stream, r):
    """Lemire's bounded draw in ``[0, r)`` with rejection, as
    scikit-learn's ``bounded_rand_int`` (``newrand.h``)."""
    x = next(stream)
    m = x * r
    low = m & 0xFFFFFFFF
    if low < r:
        t = (2**32 - r) % r
        while low < t:
            x = next(stream)
            m = x * r
            low = m & 0xFFFFFFFF
    return m >> 32


def libsvm_permutation(seed, l):
    """The shuffle of ``l`` positions that scikit-learn's LIBSVM draws for
    the probability folds of a pair, with its generator seeded by ``seed``."""
    stream = _mt_stream(seed)
    perm = list(range(l))
    for i in range(l):
        j = i + _bounded(stream, l - i)
        perm[i], perm[j] = perm[j], perm[i]
    return np.asarray(perm, dtype=np.int64)


def fold_bounds(l, n_folds=N_FOLDS):
    """``[(begin, end)]`` of each fold's positions in the permutation."""
    return [(f * l // n_folds, (f + 1) * l // n_folds) for f in range(n_folds)]
