"""pyproject.toml and environment.yml must declare the same packages with the
same lower bounds (no conda solve is possible here, so this is the check)."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

# pip name -> conda-forge name where they differ
PIP_TO_CONDA = {"dask[array]": "dask"}


def _split(spec):
    """``(name, bounds)``: the lower bound, and ``,<upper`` where one is
    pinned (numba's tested range: svmlab uses some of its internals)."""
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-\[\]]+)\s*(>=\s*[0-9][^,;\s]*)?\s*(,\s*<\s*[0-9][^,;\s]*)?\s*",
                     spec)
    assert m, f"unsupported requirement syntax: {spec!r}"
    name = m.group(1).lower()
    bound = m.group(2).replace(" ", "")[2:] if m.group(2) else None
    if bound is not None and m.group(3):
        bound += m.group(3).replace(" ", "")
    return PIP_TO_CONDA.get(name, name), bound


def pyproject_requirements():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    proj = data["project"]
    reqs = {}
    for spec in proj["dependencies"]:
        n, b = _split(spec)
        reqs[n] = b
    for extra in proj["optional-dependencies"].values():
        for spec in extra:
            n, b = _split(spec)
            assert reqs.get(n, b) == b, f"{n} has two different lower bounds in pyproject"
            reqs[n] = b
    reqs["python"] = proj["requires-python"].removeprefix(">=")
    return reqs


def environment_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    reqs = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            assert set(dep) == {"pip"} and dep["pip"] == ["-e ."], dep
            continue
        if dep == "pip":
            continue
        n, b = _split(dep)
        reqs[n] = b
    return reqs


def test_same_packages_and_lower_bounds():
    py = pyproject_requirements()
    env = environment_requirements()
    assert set(py) == set(env), (
        f"only in pyproject: {sorted(set(py) - set(env))}; "
        f"only in environment.yml: {sorted(set(env) - set(py))}"
    )
    for name, bound in py.items():
        assert env[name] == bound, f"{name}: pyproject >={bound}, environment.yml >={env[name]}"
        assert bound is not None, f"{name} has no lower bound"


def test_the_parser_notices_a_mismatch(tmp_path):
    # the check itself must be able to fail
    n, b = _split("numpy>=1.26")
    assert (n, b) == ("numpy", "1.26")
    assert _split("dask[array]>=2024.1") == ("dask", "2024.1")
    assert _split("numba>=0.59,<0.69") == ("numba", "0.59,<0.69")
    assert _split("numba>=0.59") != _split("numba>=0.59,<0.69")


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", readme, flags=re.S)
    assert len(blocks) >= 1
    first = [ln.strip() for ln in blocks[0].strip().splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(first) == 2, "README opens with exactly two commands"
    test_cmd = first[1]
    assert "pytest" in test_cmd
    ci_lines = [ln.strip() for ln in ci.splitlines()]
    assert test_cmd in ci_lines, "the last step of .ci/run must be the README's test command"
