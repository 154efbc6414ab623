"""LIBSVM model files: svmlab.io.save_libsvm_model / load_libsvm_model.

References: scikit-learn's SVC (its bundled LIBSVM) and LIBSVM's own C
decision function (``sklearn.svm._libsvm.decision_function``) fed with the
numbers read back from the file.
"""

import io

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.svm import SVC, LinearSVC
from sklearn.svm import _libsvm

from svmlab import (ChunkingClassifier, CuttingPlaneClassifier, CuttingPlaneOrdinalRegressor,
                    DecompositionClassifier, IRWLSClassifier, SMOClassifier)
from svmlab.io import LibSVMModel, load_libsvm_model, save_libsvm_model

KERNELS = [
    dict(kernel="rbf", gamma=0.3),
    dict(kernel="linear"),
    dict(kernel="poly", gamma=0.3, degree=2, coef0=0.5),
    dict(kernel="sigmoid", gamma=0.1, coef0=-0.2),
]


def _data(seed=0, n=80, d=5, labels=(-2, 3)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(size=X.shape) < 0.4] = 0.0          # some zeros: sparse SV lines
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.2,
                 labels[1], labels[0])
    return X, y


def _roundtrip(est, path=None):
    if path is None:
        f = io.StringIO()
        save_libsvm_model(est, f)
        text = f.getvalue()
        return load_libsvm_model(io.StringIO(text)), text
    save_libsvm_model(est, path)
    return load_libsvm_model(path), open(path).read()


def _header(text):
    head = {}
    for line in text.splitlines():
        if line == "SV":
            break
        k, *v = line.split()
        head[k] = v
    return head


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: p["kernel"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_svmlab_smo_roundtrip_and_svc(tmp_path, params, sparse):
    X, y = _data()
    Xf = sp.csr_matrix(X) if sparse else X
    smo = SMOClassifier(C=2.0, tol=1e-6, selection="wss2", progress=False, **params).fit(Xf, y)
    assert smo.converged_
    svc = SVC(C=2.0, tol=1e-6, **params).fit(Xf, y)
    model, text = _roundtrip(smo, tmp_path / "smo.model")
    Xt, _ = _data(seed=1)
    for Z in (Xt, sp.csr_matrix(Xt)):
        np.testing.assert_allclose(model.decision_function(Z), smo.decision_function(Z),
                                   rtol=0, atol=1e-10)
        np.testing.assert_array_equal(model.predict(Z), smo.predict(Z))
    # the svmlab model and LIBSVM's solve the same problem
    np.testing.assert_allclose(model.decision_function(Xt), svc.decision_function(Xt),
                               rtol=0, atol=1e-3)
    head = _header(text)
    assert head["svm_type"] == ["c_svc"] and head["nr_class"] == ["2"]
    assert head["label"] == ["-2", "3"]
    assert int(head["total_sv"][0]) == len(smo.support_)
    # nr_sv in label order (classes_[0] first), as SVC's n_support_
    assert [int(v) for v in head["nr_sv"]] == list(smo.n_support_)
    np.testing.assert_array_equal(model.classes_, [-2, 3])


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: p["kernel"])
def test_written_svc_matches_libsvm_internals(params):
    # write an SVC's fitted model; the file must hold LIBSVM's own numbers
    # (sklearn keeps them as _dual_coef_ and _intercept_ = -rho), and the
    # model read back must give SVC's decision values
    X, y = _data(seed=2, labels=(1, 7))
    svc = SVC(C=3.0, **params).fit(X, y)
    model, text = _roundtrip(svc)
    head = _header(text)
    assert float(head["rho"][0]) == -svc._intercept_[0]
    np.testing.assert_array_equal(model.sv_coef_, svc._dual_coef_[0])
    assert [int(v) for v in head["nr_sv"]] == list(svc.n_support_)
    np.testing.assert_array_equal(model.support_vectors_.toarray(), svc.support_vectors_)
    Xt, _ = _data(seed=3)
    np.testing.assert_allclose(model.decision_function(Xt), svc.decision_function(Xt),
                               rtol=0, atol=1e-10)
    np.testing.assert_array_equal(model.predict(Xt), svc.predict(Xt))
    # LIBSVM's C code on the numbers read from the file gives LIBSVM's value
    sv = np.ascontiguousarray(model.support_vectors_.toarray())
    d = max(sv.shape[1], X.shape[1])
    sv = np.hstack([sv, np.zeros((sv.shape[0], d - sv.shape[1]))])
    raw = _libsvm.decision_function(
        np.ascontiguousarray(Xt), np.arange(sv.shape[0], dtype=np.int32), sv,
        np.asarray([int(v) for v in head["nr_sv"]], dtype=np.int32),
        model.sv_coef_[None, :].copy(), np.array([-model.rho_]), np.empty(0), np.empty(0),
        svm_type=0, kernel=params["kernel"], degree=params.get("degree", 3),
        gamma=model.gamma_, coef0=params.get("coef0", 0.0))
    np.testing.assert_allclose(model.libsvm_decision_function(Xt), raw.ravel(), rtol=0,
                               atol=1e-10)
    # LIBSVM: positive -> label[0]
    assert head["label"] == ["1", "7"]
    np.testing.assert_array_equal(np.where(raw.ravel() > 0, 1, 7), svc.predict(Xt))


