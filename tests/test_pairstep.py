"""The analytic pair step against brute force along the constraint segment."""

import numpy as np
import pytest

from svmlab.smo._pairstep import pair_bounds, pair_step, pair_threshold, segment_objective


def W(alpha, y, K):
    ay = alpha * y
    return alpha.sum() - 0.5 * ay @ K @ ay


def brute_force(alpha, y, K, i1, i2, C, n_grid=20001):
    """Maximise W along y1 a1 + y2 a2 = const inside the box on a fine grid."""
    s = y[i1] * y[i2]
    k = alpha[i1] + s * alpha[i2]
    best, best_a2 = -np.inf, None
    for a2 in np.linspace(0, C, n_grid):
        a1 = k - s * a2
        if a1 < -1e-12 or a1 > C + 1e-12:
            continue
        a = alpha.copy()
        a[i1], a[i2] = a1, a2
        v = W(a, y, K)
        if v > best:
            best, best_a2 = v, a2
    return best, best_a2


@pytest.mark.parametrize("y1,y2", [(1.0, -1.0), (1.0, 1.0), (-1.0, -1.0), (-1.0, 1.0)])
def test_bounds_both_label_cases(y1, y2):
    C = 2.0
    rng = np.random.default_rng(1)
    for _ in range(200):
        a1, a2 = rng.uniform(0, C, 2)
        L, H = pair_bounds(y1, y2, a1, a2, C)
        # feasible a2 values: a1_new = a1 + s (a2 - a2_new) must lie in [0, C]
        s = y1 * y2
        grid = np.linspace(0, C, 4001)
        a1n = a1 + s * (a2 - grid)
        ok = grid[(a1n >= -1e-12) & (a1n <= C + 1e-12)]
        assert L == pytest.approx(ok.min(), abs=1e-3)
        assert H == pytest.approx(ok.max(), abs=1e-3)
        if y1 != y2:
            assert (L, H) == (max(0, a2 - a1), min(C, C + a2 - a1))
        else:
            assert (L, H) == (max(0, a2 + a1 - C), min(C, a1 + a2))


def _setup(K, y, alpha, b=0.0):
    f = K @ (alpha * y) + b
    return f - y


@pytest.mark.parametrize("case", range(40))
def test_step_matches_brute_force(case):
    rng = np.random.default_rng(case)
    n, C = 5, 1.0
    X = rng.normal(size=(n, 2))
    if case % 4 == 3:
        # indefinite "kernel" (sigmoid-like) to force eta <= 0 in some draws
        K = np.tanh(2.0 * X @ X.T - 1.0)
    else:
        K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    if case % 2:
        y[1] = 1.0
    alpha = rng.uniform(0, C, n)
    alpha[rng.integers(n)] = 0.0
    i1, i2 = 0, 1
    b = 0.3
    E = _setup(K, y, alpha, b)
    moved, a1n, a2n, a2u, L, H, eta = pair_step(
        y[i1], y[i2], alpha[i1], alpha[i2], E[i1], E[i2], b,
        K[i1, i1], K[i1, i2], K[i2, i2], C, 1e-9)
    best, best_a2 = brute_force(alpha, y, K, i1, i2, C)
    new = alpha.copy()
    if moved:
        new[i1], new[i2] = a1n, a2n
        assert L - 1e-12 <= a2n <= H + 1e-12
        assert 0 <= a1n <= C
        assert y[i1] * a1n + y[i2] * a2n == pytest.approx(
            y[i1] * alpha[i1] + y[i2] * alpha[i2], abs=1e-12)
    # the step reaches the segment maximum (grid resolution 5e-5)
    assert W(new, y, K) >= best - 1e-6
    # segment_objective is the exact change of W
    if moved:
        d = segment_objective(a2n, y[i1], y[i2], alpha[i1], alpha[i2], E[i1], E[i2], b,
                              K[i1, i1], K[i1, i2], K[i2, i2])
        assert d == pytest.approx(W(new, y, K) - W(alpha, y, K), abs=1e-10)


def test_clipping_both_sides():
    K = np.eye(2)
    C = 1.0
    y = np.array([1.0, -1.0])
    # large positive unconstrained move -> clipped at H
    moved, a1n, a2n, a2u, L, H, eta = pair_step(1.0, -1.0, 0.5, 0.5, 5.0, -5.0, 0.0,
                                                1.0, 0.0, 1.0, C, 1e-9)
    assert moved and a2u < L and a2n == L
    moved, a1n, a2n, a2u, L, H, eta = pair_step(1.0, -1.0, 0.5, 0.5, -5.0, 5.0, 0.0,
                                                1.0, 0.0, 1.0, C, 1e-9)
    assert moved and a2u > H and a2n == H
    del K, y


def test_eta_nonpositive_goes_to_better_end():
    # K11 = K22 = K12 = 1 -> eta = 0 (duplicate points), objective linear along line
    y1, y2 = 1.0, 1.0
    a1, a2, C = 0.3, 0.4, 1.0
    # gradient of W along a2 (a1 = k - a2): g2 - g1 where g = -y (E - b)
    E1, E2, b = 0.2, -0.3, 0.0
    moved, a1n, a2n, a2u, L, H, eta = pair_step(y1, y2, a1, a2, E1, E2, b, 1.0, 1.0, 1.0,
                                                C, 1e-9)
    assert eta == 0.0 and np.isnan(a2u)
    wL = segment_objective(L, y1, y2, a1, a2, E1, E2, b, 1.0, 1.0, 1.0)
    wH = segment_objective(H, y1, y2, a1, a2, E1, E2, b, 1.0, 1.0, 1.0)
    assert moved and a2n == (L if wL > wH else H)
    # equal ends within eps -> no progress
    moved, *_ = pair_step(y1, y2, a1, a2, 0.1, 0.1, b, 1.0, 1.0, 1.0, C, 1e-9)
    assert not moved


def test_threshold_rules():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 2))
    K = X @ X.T + 1.0
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    alpha = np.array([0.2, 0.3, 0.1, 0.0, 0.0, 0.0])
    C = 10.0
    b = 0.1
    E = _setup(K, y, alpha, b)
    moved, a1n, a2n, a2u, L, H, eta = pair_step(y[0], y[1], alpha[0], alpha[1], E[0], E[1],
                                                b, K[0, 0], K[0, 1], K[1, 1], C, 1e-9)
    assert moved and 0 < a1n < C
    bn = pair_threshold(y[0], y[1], alpha[0], alpha[1], a1n, a2n, E[0], E[1], b,
                        K[0, 0], K[0, 1], K[1, 1], C)
    new = alpha.copy()
    new[0], new[1] = a1n, a2n
    E_new = _setup(K, y, new, bn)
    # b1 rule: the non-bound a1 gets zero error
    assert abs(E_new[0]) < 1e-10
