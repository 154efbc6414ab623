"""Names of a package imported on first touch (PEP 562), for the solver
rooms whose ``__init__`` lists them: :func:`lazy_names`.

Why: a fresh process that fits one estimator should import only the modules
that fit runs (docs/decisions/31f01-first-fit-in-a-fresh-process.md,
33g01-fresh-process-fixed-costs.md); a room's ``__init__`` names its public
classes in ``_LAZY`` and hands the lookup to this one function instead of
writing its own ``__getattr__``.
"""

from __future__ import annotations


def lazy_names(package, lazy, namespace):
    """The module-level ``(__getattr__, __dir__)`` of ``package`` (its
    ``__name__``): a name of ``lazy`` (name -> relative module, e.g.
    ``"._dual"``) is imported from that module on first touch, under
    svmlab's import lock (:func:`svmlab._load`: threads touching these
    names at once in a fresh process would otherwise run scikit-learn's
    circular imports interleaved), and kept in ``namespace`` (the package's
    ``globals()``), so later touches are plain lookups; any other name
    raises AttributeError.  ``__dir__`` lists the namespace and ``__all__``."""

    def __getattr__(name):
        if name in lazy:
            from . import _load

            value = _load(package + lazy[name], name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