def test_sv_lines_parse_as_svmlight():
    X, y = _data()
    smo = SMOClassifier(C=1.0, progress=False).fit(X, y)
    f = io.StringIO()
    save_libsvm_model(smo, f)
    body = f.getvalue().split("SV\n", 1)[1]
    SV, coef = load_svmlight_file(io.BytesIO(body.encode()), zero_based=False,
                                  n_features=X.shape[1])
    # grouped by class: classes_[0] first (negative dual_coef_)
    order = np.argsort(smo.dual_coef_[0] >= 0, kind="stable")
    np.testing.assert_array_equal(SV.toarray(), smo.support_vectors_[order])
    np.testing.assert_array_equal(coef, -smo.dual_coef_[0][order])


@pytest.mark.parametrize("make", [
    lambda: IRWLSClassifier(C=1.0, progress=False),
    lambda: ChunkingClassifier(C=1.0, progress=False),
    lambda: DecompositionClassifier(C=1.0, progress=False),
], ids=["irwls", "chunking", "decomposition"])
def test_other_kernel_solvers_roundtrip(make):
    X, y = _data(seed=4)
    est = make().fit(X, y)
    model, _ = _roundtrip(est)
    np.testing.assert_allclose(model.decision_function(X), est.decision_function(X),
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("make", [
    lambda: CuttingPlaneClassifier(C=50.0, progress=False),
    lambda: CuttingPlaneClassifier(C=50.0, fit_intercept=False, progress=False),
    lambda: LinearSVC(C=0.5),
], ids=["cutting-plane", "cutting-plane-no-bias", "linearsvc"])
def test_linear_models_as_one_vector(make):
    X, y = _data(seed=5, labels=(0, 1))
    est = make().fit(sp.csr_matrix(X), y)
    model, text = _roundtrip(est)
    assert _header(text)["kernel_type"] == ["linear"]
    np.testing.assert_allclose(model.decision_function(X), est.decision_function(X),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.coef_, est.coef_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), est.predict(X))


