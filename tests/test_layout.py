"""Package layout: no import cycle among the modules of ``svmlab``, and solver
rooms that import only what lies below them.

Issue 14: ``svmlab.cutting_plane.estimators`` and ``svmlab.cutting_plane._dask`` imported each
other; the shared oracle machinery now lives in the leaf
``svmlab.cutting_plane._oracle``.  This test keeps the package free of such loops.

It reads every ``.py`` file under ``svmlab/`` with :mod:`ast` (nothing is
imported or executed) and collects every import statement, including those
inside functions and methods (a lazy import is still a dependency).  An
import names the module it loads:

- ``import svmlab.a.b`` and ``from svmlab.a import b`` -> ``svmlab.a.b`` when
  that is a module of the package (else ``svmlab.a``);
- relative imports (``from .a import b``, ``from .. import a``) are resolved
  against the importing module's package first.

Importing ``svmlab.a.b`` also runs the package ``svmlab.a``'s ``__init__``;
that implicit edge to a parent package is *not* counted (every submodule
would otherwise "cycle" with its package's ``__init__``).  A cycle is then a
strongly connected component of more than one module, or a module importing
itself; the failure message names the modules of each cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG_DIR = Path(__file__).resolve().parents[1] / "svmlab"


def module_names(pkg_dir=PKG_DIR):
    """Map dotted module name -> file path for every .py under ``pkg_dir``."""
    names = {}
    for path in sorted(pkg_dir.rglob("*.py")):
        rel = path.relative_to(pkg_dir.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _is_package(name, path):
    return path.name == "__init__.py"


def _resolve(base, modules):
    """The longest existing module prefix of the dotted name ``base``."""
    parts = base.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in modules:
            return cand
        parts.pop()
    return None


def import_graph(pkg_dir=PKG_DIR):
    """``{module: {imported svmlab modules}}``, imports in functions included."""
    modules = module_names(pkg_dir)
    root = pkg_dir.name
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = name if _is_package(name, path) else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == root or alias.name.startswith(root + "."):
                        target = _resolve(alias.name, modules)
                        if target:
                            deps.add(target)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = package.split(".")
                    if node.level > 1:
                        anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                    if not (base == root or base.startswith(root + ".")):
                        continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in modules:  # `from pkg import submodule`
                        deps.add(sub)
                    else:
                        target = _resolve(base, modules)
                        if target:
                            deps.add(target)
        graph[name] = deps
    return graph


def import_cycles(graph):
    """Strongly connected components of more than one module (Tarjan), plus
    self-imports, each as a sorted list; the list of cycles is sorted."""
    index, low, on_stack, stack = {}, {}, set(), []
    counter = [0]
    cycles = []

    def visit(v):
        # iterative Tarjan: (node, iterator over its successors)
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in graph.get(node, ()):
                    cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def test_graph_sees_lazy_and_relative_imports():
    """The parser must see what the cycle check relies on: a relative import
    at module level and the lazy (in-function) imports of the Dask oracle."""
    graph = import_graph()
    assert "svmlab.cutting_plane._oracle" in graph["svmlab.cutting_plane.estimators"]
    assert "svmlab.cutting_plane._oracle" in graph["svmlab.cutting_plane._dask"]
    # cutting_plane builds the Dask oracles lazily, inside start()
    assert "svmlab.cutting_plane._dask" in graph["svmlab.cutting_plane.estimators"]
    # the oracle module is a leaf among the cutting-plane modules
    assert not graph["svmlab.cutting_plane._oracle"] & {"svmlab.cutting_plane.estimators", "svmlab.cutting_plane._dask"}


def test_cycle_finder_on_known_graphs(tmp_path):
    """The detector itself can fail: a small package with a lazy-import loop
    and a relative-import loop is reported, and an acyclic one is not."""
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g()\n")
    (pkg / "b.py").write_text("from toy import a\n\ndef g():\n    return 1\n")
    (pkg / "c.py").write_text("import toy.a\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "d.py").write_text("from .. import c\nfrom . import e\n")
    (pkg / "sub" / "e.py").write_text("from ..sub import d\n")
    graph = import_graph(pkg)
    assert graph["toy.a"] == {"toy.b"}
    assert graph["toy.b"] == {"toy.a"}
    assert graph["toy.sub.d"] == {"toy.c", "toy.sub.e"}
    assert import_cycles(graph) == [["toy.a", "toy.b"], ["toy.sub.d", "toy.sub.e"]]
    (pkg / "sub" / "e.py").write_text("")
    (pkg / "b.py").write_text("def g():\n    return 1\n")
    assert import_cycles(import_graph(pkg)) == []


def test_no_import_cycle_in_svmlab():
    graph = import_graph()
    assert len(graph) > 20, "the parser found too few svmlab modules"
    cycles = import_cycles(graph)
    if cycles:
        pytest.fail("import cycles among svmlab modules (imports inside functions "
                    "count): " + "; ".join(" <-> ".join(c) for c in cycles))


#: the solver rooms; each may import the shared modules below it
#: (``svmlab._stepping``, ``_base``, ``_validation``, ``_kkt``, ``kernels``, and the
#: low-level compiled pieces ``_jit``, ``_twins``, ``_linalg``, ``_wss2``; ``_lazy``,
#: the rooms' first-touch imports)
#: but not a sibling room, except the edges listed in ALLOWED_SIBLING_EDGES
SOLVER_ROOMS = ("svmlab.smo", "svmlab.decomposition", "svmlab.cutting_plane")
SHARED_BELOW = ("svmlab._stepping", "svmlab._base", "svmlab._multiclass", "svmlab._validation",
                "svmlab._kkt", "svmlab.kernels", "svmlab._jit", "svmlab._shipped", "svmlab._twins",
                "svmlab._linalg", "svmlab._wss2", "svmlab._lazy")
#: the decomposition room's "smo" engine takes Platt's analytic step from
#: the SMO room (one implementation of the step)
ALLOWED_SIBLING_EDGES = {("svmlab.decomposition", "svmlab.smo._pairstep")}


def _room(name):
    for room in SOLVER_ROOMS + SHARED_BELOW:
        if name == room or name.startswith(room + "."):
            return room
    return None


def layout_violations(graph):
    """The edges of ``graph`` that break the room rules, as sentences."""
    bad = []
    for mod, deps in graph.items():
        src = _room(mod)
        if src is None:
            continue
        for dep in deps:
            dst = _room(dep)
            if dst is None:
                if dep != "svmlab":
                    bad.append(f"{mod} -> {dep} (outside the rooms and the shared modules)")
            elif dst == src:
                continue
            elif src in SHARED_BELOW and dst in SOLVER_ROOMS:
                bad.append(f"{mod} -> {dep} (shared machinery importing a solver room)")
            elif (src in SOLVER_ROOMS and dst in SOLVER_ROOMS
                  and (src, dep) not in ALLOWED_SIBLING_EDGES):
                bad.append(f"{mod} -> {dep} (sibling rooms)")
    return sorted(bad)


def test_rooms_import_only_what_lies_below_them():
    """Issue 14: the layout shows the architecture.  A solver room reads the
    shared machinery and its own modules; the shared modules never reach up
    into a room (``svmlab.__init__``'s lazy re-exports are the package's face,
    not part of the machinery, and are not checked)."""
    graph = import_graph()
    for room in SOLVER_ROOMS:
        assert any(m == room or m.startswith(room + ".") for m in graph), f"{room} is missing"
    bad = layout_violations(graph)
    assert not bad, "layout violations:\n" + "\n".join(bad)


def test_room_checker_can_fail():
    """The checker reports each kind of violation on a made-up graph, and
    accepts the allowed edge."""
    graph = {
        "svmlab.cutting_plane.estimators": {"svmlab.smo._core", "svmlab._stepping"},
        "svmlab.kernels._rows": {"svmlab.decomposition.irwls"},
        "svmlab.smo._core": {"svmlab.viz.smo"},
        "svmlab.decomposition._engines": {"svmlab.smo._pairstep", "svmlab.kernels.cache"},
    }
    bad = layout_violations(graph)
    assert bad == [
        "svmlab.cutting_plane.estimators -> svmlab.smo._core (sibling rooms)",
        "svmlab.kernels._rows -> svmlab.decomposition.irwls "
        "(shared machinery importing a solver room)",
        "svmlab.smo._core -> svmlab.viz.smo (outside the rooms and the shared modules)",
    ]
