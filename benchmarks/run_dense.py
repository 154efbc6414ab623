"""Thin entry point: `python benchmarks/run_dense.py [--size smoke|full] [--out DIR]`.

Same as `python -m svmlab.bench --suite dense ...` (the harness is the one way to
run benchmarks; see benchmarks/README.md).
"""

import sys

from svmlab.bench.__main__ import main

if __name__ == "__main__":
    sys.exit(main(["--suite", "dense", *sys.argv[1:]]))