def test_reads_a_handwritten_libsvm_file_label_order():
    # a file as svm-train writes it (labels in order of appearance, +1
    # first, %.8g values): dec = sum coef K - rho, positive -> label[0]
    text = ("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 3\n"
            "rho 0.25\nlabel 1 -1\nnr_sv 1 2\nSV\n"
            "1 1:1 3:2 \n-0.5 2:1 \n-0.5 1:-1 2:0.5 \n")
    m = load_libsvm_model(io.StringIO(text))
    Z = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [0.3, -0.2, 0.1]])
    S = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [-1.0, 0.5, 0.0]])
    K = np.exp(-0.5 * ((S[:, None, :] - Z[None, :, :]) ** 2).sum(-1))
    dec = np.array([1.0, -0.5, -0.5]) @ K - 0.25
    np.testing.assert_allclose(m.libsvm_decision_function(Z), dec, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(m.classes_, [-1, 1])
    np.testing.assert_allclose(m.decision_function(Z), dec, rtol=0, atol=1e-14)  # +1 = label[0]
    np.testing.assert_array_equal(m.predict(Z), np.where(dec > 0, 1, -1))
    # missing trailing features count as 0 (LIBSVM's semantics), wider X too
    np.testing.assert_allclose(m.libsvm_decision_function(Z[:, :3]),
                               m.libsvm_decision_function(np.hstack([Z, np.zeros((3, 2))])),
                               rtol=0, atol=1e-14)
    assert isinstance(m, LibSVMModel)


@pytest.mark.parametrize("text,match", [
    ("svm_type nu_svc\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 0\nrho 0\n"
     "label 1 -1\nnr_sv 0 0\nSV\n", "svm_type 'nu_svc'"),
    ("svm_type c_svc\nkernel_type precomputed\nnr_class 2\ntotal_sv 0\nrho 0\n"
     "label 1 -1\nnr_sv 0 0\nSV\n", "kernel_type 'precomputed'"),
    ("svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 3\ntotal_sv 0\nrho 0 0\n"
     "label 1 2 3\nnr_sv 0 0 0\nSV\n", "'rho' must have 3 value"),
    ("svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 3\ntotal_sv 1\nrho 0 0 0\n"
     "label 1 2 3\nnr_sv 1 0 0\nSV\n0.5 1:1\n", "start with 2 coefficients"),
    ("svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 3\ntotal_sv 0\nrho 0 0 0\n"
     "label 1 2 2\nnr_sv 0 0 0\nSV\n", "3 distinct values"),
    ("svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 2\n", "no 'SV' line"),
    ("svm_type c_svc\nkernel_type rbf\nnr_class 2\ntotal_sv 1\nrho 0\nlabel 1 -1\n"
     "nr_sv 1 0\nSV\n1 1:1\n", "lacks 'gamma'"),
    ("svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 2\nrho 0\nlabel 1 -1\n"
     "nr_sv 1 1\nSV\n1 1:1\n", "total_sv is 2 but there are 1"),
])
def test_bad_files_are_refused(text, match):
    with pytest.raises(ValueError, match=match):
        load_libsvm_model(io.StringIO(text))


def test_bad_estimators_are_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="not a fitted classifier"):
        save_libsvm_model(SMOClassifier(), io.StringIO())
    with pytest.raises(ValueError, match="not a fitted classifier"):
        save_libsvm_model(CuttingPlaneOrdinalRegressor(progress=False).fit(X, y), io.StringIO())
    yy = np.where(y > 0, "yes", "no")
    with pytest.raises(ValueError, match="integer"):
        save_libsvm_model(SMOClassifier(progress=False).fit(X, yy), io.StringIO())
    y3 = np.arange(len(y)) % 3
    with pytest.raises(ValueError, match="one-vs-rest linear model"):
        save_libsvm_model(LinearSVC().fit(X, y3), io.StringIO())
    with pytest.raises(ValueError, match="one-vs-rest linear model"):
        save_libsvm_model(CuttingPlaneClassifier(progress=False).fit(X, y3), io.StringIO())
    m = load_libsvm_model(io.StringIO(
        "svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 1\nrho 0\nlabel 1 -1\n"
        "nr_sv 1 0\nSV\n1 1:1\n"), n_features=4)
    with pytest.raises(ValueError, match="loaded with n_features=4"):
        m.predict(np.ones((2, 3)))


# ---------------------------------------------------------------------------
# multiclass (one-vs-one) model files
# ---------------------------------------------------------------------------
def _data3(seed=0, n=150, d=4, k=4):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=2.0, size=(k, d))
    y = np.arange(n) % k
    X = centers[y] + rng.normal(size=(n, d))
    X[rng.random(size=X.shape) < 0.2] = 0.0
    return X, y


