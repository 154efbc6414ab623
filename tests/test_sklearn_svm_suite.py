"""scikit-learn's own SVM tests, with the whole of sklearn.svm replaced by
svmlab's classes.

The installed ``sklearn/svm/tests/test_svm.py``, ``test_sparse.py`` and
``test_bounds.py`` are copied into a temporary folder and their imports
rewritten so that ``svm.SVC``, ``svm.NuSVC``, ``svm.SVR``, ``svm.NuSVR``,
``svm.OneClassSVM``, ``svm.LinearSVC``, ``svm.LinearSVR`` and ``l1_min_c``
(and the names imported from ``sklearn.svm``) are svmlab's; only the
low-level modules (``_libsvm``, ``_newrand``) stay scikit-learn's.  pytest
runs them in a subprocess; a conftest records which test items touch one of
svmlab's classes (fit or predict) or ``l1_min_c``, and only those count.

The test passes when

* at least ``GOAL`` (95 %) of the items that use svmlab pass, and
* every item that fails is listed in :data:`KNOWN_FAILURES` with its
  reason (a deliberate difference, or a limitation stated there), and
  every listed item still exists and still fails (the list stays honest).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import sklearn

GOAL = 0.95

SK_TESTS = Path(sklearn.__file__).parent / "svm" / "tests"

#: test item (name with parameters, or name alone for every parametrisation)
#: -> why it fails with svmlab's classes
KNOWN_FAILURES = {
    "test_probability_raises_futurewarning":
        "scikit-learn 1.9 deprecates `probability`; svmlab keeps Platt scaling as a "
        "documented method and does not warn",
    "test_svc_nusvc_probA_probB_deprecated":
        "scikit-learn 1.9 deprecates probA_/probB_; in svmlab they are plain attributes",
    "test_svr_errors":
        "the callable returns a 1x1 matrix for 2 training rows; svmlab refuses that at fit "
        "with a clear error, the test expects fit to pass and predict to fail",
}

SHIM = '''"""sklearn.svm with the five libsvm classes replaced by svmlab's."""
import sklearn.svm as _sk
from sklearn.svm import *  # noqa: F401,F403
from svmlab.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM  # noqa: F401
from svmlab.linear import LinearSVC, LinearSVR, l1_min_c  # noqa: F401

_OURS = {"SVC": SVC, "NuSVC": NuSVC, "SVR": SVR, "NuSVR": NuSVR, "OneClassSVM": OneClassSVM,
         "LinearSVC": LinearSVC, "LinearSVR": LinearSVR, "l1_min_c": l1_min_c}


def __getattr__(name):
    return getattr(_sk, name)
'''

CONFTEST = '''
import json, os
import pytest
import svmlab.svm._base as B
import svmlab.linear as L
import svmlab.linear._classes as LC

USED = {}
_current = [None]

# a test item uses svmlab when it fits or predicts with one of its classes
for cls, name in ((B.BaseSVM, "fit"), (B.BaseSVM, "_internal_decision"),
                  (B.BaseSVC, "predict"), (LC.LinearSVC, "start"), (LC.LinearSVR, "start"),
                  (LC.LinearSVC, "decision_function"), (LC.LinearSVR, "predict")):
    def wrap(self, *a, __orig=getattr(cls, name), **k):
        if _current[0] is not None:
            USED[_current[0]] = True
        return __orig(self, *a, **k)

    setattr(cls, name, wrap)


def _l1_min_c(*a, __orig=L.l1_min_c, **k):
    if _current[0] is not None:
        USED[_current[0]] = True
    return __orig(*a, **k)


L.l1_min_c = _l1_min_c


@pytest.fixture
def global_random_seed():
    return 42


def pytest_configure(config):
    config.addinivalue_line("markers", "thread_unsafe: scikit-learn's marker")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _current[0] = item.nodeid
    yield
    _current[0] = None


