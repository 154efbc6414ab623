"""``python -m svmlab.course build-student | grade | site | links``; see :mod:`svmlab.course`."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