def _file_pair_values(text, X):
    """LIBSVM's pair values read straight from the model text (the format's
    definition, independent of svmlab.io): pair (i, j), i < j in the file's
    label order, ``sum_{s in i} coef[j-1, s] K(s, x) + sum_{s in j} coef[i, s]
    K(s, x) - rho[p]``; returns (values (n, P), labels)."""
    head = _header(text)
    k = int(head["nr_class"][0])
    kt = head["kernel_type"][0]
    gamma = float(head.get("gamma", ["1"])[0])
    coef0 = float(head.get("coef0", ["0"])[0])
    degree = int(head.get("degree", ["3"])[0])
    rho = [float(v) for v in head["rho"]]
    nr = [int(v) for v in head["nr_sv"]]
    body = text.split("\nSV\n", 1)[1].splitlines()
    coef = np.zeros((k - 1, len(body)))
    SV = np.zeros((len(body), X.shape[1]))
    for s, line in enumerate(body):
        parts = line.split()
        coef[:, s] = [float(v) for v in parts[:k - 1]]
        for p in parts[k - 1:]:
            j, v = p.split(":")
            SV[s, int(j) - 1] = float(v)
    dot = SV @ X.T
    if kt == "linear":
        K = dot
    elif kt == "rbf":
        K = np.exp(-gamma * ((SV ** 2).sum(1)[:, None] + (X ** 2).sum(1)[None, :] - 2 * dot))
    elif kt == "polynomial":
        K = (gamma * dot + coef0) ** degree
    else:
        K = np.tanh(gamma * dot + coef0)
    start = np.concatenate([[0], np.cumsum(nr)])
    vals, p = [], 0
    for i in range(k):
        for j in range(i + 1, k):
            si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
            vals.append(coef[j - 1, si] @ K[si] + coef[i, sj] @ K[sj] - rho[p])
            p += 1
    return np.column_stack(vals), [int(v) for v in head["label"]]


