"""Root pytest configuration, shared by tests/ and the nbval-checked notebooks."""

import os

# Notebooks read SVMLAB_NOTEBOOK_SIZE: "small" under pytest/nbval (CI), while
# a user opening them in JupyterLab gets the full size.  The nbval kernels
# inherit this environment.
os.environ.setdefault("SVMLAB_NOTEBOOK_SIZE", "small")
# No progress bars under the tests: nbval compares stderr, and a bar appears
# only when a fit happens to take longer than 2 s.
os.environ.setdefault("SVMLAB_PROGRESS", "0")
