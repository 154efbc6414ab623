"""Every kernel solver in svmlab reaches the same dual optimum on the same
problem (and LIBSVM's), with the objective computed here from alpha_.

(The cutting-plane solver is left out: it solves the linear primal without
the equality-constrained bias, a different problem.)"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from reference import dual_objective, gram, kkt_violation, libsvm_dual, to_pm


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_all_kernel_solvers_same_objective(C):
    from svmlab import (ChunkingClassifier, DecompositionClassifier, IRWLSClassifier,
                        SMOClassifier)

    X, y = make_classification(160, 4, n_informative=3, n_redundant=0, random_state=7,
                               flip_y=0.05)
    g = 0.5
    _, _, W_ref = libsvm_dual(X, y, C, gamma=g)
    K = gram(X, gamma=g)
    yp = to_pm(y)
    models = {
        "smo": SMOClassifier(C=C, gamma=g, progress=False, random_state=0),
        "irwls": IRWLSClassifier(C=C, gamma=g, working_set_size=40, random_state=0),
        "decomp-qp": DecompositionClassifier(C=C, gamma=g, engine="qp"),
        "decomp-irwls": DecompositionClassifier(C=C, gamma=g, engine="irwls", working_set_size=20),
        "decomp-smo-q2": DecompositionClassifier(C=C, gamma=g, engine="smo", working_set_size=2),
        "chunking": ChunkingClassifier(C=C, gamma=g),
    }
    W = {}
    for name, m in models.items():
        m.fit(X, y)
        a = m.alpha_
        W[name] = dual_objective(K, yp, a)
        assert abs(W[name] - W_ref) <= 1e-3 * abs(W_ref), (name, W[name], W_ref)
        assert kkt_violation(K, yp, a, m.intercept_[0], C) <= 2e-3, name
    vals = np.array(list(W.values()))
    assert vals.max() - vals.min() <= 1e-3 * abs(W_ref)
