"""Breiman's twonorm and waveform generators (svmlab.datasets): shapes,
class balance, determinism, and the defining statistics (class means and
covariances from the published definitions) checked on large samples."""

import numpy as np
import pytest

from svmlab import datasets


def test_twonorm_shape_balance_determinism():
    X, y = datasets.twonorm(7401, random_state=3)
    assert X.shape == (7401, 20) and y.shape == (7401,)
    assert X.dtype == np.float64 and X.flags.c_contiguous
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert np.count_nonzero(y == 1) == 3701
    X2, y2 = datasets.twonorm(7401, random_state=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = datasets.twonorm(7401, random_state=4)
    assert not np.array_equal(X, X3)
    # shuffled: both classes appear in the first hundred rows
    assert 20 < np.count_nonzero(y[:100] == 1) < 80


def test_twonorm_defining_statistics():
    n = 200_000
    X, y = datasets.twonorm(n, random_state=0)
    a = 2.0 / np.sqrt(20.0)
    se = 4.0 / np.sqrt(n / 2)  # a generous bound on the standard error
    for s in (1.0, -1.0):
        Xc = X[y == s]
        np.testing.assert_allclose(Xc.mean(0), s * a, atol=se)
        np.testing.assert_allclose(np.cov(Xc.T), np.eye(20), atol=0.03)
    # Bayes rule sign(sum x) errs with probability Phi(-2) = 0.02275
    err = np.mean(np.sign(X.sum(1)) != y)
    assert abs(err - 0.02275) < 0.002


def test_twonorm_other_dims_and_errors():
    X, y = datasets.twonorm(10, d=3, random_state=0)
    assert X.shape == (10, 3)
    with pytest.raises(ValueError, match="twonorm"):
        datasets.twonorm(1)


def test_waveform_bases_are_breimans_triangles():
    H = datasets.waveform_bases()
    assert H.shape == (3, 21)
    m = np.arange(1, 22)
    assert [int(m[np.argmax(h)]) for h in H] == [11, 15, 7]
    assert np.all(H.max(1) == 6.0)
    # each is a triangle of half-width 6: 11 non-zero points
    assert np.all(np.count_nonzero(H, axis=1) == 11)
    np.testing.assert_array_equal(H[0][:10], [0, 0, 0, 0, 0, 1, 2, 3, 4, 5])


def test_waveform_shape_balance_determinism():
    X, y = datasets.waveform(5000, binary=False, random_state=1)
    assert X.shape == (5000, 21) and X.dtype == np.float64
    assert np.bincount(y.astype(int)).tolist() == [1667, 1667, 1666]
    X2, y2 = datasets.waveform(5000, binary=False, random_state=1)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    Xb, yb = datasets.waveform(5000, random_state=1)
    np.testing.assert_array_equal(Xb, X)
    np.testing.assert_array_equal(yb, np.where(y == 0, 1.0, -1.0))
    with pytest.raises(ValueError, match="waveform"):
        datasets.waveform(2)


def test_waveform_defining_statistics():
    n = 300_000
    X, y = datasets.waveform(n, binary=False, random_state=0)
    H = datasets.waveform_bases()
    pairs = [(0, 1), (0, 2), (1, 2)]
    for c, (i, j) in enumerate(pairs):
        Xc = X[y == c]
        mean = (H[i] + H[j]) / 2
        cov = np.outer(H[i] - H[j], H[i] - H[j]) / 12.0 + np.eye(21)
        np.testing.assert_allclose(Xc.mean(0), mean, atol=0.03)
        np.testing.assert_allclose(np.cov(Xc.T), cov, atol=0.06)
    # the noise is independent of the mixing: residual after the mixing
    # component is white with unit variance, e.g. where both bases are 0
    zero = (H[0] == 0) & (H[1] == 0) & (H[2] == 0)
    assert zero.sum() == 2  # m = 1 and m = 21
    np.testing.assert_allclose(X[:, zero].var(0), 1.0, atol=0.02)
    np.testing.assert_allclose(X[:, zero].mean(0), 0.0, atol=0.01)