def _libsvm_vote(vals, labels):
    k = len(labels)
    votes = np.zeros((vals.shape[0], k), dtype=int)
    p = 0
    for i in range(k):
        for j in range(i + 1, k):
            votes[:, i] += vals[:, p] > 0
            votes[:, j] += vals[:, p] <= 0
            p += 1
    return np.asarray(labels)[np.argmax(votes, axis=1)]


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: p["kernel"])
def test_multiclass_svc_file_is_libsvms_and_roundtrips(params):
    X, y = _data3()
    svc = SVC(C=2.0, **params).fit(X, y)
    model, text = _roundtrip(svc)
    head = _header(text)
    assert head["nr_class"] == ["4"] and head["label"] == ["0", "1", "2", "3"]
    # the file holds LIBSVM's own numbers (sklearn keeps rho as -_intercept_)
    np.testing.assert_array_equal([float(v) for v in head["rho"]], -svc._intercept_)
    np.testing.assert_array_equal(model.sv_coef_, svc._dual_coef_)
    assert [int(v) for v in head["nr_sv"]] == list(svc.n_support_)
    Xt, _ = _data3(seed=5)
    # LIBSVM's C code on the numbers read back from the file
    sv = np.ascontiguousarray(model.support_vectors_.toarray())
    sv = np.hstack([sv, np.zeros((sv.shape[0], X.shape[1] - sv.shape[1]))])
    raw = _libsvm.decision_function(
        np.ascontiguousarray(Xt), np.arange(sv.shape[0], dtype=np.int32), sv,
        model.n_support_.astype(np.int32), model.sv_coef_.copy(), -model.rho_,
        np.empty(0), np.empty(0), svm_type=0, kernel=params["kernel"],
        degree=params.get("degree", 3), gamma=model.gamma_, coef0=params.get("coef0", 0.0))
    np.testing.assert_allclose(model.libsvm_decision_function(Xt), raw, rtol=0, atol=1e-10)
    vals, labels = _file_pair_values(text, Xt)
    np.testing.assert_allclose(vals, raw, rtol=0, atol=1e-10)
    for shape in ("ovo", "ovr"):
        svc.decision_function_shape = model.decision_function_shape = shape
        np.testing.assert_allclose(model.decision_function(Xt), svc.decision_function(Xt),
                                   rtol=0, atol=1e-10)
    np.testing.assert_array_equal(model.predict(Xt), svc.predict(Xt))
    np.testing.assert_array_equal(model.predict(Xt), _libsvm_vote(vals, labels))
    np.testing.assert_allclose(model.dual_coef_, svc.dual_coef_, rtol=0, atol=0)
    np.testing.assert_allclose(model.intercept_, svc.intercept_, rtol=0, atol=0)
    if params["kernel"] == "linear":
        np.testing.assert_allclose(model.coef_, svc.coef_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: SMOClassifier(C=2.0, gamma=0.3, progress=False),
    lambda: SMOClassifier(C=2.0, kernel="linear", selection="wss2", progress=False),
    lambda: IRWLSClassifier(C=2.0, gamma=0.3, progress=False),
    lambda: DecompositionClassifier(C=2.0, gamma=0.3, engine="smo", progress=False),
], ids=["smo-rbf", "smo-linear", "irwls", "blocked"])
def test_multiclass_svmlab_models_roundtrip(make, tmp_path):
    X, y = _data3(seed=1)
    y = np.array([4, -1, 9])[y % 3]
    est = make().fit(X, y)
    model, text = _roundtrip(est, tmp_path / "m.txt")
    assert _header(text)["label"] == ["-1", "4", "9"]
    Xt, _ = _data3(seed=6)
    vals, labels = _file_pair_values(text, Xt)
    est.decision_function_shape = model.decision_function_shape = "ovo"
    np.testing.assert_allclose(model.decision_function(Xt), est.decision_function(Xt),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(vals, est.decision_function(Xt), rtol=0, atol=1e-10)
    est.decision_function_shape = model.decision_function_shape = "ovr"
    np.testing.assert_allclose(model.decision_function(Xt), est.decision_function(Xt),
                               rtol=0, atol=1e-10)
    np.testing.assert_array_equal(model.predict(Xt), est.predict(Xt))
    np.testing.assert_array_equal(model.predict(Xt), _libsvm_vote(vals, labels))
    # and back again: the loaded model writes the same file
    f = io.StringIO()
    save_libsvm_model(model, f)
    assert f.getvalue() == text


def test_multiclass_file_with_unsorted_labels():
    # svm-train orders labels by first appearance: relabel an SVC file's
    # classes 0, 1, 2 as 7, 2, 5 (a valid LIBSVM model with unsorted labels)
    X, y = _data3(seed=2, k=3)
    svc = SVC(C=1.0, gamma=0.2).fit(X, y)
    f = io.StringIO()
    save_libsvm_model(svc, f)
    text = f.getvalue().replace("label 0 1 2", "label 7 2 5")
    model = load_libsvm_model(io.StringIO(text))
    np.testing.assert_array_equal(model.classes_, [2, 5, 7])
    np.testing.assert_array_equal(model.labels_, [7, 2, 5])
    Xt, _ = _data3(seed=7, k=3)
    relabel = np.array([7, 2, 5])
    # LIBSVM's semantics of the file (the pair values and the vote) ...
    vals, labels = _file_pair_values(text, Xt)
    np.testing.assert_allclose(model.libsvm_decision_function(Xt), vals, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(model.predict(Xt), relabel[svc.predict(Xt)])
    np.testing.assert_array_equal(model.predict(Xt), _libsvm_vote(vals, labels))
    # ... and SVC's sorted layout: pair (2, 5) is the file's pair (7, 2)
    # reversed, (2, 7) its (7, 2) ... checked through the ovo values
    model.decision_function_shape = "ovo"
    dec = model.decision_function(Xt)
    assert dec.shape == (len(Xt), 3) and model.n_support_.sum() == len(svc.support_)
    file_pair = {(7, 2): 0, (7, 5): 1, (2, 5): 2}
    for q, (a, b) in enumerate([(2, 5), (2, 7), (5, 7)]):
        p = file_pair.get((a, b))
        want = vals[:, p] if p is not None else -vals[:, file_pair[(b, a)]]
        np.testing.assert_allclose(dec[:, q], want, rtol=0, atol=1e-10)
