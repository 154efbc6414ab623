"""The ``smoke`` suite: data sanity checks; the runner then runs every paper suite
(platt, irwls, joachims, peers) at ``ctx.size == "smoke"`` (< 3 min in all, run in CI)."""

from __future__ import annotations

import os
import time

import numpy as np

from ._harness import suite

#: datasets checked when SVMLAB_DATA is set (the embedded a9a is always checked)
SHARED = [("a9a", "test"), ("w8a", "test"), ("ijcnn1", "train"), ("banana", "all"),
          ("diabetes", "all"), ("splice", "train"), ("ratsch-splice", "all"), ("mnist", "test")]


@suite("smoke", "data sanity checks, then every paper suite at size 'smoke' (CI, < 3 min)")
def smoke(ctx):
    from .. import datasets

    names = SHARED if os.environ.get("SVMLAB_DATA") else [("a9a", "train"), ("a9a", "test")]
    for name, split in names:
        t0 = time.perf_counter()
        try:
            X, y = datasets.load(name, split, download=False)
        except Exception as exc:
            ctx.fail(f"datasets.load({name!r}, {split!r}): {type(exc).__name__}: {exc}")
            continue
        labels = np.unique(y)
        ctx.log(f"data {name}/{split}: {X.shape[0]} x {X.shape[1]}, "
                f"{type(X).__name__}, labels {labels.tolist()[:10]} "
                f"({time.perf_counter() - t0:.2f} s)")
