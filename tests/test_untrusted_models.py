"""LIBSVM model files from untrusted sources (issue 24, items 1-3).

Every reproducer of the issue, each bounded by the operating system
(:mod:`_limits`: CPU seconds and address space in a subprocess, generous
multiples of what the fixed code needs), so that a regression fails here
instead of hanging or exhausting the machine.  Results are checked against a
brute-force evaluation of LIBSVM's definition of a model file written in
this test (dense loops over the pairs and the support vectors), never
against svmlab itself.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

from svmlab.io import load_libsvm_model

from _limits import run_limited


# ------------------------------------------------------------------ helpers

def header(k, kernel="linear", *, total=None, nr=None, rho=None, labels=None, extra=()):
    P = k * (k - 1) // 2
    lines = ["svm_type c_svc", f"kernel_type {kernel}", *extra,
             f"nr_class {k}", f"total_sv {k if total is None else total}",
             "rho " + " ".join(rho if rho is not None else ["0"] * P),
             "label " + " ".join(labels if labels is not None else map(str, range(k))),
             "nr_sv " + " ".join(nr if nr is not None else ["1"] * k), "SV"]
    return "\n".join(lines) + "\n"


def many_class_file(k, seed=0):
    """The issue's reproducer: a linear c_svc file with nr_class k, k(k-1)/2
    rho values, labels 0..k-1, one SV per class, each line k-1
    coefficients then ' 1:1' (here with random coefficients, so that the
    vote is not a tie)."""
    rng = np.random.default_rng(seed)
    coef = np.round(rng.normal(size=(k, k - 1)), 3)
    rho = np.round(rng.normal(size=k * (k - 1) // 2), 3)
    text = header(k, rho=[repr(float(r)) for r in rho])
    text += "".join(" ".join(repr(float(c)) for c in row) + " 1:1\n" for row in coef)
    return text, coef.T, rho


def brute_linear_vote(coef, rho, sv_value, X):
    """LIBSVM's vote (svm_predict_values) for one SV per class, the SV of
    class c being ``sv_value * e_1``, linear kernel: pair (i, j) value
    ``coef[j-1, i] K(s_i, x) + coef[i, j] K(s_j, x) - rho[p]``, positive
    votes i; the first label with the most votes wins."""
    k = coef.shape[0] + 1
    out = []
    for x in X:
        votes = [0] * k
        p = 0
        for i in range(k):
            for j in range(i + 1, k):
                v = coef[j - 1, i] * sv_value * x[0] + coef[i, j] * sv_value * x[0] - rho[p]
                votes[i if v > 0 else j] += 1
                p += 1
        out.append(max(range(k), key=lambda c: (votes[c], -c)))
    return out


def refused(text, field, line=None, **kw):
    """The file is refused with a ValueError naming the field (and line)."""
    with pytest.raises(ValueError) as ei:
        load_libsvm_model(io.StringIO(text), **kw)
    msg = str(ei.value)
    assert f"({field})" in msg, msg
    if line is not None:
        assert f"line {line} " in msg, msg
    return msg


# ------------------------------------------------- item 1: k^4 in nr_class

def test_two_hundred_classes_load_and_predict_within_bounds():
    # unfixed: 96 s to load and 86 s per predicted row (k^4): far over 60 CPU s
    text, coef, rho = many_class_file(200)
    X = np.array([[1.0, 0.0, 2.0], [-0.5, 1.0, 0.0], [0.25, 0.0, 0.0]])
    out = run_limited(
        """
        m = load_libsvm_model(io.StringIO(TEXT))
        result = [m.predict(np.array(X)).tolist(), m.libsvm_decision_function(np.array(X)).tolist()]
        """,
        imports=f"import io\nimport numpy as np\nfrom svmlab.io import load_libsvm_model\n"
                f"TEXT = {text!r}\nX = {X.tolist()!r}",
        cpu_s=60, extra_mb=1024)
    assert out["outcome"] == "ok", out
    pred, dec = out["result"]
    assert pred == brute_linear_vote(coef, rho, 1.0, X)
    # pair values in the file's order, against the definition
    want, p = np.empty((len(X), len(rho))), 0
    for i in range(200):
        for j in range(i + 1, 200):
            want[:, p] = (coef[j - 1, i] + coef[i, j]) * X[:, 0] - rho[p]
            p += 1
    np.testing.assert_allclose(np.array(dec), want, rtol=0, atol=1e-12)


def test_two_thousand_classes_are_refused_fast_or_loaded_when_allowed():
    text, coef, rho = many_class_file(2000)   # 12 MB; unfixed: > 600 s
    out = run_limited("load_libsvm_model(io.StringIO(TEXT))",
                      imports=f"import io\nfrom svmlab.io import load_libsvm_model\n"
                              f"TEXT = {text!r}", cpu_s=20, extra_mb=1024)
    assert out["outcome"] == "ValueError", out
    assert "line 3 (nr_class)" in out["message"] and "max_classes=1000" in out["message"]
    # raising the cap reads it, linearly in its size
    out = run_limited(
        """
        m = load_libsvm_model(io.StringIO(TEXT), max_classes=2000)
        result = m.predict(np.array([[1.0, 2.0], [-1.0, 0.0]])).tolist()
        """,
        imports=f"import io\nimport numpy as np\nfrom svmlab.io import load_libsvm_model\n"
                f"TEXT = {text!r}", cpu_s=120, extra_mb=3072)
    assert out["outcome"] == "ok", out
    assert out["result"] == brute_linear_vote(coef, rho, 1.0, np.array([[1.0], [-1.0]]))


# --------------------------------------------- item 2: huge feature indices

def test_index_two_billion_predicts_with_bounded_memory():
    # unfixed: predict pads X to 2e9 columns (29.8 GiB)
    text = ("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0.1\n"
            "label 1 -1\nnr_sv 1 1\nSV\n1 2000000000:1\n-0.5 1:1 2:-1\n")
    X = [[1.0, 0.0, 2.0], [0.5, -1.0, 0.0]]
    out = run_limited(
        """
        import tracemalloc
        m = load_libsvm_model(io.StringIO(TEXT))
        tracemalloc.start()
        dense = m.decision_function(np.array(X)).tolist()
        sparse = m.decision_function(sp.csr_matrix(np.array(X))).tolist()
        pred = m.predict(np.array(X)).tolist()
        result = [dense, sparse, pred, tracemalloc.get_traced_memory()[1]]
        """,
        imports=f"import io\nimport numpy as np\nimport scipy.sparse as sp\n"
                f"from svmlab.io import load_libsvm_model\nTEXT = {text!r}\nX = {X!r}",
        cpu_s=60, extra_mb=512)
    assert out["outcome"] == "ok", out
    dense, sparse, pred, peak = out["result"]
    Xa = np.array(X)
    # LIBSVM: dec = sum coef exp(-g |s - x|^2) - rho, positive -> label 1;
    # s1 = e_2e9 (x is 0 there), s2 = (1, -1, 0, ...)
    k1 = np.exp(-0.5 * (1.0 + (Xa ** 2).sum(1)))
    k2 = np.exp(-0.5 * ((Xa[:, 0] - 1) ** 2 + (Xa[:, 1] + 1) ** 2 + Xa[:, 2] ** 2))
    libsvm = 1.0 * k1 - 0.5 * k2 - 0.1
    # label[0] = 1 is classes_[1]: scikit-learn's sign is LIBSVM's here
    np.testing.assert_allclose(dense, libsvm, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sparse, libsvm, rtol=0, atol=1e-12)
    assert pred == np.where(libsvm > 0, 1, -1).tolist()
    assert peak < 16 * 2**20    # a few small blocks, nothing 2e9 wide


def test_linear_model_with_huge_index_has_no_dense_coef_but_predicts():
    text = ("svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 2\nrho 0\n"
            "label 1 -1\nnr_sv 1 1\nSV\n1 1:2 2000000000:1\n-1 2:1\n")
    m = load_libsvm_model(io.StringIO(text))
    X = np.array([[1.0, 3.0], [2.0, 0.5]])
    np.testing.assert_allclose(m.libsvm_decision_function(X), 2 * X[:, 0] - X[:, 1], atol=0)
    with pytest.raises(ValueError, match="MAX_DENSE_COEF"):
        m.coef_
    small = load_libsvm_model(io.StringIO(text.replace("2000000000", "4")))
    # label[0] = 1 = classes_[1]: coef_ = sum coef_i s_i = (2, 0, 0, 1) - (0, 1, 0, 0)
    np.testing.assert_array_equal(small.coef_, [[2.0, -1.0, 0.0, 1.0]])


@pytest.mark.parametrize("index", [2**31, 2**33], ids=["2^31", "2^33"])
def test_multiclass_index_beyond_int32_is_a_clear_error(index):
    # unfixed: allocates 16 or 64 GiB at load
    text = header(3, "rbf", extra=["gamma 0.5"]) + "".join(
        f"1 1 {index}:1\n" for _ in range(3))
    out = run_limited("load_libsvm_model(io.StringIO(TEXT))",
                      imports=f"import io\nfrom svmlab.io import load_libsvm_model\n"
                              f"TEXT = {text!r}", cpu_s=60, extra_mb=512)
    assert out["outcome"] == "ValueError", out
    assert "line 10 (SV index)" in out["message"] and str(index) in out["message"]


@pytest.mark.parametrize("index", [2**31, 10**30], ids=["2^31", "1e30"])
def test_binary_index_beyond_int32_is_a_value_error_not_overflow(index):
    text = header(2, nr=["1", "0"], total=1) + f"1 {index}:1\n"
    msg = refused(text, "SV index", line=9)
    assert "max_feature_index" in msg


def test_feature_index_cap_is_a_keyword():
    text = header(2, nr=["1", "0"], total=1) + "1 5:1 70000:2\n"
    refused(text, "SV index", line=9, max_feature_index=1000)
    m = load_libsvm_model(io.StringIO(text))
    assert m.support_vectors_.shape == (1, 70000)


# ------------------------------------ item 3: meaningless values are refused

BINARY_RBF = ("svm_type c_svc\nkernel_type {kernel}\ndegree {degree}\ngamma {gamma}\n"
              "coef0 {coef0}\nnr_class 2\ntotal_sv 2\nrho {rho}\nlabel 1 -1\nnr_sv 1 1\nSV\n"
              "{c1} 1:{v1} 3:0.5\n-1 2:1\n")
GOOD = dict(kernel="polynomial", degree="3", gamma="0.5", coef0="1", rho="0.25", c1="1",
            v1="2")
LINE = {"degree": 3, "gamma": 4, "coef0": 5, "rho": 8, "c1": 12, "v1": 12}
FIELD = {"degree": "degree", "gamma": "gamma", "coef0": "coef0", "rho": "rho",
         "c1": "SV coefficient", "v1": "SV value"}


def test_the_valid_file_of_the_mutation_tests_loads():
    m = load_libsvm_model(io.StringIO(BINARY_RBF.format(**GOOD)))
    X = np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 0.0]])
    s1, s2 = np.array([2.0, 0.0, 0.5]), np.array([0.0, 1.0, 0.0])
    want = (0.5 * X @ s1 + 1) ** 3 - (0.5 * X @ s2 + 1) ** 3 - 0.25
    np.testing.assert_allclose(m.libsvm_decision_function(X), want, rtol=1e-14)


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e309", "NaN", "abc"])
@pytest.mark.parametrize("key", ["gamma", "rho", "coef0", "c1", "v1"])
def test_non_finite_numbers_are_refused_naming_line_and_field(key, bad):
    text = BINARY_RBF.format(**{**GOOD, key: bad})
    refused(text, FIELD[key], line=LINE[key])


@pytest.mark.parametrize("degree", ["-3", "2.5", "1e3"])
def test_degree_must_be_a_non_negative_integer(degree):
    refused(BINARY_RBF.format(**{**GOOD, "degree": degree}), "degree", line=3)


def test_negative_gamma_is_refused():
    refused(BINARY_RBF.format(**{**GOOD, "gamma": "-0.5"}), "gamma", line=4)


def test_negative_nr_sv_is_refused():
    text = header(2, "linear", total=1, nr=["2", "-1"]) + "1 1:1\n"
    refused(text, "nr_sv", line=7)


def test_total_sv_zero_followed_by_sv_lines_is_refused():
    text = header(2, "linear", total=0, nr=["0", "0"]) + "1 1:1\n-1 2:1\n0.5 1:3\n"
    msg = refused(text, "total_sv", line=9)
    assert "total_sv is 0 but there are 3 SV lines" in msg


@pytest.mark.parametrize("text,field,line", [
    (header(2, total=1, nr=["1", "0"], extra=["colour blue"]) + "1 1:1\n", "colour", 3),
    (header(2, total=1, nr=["1", "0"], extra=["nr_class 2"]) + "1 1:1\n", "nr_class", 4),
    (header(2, total=1, nr=["1", "0"], labels=["1", "1e9"]) + "1 1:1\n", "label", 6),
    (header(2, total=1, nr=["1", "0"], labels=["1", "99999999999"]) + "1 1:1\n", "label", 6),
    (header(2, total=1, nr=["1", "0"]) + "1 0:1\n", "SV index", 9),
    (header(2, total=1, nr=["1", "0"]) + "1 3:1 2:1\n", "SV index", 9),
    (header(2, total=1, nr=["1", "0"]) + "1 2:1 2:1\n", "SV index", 9),
    (header(2, total=1, nr=["1", "0"]) + "1 2:1:3\n", "SV line", 9),
    (header(2, total=1, nr=["1", "0"]) + "1 2 3\n", "SV line", 9),
    (header(3, total=1, nr=["1", "0", "0"]) + "1 2:1\n", "SV line", 9),
    (header(2, total=3, nr=["1", "1"]) + "1 1:1\n-1 2:1\n1 1:1\n", "nr_sv", 7),
    (header(2, total=-1, nr=["1", "0"]) + "1 1:1\n", "total_sv", 4),
    (header(2, total=1, nr=["1"]) + "1 1:1\n", "nr_sv", 7),
    (header(2, total=1, nr=["1", "0"], extra=["probA 0.1 nan"]) + "1 1:1\n", "probA", 3),
    ("svm_type c_svc\nkernel_type linear\nnr_class 1\ntotal_sv 0\nrho\nlabel 1\nnr_sv 0\nSV\n",
     "nr_class", 3),
    ("svm_type c_svc\nkernel_type linear\nnr_class two\ntotal_sv 0\nrho 0\nlabel 1 2\n"
     "nr_sv 0 0\nSV\n", "nr_class", 3),
])
def test_structural_violations_name_the_line_and_field(text, field, line):
    refused(text, field, line=line)


def test_non_ascii_and_oversized_input_are_refused():
    with pytest.raises(ValueError, match=r"line 9.*ASCII"):
        load_libsvm_model(io.BytesIO((header(2, total=1, nr=["1", "0"]) + "1 1:\u00e9\n")
                                     .encode("utf-8")))
    text = header(2, total=2, nr=["1", "1"]) + "1 1:1\n-1 2:1\n"
    with pytest.raises(ValueError, match="max_bytes=50"):
        load_libsvm_model(io.StringIO(text), max_bytes=50)
    refused(text, "total_sv", line=4, max_support_vectors=1)
    with pytest.raises(ValueError, match="line 1: the line is longer than max_line_bytes=10"):
        load_libsvm_model(io.StringIO(text), max_line_bytes=10)
    with pytest.raises(ValueError, match="max_bytes must be a non-negative integer"):
        load_libsvm_model(io.StringIO(text), max_bytes=-1)
    assert load_libsvm_model(io.StringIO(text), max_bytes=len(text)).support_vectors_.nnz == 2


def test_valid_file_whose_values_overflow_the_kernel_is_refused_at_predict():
    # every number is finite, but (gamma x.s + coef0)^degree overflows for
    # this X: a vote on NaN would be a silently wrong answer
    text = BINARY_RBF.format(**{**GOOD, "degree": "200", "v1": "1e10"})
    m = load_libsvm_model(io.StringIO(text))
    with pytest.raises(ValueError, match="not finite"):
        m.predict(np.array([[1e10, 0.0, 0.0]]))
    assert m.predict(np.array([[0.0, 0.0, 0.0]])).tolist() == [-1]  # 1 - 1 - 0.25 < 0


def test_writer_refuses_models_with_non_finite_numbers():
    from svmlab.io import save_libsvm_model

    m = load_libsvm_model(io.StringIO(BINARY_RBF.format(**GOOD)))
    m.intercept_ = np.array([np.nan])
    with pytest.raises(ValueError, match="NaN or infinity"):
        save_libsvm_model(m, io.StringIO())


def test_crlf_and_blank_lines_are_read():
    text = BINARY_RBF.format(**GOOD)
    a = load_libsvm_model(io.StringIO(text))
    b = load_libsvm_model(io.StringIO(text.replace("\n", "\r\n") + "\r\n\r\n"))
    X = np.array([[1.0, 0.0, 1.0]])
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_error_messages_name_the_file(tmp_path):
    path = tmp_path / "bad.model"
    path.write_text(BINARY_RBF.format(**{**GOOD, "rho": "nan"}))
    with pytest.raises(ValueError, match=re.escape(f"{path}, line 8 (rho)")):
        load_libsvm_model(path)