def pytest_sessionfinish(session):
    with open(os.environ["SVMLAB_USED_OUT"], "w") as fh:
        json.dump(USED, fh)
'''


def _rewrite(src, name):
    src = src.replace("from sklearn import base, datasets, linear_model, metrics, svm",
                      "from sklearn import base, datasets, linear_model, metrics\n"
                      "import svm_shim as svm")
    src = src.replace("from sklearn import base, datasets, linear_model, svm",
                      "from sklearn import base, datasets, linear_model\nimport svm_shim as svm")
    src = src.replace("from sklearn.svm import (", "from svm_shim import (")
    src = src.replace("from sklearn.svm.tests import test_svm", "import test_svm")
    if name == "test_bounds.py":
        src = src.replace("from sklearn.svm import LinearSVC", "from svm_shim import LinearSVC")
        src = src.replace("from sklearn.svm._bounds import l1_min_c",
                          "from svm_shim import l1_min_c")
        assert "from svm_shim import l1_min_c" in src, f"{name}: the import of l1_min_c moved"
        return src
    assert "import svm_shim as svm" in src, f"{name}: the import of sklearn.svm moved"
    return src


def prepare(tmp_path):
    """Write the rewritten suites, the shim and the conftest into ``tmp_path``
    (``python -c "import test_sklearn_svm_suite as t; t.prepare(Path(d))"``
    sets a folder up for running single items by hand)."""
    tmp_path = Path(tmp_path)
    for name in ("test_svm.py", "test_sparse.py", "test_bounds.py"):
        (tmp_path / name).write_text(_rewrite((SK_TESTS / name).read_text(), name))
    (tmp_path / "svm_shim.py").write_text(SHIM)
    (tmp_path / "conftest.py").write_text(CONFTEST)


def run_suite(tmp_path):
    """Run the rewritten suites; returns ``(outcomes, used, proc)``: item ->
    "passed"/"failed"/"skipped", the items that touched the family, and the
    finished pytest process."""
    prepare(tmp_path)
    junit = tmp_path / "junit.xml"
    used_out = tmp_path / "used.json"
    env = dict(os.environ, SVMLAB_USED_OUT=str(used_out), SVMLAB_PROGRESS="0",
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(Path(__file__).parents[1]),
                                           os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "-W", "ignore::DeprecationWarning", f"--junitxml={junit}", "test_svm.py",
         "test_sparse.py", "test_bounds.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=3000)
    assert junit.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        item = f"{case.get('classname').split('.')[-1]}.py::{case.get('name')}"
        kids = {c.tag for c in case}
        outcomes[item] = ("failed" if kids & {"failure", "error"} else
                          "skipped" if "skipped" in kids else "passed")
    used = {k.split("/")[-1] for k in json.loads(used_out.read_text())}
    return outcomes, used, proc


def _known(item):
    name = item.split("::")[-1]
    return KNOWN_FAILURES.get(name) or KNOWN_FAILURES.get(name.split("[")[0])


def test_sklearn_svm_suite_with_svmlab_classes(tmp_path):
    outcomes, used, proc = run_suite(tmp_path)
    family = {k: v for k, v in outcomes.items() if k in used}
    passed = [k for k, v in family.items() if v == "passed"]
    failed = sorted(k for k, v in family.items() if v == "failed")
    report = (f"{len(passed)} of {len(family)} family items pass "
              f"({len(outcomes)} items in all)\nfailed:\n  " + "\n  ".join(failed))
    print(report)
    unexplained = [k for k in failed if not _known(k)]
    assert not unexplained, report + "\n" + proc.stdout[-6000:]
    assert len(passed) >= GOAL * len(family), report
    # the list of known failures is honest: each entry names failing items
    for name in KNOWN_FAILURES:
        hits = [k for k in family if re.sub(r"\[.*", "", k.split("::")[-1]) == name
                or k.split("::")[-1] == name]
        assert hits and all(family[k] == "failed" for k in hits), name
