"""The cold-start suite's choice of installation (issue 29): run from an
installed svmlab (a wheel in a venv, no checkout), it measures that
installation; the kinds that build from a checkout refuse with a clear error."""

import os
import sys

import pytest

from svmlab.bench import cold_start
from svmlab.bench.cold_start import Install, is_checkout


def test_this_checkout_is_a_checkout_and_site_packages_is_not(tmp_path):
    assert is_checkout()  # the tests run from the source tree
    (tmp_path / "svmlab").mkdir()  # site-packages: the package, no pyproject.toml
    assert not is_checkout(str(tmp_path))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'svmlab'\n")
    assert is_checkout(str(tmp_path))


def test_editable_without_a_checkout_measures_the_installed_package(tmp_path):
    (tmp_path / "svmlab").mkdir()
    inst = Install("editable", root=str(tmp_path))
    assert inst.kind == "installed" and inst.python == sys.executable
    assert Install("editable").kind == "editable"
    assert Install("installed").kind == "installed"


@pytest.mark.parametrize("kind", ["wheel", "editable-venv"])
def test_kinds_that_build_need_a_checkout(tmp_path, kind):
    (tmp_path / "svmlab").mkdir()
    with pytest.raises(ValueError, match="source checkout"):
        Install(kind, root=str(tmp_path))


def test_installed_runs_without_pythonpath_in_an_empty_directory(monkeypatch):
    """The measured process must import the installed svmlab, not a source
    tree from ``PYTHONPATH`` or the working directory."""
    monkeypatch.setenv("PYTHONPATH", os.path.dirname(os.path.dirname(cold_start.__file__)))
    inst = Install("installed")
    proc = inst.run(["-c", "import os, sys; print(os.environ.get('PYTHONPATH')); "
                     "print(os.getcwd()); print(os.listdir('.'))"], {}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    pp, cwd, listing = proc.stdout.strip().splitlines()
    assert pp == "None"
    assert cwd != os.getcwd() and listing == "[]"


def test_parts_are_chosen_by_the_environment(monkeypatch):
    monkeypatch.delenv("SVMLAB_BENCH_COLD_PARTS", raising=False)
    assert cold_start.parts() == ("toy", "sized", "warm_up")
    monkeypatch.setenv("SVMLAB_BENCH_COLD_PARTS", "warm_up, sized")
    assert cold_start.parts() == ("sized", "warm_up")  # in the suite's order
    for bad in ("sizes", ",", "toy,eager"):
        monkeypatch.setenv("SVMLAB_BENCH_COLD_PARTS", bad)
        with pytest.raises(ValueError, match="SVMLAB_BENCH_COLD_PARTS"):
            cold_start.parts()
