"""A one-vs-one pair's run is opened over exactly that pair's rows (31d01).

``MulticlassRun._open_part`` copies a pair's rows as two slices of the
class-ordered set (dense X) or by their index (CSR), its bounds likewise,
and the shared store maps the pair's rows to the set by a map it builds
from the class offsets.  Each is checked here against the rows found
independently, from the labels of the original X: the pair's X, y, bounds
and store map, and the pair's run's cached kernel row against
scikit-learn's kernel over those rows.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from svmlab import SMOClassifier
from svmlab.kernels.cache import KernelCache


def _data(sparse):
    rng = np.random.default_rng(31)
    y = rng.permutation(np.repeat([7, 2, 5, 9], [11, 17, 6, 13]))  # classes out of order
    X = rng.normal(size=(len(y), 5))
    X[rng.random(X.shape) < 0.4] = 0.0
    w = rng.uniform(0.5, 2.0, size=len(y))
    return (sp.csr_matrix(X) if sparse else X), X, y, w


@pytest.mark.parametrize("sparse", [False, True])
def test_each_pair_opens_over_its_own_rows(sparse):
    Xin, X, y, w = _data(sparse)
    est = SMOClassifier(C=2.0, gamma=0.3, selection="wss2")
    run = est.start(Xin, y, sample_weight=w)
    classes = np.unique(y)
    assert run.n_parts == len(classes) * (len(classes) - 1) // 2
    for p, (a, b) in enumerate(run.pairs):
        # the pair's rows of X, independently: class a's, then class b's, in X's order
        ra = np.flatnonzero(y == classes[a])
        rb = np.flatnonzero(y == classes[b])
        rows = np.concatenate([ra, rb])
        np.testing.assert_array_equal(run.pair_rows(p), rows)
        assert run._pos.sizes[p] == len(rows) == len(run._pos[p])
        pr = run._open_part(p)
        Xp = pr.kernel.X.toarray() if sp.issparse(pr.kernel.X) else pr.kernel.X
        np.testing.assert_array_equal(Xp, X[rows])
        np.testing.assert_array_equal(pr.y, np.r_[np.ones(len(ra)), -np.ones(len(rb))])
        # LIBSVM's weighted C per example (no class weights here)
        np.testing.assert_allclose(pr.Cv, 2.0 * w[rows], rtol=1e-15)
        # the store's map: pair position -> position in the class-ordered set
        cache = pr.cache
        assert isinstance(cache, KernelCache) and cache.shared is not None
        np.testing.assert_array_equal(run.perm[cache.shared.gmap], rows)
        i = len(ra) // 2 + 1
        np.testing.assert_allclose(cache.row(i), rbf_kernel(X[rows[i:i + 1]], X[rows],
                                                             gamma=0.3)[0], rtol=1e-12)
